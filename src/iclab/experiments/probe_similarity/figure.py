"""Figure ``probe_similarity`` (Fu, Chen, Jia, Sharan 2024, Figs. 2–3 and their Def. 3.4).

Two rows per probed model (GPT-2, then the LSTM if configured): Similarity of Errors, then of
Induced Weights, each between every layer's probe and (left) iterative Newton at each iteration
count, (middle) gradient descent at each step count (log-spaced), mean over training seeds; (right)
the best-matching count per layer for both algorithms (Newton on the left axis, GD's steps on a log₂
axis on the right), with the last layer's similarity to online GD and to least squares written in
the panel. A layer whose similarity is flat over a grid (range under ``similarity.FLAT_TOLERANCE``) has no best
match: a cross on the panel's floor, not the grid's argmax. Also drawn for ``probe_illconditioned`` (κ in the title).
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
from iclab.similarity import FLAT_TOLERANCE, best_match

MEASURES = {"soe": "Similarity of Errors", "siw": "Similarity of Induced Weights"}
SHORT = {"soe": "SoE", "siw": "SiW"}  # the glossary's abbreviations
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
    ax.set_ylabel("best-matching Newton iterations", color="C0")
    twin = ax.twinx()
    counts = [(ax, newton, "newton_iterations", "o-", "C0", "Newton iterations (left)")]
    if reference is not None:
        well = reference[f"{measure}_newton"].transpose("layer", "newton_iterations")
        counts.append((ax, well, "newton_iterations", "o:", "0.4", "Newton iterations at κ = 1 (left)"))
    counts.append((twin, gd, "gd_steps", "s--", "C1", "GD steps (right)"))
    flat = False
    for axis, values, grid, style, colour, label in counts:
        best = best_match(values.values, values[grid].values)  # NaN: no match
        axis.plot(layers, best, style, color=colour, label=label)
        missing = layers[np.isnan(best)]
        axis.plot(missing, np.full(len(missing), 0.05), "x", color=colour, markersize=8, markeredgewidth=2,
                  transform=axis.get_xaxis_transform())  # at the panel's floor: no count to draw
        flat |= len(missing) > 0
    if flat:
        ax.plot([], [], "x", color="0.3", markersize=8, markeredgewidth=2,
                label=f"no match (flat within {FLAT_TOLERANCE:g})")
    twin.set_yscale("log", base=2)
    twin.set_ylabel("best-matching GD steps", color="C1")
    twin.grid(False)
    ax.set_xlabel("layer")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    online, ols = (float(model[f"{measure}_{name}"].values[-1]) for name in ("online_gd", "ols"))
    ax.set_title(f"best match per layer ({SHORT[measure]})\n"
                 f"last layer: online GD {online:.3f}, least squares {ols:.3f}")
    lines = [line for line in ax.get_lines() + twin.get_lines() if not line.get_label().startswith("_")]
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
