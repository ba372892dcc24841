"""Figure ``single_index`` (Oko, Song, Suzuki, Wu 2024, §5): test risk against the test prompt
length n*, one row per learner (two-stage model, GPT-2, kernel ridge, two-layer network). (a) r fixed,
d varied: the pretrained models' curves coincide, the test-prompt-only learners' degrade with d.
(b) d fixed, r varied: the risk grows with r.

Risks are divided by the zero predictor's risk on the same prompts (1 = predicting 0): the labels'
heavy tails make the raw risk of every learner move together from one position to the next, and
the common factor removes that. Lines: the risk pooled over bins of n* (the evaluation's
``binned_risk``, drawn at the bin's geometric centre); learners with values at a few lengths only
(the two-layer network) are drawn at those lengths. Bands: ``iclab.stats.intervals`` (95%, training seeds
and evaluation prompts; evaluation prompts alone for the test-prompt-only learners), the prompts' part the s.e. of
the ratio over the same prompt groups (paired: the heavy tails common to both risks cancel in it as in the ratio);
a pretrained model of at most two seeds is drawn as its mean and each seed's curve instead (a t-band over two seeds
spans the panel).
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import xarray as xr
from matplotlib.lines import Line2D

from iclab.stats.intervals import band, ratio_and_sem
from iclab.experiments.single_index.claims import claims
from iclab.report.plots import LEARNER_LABELS, claim_intervals, colours, lines_with_bands, save, theme

# Title phrases that state a claim → the claims table's row (its text's start) that holds it; every other title
# describes what is drawn (tests/test_figure_titles.py)
TITLE_CLAIMS: dict[str, str] = {}

STYLES = {"two_stage": "-", "gpt2": "-.", "krr": "--", "two_layer_net": ":"}


PER_SEED_MAX = 2  # with this many training seeds or fewer a t-band is wider than the effect: each seed is drawn


def relative_risk(groups: xr.DataArray, zero_groups: xr.DataArray) -> tuple[np.ndarray, np.ndarray]:
    """The risk over the zero predictor's on the same prompts, per seed, and its standard error: (P, S) each. The
    ratio of two means over the same prompt groups (``iclab.stats.intervals.ratio_and_sem``, the delta method): the
    labels' heavy tails move both risks together, and the paired s.e. leaves that common factor out as the ratio
    does."""
    numerators = groups.transpose("prompt_group", ..., "seed").values  # (G, P, S)
    denominators = zero_groups.transpose("prompt_group", ...).values[..., None]  # (G, P, 1)
    return ratio_and_sem(numerators, np.broadcast_to(denominators, numerators.shape))


def binned_risk(at: xr.Dataset, learner: str) -> tuple[np.ndarray, ...] | None:
    """Bin centres (P,), the risk relative to the zero predictor's and its standard error (P, S) over the bins; None
    if the learner misses positions."""
    groups = at.binned_risk_groups.sel(learner=learner)
    if not np.isfinite(groups.values).all():
        return None
    zero = at.binned_risk_groups.sel(learner="zero").isel(seed=0)
    return np.sqrt(at.bin_first.values * at.bin_last.values), *relative_risk(groups, zero)


def pointwise_risk(at: xr.Dataset, learner: str) -> tuple[np.ndarray, ...]:
    """As binned_risk, at the positions ≥ the first bin's where the learner has a value."""
    risk = at.risk.sel(learner=learner).transpose("position", "seed").values  # (K, S)
    keep = np.isfinite(risk).all(axis=1) & (at.position.values >= int(at.bin_first.values[0]))
    at = at.isel(position=keep)
    zero = at.risk_groups.sel(learner="zero").isel(seed=0)
    return at.position.values, *relative_risk(at.risk_groups.sel(learner=learner), zero)


def relative_curves(n: np.ndarray, ratio: np.ndarray, sem: np.ndarray, per_seed: bool) -> pd.DataFrame:
    """The relative risk's mean over seeds with its band (iclab.stats.intervals: seeds and evaluation prompts), or,
    ``per_seed``, the mean without a band and one curve a seed (``seed`` ≥ 0)."""
    if not per_seed:
        mean, low, high = band(ratio, sem)
        return pd.DataFrame({"n": n, "mean": mean, "low": low, "high": high, "seed": -1})
    curves = [pd.DataFrame({"n": n, "mean": ratio.mean(axis=1), "low": np.nan, "high": np.nan, "seed": -1})]
    curves += [pd.DataFrame({"n": n, "mean": ratio[:, s], "low": np.nan, "high": np.nan, "seed": s})
               for s in range(ratio.shape[1])]
    return pd.concat(curves, ignore_index=True)


def tidy(cube: xr.Dataset, learners: list[str], cases: dict[str, list[str]]) -> pd.DataFrame:
    """One row per (learner, part, case, n*, curve): the risk relative to the zero predictor's, mean over seeds
    (``seed`` −1) with its band or, for a trained learner of at most PER_SEED_MAX seeds, each seed's curve;
    binned over n* where the learner has every position, else pointwise."""
    frames = []
    for learner in learners:
        per_seed = str(cube.learner_kind.sel(learner=learner).values) == "trained" and cube.seed.size <= PER_SEED_MAX
        for part, (varied, names) in cases.items():
            for case in sorted(names, key=lambda c: int(cube.sel(case=c)[varied])):
                at = cube.sel(case=case)
                binned = binned_risk(at, learner)
                curves = relative_curves(*(binned if binned is not None else pointwise_risk(at, learner)), per_seed)
                frames.append(curves.assign(learner=learner, marker="." if binned is not None else "o",
                                            name=LEARNER_LABELS[learner], part=part,
                                            label=f"{varied} = {int(at[varied])}"))
    return pd.concat(frames, ignore_index=True)


def risk_panel(data: pd.DataFrame, color=None, label=None) -> None:
    """One learner and part: its relative risk against n*, one colour per case (sorted by the varied d or r)."""
    learner = data.learner.iloc[0]
    palette = colours(data.label.unique())
    for case, group in data.groupby("label", sort=False):
        mean = group[group.seed == -1]
        lines_with_bands(mean, x="n", color=palette[case], label=case, alpha=0.15, linestyle=STYLES[learner],
                         marker=mean.marker.iloc[0], markersize=4)
        for _, seed in group[group.seed >= 0].groupby("seed"):
            plt.gca().plot(seed.n, seed["mean"], color=palette[case], linewidth=0.7, alpha=0.6)
    plt.gca().axhline(1.0, color="grey", linewidth=0.8)


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    """One row per learner (so that a learner's curves across d, or r, can be told apart within their
    bands), (a) d varied and (b) r varied side by side."""
    theme()
    d, r = cube.d.values, cube.r.values
    r_fixed = int(np.bincount(r.astype(int)).argmax())  # part (a): the r shared by most cases
    d_fixed = int(np.bincount(d.astype(int)).argmax())
    cases = {
        f"(a) r = {r_fixed}, d varied": ("d", [c for c, ri in zip(cube.case.values, r) if ri == r_fixed]),
        f"(b) d = {d_fixed}, r varied": ("r", [c for c, di in zip(cube.case.values, d) if di == d_fixed]),
    }
    learners = [name for name in STYLES if name in cube.learner.values]
    names = [LEARNER_LABELS[name] for name in learners]
    grid = sns.FacetGrid(tidy(cube, learners, cases), row="name", col="part", row_order=names, col_order=list(cases),
                         sharex=True, sharey=True, height=2.9, aspect=2.07)
    grid.map_dataframe(risk_panel)
    grid.set(xscale="log", ylim=(0.0, 1.6))
    for ax in grid.axes.flat:
        ax.set_xscale("log", base=2)
    grid.set_titles("{row_name}: {col_name}")
    grid.set_axis_labels("test prompt length n*", "risk / zero's")
    for ax in grid.axes[-1]:  # each column's cases, once, under it: off every panel's data
        handles, labels = ax.get_legend_handles_labels()
        keys = [Line2D([], [], color=handle.get_color(), linewidth=2) for handle in handles]
        ax.legend(keys, labels, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=len(keys), frameon=False)
    title = "Single-index ICL: each learner's risk against the test prompt length as d and r vary"
    if cube.seed.size <= PER_SEED_MAX:
        title += f"\npretrained models: mean over {cube.seed.size} training seeds, each seed a thin line (no band)"
    grid.figure.suptitle(title)
    grid.tight_layout()
    d_claims(grid.figure, cube)
    save(grid.figure, png, cube)


CLAIMS_HEIGHT = 2.7  # inches added below the grid for the claims on d


def d_claims(fig: plt.Figure, cube: xr.Dataset) -> None:
    """Below the grid, the table's rows on d for the pretrained models ("does not depend on d"), as the claims table
    judges them (``plots.claim_intervals``): the overlap of the curves in (a) is a result only if the interval lies in
    the margin."""
    rows = [claim for claim in claims(cube) if "does not depend on d" in claim.claim]
    if not rows:
        return
    width, height = fig.get_size_inches()
    fig.set_size_inches(width, height + CLAIMS_HEIGHT)
    for ax in fig.axes:  # the grid keeps its size, moved up
        x0, y0, w, h = ax.get_position().bounds
        total = height + CLAIMS_HEIGHT
        ax.set_position([x0, (y0 * height + CLAIMS_HEIGHT) / total, w, h * height / total])
    ax = fig.add_axes([0.33, 0.2 / (height + CLAIMS_HEIGHT), 0.6, 1.5 / (height + CLAIMS_HEIGHT)])
    claim_intervals(ax, rows, [claim.claim.split("'s risk")[0].removeprefix("the ") for claim in rows])
    level = f"{rows[0].level:.0%}"
    ax.set_xlabel(f"risk / zero's at d = {cube.d.values.max():g} minus at d = {cube.d.values.min():g}, last bin of n*: "
                  f"{level} interval (thick: seeds and prompts; thin: prompts alone); grey: the margin")
    ax.set_title("(c) the claims that the pretrained models' risk does not depend on d, as the claims table "
                 "judges them")

