"""Zhang, Frei, Bartlett 2024, Theorem 8: LSA trained on prompts whose covariance is itself random,
Λ_τ = diag(λ₁..λ_d), λᵢ i.i.d. Exponential(1)·scale.

The trained u₋₁U₁₁ converges to K = E[Λ²]·(E[ΓΛ²])⁻¹ (a multiple of I for i.i.d. entries), so on a
new prompt with covariance Λ_new the prediction tends, as M → ∞, to x_qᵀ K Λ_new w, not to x_qᵀw:
the model does not adapt to the prompt's covariance, and least squares does better.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from iclab.experiments.base import Evaluation, Experiment, SweepPoint, TheoryInputs
from iclab.stats.intervals import ratio_and_sem
from iclab.tasks import LinearTask
from iclab.theory import lsa as lsa_theory


def task_for(cfg: dict[str, Any], n_points: int) -> LinearTask:
    d = cfg["d"]
    return LinearTask(
        d=d,
        n_points=n_points,
        beta_star=(0.0,) * d,
        psi=1.0,
        sigma=0.0,
        covariance="random_exponential",
        covariance_scale=cfg["scale"],
    )


def sweep(cfg: dict[str, Any]) -> list[SweepPoint]:
    model = {"name": "lsa", "init": "zfb", "init_scale": cfg["init_scale"]}
    eval_task = task_for(cfg, cfg["m_max"] + 1).to_dict()
    return [
        SweepPoint(
            coords={"n": n},
            task=task_for(cfg, n + 1).to_dict(),
            models=[model],
            train=cfg["train"],
            eval_task=eval_task,
            analysis=limit_options(cfg, n),
        )
        for n in cfg["n"]
    ]


def limit_options(cfg: dict[str, Any], n: int) -> dict[str, Any]:
    """The lsa_limit baseline's A = K of Theorem 8 for training prompts of length n, where the config lists it."""
    if "lsa_limit" not in cfg.get("baselines", []):
        return {}
    return {"baseline_options": {"lsa_limit": {"a": lsa_theory.exponential_kq_limit(cfg["d"], n, cfg["scale"]).tolist()}}}


def limit_matrix(setting) -> np.ndarray:
    """K of Theorem 8 for the setting's training distribution: (d, d)."""
    train_task = setting.training_task("lsa")
    return lsa_theory.exponential_kq_limit(train_task.d, train_task.n_points - 1, train_task.covariance_scale)


def theory(inputs: TheoryInputs) -> xr.Dataset:
    """Learned u₋₁U₁₁ against K, and the limit model's prediction gap and error averaged over the
    evaluation prompts' covariances."""
    d, m_max = inputs.setting.eval_task.d, inputs.setting.eval_task.n_points - 1
    k = limit_matrix(inputs.setting)
    covariances = inputs.data().covariances
    products = np.stack([model.module.reduced_weights().product for model in inputs.trained("lsa")])  # (seeds, d, d)
    return xr.Dataset(
        {
            "product_learned": (("seed", "row", "col"), products),
            "product_limit": (("row", "col"), k),
            "theory_gap": (("position",), lsa_theory.limit_prediction_gap(k, covariances, m_max)),
            "theory_error": (("position",), lsa_theory.limit_error_over_covariances(k, covariances, m_max)),
        },
        coords={
            "seed": inputs.setting.seeds,
            "row": np.arange(d),
            "col": np.arange(d),
            "position": np.arange(m_max + 1),
        },
    )


def derived(evaluation: Evaluation) -> xr.Dataset:
    """E(ŷ − x_qᵀKΛ_new w)² / E(x_qᵀKΛ_new w)² of the trained LSA at every position, per seed, and its evaluation
    prompts' standard error (delta method)."""
    batch = evaluation.batch
    target = lsa_theory.limit_predictions(batch.xs, batch.covariances, batch.betas, limit_matrix(evaluation.setting))
    with np.errstate(invalid="ignore", divide="ignore"):  # position 0: no context, target 0, the ratio undefined
        gaps, sems = zip(*(ratio_and_sem((y_hat - target) ** 2, target**2) for y_hat in evaluation.trained("lsa")))
    dims = ("seed", "position")
    return xr.Dataset(
        {"prediction_gap": (dims, np.stack(gaps)), "prediction_gap_sem": (dims, np.stack(sems))},
        coords={"seed": evaluation.setting.seeds, "position": np.arange(batch.ys.shape[1])},
    )


EXPERIMENT = Experiment(name="random_covariance", sweep=sweep, theory=theory, derived=derived)
