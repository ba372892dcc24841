"""Zhang, Frei, Bartlett 2024, §5: the trained LSA under distribution shift.

One LSA (trained per seed on noiseless prompts, w ~ N(0, I), x ~ N(0, Λ), length N) is tested on
- covariate shift: every test covariate scaled by c (covariance c²Λ); the LSA then predicts
  ≈ c²·y (its gain E[ŷy]/E[y²] = c² tr(ΛΓ⁻¹Λ)/tr Λ), so its error grows while least squares is unaffected;
- task shift: noisy labels (σ > 0) and nonlinear labels y = max(⟨w, x⟩, 0): tolerated (Theorem 5);
- query shift: a query covariance different from the context's, and a query orthogonal to the
  context (prompts of length N; only the final position is shifted).
GPT-2 (optional, Garg et al.'s prompts) is trained on the same prompts and compared at M ≤ N.
Theory: expected_error / Theorem 5 for the limit A = Γ_N⁻¹ of the trained model.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from iclab.experiments.base import Evaluation, Experiment, SweepPoint, TheoryInputs, gpt2_spec
from iclab.experiments.lsa_convergence.experiment import task_for
from iclab.experiments.lsa_rates.experiment import limit_options
from iclab.experiments.lsa_shifts.conditions import (
    NOISY_LABELS,
    ORTHOGONAL_QUERY,
    QUERY_COVARIANCE,
    RELU_LABELS,
    covariate_condition,
)
from iclab.tasks import LinearTask
from iclab.theory import lsa as lsa_theory

NO_SCALE = float("nan")


def conditions(cfg: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Condition name → evaluation task spec (validated through LinearTask)."""
    lam = np.asarray(cfg["spectrum"], dtype=float)
    d, half = len(lam), len(lam) // 2
    long = task_for(cfg | {"n": cfg["m_max"]}, list(lam)).to_dict()
    at_n = task_for(cfg, list(lam)).to_dict()
    out = {covariate_condition(c): long | {"covariance_values": list(c**2 * lam)} for c in cfg["covariate_scales"]}
    out[NOISY_LABELS] = long | {"sigma": cfg["label_noise"]}
    out[RELU_LABELS] = long | {"label": "relu"}
    out[QUERY_COVARIANCE] = at_n | {"query_covariance_values": list(cfg["query_spectrum"])}
    context = np.where(np.arange(d) < d - half, lam, 0.0)
    out[ORTHOGONAL_QUERY] = at_n | {
        "covariance_values": list(context),
        "query_covariance_values": list(lam - context),
    }
    return {name: LinearTask.from_dict(task).to_dict() for name, task in out.items()}


def learners(cfg: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """Model specs and per-model training configs: the LSA, and GPT-2 when configured.

    GPT-2 has position embeddings for ``gpt2_positions`` points (default: the training length); it is compared
    at M ≤ N only.
    """
    models = [{"name": "lsa", "init": "zfb", "init_scale": cfg["init_scale"]}]
    if "gpt2" not in cfg:
        return models, {}
    positions = cfg.get("gpt2_positions", cfg["n"] + 1)
    return models + [gpt2_spec(cfg["gpt2"]["model"], positions)], {"gpt2": cfg["gpt2"]["train"]}


def sweep(cfg: dict[str, Any]) -> list[SweepPoint]:
    models, model_train = learners(cfg)
    train_task = task_for(cfg, cfg["spectrum"])
    # GPT-2's prompts are the LSA's, spelled as zfb_figure1 spells them (Λ = I: "identity"), so that it can share
    # that experiment's GPT-2s (same draws: LinearTask.canonical)
    gpt2_task = {"gpt2": train_task.canonical().to_dict()} if model_train else {}
    analysis = {"predicted_points": {"gpt2": cfg["n"] + 1}} if model_train else {}  # compared at M ≤ N only
    analysis |= limit_options(cfg, np.diag(cfg["spectrum"]), cfg["n"])
    return [
        SweepPoint(
            coords={"condition": name},
            task=train_task.to_dict(),
            models=models,
            train=cfg["train"],
            eval_task=task,
            model_train=model_train,
            model_task=gpt2_task,
            analysis=analysis,
        )
        for name, task in conditions(cfg).items()
    ]


def covariate_scale(task: LinearTask, train_task: LinearTask) -> float:
    """c when the evaluation task is the training task with covariates scaled by c, else NaN."""
    same_labels = task.label == train_task.label and task.sigma == train_task.sigma
    ratio = np.diag(task.h_matrix) / np.diag(train_task.h_matrix)
    if not same_labels or task.query_covariance_values is not None or not np.allclose(ratio, ratio[0]):
        return NO_SCALE
    return float(np.sqrt(ratio[0]))


def theory_curve(task: LinearTask, train_lam: np.ndarray, n: int) -> np.ndarray:
    """Exact error of the limit ŷ = x_qᵀΓ_N⁻¹ĥ at every position of the evaluation prompts."""
    gamma_inv = np.linalg.inv(lsa_theory.gamma_matrix(train_lam, n))
    lam = np.diag(task.h_matrix)
    positions = task.n_points
    curve = np.full(positions, np.nan)
    if task.query_covariance_values is not None:
        query = np.asarray(task.query_covariance_values)
        if np.all(lam > 0):
            curve[-1] = lsa_theory.expected_error(gamma_inv, np.diag(lam), positions - 1, lam_query=np.diag(query))
        else:  # Γ⁻¹ is diagonal and the query lives where the context does not: ŷ = 0, error E y_q² = tr Λ_q
            curve[-1] = query.sum()
        return curve
    if task.label == "relu":
        curve[1:] = [lsa_theory.relu_theorem5_error(np.diag(lam), n, m, task.sigma) for m in range(1, positions)]
        return curve
    curve[1:] = [lsa_theory.expected_error(gamma_inv, np.diag(lam), m, sigma=task.sigma) for m in range(1, positions)]
    return curve


def gain(y_hat: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of predictions on labels, E[ŷy]/E[y²]."""
    return float(np.mean(y_hat * y) / np.mean(y * y))


def theory(inputs: TheoryInputs) -> xr.Dataset:
    """The limit model's error at every position, the condition's covariate scale, and the limit's
    gain E[ŷy]/E[y²] = tr(ΛΓ⁻¹Λ)/tr Λ (E ĥ = Λw; w ~ N(0, I)): for the training labels with scaled
    covariates only (NaN for the other conditions: label noise and ReLU labels change E[y²])."""
    task = inputs.setting.eval_task
    train_task = inputs.setting.training_task("lsa")
    train_lam, n = train_task.h_matrix, train_task.n_points - 1
    gamma_inv = np.linalg.inv(lsa_theory.gamma_matrix(train_lam, n))
    lam, scale = task.h_matrix, covariate_scale(task, train_task)
    theory_gain = float(np.trace(lam @ gamma_inv @ lam) / np.trace(lam)) if np.isfinite(scale) else np.nan
    return xr.Dataset(
        {
            "theory_error": (("position",), theory_curve(task, train_lam, n)),
            "theory_gain": theory_gain,
            "covariate_scale": scale,
            "train_n": n,
        },
        coords={"position": np.arange(task.n_points)},
    )


def derived(evaluation: Evaluation) -> xr.Dataset:
    """The trained LSA's gain E[ŷy]/E[y²] at the final query, per seed."""
    y = evaluation.batch.ys[:, -1]
    gains = [gain(y_hat[:, -1], y) for y_hat in evaluation.trained("lsa")]
    return xr.Dataset({"lsa_gain": (("seed",), gains)}, coords={"seed": evaluation.setting.seeds})


EXPERIMENT = Experiment(name="lsa_shifts", sweep=sweep, theory=theory, derived=derived)
