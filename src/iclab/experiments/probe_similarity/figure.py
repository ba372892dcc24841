"""Figure ``probe_similarity`` (Fu, Chen, Jia, Sharan 2024, Figs. 2–3 and their Def. 3.4).

Two rows per probed model (GPT-2, then the LSTM if configured): Similarity of Errors, then of
Induced Weights, each between every layer's probe and (left) iterative Newton at each iteration
count, (middle) gradient descent at each step count (log-spaced), mean over training seeds; (right)
the best-matching count per layer for both algorithms (Newton on the left axis, GD's steps on a log₂
axis on the right), with the last layer's similarity to online GD and to least squares written in
the panel. Also drawn for ``probe_illconditioned`` (κ in the title).
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
import xarray as xr
from matplotlib.ticker import MaxNLocator

from iclab.experiments.probe_layers import PROBED_NAMES
from iclab.plots import save, theme
from iclab.similarity import best_match

MEASURES = {"soe": "Similarity of Errors", "siw": "Similarity of Induced Weights"}
SWEEP_DIMS = ("d", "condition_number")


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    reference, n_seeds = well_conditioned(cube), cube.sizes["seed"]
    cube = cube.isel({dim: 0 for dim in SWEEP_DIMS if dim in cube.dims}).mean("seed")
    probed = [str(label) for label in cube.probed.values]
    fig, axes = plt.subplots(
        2 * len(probed),
        3,
        figsize=(17.0, 4.25 * 2 * len(probed)),
        gridspec_kw={"width_ratios": [1.0, 1.0, 0.9]},
        layout="constrained",
        squeeze=False,
    )
    fig.set_layout_engine("none")  # seaborn's heatmap draws the whole figure to check its tick labels: 2× cheaper
    for index, label in enumerate(probed):
        model = cube.sel(probed=label)
        model = model.sel(layer=np.isfinite(model.soe_ols).values)  # this model's layers
        for row, (measure, title) in zip(axes[2 * index : 2 * index + 2], MEASURES.items()):
            same = None if reference is None else reference.sel(probed=label).sel(layer=model.layer)
            draw_row(row, model, measure, f"{PROBED_NAMES.get(label, label)}: {title}", same)
    fig.set_layout_engine("constrained")
    kappa = f", κ(Σ) = {float(cube.condition_number):g}" if "condition_number" in cube.coords else ""
    seeds = f"mean over {n_seeds} seeds" if n_seeds > 1 else "one seed"
    fig.suptitle(f"Layers vs iterative Newton and gradient descent (d = {int(cube.d)}{kappa}; {seeds})")
    save(fig, png)


def well_conditioned(cube: xr.Dataset) -> xr.Dataset | None:
    """probe_illconditioned's κ = 1 run (``well_conditioned``), mean over seeds, where the cube has it beside κ(Σ)."""
    if "condition_number" not in cube.dims or 1.0 not in cube.condition_number.values[1:]:
        return None
    return cube.sel(condition_number=1.0).isel(d=0).mean("seed")


def draw_row(row, model: xr.Dataset, measure: str, title: str, reference: xr.Dataset | None = None) -> None:
    """One model and measure: the Newton and GD heatmaps, and the best-matching counts per layer (and, dotted, the
    ``reference`` run's Newton counts: the same GPT-2 trained at κ = 1)."""
    newton = model[f"{measure}_newton"].transpose("layer", "newton_iterations")
    gd = model[f"{measure}_gd"].transpose("layer", "gd_steps")
    low = float(min(newton.min(), gd.min()))
    heatmap(row[0], newton, "Newton iterations", f"{title}: layer vs Newton", low)
    heatmap(row[1], gd, "GD steps", f"{title}: layer vs GD", low, colorbar=title.split(": ")[-1])
    layers = model.layer.values
    ax = row[2]
    best_newton = best_match(newton.values, newton.newton_iterations.values)
    ax.plot(layers, best_newton, "o-", color="C0", label="Newton iterations (left)")
    if reference is not None:
        well = reference[f"{measure}_newton"].transpose("layer", "newton_iterations")
        ax.plot(layers, best_match(well.values, well.newton_iterations.values), "o:", color="0.4",
                label="Newton iterations at κ = 1 (left)")
    ax.set_ylabel("best-matching Newton iterations", color="C0")
    twin = ax.twinx()
    twin.plot(layers, best_match(gd.values, gd.gd_steps.values), "s--", color="C1", label="GD steps (right)")
    twin.set_yscale("log", base=2)
    twin.set_ylabel("best-matching GD steps", color="C1")
    twin.grid(False)
    ax.set_xlabel("layer")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    online, ols = (float(model[f"{measure}_{name}"].values[-1]) for name in ("online_gd", "ols"))
    ax.set_title(f"best match per layer ({measure.upper()})\n"
                 f"last layer: online GD {online:.3f}, least squares {ols:.3f}")
    lines = ax.get_lines() + twin.get_lines()
    ax.legend(lines, [line.get_label() for line in lines], loc="upper center", bbox_to_anchor=(0.5, -0.16),
              ncol=2, frameon=False)  # below the panel, off its data


def heatmap(ax: plt.Axes, values: xr.DataArray, xlabel: str, title: str, low: float, colorbar: str | None = None):
    """seaborn's heatmap of layers (rows, 0 at the bottom) × the grid's counts (columns, labelled by their values),
    with a colour bar named ``colorbar`` if given."""
    frame = values.to_pandas()  # (layer, count)
    sns.heatmap(frame, ax=ax, cmap="viridis", vmin=low, vmax=1.0, cbar=colorbar is not None, linewidths=0.4,
                linecolor="white",  # cells stay apart when the gallery's PNG is reduced to 256 colours
                cbar_kws={"label": colorbar, "fraction": 0.05, "pad": 0.02} if colorbar else None,
                xticklabels=max(1, frame.shape[1] // 6), yticklabels=max(1, frame.shape[0] // 8))  # apart at 11 pt
    ax.invert_yaxis()
    ax.tick_params(axis="both", rotation=0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("layer")
    ax.set_title(title)
