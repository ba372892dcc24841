"""Evaluate every trained model and baseline of a setting on its one evaluation set.

All learners see the same prompts, so differences between them are paired. The cube holds,
per learner, seed and position k, the mean squared error over prompts (``risk``) and its
Monte-Carlo standard error (``risk_sem``); ``query_risk`` is the risk at the final query.
Baselines do not depend on the training seed: their values repeat along ``seed``.
An experiment with a ``position_bins(n_points)`` hook also gets ``binned_risk``: per prompt, the
mean squared error over each bin of positions, then its mean and standard error over prompts (the
standard error counts the correlation between positions of one prompt).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from torch import nn

from iclab.baselines import BASELINES, Predictor
from iclab.cubes import read_cube
from iclab.experiments import EXPERIMENTS
from iclab.models import numpy_predictor
from iclab.plan import DataJob, Setting
from iclab.tasks import Batch, task_from_dict

DATA_KIND = "eval_set"
EVAL_KIND = "evaluation"


def eval_set_dataset(batch: Batch) -> xr.Dataset:
    return xr.Dataset(
        {
            "xs": (("prompt", "position", "dim"), batch.xs),
            "ys": (("prompt", "position"), batch.ys),
            "beta": (("prompt", "dim"), batch.betas),
            "covariance": (("prompt", "dim"), batch.covariances),
        }
    )


def load_eval_set(path, expected: DataJob) -> Batch:
    """Read an evaluation set and check that it was made from ``expected``."""
    ds = read_cube(path, kind=DATA_KIND)
    if ds.attrs["iclab_spec_hash"] != expected.hash:
        raise ValueError(f"{path}: evaluation set of spec {ds.attrs['iclab_spec_hash']}, expected {expected.hash}")
    return Batch(xs=ds.xs.values, ys=ds.ys.values, betas=ds.beta.values, covariances=ds.covariance.values)


@dataclass(frozen=True)
class TrainedModel:
    module: nn.Module
    cube: xr.Dataset  # loss curve, parameters, snapshots


def squared_errors(predictor: Predictor, batch: Batch, max_points: int | None = None) -> np.ndarray:
    """Squared error of every prompt at every position: (B, K).

    With ``max_points`` (a model with position embeddings for that many points) only the first
    ``max_points`` positions are predicted, from the prompts' first points (the same predictions,
    since position k sees only the points before it); later positions are NaN.
    """
    b, k_all = batch.ys.shape
    k = k_all if max_points is None else min(max_points, k_all)
    errors = np.full((b, k_all), np.nan)
    errors[:, :k] = (predictor(batch.xs[:, :k], batch.ys[:, :k]) - batch.ys[:, :k]) ** 2
    return errors


def mean_and_sem(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean over prompts (axis 0) and its standard error; NaN where a prompt has NaN."""
    return samples.mean(axis=0), samples.std(axis=0, ddof=1) / np.sqrt(len(samples))


def binned_stats(errors: np.ndarray, bins: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Per prompt the mean of ``errors`` (B, K) over each bin's positions, then mean and sem: (n_bins,) each."""
    per_prompt = np.stack([errors[:, lo : hi + 1].mean(axis=1) for lo, hi in bins], axis=1)  # (B, n_bins)
    return mean_and_sem(per_prompt)


def evaluate_setting(
    setting: Setting, batch: Batch, trained: dict[tuple[str, int], TrainedModel], chunk_size: int = 2048
) -> xr.Dataset:
    """The evaluation cube of one setting; ``trained`` maps (model name, seed) to its model.

    Risks of every learner, plus the experiment's own variables (theory curves, parameter
    diagnostics) from its ``setting_variables(setting, trained, batch)``.
    """
    task = task_from_dict(setting.task)
    experiment = EXPERIMENTS[setting.experiment]
    seeds = sorted({m["seed"] for m in setting.models})
    names = list(dict.fromkeys(m["name"] for m in setting.models))
    learners = names + setting.baselines
    errors = {}  # (learner index, seed index or None for every seed) → (B, K)
    for (name, seed), model in trained.items():
        max_points = getattr(model.module, "max_points", None)
        predictor = numpy_predictor(model.module, chunk_size)
        errors[learners.index(name), seeds.index(seed)] = squared_errors(predictor, batch, max_points)
    for name in setting.baselines:
        errors[learners.index(name), None] = squared_errors(BASELINES[name](task), batch)
    ds = risk_dataset(errors, learners, len(names), seeds, task.n_points)
    bins = getattr(experiment, "position_bins", None)
    if bins is not None:
        ds = ds.merge(binned_dataset(errors, learners, seeds, bins(task.n_points)))
    extra = experiment.setting_variables(setting, trained, batch)
    ds = xr.merge([ds, extra], join="exact", compat="no_conflicts")
    return ds.expand_dims({dim: [value] for dim, value in setting.coords.items()})


def fill(errors: dict, shape: tuple[int, ...], stats) -> tuple[np.ndarray, np.ndarray]:
    """Arrays (learner, seed, ...) of ``stats(errors)``; a baseline's (seed None) repeats along seed."""
    mean, sem = np.full(shape, np.nan), np.full(shape, np.nan)
    for (i, j), values in errors.items():
        at = (i, slice(None)) if j is None else (i, j)
        mean[at], sem[at] = stats(values)
    return mean, sem


def risk_dataset(errors: dict, learners: list[str], n_trained: int, seeds: list[int], k: int) -> xr.Dataset:
    risk, sem = fill(errors, (len(learners), len(seeds), k), mean_and_sem)
    ds = xr.Dataset(
        {"risk": (("learner", "seed", "position"), risk), "risk_sem": (("learner", "seed", "position"), sem)},
        coords={
            "learner": learners,
            "learner_kind": ("learner", ["trained"] * n_trained + ["baseline"] * (len(learners) - n_trained)),
            "seed": seeds,
            "position": np.arange(k),
        },
    )
    ds["query_risk"] = ds.risk.isel(position=-1, drop=True)
    ds["query_risk_sem"] = ds.risk_sem.isel(position=-1, drop=True)
    return ds


def binned_dataset(errors: dict, learners: list[str], seeds: list[int], bins: list[tuple[int, int]]) -> xr.Dataset:
    """``binned_risk`` and its sem per learner, seed and bin of positions [bin_first, bin_last]."""
    risk, sem = fill(errors, (len(learners), len(seeds), len(bins)), lambda e: binned_stats(e, bins))
    dims = ("learner", "seed", "position_bin")
    return xr.Dataset(
        {"binned_risk": (dims, risk), "binned_risk_sem": (dims, sem)},
        coords={
            "learner": learners,
            "seed": seeds,
            "position_bin": np.arange(len(bins)),
            "bin_first": ("position_bin", [lo for lo, _ in bins]),
            "bin_last": ("position_bin", [hi for _, hi in bins]),
        },
    )
