"""Zhang, Wu, Bartlett 2024, Lemma 6.1 and Corollary 6.2: the risk of the best one-step GD-β
against the Bayes risk (the posterior mean: ridge regression centred at β*) as the number n of
context examples grows, at several signal-to-noise ratios SNR = tr(HΨ)/σ². GD-β's optimal risk
matches the Bayes risk up to a constant factor when the SNR is bounded; the factor grows with it.

Sweep: snr. Task: Ψ = psi·I, H = I, β* = ‖β*‖·1/√d, σ² = d·psi/snr; prompts of n_max + 1 points,
position n predicted from the n before it. No training.
Derived (Monte Carlo on the evaluation prompts): at every n, the squared error of the posterior mean
(the ``bayes`` baseline) and of GD-β at its optimum (β*, Γ*(n)) for that n.
Theory: the closed-form GD-β optimum risk at every n, and the Bayes risk
σ² + E tr(H(XᵀX/σ² + Ψ⁻¹)⁻¹), averaged over designs drawn apart from the evaluation prompts.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from iclab.learners import estimators
from iclab import theory as closed_form
from iclab.experiments.base import Evaluation, Experiment, SweepPoint, TheoryInputs
from iclab.experiments.ltb_gap.experiment import beta_star
from iclab.stats.intervals import mean_and_sem
from iclab.tasks import LinearTask

PREDICTORS = ("gd_beta_optimum", "bayes")  # not "method": a keyword of xarray's sel


def task_for(cfg: dict[str, Any], snr: float) -> LinearTask:
    sigma = float(np.sqrt(cfg["d"] * cfg["psi"] / snr))
    norm, d = cfg["beta_star_norm"], cfg["d"]
    return LinearTask(d=d, n_points=cfg["n_max"] + 1, beta_star=beta_star(norm, d), psi=cfg["psi"], sigma=sigma)


def sweep(cfg: dict[str, Any]) -> list[SweepPoint]:
    return [
        SweepPoint(
            coords={"snr": float(snr)},
            task=task_for(cfg, snr).to_dict(),
            models=[],
            train={},
            analysis={"bayes_designs": cfg["bayes_designs"]},
        )
        for snr in cfg["snr"]
    ]


def optimal_gammas(task: LinearTask) -> np.ndarray:
    """Γ*(n) of the GD-β optimum for every context length n = 0..K−1 (n = 0: any Γ, none is used): (K, d, d)."""
    common = dict(beta_star=np.asarray(task.beta_star), psi=task.psi_matrix, h=task.h_matrix, sigma=task.sigma)
    return np.stack([closed_form.gd_beta_optimum(**common, n=max(n, 1)).gamma for n in range(task.n_points)])


def derived(evaluation: Evaluation) -> xr.Dataset:
    batch, task = evaluation.batch, evaluation.setting.eval_task
    gd_beta = estimators.gd_beta(batch.xs, batch.ys, beta0=np.asarray(task.beta_star), gamma=optimal_gammas(task))
    errors = np.stack([(gd_beta - batch.ys) ** 2, (evaluation.predictions["bayes", None] - batch.ys) ** 2])
    risk, sem = mean_and_sem(np.moveaxis(errors, 1, 0))  # (predictor, position) each
    dims = ("predictor", "position")
    return xr.Dataset(
        {"mc_risk": (dims, risk), "mc_risk_sem": (dims, sem)},
        coords={"predictor": list(PREDICTORS), "position": np.arange(batch.ys.shape[1])},
    )


def theory(inputs: TheoryInputs) -> xr.Dataset:
    """The GD-β optimum's risk at every n (n = 0: σ² + tr(HΨ), nothing to step with), and the Bayes risk
    curve (Monte Carlo over ``bayes_designs`` designs, its standard error beside it)."""
    task = inputs.setting.eval_task
    common = dict(psi=task.psi_matrix, h=task.h_matrix, sigma=task.sigma)
    signal = float(np.trace(task.h_matrix @ task.psi_matrix))  # tr(HΨ)
    gd_beta = [task.sigma**2 + signal] + [
        closed_form.gd_beta_optimum(beta_star=np.asarray(task.beta_star), **common, n=n).risk
        for n in range(1, task.n_points)
    ]
    designs = inputs.setting.analysis["bayes_designs"]
    bayes = closed_form.bayes_risk_curve(**common, n_points=task.n_points, n_mc=designs)
    dims = ("predictor", "position")
    return xr.Dataset(
        {
            "theory_risk": (dims, np.stack([gd_beta, bayes.mean])),
            "theory_risk_sem": (dims, np.stack([np.zeros(task.n_points), bayes.sem])),
            "noise_variance": task.sigma**2,
            "signal_variance": signal,
            "dimension": task.d,
        },
        coords={"predictor": list(PREDICTORS), "position": np.arange(task.n_points)},
    )


EXPERIMENT = Experiment(name="ltb_bayes_gap", sweep=sweep, derived=derived, theory=theory)
