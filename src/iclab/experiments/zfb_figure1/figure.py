"""Figure ``zfb_figure1`` (Zhang, Frei, Bartlett 2024, Figure 1).

Four panels: GPT-2 trained on the fixed or the random covariance (rows), tested on the fixed
covariance or on random covariances scaled by c (columns). The final query's squared error divided
by d against the number of in-context examples M: GPT-2 (mean over training seeds, 95% band over seeds with the
evaluation's error, as every band and claim: ``iclab.intervals.band``, multiplicative on the log axis), least squares
(dotted), the zero estimator (dash-dot), and the LSA limit of the theory for the same training distribution
(dashed). The grey vertical line marks the training length N. Colours: the test covariance, blue for the fixed
one and a sequential palette for the scale c of the random ones.
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
import xarray as xr

from iclab.experiments.zfb_figure1.conditions import FIXED
from iclab.plots import colours, lines_with_bands, save, seed_bands, theme

PANELS = {True: "fixed", False: "random (scale c)"}  # test on the fixed covariance?
REFERENCES = {  # column of the tidy frame → its line style
    "lsa_limit": dict(linestyle="--", linewidth=1, label="LSA limit (theory)"),
    "ols": dict(linestyle=":", linewidth=1, label="least squares (exact for M ≥ d)"),
    "zero": dict(linestyle="-.", linewidth=0.8, label="zero estimator"),
}


def tidy(cube: xr.Dataset) -> pd.DataFrame:
    """One row per (train, test, M ≥ 1): GPT-2's error / d (mean over seeds) and its band, the LSA limit, least
    squares' and the zero estimator's error / d, and the panel (fixed or random test covariance)."""
    at = cube.isel(n=0, position=slice(1, None))
    d = at.d
    gpt2 = seed_bands(*(v.sel(learner="gpt2", drop=True) / d for v in (at.risk, at.risk_sem)), log=True)
    risk = at.risk.isel(seed=0) / d
    columns = {
        "lsa_limit": at.lsa_limit_error,
        "ols": risk.sel(learner="ols", drop=True),
        "zero": risk.sel(learner="zero", drop=True),
    }
    frame = xr.Dataset(columns).reset_coords(drop=True).to_dataframe().reset_index()
    frame = frame.merge(gpt2, on=["test", "train", "position"])
    frame["panel"] = [PANELS[test == FIXED] for test in frame.test]
    frame["label"] = [f"GPT-2, test {test}" for test in frame.test]
    return frame


def test_colours(labels) -> dict:
    """The fixed test covariance in the palette's blue, the random ones' scales c in a sequential palette."""
    labels = list(labels)
    scaled = [label for label in labels if not label.endswith(FIXED)]
    fixed = {label: sns.color_palette("colorblind")[0] for label in labels if label.endswith(FIXED)}
    return fixed | colours(scaled, palette="flare")


def references(data: pd.DataFrame, palette: dict, color=None, label=None) -> None:
    """The theory and baselines of one facet, in each test covariance's colour."""
    for level, group in data.groupby("label", sort=False):
        for column, style in REFERENCES.items():
            sns.lineplot(data=group, x="position", y=column, color=palette[level], estimator=None, errorbar=None,
                         **{key: value for key, value in style.items() if key != "label"})


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    n = int(cube.n.values[0])
    frame = tidy(cube)
    palette = test_colours(frame.label.unique())
    grid = sns.FacetGrid(frame, row="train", col="panel", col_order=list(PANELS.values()), height=4.5, aspect=1.33,
                         sharey=True, margin_titles=False)
    grid.map_dataframe(lines_with_bands, x="position", hue="label", palette=palette, alpha=0.25)
    grid.map_dataframe(references, palette=palette)
    grid.set(yscale="log", ylim=(1e-2, 1e4))
    grid.refline(x=n, color="0.5", linestyle="-", linewidth=1.0)
    grid.set_titles("trained on {row_name} covariance, tested on {col_name}")
    grid.set_axis_labels("in-context examples M", "squared error / d")
    keys = {}  # every test condition's line and the reference styles, once, in one legend under the panels
    for ax in grid.axes.flat:
        keys |= {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}
    keys |= {style["label"]: plt.Line2D([], [], color="k", **style) for style in REFERENCES.values()}
    grid.figure.legend(list(keys.values()), list(keys), loc="lower center", ncol=4, frameon=False)
    grid.figure.suptitle(f"GPT-2 under covariate shift (training length N = {n}, grey line); 95% bands over seeds")
    grid.tight_layout(rect=(0, 0.07, 1, 1))
    save(grid.figure, png, cube)
