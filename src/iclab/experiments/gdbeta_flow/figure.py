"""Figure ``gdbeta_flow`` (Zhang, Wu, Bartlett 2024, Theorem 6.3).

Three panels against gradient-flow time (SGD step × step size), one colour per case (Ψ, H): (a) the excess risk
R − R* and (b) the distance of (β₀, Γ) to the minimiser on the image of H, log scale, of the flow (line) and of SGD
(markers: mean over seeds, 95% band over seeds; dotted: its mean over the second half of training, SGD's noise floor
at this step size); (c) how far the part of (β₀, Γ) on the kernel of H has moved from its start, for the cases where
H is rank-deficient (the others have no kernel part), its largest value in the panel's title.
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import xarray as xr
from matplotlib.lines import Line2D

from iclab.plots import colours, save, seed_bands, theme

LOG_PANELS = {"excess": "excess risk R − R*", "distance": "distance to the minimiser (image of H)"}
DRIFT_LABEL = "drift of the kernel part from its start"
FLOOR = 1e-12  # lowest value drawn on the log panels
CASE_TITLES = {"rank_deficient_psi": "rank-deficient Ψ", "rank_deficient_h": "rank-deficient H"}  # config keys in words
TIME = {"flow": "flow_time", "sgd": "snapshot_time"}


def case_label(cube: xr.Dataset, case: str) -> str:
    return f"{CASE_TITLES.get(case, case.replace('_', ' '))} (rank H = {int(cube.image_rank.sel(case=case))})"


def sgd_frame(cube: xr.Dataset, quantity: str, case: str, log: bool) -> pd.DataFrame:
    """SGD's mean over seeds and its 95% band (multiplicative on a log panel) against time, for one case."""
    values = cube[f"sgd_{quantity}"].sel(case=case).reset_coords(drop=True)
    return seed_bands(values, log=log).rename(columns={TIME["sgd"]: "time"})


def flow_and_sgd(ax: plt.Axes, cube: xr.Dataset, quantity: str, case: str, colour, log: bool) -> None:
    """One case on one panel: the flow's line (mean over seeds), SGD's markers over their band and, on a log panel,
    SGD's noise floor."""
    flow = cube[f"flow_{quantity}"].sel(case=case).mean("seed")
    sgd = sgd_frame(cube, quantity, case, log)
    floor = FLOOR if log else -np.inf
    ax.plot(flow[TIME["flow"]], np.maximum(flow, floor), color=colour, linewidth=1.6)
    ax.scatter(sgd.time, np.maximum(sgd["mean"], floor), color=colour, s=9, linewidth=0, alpha=0.8)
    ax.fill_between(sgd.time, np.maximum(sgd.low, floor), np.maximum(sgd.high, floor), color=colour, alpha=0.15,
                    linewidth=0)
    if log:
        ax.axhline(sgd["mean"].iloc[len(sgd) // 2 :].mean(), color=colour, linestyle=":", linewidth=1.2)


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    cases = [str(case) for case in cube.case.values]
    palette = colours(cases)
    kernel_cases = [case for case in cases if int(cube.image_rank.sel(case=case)) < int(cube.dimension.sel(case=case))]
    fig, axes = plt.subplots(1, 3, figsize=(16, 5.2))
    for ax, (quantity, label) in zip(axes, LOG_PANELS.items()):
        for case in cases:
            flow_and_sgd(ax, cube, quantity, case, palette[case], log=True)
        ax.set(yscale="log", ylabel=label, title=f"({'ab'[list(LOG_PANELS).index(quantity)]}) {label}")
    drift = axes[2]
    for case in kernel_cases:
        flow_and_sgd(drift, cube, "drift", case, palette[case], log=False)
    largest = {source: float(np.abs(cube[f"{source}_drift"].sel(case=kernel_cases)).max()) for source in TIME}
    drift.set(ylabel=DRIFT_LABEL, title=f"(c) largest drift: flow {largest['flow']:.1e}, SGD {largest['sgd']:.1e}")
    for ax in axes:
        ax.set_xscale("symlog", linthresh=1.0)
        ax.set(xlim=(0, float(cube.flow_time.max())), xlabel="flow time t = η·step")
    cases_key = [Line2D([], [], color=palette[case], linewidth=1.6, label=case_label(cube, case)) for case in cases]
    style_key = [
        Line2D([], [], color="0.3", linewidth=1.6, label="gradient flow (ODE)"),
        Line2D([], [], color="0.3", marker="o", linestyle="None", markersize=4, label="SGD (mean, 95% band)"),
        Line2D([], [], color="0.3", linestyle=":", linewidth=1.2, label="SGD noise floor"),
    ]
    fig.legend(handles=cases_key + style_key, loc="lower center", ncol=4, bbox_to_anchor=(0.5, -0.02), frameon=False)
    fig.suptitle("GD-β: gradient flow on the population risk and SGD from the same start (Theorem 6.3); "
                 f"(c) the cases with a kernel ({len(kernel_cases)} of {len(cases)})")
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    save(fig, png)
