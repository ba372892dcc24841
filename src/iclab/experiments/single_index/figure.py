"""Figure ``single_index`` (Oko, Song, Suzuki, Wu 2024, §5): test risk against the test prompt
length n*, one row per learner (two-stage model, GPT-2, kernel ridge, two-layer network). (a) r fixed,
d varied: the pretrained models' curves coincide, the test-prompt-only learners' degrade with d.
(b) d fixed, r varied: the risk grows with r.

Risks are divided by the zero predictor's risk on the same prompts (1 = predicting 0): the labels'
heavy tails make the raw risk of every learner move together from one position to the next, and
the common factor removes that. Lines: the risk pooled over bins of n* (the evaluation's
``binned_risk``, drawn at the bin's geometric centre); learners with values at a few lengths only
(the two-layer network) are drawn at those lengths. Bands: ``iclab.intervals`` (95%, training seeds
and evaluation prompts; evaluation prompts alone for the test-prompt-only learners).
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import numpy as np
import xarray as xr

from iclab.intervals import band
from iclab.plots import LEARNER_LABELS, save, theme

STYLES = {"two_stage": "-", "gpt2": "-.", "krr": "--", "two_layer_net": ":"}


def relative_band(risk: np.ndarray, sem: np.ndarray, zero: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean over seeds of risk (P, S) / zero (P,) and its band (iclab.intervals: seeds and evaluation prompts)."""
    return tuple(values / zero for values in band(risk, sem))


def binned_relative_risk(at: xr.Dataset, learner: str) -> tuple[np.ndarray, ...] | None:
    """Bin centres, relative risk and its band over the bins; None if the learner misses positions."""
    risk = at.binned_risk.sel(learner=learner).transpose("position_bin", "seed").values  # (P, S)
    if not np.isfinite(risk).all():
        return None
    sem = at.binned_risk_sem.sel(learner=learner).transpose("position_bin", "seed").values
    zero = at.binned_risk.sel(learner="zero").isel(seed=0).values  # (P,)
    centres = np.sqrt(at.bin_first.values * at.bin_last.values)
    return (centres, *relative_band(risk, sem, zero))


def pointwise_relative_risk(at: xr.Dataset, learner: str) -> tuple[np.ndarray, ...]:
    """Positions ≥ the first bin's where the learner has a value, relative risk and its band."""
    risk = at.risk.sel(learner=learner).transpose("position", "seed").values  # (K, S)
    sem = at.risk_sem.sel(learner=learner).transpose("position", "seed").values
    zero = at.risk.sel(learner="zero").isel(seed=0).values  # (K,)
    keep = np.isfinite(risk).all(axis=1) & (at.position.values >= int(at.bin_first.values[0]))
    return (at.position.values[keep], *relative_band(risk[keep], sem[keep], zero[keep]))


def risk_panel(cube: xr.Dataset, ax: plt.Axes, learner: str, cases: list[str], varied: str) -> None:
    """One learner's relative risk against n*, one colour per case (sorted by the varied d or r)."""
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for color, case in zip(colors, sorted(cases, key=lambda c: int(cube.sel(case=c)[varied]))):
        at = cube.sel(case=case)
        binned = binned_relative_risk(at, learner)
        n, mean, lo, hi = binned if binned is not None else pointwise_relative_risk(at, learner)
        label = f"{varied} = {int(at[varied])}"
        ax.plot(n, mean, STYLES[learner], color=color, marker="o" if binned is None else ".", markersize=4, label=label)
        ax.fill_between(n, lo, hi, color=color, alpha=0.15, linewidth=0)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_ylim(0.0, 1.6)
    ax.set_xscale("log", base=2)
    ax.set_ylabel("risk / zero's")
    ax.legend(fontsize=8, loc="best")


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    """One row per learner (so that a learner's curves across d, or r, can be told apart within their
    bands), (a) d varied and (b) r varied side by side."""
    theme()
    d, r = cube.d.values, cube.r.values
    r_fixed = int(np.bincount(r.astype(int)).argmax())  # part (a): the r shared by most cases
    vary_d = [c for c, ri in zip(cube.case.values, r) if ri == r_fixed]
    d_fixed = int(np.bincount(d.astype(int)).argmax())
    vary_r = [c for c, di in zip(cube.case.values, d) if di == d_fixed]
    learners = [name for name in STYLES if name in cube.learner.values]
    size = (12.0, 2.9 * len(learners))
    fig, axes = plt.subplots(len(learners), 2, figsize=size, sharex=True, sharey=True, squeeze=False)
    for row, name in zip(axes, learners):
        risk_panel(cube, row[0], name, vary_d, "d")
        risk_panel(cube, row[1], name, vary_r, "r")
        row[0].set_title(f"{LEARNER_LABELS[name]}: (a) r = {r_fixed}, d varied", fontsize=10)
        row[1].set_title(f"{LEARNER_LABELS[name]}: (b) d = {d_fixed}, r varied", fontsize=10)
    for ax in axes[-1]:
        ax.set_xlabel("test prompt length n*")
    fig.suptitle("Single-index ICL: pretrained models' risk depends on r, not d; test-prompt-only learners' on d")
    fig.tight_layout()
    save(fig, png)
