"""Evaluate every trained model and baseline of a setting on its one evaluation set.

All learners see the same prompts, so differences between them are paired. The cube holds,
per learner, seed and position k, the mean squared error over prompts (``risk``) and its
Monte-Carlo standard error (``risk_sem``); ``query_risk`` is the risk at the final query.
Baselines do not depend on the training seed: their values repeat along ``seed``.
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


def error_stats(predictor: Predictor, batch: Batch, max_points: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error over prompts of the squared error at every position: (K,), (K,).

    With ``max_points`` (a model with position embeddings for that many points) only the first
    ``max_points`` positions are predicted, from the prompts' first points (the same predictions,
    since position k sees only the points before it); later positions are NaN.
    """
    k = batch.ys.shape[1] if max_points is None else min(max_points, batch.ys.shape[1])
    errors = (predictor(batch.xs[:, :k], batch.ys[:, :k]) - batch.ys[:, :k]) ** 2  # (B, k)
    mean, sem = np.full(batch.ys.shape[1], np.nan), np.full(batch.ys.shape[1], np.nan)
    mean[:k], sem[:k] = errors.mean(axis=0), errors.std(axis=0, ddof=1) / np.sqrt(len(errors))
    return mean, sem


def evaluate_setting(
    setting: Setting, batch: Batch, trained: dict[tuple[str, int], TrainedModel], chunk_size: int = 2048
) -> xr.Dataset:
    """The evaluation cube of one setting; ``trained`` maps (model name, seed) to its model.

    Risks of every learner, plus the experiment's own variables (theory curves, parameter
    diagnostics) from its ``setting_variables(setting, trained, batch)``.
    """
    task = task_from_dict(setting.task)
    seeds = sorted({m["seed"] for m in setting.models})
    names = list(dict.fromkeys(m["name"] for m in setting.models))
    learners = names + setting.baselines
    k = task.n_points
    risk = np.full((len(learners), len(seeds), k), np.nan)
    sem = np.full_like(risk, np.nan)
    for (name, seed), model in trained.items():
        i, j = learners.index(name), seeds.index(seed)
        max_points = getattr(model.module, "max_points", None)
        risk[i, j], sem[i, j] = error_stats(numpy_predictor(model.module, chunk_size), batch, max_points)
    for name in setting.baselines:
        i = learners.index(name)
        risk[i, :], sem[i, :] = error_stats(BASELINES[name](task), batch)
    ds = xr.Dataset(
        {"risk": (("learner", "seed", "position"), risk), "risk_sem": (("learner", "seed", "position"), sem)},
        coords={
            "learner": learners,
            "learner_kind": ("learner", ["trained"] * len(names) + ["baseline"] * len(setting.baselines)),
            "seed": seeds,
            "position": np.arange(k),
        },
    )
    ds["query_risk"] = ds.risk.isel(position=-1, drop=True)
    ds["query_risk_sem"] = ds.risk_sem.isel(position=-1, drop=True)
    extra = EXPERIMENTS[setting.experiment].setting_variables(setting, trained, batch)
    ds = xr.merge([ds, extra], join="exact", compat="no_conflicts")
    return ds.expand_dims({dim: [value] for dim, value in setting.coords.items()})
