"""Zhang, Frei, Bartlett 2024, Figure 1: GPT-2 trained on prompts with a fixed (identity) or a
random (diagonal, i.i.d. Exponential(1)) covariance, tested on the fixed covariance and on random
covariances scaled by c; the final query's error, divided by d, against the number of in-context
examples M, including M beyond the training length N (where the error spikes).

References on the same axes: least squares, the zero estimator, and the LSA limit of the theory
for the same training distribution (A = Γ_N⁻¹ for the fixed covariance, Theorem 4; A = K of
Theorem 8 for random covariances), its exact error averaged over the test prompts' covariances.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from iclab.experiments.base import Evaluation, Experiment, SweepPoint, TheoryInputs, gpt2_spec
from iclab.experiments.zfb_figure1.conditions import FIXED, RANDOM, random_test
from iclab.stats.intervals import bootstrap_band
from iclab.tasks import LinearTask
from iclab.theory import lsa as lsa_theory


def task_for(d: int, n_points: int, covariance: str, scale: float = 1.0) -> LinearTask:
    kind = "identity" if covariance == FIXED else "random_exponential"
    return LinearTask(
        d=d, n_points=n_points, beta_star=(0.0,) * d, psi=1.0, sigma=0.0, covariance=kind, covariance_scale=scale
    )


def test_conditions(cfg: dict[str, Any]) -> dict[str, tuple[str, float]]:
    """Test label → (covariance kind, scale c): the fixed covariance, and random ones scaled by c."""
    return {FIXED: (FIXED, 1.0)} | {random_test(c): (RANDOM, float(c)) for c in cfg["test_scales"]}


def sweep(cfg: dict[str, Any]) -> list[SweepPoint]:
    d, m_points = cfg["d"], cfg["m_max"] + 1
    model = gpt2_spec(cfg["model"], m_points)
    points = []
    for train_cov in cfg["train_covariances"]:
        for n in cfg["n"]:
            train_task = task_for(d, n + 1, train_cov).to_dict()
            for label, (test_cov, scale) in test_conditions(cfg).items():
                points.append(
                    SweepPoint(
                        coords={"train": train_cov, "n": n, "test": label},
                        task=train_task,
                        models=[model],
                        train=cfg["train"],
                        eval_task=task_for(d, m_points, test_cov, scale).to_dict(),
                    )
                )
    return points


def theory(inputs: TheoryInputs) -> xr.Dataset:
    """The LSA limit's error/d for the training distribution, averaged over the evaluation prompts'
    covariances: A = Γ_N⁻¹ (fixed covariance, Theorem 4), A = K (random covariances, Theorem 8)."""
    batch = inputs.data()
    d, n = batch.xs.shape[-1], inputs.setting.coords["n"]
    if inputs.setting.coords["train"] == FIXED:
        a = np.linalg.inv(lsa_theory.gamma_matrix(np.eye(d), n))
    else:
        a = lsa_theory.exponential_kq_limit(d, n, 1.0)
    error = lsa_theory.limit_error_over_covariances(a, batch.covariances, batch.xs.shape[1] - 1)
    return xr.Dataset(
        {"lsa_limit_error": (("position",), error / d), "d": d}, coords={"position": np.arange(batch.xs.shape[1])}
    )


def derived(evaluation: Evaluation) -> xr.Dataset:
    """GPT-2's error/d per position (per-prompt errors averaged over training seeds) and its 90%
    bootstrap band over prompts (the paper's)."""
    batch = evaluation.batch
    d = batch.xs.shape[-1]
    errors = np.mean((evaluation.trained("gpt2") - batch.ys) ** 2, axis=0)  # (B, K): averaged over seeds
    low, high = bootstrap_band(errors / d)
    return xr.Dataset(
        {
            "gpt2_error": (("position",), errors.mean(axis=0) / d),
            "gpt2_band_low": (("position",), low),
            "gpt2_band_high": (("position",), high),
        },
        coords={"position": np.arange(batch.xs.shape[1])},
    )


EXPERIMENT = Experiment(name="zfb_figure1", sweep=sweep, theory=theory, derived=derived)
