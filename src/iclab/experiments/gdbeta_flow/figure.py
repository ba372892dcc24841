"""Figure ``gdbeta_flow`` (Zhang, Wu, Bartlett 2024, Theorem 6.3).

One column per case (Ψ, H), two rows against gradient-flow time (SGD step × step size), log scale: (a) the excess
risk R − R* and (b) the distance of (β₀, Γ) to the minimiser on the image of H, of the flow (line, mean over seeds)
and of SGD (markers: mean over seeds, 95% band over seeds; dotted: its mean over the second half of training, SGD's
noise floor at this step size). Values under ``FLOOR`` are drawn at it (the flow reaches float64's round-off), as the
figure says. The part of (β₀, Γ) on the kernel of H never moves in these runs: its largest drift, flow's and SGD's,
is a line of the title, not a panel (a panel of zeros shows nothing).
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import xarray as xr
from matplotlib.lines import Line2D

from iclab.report.plots import colours, save, seed_bands, theme

# Title phrases that state a claim → the claims table's row (its text's start) that holds it; every other title
# describes what is drawn (tests/test_figure_titles.py)
TITLE_CLAIMS: dict[str, str] = {}

LOG_PANELS = {"excess": "excess risk R − R*", "distance": "distance to the minimiser (image of H)"}
FLOOR = 1e-12  # lowest value drawn on the log panels
CASE_TITLES = {"rank_deficient_psi": "rank-deficient Ψ", "rank_deficient_h": "rank-deficient H"}  # config keys in words
TIME = {"flow": "flow_time", "sgd": "snapshot_time"}
FLOW, SGD = "C0", "C1"  # seaborn's colorblind palette: the flow blue, SGD orange, in every panel


def case_label(cube: xr.Dataset, case: str) -> str:
    return f"{CASE_TITLES.get(case, case.replace('_', ' '))} (rank H = {int(cube.image_rank.sel(case=case))})"


def sgd_frame(cube: xr.Dataset, quantity: str, case: str) -> pd.DataFrame:
    """SGD's mean over seeds and its 95% band (multiplicative: a log panel) against time, for one case."""
    values = cube[f"sgd_{quantity}"].sel(case=case).reset_coords(drop=True)
    return seed_bands(values, log=True).rename(columns={TIME["sgd"]: "time"})


def flow_and_sgd(ax: plt.Axes, cube: xr.Dataset, quantity: str, case: str) -> None:
    """One case on one panel: the flow's line (mean over seeds), SGD's markers over their band and SGD's noise
    floor, every value under FLOOR drawn at it."""
    flow = cube[f"flow_{quantity}"].sel(case=case).mean("seed")
    sgd = sgd_frame(cube, quantity, case)
    ax.plot(flow[TIME["flow"]], np.maximum(flow, FLOOR), color=FLOW, linewidth=1.6)
    ax.fill_between(sgd.time, np.maximum(sgd.low, FLOOR), np.maximum(sgd.high, FLOOR), color=SGD, alpha=0.2,
                    linewidth=0)
    ax.scatter(sgd.time, np.maximum(sgd["mean"], FLOOR), color=SGD, s=12, linewidth=0)
    ax.axhline(max(sgd["mean"].iloc[len(sgd) // 2 :].mean(), FLOOR), color=SGD, linestyle=":", linewidth=1.2)


def largest_drift(cube: xr.Dataset) -> str:
    """The title's line on the kernel part: its largest drift from its start, flow's and SGD's, over the cases where
    H is rank-deficient (the others have no kernel part)."""
    kernel = [case for case in cube.case.values
              if int(cube.image_rank.sel(case=case)) < int(cube.dimension.sel(case=case))]
    if not kernel:
        return "no case has a kernel part"
    largest = {source: float(np.abs(cube[f"{source}_drift"].sel(case=kernel)).max()) for source in TIME}
    return (f"the kernel part's largest drift from its start (the cases with one: {len(kernel)} of "
            f"{cube.sizes['case']}): "
            f"flow {largest['flow']:.1e}, SGD {largest['sgd']:.1e}")


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    cases = [str(case) for case in cube.case.values]
    fig, axes = plt.subplots(len(LOG_PANELS), len(cases), figsize=(3.6 * len(cases) + 0.8, 8.4), sharex=True,
                             sharey="row", squeeze=False)
    for row, (quantity, label) in zip(axes, LOG_PANELS.items()):
        letter = "ab"[list(LOG_PANELS).index(quantity)]
        for ax, case in zip(row, cases):
            flow_and_sgd(ax, cube, quantity, case)
            ax.set(yscale="log", title=f"({letter}) {case_label(cube, case)}")
        row[0].set_ylabel(f"{label}\n(under {FLOOR:.0e}: drawn at it)")
    for ax in axes[-1]:
        ax.set_xscale("symlog", linthresh=1.0)
        ax.set(xlim=(0, float(cube.flow_time.max())), xlabel="flow time t = η·step")
    key = [
        Line2D([], [], color=FLOW, linewidth=1.6, label="gradient flow (ODE), mean over seeds"),
        Line2D([], [], color=SGD, marker="o", linestyle="None", markersize=4, label="SGD: mean, 95% band over seeds"),
        Line2D([], [], color=SGD, linestyle=":", linewidth=1.2, label="SGD's noise floor (mean of its second half)"),
    ]
    fig.legend(handles=key, loc="lower center", ncol=3, bbox_to_anchor=(0.5, -0.01), frameon=False)
    fig.suptitle("GD-β: gradient flow on the population risk and SGD from the same start (Theorem 6.3), "
                 f"{cube.sizes['seed']} seeds\n{largest_drift(cube)}")
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    save(fig, png, cube)
