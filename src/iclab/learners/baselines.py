"""Baselines: predictors built from a task spec (and, for some, options a sweep point gives in its
``analysis["baseline_options"]``), under the learner contract ``(xs (B, K, d), ys (B, K)) -> ys_hat (B, K)``:
closed forms for linear tasks, the test-prompt-only learners of ``iclab.learners.prompt_only`` (tuned on
held-out prompts of the task), the teacher-feature attention of mean-field tasks and the known-basis posterior mean
of nonparametric tasks."""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch

from iclab import theory
from iclab.learners import estimators, prompt_only
from iclab.models.mean_field import optimal_gamma
from iclab.models.prompts import attention_readout, context_means
from iclab.tasks import HOLDOUT_STREAM, LinearTask, MeanFieldTask, NonparametricTask
from iclab.tasks.linear import final_query_setting
from iclab.tasks.samplers import batch_generator, sample
from iclab.tasks.samplers.mean_field import teacher
from iclab.tasks.samplers.nonparametric import features as basis_features
from iclab.learners.tuning import HOLDOUT_SEED

Predictor = Callable[[np.ndarray, np.ndarray], np.ndarray]

# Noiseless tasks (σ = 0) use the posterior mean's σ → 0 limit, approximated at this σ.
NOISELESS_SIGMA = 1e-3


def effective_sigma(task: LinearTask) -> float:
    return max(task.sigma, NOISELESS_SIGMA)


def bayes(task: LinearTask) -> Predictor:
    """Posterior mean under the task's prior N(β*, Ψ) and noise σ (a linear-Gaussian model)."""
    beta_star, psi, sigma = np.asarray(task.beta_star), task.psi_matrix, effective_sigma(task)
    return lambda xs, ys: estimators.bayes(xs, ys, beta_star=beta_star, psi=psi, sigma=sigma)


def gd_beta_optimal(task: LinearTask) -> Predictor:
    """One-step GD-β at the closed-form optimum (β*, Γ*) for the task's context length n = K − 1."""
    opt = theory.gd_beta_optimum(**final_query_setting(task))
    return lambda xs, ys: estimators.gd_beta(xs, ys, beta0=opt.beta0, gamma=opt.gamma)


def lsa_optimal(task: LinearTask, optimum: theory.LSAOptimum | None = None) -> Predictor:
    """The LSA at the LSA class's optimal weights for the task's n = K − 1: ``optimum`` where its own job computed
    it (iclab.store.optima, the workflow's evaluations), else theory.lsa_class_optimum here."""
    opt = theory.lsa_class_optimum(**final_query_setting(task)) if optimum is None else optimum
    if opt.w.shape != (task.d + 1, task.d):
        raise ValueError(f"the lsa_optimal baseline's optimum has W of shape {opt.w.shape}, the task's d = {task.d}")
    return lambda xs, ys: estimators.lsa(xs, ys, u=opt.u, w=opt.w)


def lsa_limit(task: LinearTask, a: list[list[float]]) -> Predictor:
    """The LSA at its gradient-flow limit u₋₁U₁₁ = A (Zhang, Frei, Bartlett 2024, Theorems 4 and 8): ŷ_k = x_kᵀAĥ_k,
    ĥ_k = (1/k)Σ_{i<k} y_i x_i. A is the experiment's (``analysis["baseline_options"]``): Γ_N⁻¹ of the training
    prompts, or Theorem 8's K; it is the LSA of estimators.lsa with u = e_{d+1} and W = [Aᵀ; 0]."""
    a = np.asarray(a, dtype=np.float64)
    if a.shape != (task.d, task.d):
        raise ValueError(f"the lsa_limit baseline's a must be (d, d) = {(task.d, task.d)}, got {a.shape}")
    u, w = np.eye(task.d + 1)[task.d], np.vstack([a.T, np.zeros((1, task.d))])  # (d+1,), (d+1, d)
    return lambda xs, ys: estimators.lsa(xs, ys, u=u, w=w)


def ridge(task: LinearTask) -> Predictor:
    """Ridge with λ = σ²/psi: the posterior mean when β* = 0 and Ψ = psi·I."""
    if task.psi_values is not None:
        raise ValueError("the ridge baseline needs Ψ = psi·I; this task sets psi_values (use bayes)")
    lam = effective_sigma(task) ** 2 / task.psi
    return lambda xs, ys: estimators.ridge(xs, ys, lam=lam)


def ols(task: LinearTask) -> Predictor:
    return estimators.ols


def zero(task: LinearTask) -> Predictor:
    return estimators.zero


def online_gd(task: LinearTask) -> Predictor:
    """One pass of online GD with step 1/‖x_i‖² (Fu et al. 2024's online baseline)."""
    return estimators.online_gd


def teacher_attention(task: MeanFieldTask) -> Predictor:
    """The mean-field transformer at a global minimum of its class (Kim & Suzuki 2024): the teacher's
    features f° with the closed-form Γ* of 2048 held-out prompts of the task at its final query."""
    if not isinstance(task, MeanFieldTask):
        raise ValueError("the teacher_attention baseline needs a mean_field task")
    holdout = sample(task, 2048, batch_generator(HOLDOUT_SEED, HOLDOUT_STREAM, 0))
    xs, ys = torch.as_tensor(holdout.xs), torch.as_tensor(holdout.ys)
    features = teacher(task).features(xs)  # (B, K, k)
    gamma = optimal_gamma(context_means(features, ys)[:, -1], features[:, -1], ys[:, -1], ridge=1e-9)  # Γ* (k, k)

    def predict(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        phi = teacher(task).features(torch.as_tensor(xs))  # (B, K, k)
        return attention_readout(phi, torch.as_tensor(ys), gamma).numpy()

    return predict


def basis_bayes(task: NonparametricTask) -> Predictor:
    """The Bayes posterior mean that knows the basis f° and the prior (Kim, Nakamaki, Suzuki 2024's tasks): Bayesian
    linear regression on the features f°(x) with prior β ~ N(0, diag λ) and noise σ (ridge on the true features
    with penalty σ²λ_j⁻¹ on coefficient j)."""
    if not isinstance(task, NonparametricTask):
        raise ValueError("the basis_bayes baseline needs a nonparametric task")
    psi, sigma = np.diag(task.variances), max(task.sigma, NOISELESS_SIGMA)
    zero = np.zeros(task.n_basis)

    def predict(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        features = basis_features(task, torch.as_tensor(xs)).numpy()  # (B, K, J)
        return estimators.bayes(features, ys, beta_star=zero, psi=psi, sigma=sigma)

    return predict


BASELINES: dict[str, Callable[[LinearTask], Predictor]] = {
    "bayes": bayes,
    "gd_beta_optimal": gd_beta_optimal,
    "lsa_optimal": lsa_optimal,
    "lsa_limit": lsa_limit,
    "ridge": ridge,
    "ols": ols,
    "zero": zero,
    "online_gd": online_gd,
    "krr": prompt_only.krr,
    "two_layer_net": prompt_only.two_layer_net,
    "random_features_ridge": prompt_only.random_features_ridge,
    "teacher_attention": teacher_attention,
    "basis_bayes": basis_bayes,
}
