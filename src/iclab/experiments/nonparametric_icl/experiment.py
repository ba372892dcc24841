"""Kim, Nakamaki, Suzuki 2024 (NeurIPS; the first part of Suzuki's 2024 talk): transformers as nonparametric
in-context learners. The talk shows no experiment for this part: the design is iclab's.

Tasks F_t = β_tᵀf°(x) over a fixed orthonormal basis (``tasks.nonparametric``); the model is an MLP feature map
φ: R^d → R^N followed by one linear attention layer (``models.feature_attention``), pretrained on a finite set of
T prompts (``train.pretraining_prompts``; many epochs), one sweep point per T (coordinate ``pretraining_tasks``).
Baselines on the same test prompts: the Bayes posterior mean that knows f° and the prior (``basis_bayes``),
kernel ridge on the test prompt alone (``krr``, tuned on held-out prompts over bandwidths for inputs in [0, 1]^d)
and the zero predictor.

Theory per T: the known-basis Bayes risk at every context length (``theory.nonparametric.bayes_risk_curve``), the
risk of the attention layer on the true features at its optimal Γ for each n and at the one Γ best on average over
n = 1..n_max (what training at every position aims for), the rate exponent −2s/(2s+1); per trained model its risk
on its own pretraining prompts (memorisation), the prior-weighted share of f° outside span φ and the largest
principal angle between span φ and the leading basis functions.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import xarray as xr

from iclab.errors import ExperimentError
from iclab.experiments.base import Experiment, SweepPoint, TheoryInputs, log_position_bins
from iclab.stats.intervals import mean_and_sem
from iclab.tasks import NonparametricTask
from iclab.theory import nonparametric as theory_np

THEORY_SEED = 12345  # the designs and inputs on which the theory's expectations are averaged
CHUNK = 1024  # prompts per forward pass when the theory job evaluates a model on its pretraining set


def task_for(cfg: dict[str, Any]) -> NonparametricTask:
    return NonparametricTask(
        d=cfg["d"],
        n_points=cfg["n"] + 1,
        n_basis=cfg["n_basis"],
        max_frequency=cfg["max_frequency"],
        s=cfg["s"],
        sigma=cfg["sigma"],
    )


def check(cfg: dict[str, Any]) -> None:
    """Constraints between keys that the schema cannot state, named by key."""
    if cfg["angle_functions"] > min(cfg["features"], cfg["n_basis"]):
        raise ExperimentError(
            f"nonparametric_icl: angle_functions ({cfg['angle_functions']}) must be at most features "
            f"({cfg['features']}) and n_basis ({cfg['n_basis']})"
        )
    if cfg["fit_from"] > cfg["n"] // 2:
        raise ExperimentError(
            f"nonparametric_icl: fit_from ({cfg['fit_from']}) must be at most n/2 ({cfg['n'] // 2}): the slopes "
            "are fitted over at least two octaves of positions"
        )
    try:
        task_for(cfg)  # n_basis against the basis functions there are
    except ValueError as error:
        raise ExperimentError(f"nonparametric_icl: {error}") from None


def sweep(cfg: dict[str, Any]) -> list[SweepPoint]:
    check(cfg)
    model = {"name": "feature_attention", "features": cfg["features"], "width": cfg["width"], "depth": cfg["depth"]}
    options = {"krr": {"bandwidths": cfg["krr_bandwidths"]}}
    analysis = {
        "baseline_options": options,
        "theory_samples": cfg["theory_samples"],
        "pretraining_eval": cfg["pretraining_eval"],
        "angle_functions": cfg["angle_functions"],
        "fit_from": cfg["fit_from"],
    }
    return [
        SweepPoint(
            coords={"pretraining_tasks": t},
            task=task_for(cfg).to_dict(),
            models=[model],
            train=cfg["train"] | {"pretraining_prompts": t},
            analysis=analysis,
        )
        for t in cfg["pretraining_tasks"]
    ]


def position_bins(n_points: int) -> list[tuple[int, int]]:
    """Octaves of context lengths 1, 2–3, 4–7, …, n/2..n: the risk pooled over each (the slopes' points)."""
    return log_position_bins(1, n_points - 1, 1)


@lru_cache(maxsize=1)
def known_basis_curves(task: NonparametricTask, samples: int) -> dict[str, tuple]:
    """The theory's curves over context lengths k = 0..n: the Bayes risk (with its Monte-Carlo s.e. over
    ``samples`` designs), and the attention layer on the true features at Γ_k and at the single best Γ. The same for
    every T (every setting has this task): computed once per theory job."""
    import torch  # here, not at the top: the plan imports every experiment module

    from iclab.tasks.samplers.nonparametric import features as basis_features

    gen = torch.Generator().manual_seed(THEORY_SEED)
    n = task.n_points - 1
    xs = torch.rand(samples, n, task.d, generator=gen, dtype=torch.float64)  # (D, n, d)
    designs = basis_features(task, xs).numpy()  # (D, n, J)
    bayes, bayes_sem = theory_np.bayes_risk_curve(designs, task.variances, task.sigma)
    m4 = theory_np.fourth_moment(designs.reshape(-1, task.n_basis), task.variances)
    args = (task.variances, task.sigma, m4)
    optimal = [theory_np.attention_risk(theory_np.attention_optimum(max(k, 1), *args), k, *args) for k in range(n + 1)]
    single = theory_np.single_gamma(n, *args)
    single_risk = [theory_np.attention_risk(single, k, *args) for k in range(n + 1)]
    return {
        "bayes_risk": (("position",), bayes),
        "bayes_risk_sem": (("position",), bayes_sem),
        "attention_optimum_risk": (("position",), np.array(optimal)),
        "single_gamma_risk": (("position",), np.array(single_risk)),
    }


def pretraining_risk(inputs: TheoryInputs, label: str, seed: int, bin_positions: tuple[int, int]) -> tuple:
    """The model's risk on (up to ``pretraining_eval`` of) its own pretraining prompts, over the positions of
    ``bin_positions``: mean and s.e. over prompts."""
    from iclab.models import numpy_predictor
    from iclab.tasks.samplers import pretraining_set

    job = inputs.setting.training_job(label, seed)
    pool = pretraining_set(job.training_task(), seed, job.train.pretraining_prompts)
    count = min(len(pool.ys), inputs.setting.analysis["pretraining_eval"])
    xs, ys = pool.xs[:count].astype(np.float64), pool.ys[:count].astype(np.float64)
    predictions = numpy_predictor(inputs.models[label, seed].module, CHUNK)(xs, ys)  # (B, K)
    lo, hi = bin_positions
    per_prompt = ((predictions - ys)[:, lo : hi + 1] ** 2).mean(axis=1)  # (B,)
    mean, sem = mean_and_sem(per_prompt)
    return float(mean), float(sem) if count > 1 else np.nan


def feature_coverage(inputs: TheoryInputs, label: str, seed: int, xs) -> tuple[float, float]:
    """(share of f° outside span φ weighted by the prior, largest principal angle to the leading basis functions)."""
    import torch

    from iclab.tasks.samplers.nonparametric import features as basis_features

    task = inputs.setting.eval_task
    with torch.no_grad():
        phi = inputs.models[label, seed].module.features(xs.float()).double().numpy()  # (S, N)
    basis = basis_features(task, xs).numpy()  # (S, J)
    m = inputs.setting.analysis["angle_functions"]
    return theory_np.feature_residual(phi, basis, task.variances), theory_np.leading_angle(phi, basis, m)


def theory(inputs: TheoryInputs) -> xr.Dataset:
    import torch

    setting = inputs.setting
    task, label, seeds = setting.eval_task, setting.labels[0], setting.seeds
    samples = setting.analysis["theory_samples"]
    gen = torch.Generator().manual_seed(THEORY_SEED + 1)
    xs = torch.rand(samples * 8, task.d, generator=gen, dtype=torch.float64)  # inputs of the coverage measures
    last_bin = position_bins(task.n_points)[-1]
    memorised = np.array([pretraining_risk(inputs, label, seed, last_bin) for seed in seeds])  # (S, 2)
    coverage = np.array([feature_coverage(inputs, label, seed, xs) for seed in seeds])  # (S, 2)
    return xr.Dataset(
        {
            **known_basis_curves(task, samples),
            "pretraining_risk": (("seed",), memorised[:, 0]),
            "pretraining_risk_sem": (("seed",), memorised[:, 1]),
            "feature_residual": (("seed",), coverage[:, 0]),
            "principal_angle": (("seed",), coverage[:, 1]),
            "rate_exponent": theory_np.rate_exponent(task.s),
            "noise_variance": task.sigma**2,
            "fit_from": setting.analysis["fit_from"],  # the slopes' first context length (figure and claims)
            "angle_functions": setting.analysis["angle_functions"],
        },
        coords={"seed": seeds, "position": np.arange(task.n_points)},
    )


EXPERIMENT = Experiment(name="nonparametric_icl", sweep=sweep, theory=theory, position_bins=position_bins)
