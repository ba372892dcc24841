"""Baselines: predictors built from a task spec, under the learner contract
``(xs (B, K, d), ys (B, K)) -> ys_hat (B, K)``: closed forms for linear tasks, and the
test-prompt-only learners of ``iclab.prompt_only`` (tuned on held-out prompts of the task)."""

from __future__ import annotations

from typing import Callable

import numpy as np

from iclab import estimators, prompt_only, theory
from iclab.tasks import LinearTask

Predictor = Callable[[np.ndarray, np.ndarray], np.ndarray]

# Noiseless tasks (σ = 0) use the posterior mean's σ → 0 limit, approximated at this σ.
NOISELESS_SIGMA = 1e-3


def effective_sigma(task: LinearTask) -> float:
    return max(task.sigma, NOISELESS_SIGMA)


def bayes(task: LinearTask) -> Predictor:
    """Posterior mean under the task's prior N(β*, Ψ) and noise σ (a linear-Gaussian model)."""
    beta_star, psi, sigma = np.asarray(task.beta_star), task.psi_matrix, effective_sigma(task)
    return lambda xs, ys: estimators.bayes(xs, ys, beta_star=beta_star, psi=psi, sigma=sigma)


def final_query_setting(task: LinearTask) -> dict:
    """The task as the keyword arguments of the Zhang, Wu, Bartlett closed forms, at its final query n = K − 1."""
    return dict(
        beta_star=np.asarray(task.beta_star), psi=task.psi_matrix, h=task.h_matrix, sigma=task.sigma, n=task.n_points - 1
    )


def gd_beta_optimal(task: LinearTask) -> Predictor:
    """One-step GD-β at the closed-form optimum (β*, Γ*) for the task's context length n = K − 1."""
    opt = theory.gd_beta_optimum(**final_query_setting(task))
    return lambda xs, ys: estimators.gd_beta(xs, ys, beta0=opt.beta0, gamma=opt.gamma)


def lsa_optimal(task: LinearTask) -> Predictor:
    """The LSA at the LSA class's optimal weights for the task's n = K − 1 (theory.lsa_class_optimum)."""
    opt = theory.lsa_class_optimum(**final_query_setting(task))
    return lambda xs, ys: estimators.lsa(xs, ys, u=opt.u, w=opt.w)


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


BASELINES: dict[str, Callable[[LinearTask], Predictor]] = {
    "bayes": bayes,
    "gd_beta_optimal": gd_beta_optimal,
    "lsa_optimal": lsa_optimal,
    "ridge": ridge,
    "ols": ols,
    "zero": zero,
    "online_gd": online_gd,
    "krr": prompt_only.krr,
    "two_layer_net": prompt_only.two_layer_net,
}
