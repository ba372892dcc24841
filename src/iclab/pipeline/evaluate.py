"""Evaluate every trained model and baseline of a setting on its one evaluation set, and compute
an experiment's theory from its specs, data sets and trained weights.

All learners see the same prompts, so differences between them are paired. Each learner predicts
once (per seed); the evaluation cube holds, per learner, seed and position k, the mean squared
error over prompts (``risk``), its Monte-Carlo standard error (``risk_sem``) and its means over
``intervals.PROMPT_GROUPS`` groups of prompts (``risk_groups``, batch means: claims pair learners and
positions on the same prompts with them); ``query_risk`` is
the risk at the final query, and the experiment's ``derived`` variables come from the same
predictions. Baselines do not depend on the training seed: their values repeat along ``seed``, and
a setting without trained models (baselines and theory only) has no ``seed`` dimension.
An experiment with ``position_bins`` also gets ``binned_risk``: per prompt, the mean squared error
over each bin of positions, then its mean and standard error over prompts (the standard error
counts the correlation between positions of one prompt).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import numpy as np
import xarray as xr

from iclab.learners.baselines import BASELINES, Predictor
from iclab.store.cubes import combine
from iclab.experiments.base import Evaluation, Experiment, Setting, TheoryInputs
from iclab.stats.intervals import group_means, mean_and_sem
from iclab.models import numpy_predictor
from iclab.tasks import Batch
from iclab.store.trained import TrainedModel

log = logging.getLogger("iclab.pipeline.evaluate")


def predict(predictor: Predictor, batch: Batch, max_points: int | None = None) -> np.ndarray:
    """Predictions for every prompt at every position: (B, K).

    With ``max_points`` (a model with position embeddings for that many points) only the first
    ``max_points`` positions are predicted, from the prompts' first points (the same predictions,
    since position k sees only the points before it); later positions are NaN.
    """
    b, k_all = batch.ys.shape
    k = k_all if max_points is None else min(max_points, k_all)
    out = np.full((b, k_all), np.nan)
    out[:, :k] = predictor(batch.xs[:, :k], batch.ys[:, :k])
    return out


def bin_means(errors: np.ndarray, bins: list[tuple[int, int]]) -> np.ndarray:
    """Per prompt the mean of ``errors`` (B, K) over each bin's positions: (B, n_bins)."""
    return np.stack([errors[:, lo : hi + 1].mean(axis=1) for lo, hi in bins], axis=1)


def all_predictions(
    setting: Setting,
    batch: Batch,
    models: dict[tuple[str, int], TrainedModel],
    chunk_size: int,
    precomputed: dict[str, dict[str, Any]] | None = None,
) -> dict[tuple[str, int | None], np.ndarray]:
    """Every learner's predictions (B, K), once: trained models by (label, seed), baselines by (name, None).
    A trained model predicts as many positions as its position table holds and, where the setting's
    ``analysis["predicted_points"]`` names its label, no more than that (later positions NaN). ``precomputed``:
    baseline name → keyword arguments its own job computed (the LSA class optimum of ``lsa_optimal``)."""
    predictions: dict[tuple[str, int | None], np.ndarray] = {}
    caps = setting.analysis.get("predicted_points", {})
    for key, model in models.items():
        limits = [n for n in (getattr(model.module, "max_points", None), caps.get(key[0])) if n is not None]
        with timed(PREDICTED_LINE, learner=key[0], seed=key[1], prompts=len(batch.ys)):
            predictions[key] = predict(numpy_predictor(model.module, chunk_size), batch, min(limits, default=None))
    options, precomputed = setting.analysis.get("baseline_options", {}), precomputed or {}
    for name in setting.baselines:
        with timed(BUILT_LINE, learner=name):
            predictor = BASELINES[name](setting.eval_task, **options.get(name, {}), **precomputed.get(name, {}))
        with timed(PREDICTED_LINE, learner=name, seed="-", prompts=len(batch.ys)):
            predictions[name, None] = predict(predictor, batch)
    return predictions


# Read by iclab.compute.cost: a baseline's construction (a BFGS, a tuning on held-out prompts) does not grow with the
# evaluation prompts, its predictions do.
PREDICTED_LINE = "predicted: {learner} seed {seed} on {prompts} prompts in {seconds:.3f} s"
BUILT_LINE = "built: {learner} in {seconds:.3f} s"


@contextmanager
def timed(line: str, **fields: object):
    """Log ``line`` with ``fields`` and the wall seconds of the block."""
    started = time.perf_counter()
    yield
    log.info(line.format(**fields, seconds=time.perf_counter() - started))


def evaluate_setting(
    experiment: Experiment,
    setting: Setting,
    data: dict[str, Batch],
    models: dict[tuple[str, int], TrainedModel],
    chunk_size: int = 2048,
    precomputed: dict[str, dict[str, Any]] | None = None,
) -> xr.Dataset:
    """The evaluation cube of one setting: risks of every learner, and the experiment's derived variables
    (``precomputed``: as all_predictions')."""
    batch = data["eval"]
    predictions = all_predictions(setting, batch, models, chunk_size, precomputed)
    learners, seeds = setting.labels + setting.baselines, setting.seeds
    errors = {  # (learner index, seed index or None for every seed) → (B, K)
        (learners.index(name), None if seed is None else seeds.index(seed)): (values - batch.ys) ** 2
        for (name, seed), values in predictions.items()
    }
    axis = seeds or [0]  # baselines only: one entry, dropped below (no training seed to index)
    ds = risk_dataset(errors, learners, len(setting.labels), axis, batch.ys.shape[1])
    if experiment.position_bins is not None:
        ds = ds.merge(binned_dataset(errors, learners, axis, experiment.position_bins(batch.ys.shape[1])))
    if not seeds:
        ds = ds.isel(seed=0, drop=True)
    if experiment.derived is not None:
        extra = experiment.derived(Evaluation(setting=setting, data=data, predictions=predictions, models=models))
        ds = xr.merge([ds, extra], join="exact", compat="no_conflicts")
    return with_sweep_coords(ds, setting)


def with_sweep_coords(ds: xr.Dataset, setting: Setting) -> xr.Dataset:
    return ds.expand_dims({dim: [value] for dim, value in setting.coords.items()})


def fill(errors: dict, learners_seeds: tuple[int, int], stats) -> tuple[np.ndarray, ...]:
    """Arrays (learner, seed, ...) of each output of ``stats(errors)``; a baseline's (seed None) repeats along
    seed."""
    outputs = None
    for (i, j), values in errors.items():
        results = stats(values)
        if outputs is None:
            outputs = [np.full(learners_seeds + np.shape(r), np.nan, dtype=np.asarray(r).dtype) for r in results]
        at = (i, slice(None)) if j is None else (i, j)
        for out, result in zip(outputs, results):
            out[at] = result
    return tuple(outputs)


def prompt_stats(per_prompt: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and sem over prompts of per-prompt values (B, ...), and their means over groups of prompts (float32,
    groups last: (..., G)), from which claims pair learners and positions on the same prompts."""
    mean, sem = mean_and_sem(per_prompt)
    return mean, sem, np.moveaxis(group_means(per_prompt), 0, -1).astype(np.float32)


def risk_dataset(errors: dict, learners: list[str], n_trained: int, seeds: list[int], k: int) -> xr.Dataset:
    risk, sem, groups = fill(errors, (len(learners), len(seeds)), prompt_stats)
    dims = ("learner", "seed", "position")
    ds = xr.Dataset(
        {"risk": (dims, risk), "risk_sem": (dims, sem), "risk_groups": ((*dims, "prompt_group"), groups)},
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
    risk, sem, groups = fill(errors, (len(learners), len(seeds)), lambda e: prompt_stats(bin_means(e, bins)))
    dims = ("learner", "seed", "position_bin")
    return xr.Dataset(
        {
            "binned_risk": (dims, risk),
            "binned_risk_sem": (dims, sem),
            "binned_risk_groups": ((*dims, "prompt_group"), groups),
        },
        coords={
            "learner": learners,
            "seed": seeds,
            "position_bin": np.arange(len(bins)),
            "bin_first": ("position_bin", [lo for lo, _ in bins]),
            "bin_last": ("position_bin", [hi for _, hi in bins]),
        },
    )


def theory_dataset(
    experiment: Experiment,
    settings: list[Setting],
    order: dict,
    load_data: Callable[[str], Batch],
    load_model: Callable[[str], TrainedModel],
    load_lsa_optimum: Callable[[dict[str, Any]], Any],
) -> xr.Dataset:
    """The experiment's theory for every setting, sweep values as coordinates (empty without a theory hook)."""
    if experiment.theory is None:
        return xr.Dataset()
    parts = [
        with_sweep_coords(experiment.theory(TheoryInputs(setting, load_data, load_model, load_lsa_optimum)), setting)
        for setting in settings
    ]
    return combine(parts, order)
