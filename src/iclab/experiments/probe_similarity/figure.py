"""Figure ``probe_similarity`` (Fu, Chen, Jia, Sharan 2024, Figs. 2–3 and their Def. 3.4).

Two rows per probed model (GPT-2, then the LSTM if configured): Similarity of Errors, then of Induced Weights, each
between every layer's probe and (first) iterative Newton at each iteration count, (second) gradient descent at each
step count (log-spaced), mean over training seeds; then the best-matching count per layer, (third) Newton's on a
linear axis and (fourth) GD's steps on a log₂ axis: two panels, not twin axes, so that neither scale is chosen to make
the two lines meet. Each column's axis is shared by every row, so that a model whose count does not grow (the LSTM's)
is read against one whose count does. With ``well_conditioned`` (``probe_illconditioned``), the κ = 1 run's counts are
drawn dotted beside κ = 100's in both. The last layer's similarity to online GD and to least squares is written in the
third panel's title. A layer whose similarity is flat over a grid (range under ``similarity.FLAT_TOLERANCE``) has no
best match: a cross on the panel's floor, not the grid's argmax. Also drawn for ``probe_illconditioned`` (κ in the
title).
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
import xarray as xr
from matplotlib.ticker import MaxNLocator

from iclab.experiments.probe_layers import PROBED_NAMES
from iclab.report.plots import save, theme
from iclab.learners.similarity import FLAT_TOLERANCE, best_match

# Title phrases that state a claim → the claims table's row (its text's start) that holds it; every other title
# describes what is drawn (tests/test_figure_titles.py)
TITLE_CLAIMS: dict[str, str] = {}

MEASURES = {"soe": "Similarity of Errors", "siw": "Similarity of Induced Weights"}
SHORT = {"soe": "SoE", "siw": "SiW"}  # the glossary's abbreviations
SWEEP_DIMS = ("d", "condition_number")


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    reference, n_seeds = well_conditioned(cube), cube.sizes["seed"]
    averaged = cube.isel({dim: 0 for dim in SWEEP_DIMS if dim in cube.dims}).mean("seed")
    probed = [str(label) for label in averaged.probed.values]
    fig, axes = plt.subplots(
        2 * len(probed),
        4,
        figsize=(21.0, 4.25 * 2 * len(probed)),
        gridspec_kw={"width_ratios": [1.0, 1.0, 0.75, 0.75]},
        layout="constrained",
        squeeze=False,
    )
    fig.set_layout_engine("none")  # seaborn's heatmap draws the whole figure to check its tick labels: 2× cheaper
    for column in (2, 3):  # the counts of every model and measure on one axis each
        for ax in axes[1:, column]:
            ax.sharey(axes[0, column])
    for index, label in enumerate(probed):
        model = averaged.sel(probed=label)
        model = model.sel(layer=np.isfinite(model.soe_ols).values)  # this model's layers
        for row, (measure, title) in zip(axes[2 * index : 2 * index + 2], MEASURES.items()):
            same = None if reference is None else reference.sel(probed=label).sel(layer=model.layer)
            draw_row(row, model, measure, f"{PROBED_NAMES.get(label, label)}: {title}", same)
    axes[0, 3].set_yscale("log", base=2)
    fig.set_layout_engine("constrained")
    kappa = f", κ(Σ) = {float(averaged.condition_number):g}" if "condition_number" in averaged.coords else ""
    seeds = f"mean over {n_seeds} seeds" if n_seeds > 1 else "one seed"
    fig.suptitle(f"Layers vs iterative Newton and gradient descent (d = {int(averaged.d)}{kappa}; {seeds})")
    save(fig, png, cube)


def well_conditioned(cube: xr.Dataset) -> xr.Dataset | None:
    """probe_illconditioned's κ = 1 run (``well_conditioned``), mean over seeds, where the cube has it beside κ(Σ)."""
    if "condition_number" not in cube.dims or 1.0 not in cube.condition_number.values[1:]:
        return None
    return cube.sel(condition_number=1.0).isel(d=0).mean("seed")


def draw_counts(ax: plt.Axes, layers: np.ndarray, counts: list[tuple[xr.DataArray, str, str, str]], grid: str,
                ylabel: str) -> None:
    """The best-matching count per layer of each (values, style, colour, label): a cross on the panel's floor for a
    layer with no match, and a key below the panel."""
    flat = False
    for values, style, colour, label in counts:
        best = best_match(values.values, values[grid].values)  # NaN: no match
        ax.plot(layers, best, style, color=colour, label=label)
        missing = layers[np.isnan(best)]
        ax.plot(missing, np.full(len(missing), 0.05), "x", color=colour, markersize=8, markeredgewidth=2,
                transform=ax.get_xaxis_transform())  # at the panel's floor: no count to draw
        flat |= len(missing) > 0
    if flat:
        ax.plot([], [], "x", color="0.3", markersize=8, markeredgewidth=2,
                label=f"no match (flat within {FLAT_TOLERANCE:g})")
    ax.set(xlabel="layer", ylabel=ylabel)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=1, frameon=False)  # below the panel, off its data


def draw_row(row, model: xr.Dataset, measure: str, title: str, reference: xr.Dataset | None = None) -> None:
    """One model and measure: the Newton and GD heatmaps, then the best-matching Newton iterations and GD steps per
    layer, each in its own panel (and, dotted, the ``reference`` run's: the same GPT-2 trained at κ = 1)."""
    newton = model[f"{measure}_newton"].transpose("layer", "newton_iterations")
    gd = model[f"{measure}_gd"].transpose("layer", "gd_steps")
    low = float(min(newton.min(), gd.min()))
    heatmap(row[0], newton, "Newton iterations", f"{title}: layer vs Newton", low)
    heatmap(row[1], gd, "GD steps", f"{title}: layer vs GD", low, colorbar=title.split(": ")[-1])
    layers = model.layer.values
    here = "" if reference is None else " (this κ)"
    panels = ((row[2], newton, "newton_iterations", "o-", "C0", "Newton iterations"),
              (row[3], gd, "gd_steps", "s--", "C1", "GD steps"))
    for ax, values, grid, style, colour, name in panels:
        counts = [(values, style, colour, f"best-matching {name}{here}")]
        if reference is not None:
            well = reference[f"{measure}_{grid.split('_')[0]}"].transpose("layer", grid)
            counts.append((well, style.replace("-", ":").replace("::", ":"), "0.4", "the same at κ = 1"))
        draw_counts(ax, layers, counts, grid, f"best-matching {name}")
    row[2].yaxis.set_major_locator(MaxNLocator(integer=True))
    online, ols = (float(model[f"{measure}_{name}"].values[-1]) for name in ("online_gd", "ols"))
    row[2].set_title(f"best match per layer ({SHORT[measure]})\n"
                     f"last layer: online GD {online:.3f}, least squares {ols:.3f}")
    row[3].set_title(f"best-matching GD steps ({SHORT[measure]})")


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
