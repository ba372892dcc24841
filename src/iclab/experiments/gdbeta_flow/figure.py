"""Figure ``gdbeta_flow`` (Zhang, Wu, Bartlett 2024, Theorem 6.3).

One column per case (Ψ, H). Rows, against gradient-flow time (SGD step × step size): the excess risk
R − R* of the flow (line) and of SGD (markers: mean over seeds; band: their range; dotted: its mean over
the second half of training, SGD's noise floor at this step size), log scale; the distance of (β₀, Γ)
to the minimiser on the image of H; and how far the rest of (β₀, Γ) (its part on the kernel of H)
has moved from the start: zero at every time when H is rank-deficient (its largest value in the panel's
title), nothing to move otherwise (the panel says so).
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import seaborn as sns
import xarray as xr

from iclab.plots import save, theme

ROWS = {
    "excess": "excess risk R − R*",
    "distance": "distance to the minimiser (image of H)",
    "drift": "drift of the kernel part from its start",
}
FLOOR = 1e-12  # lowest value drawn on the log rows
CASE_TITLES = {"rank_deficient_psi": "rank-deficient Ψ", "rank_deficient_h": "rank-deficient H"}  # config keys in words
SOURCES = {"flow": ("flow_time", "gradient flow (ODE)"), "sgd": ("snapshot_time", "SGD (mean)")}


def tidy(cube: xr.Dataset) -> pd.DataFrame:
    """One row per (case, quantity, source, time): the mean over seeds and the seeds' range (readable on a log axis),
    clipped at FLOOR on the log rows."""
    frames = []
    for name in ROWS:
        floor = FLOOR if name != "drift" else -np.inf  # log rows are clipped; the drift is drawn as it is
        for source, (time, _) in SOURCES.items():
            values = cube[f"{source}_{name}"]
            stats = {"mean": values.mean("seed"), "low": values.min("seed"), "high": values.max("seed")}
            frame = xr.Dataset({k: np.maximum(v, floor) for k, v in stats.items()}).reset_coords(drop=True)
            frame = frame.to_dataframe().reset_index().rename(columns={time: "time"})
            frames.append(frame.assign(quantity=name, source=source))
    return pd.concat(frames, ignore_index=True)


def flow_and_sgd(data: pd.DataFrame, color=None, label=None) -> None:
    """One facet: the ODE's line, SGD's mean (markers) over the seeds' range and, on a log row, its noise floor
    (the mean over the second half of training)."""
    flow, sgd = (data[data.source == source] for source in SOURCES)
    ax = sns.lineplot(data=flow, x="time", y="mean", color="C0", label=SOURCES["flow"][1], estimator=None,
                      errorbar=None)
    sns.scatterplot(data=sgd, x="time", y="mean", color="C1", s=14, linewidth=0, label=SOURCES["sgd"][1], ax=ax)
    ax.fill_between(sgd.time, sgd.low, sgd.high, color="C1", alpha=0.2, linewidth=0)
    if data.quantity.iloc[0] != "drift":
        ax.set_yscale("log")
        late = sgd["mean"].iloc[len(sgd) // 2 :].mean()
        ax.axhline(late, color="C1", linestyle=":", linewidth=1, label="SGD noise floor")


def drift_note(ax, point: xr.Dataset) -> None:
    """The drift row's panel: emptied where H has full rank (no kernel part to drift), else its largest drift."""
    if int(point.image_rank) == int(point.dimension):
        for artist in [*ax.lines, *ax.collections]:
            artist.remove()
        ax.set_axis_off()  # not cleared: the column shares its symlog x axis
        ax.text(0.5, 0.5, "H has full rank:\nno kernel part to drift", ha="center", va="center", transform=ax.transAxes)
        return
    largest = {source: float(np.abs(point[f"{source}_drift"]).max()) for source in SOURCES}
    ax.set_title(f"largest drift: flow {largest['flow']:.1e}, SGD {largest['sgd']:.1e}")


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    grid = sns.FacetGrid(tidy(cube), row="quantity", col="case", row_order=list(ROWS), sharex="col", sharey=False,
                         height=3.0, aspect=1.47)
    grid.map_dataframe(flow_and_sgd)
    for ax in grid.axes.flat:
        ax.set_xscale("symlog", linthresh=1.0)
        ax.autoscale(axis="x")  # the margins of the symlog axis
        ax.set_xlabel("")
        ax.set_ylabel("")
    for (quantity, case), ax in grid.axes_dict.items():
        point = cube.sel(case=case)
        title = f"{CASE_TITLES.get(str(case), str(case).replace('_', ' '))} (rank H = {int(point.image_rank)})"
        ax.set_title(title if quantity == list(ROWS)[0] else "")
        if quantity == "drift":
            drift_note(ax, point)
    for ax, label in zip(grid.axes[:, 0], ROWS.values()):
        ax.set_ylabel(label)
    for column, ax in enumerate(grid.axes[-1]):
        shown = ax if ax.axison else grid.axes[-2, column]  # the row above where the drift panel is empty
        shown.set_xlabel("flow time t = η·step")
        shown.xaxis.set_tick_params(labelbottom=True)
        shown.xaxis.label.set_visible(True)
    grid.axes[0, 0].legend()
    grid.figure.suptitle("GD-β: gradient flow on the population risk and SGD from the same start (Theorem 6.3)")
    grid.tight_layout()
    save(grid.figure, png)
