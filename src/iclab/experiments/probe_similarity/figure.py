"""Figure ``probe_similarity`` (Fu, Chen, Jia, Sharan 2024, Figs. 2–3 and their Def. 3.4).

Two rows per probed model (GPT-2, then the LSTM if configured), one per measure (Similarity of Errors, then of
Induced Weights): the similarity between every layer's probe and (first) iterative Newton at each iteration count,
(second) gradient descent at each step count (log-spaced), mean over training seeds, the last layer's similarity to
online GD and to least squares in the second panel's title; then (third) the best-matching count per layer under
both measures, Newton's iterations on a linear axis in the first row and GD's steps on a log₂ axis in the second: two
panels, not twin axes, so that neither scale is chosen to make the two lines meet. Each count's axis is shared by
every model, so that a model whose count does not grow (the LSTM's) is read against one whose count does. With
``well_conditioned`` (``probe_illconditioned``), the κ = 1 run's counts are drawn dotted, with open markers in each
measure's colour, beside κ(Σ)'s. A layer whose
similarity is flat over a grid (range under ``similarity.FLAT_TOLERANCE``) has no best match: a cross on the panel's
floor, not the grid's argmax. Three columns, so that the text reads at the README's width
(``iclab.report.legibility``). Also drawn for ``probe_illconditioned`` (κ in the title).
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
        3,
        figsize=(15.0, 4.4 * 2 * len(probed)),
        gridspec_kw={"width_ratios": [1.0, 1.15, 0.9]},
        layout="constrained",
        squeeze=False,
    )
    fig.set_layout_engine("none")  # seaborn's heatmap draws the whole figure to check its tick labels: 2× cheaper
    for row in (0, 1):  # the counts of every model on one axis each: Newton's (row 0), GD's (row 1)
        for ax in axes[2 + row :: 2, 2]:
            ax.sharey(axes[row, 2])
    for index, label in enumerate(probed):
        model = averaged.sel(probed=label)
        model = model.sel(layer=np.isfinite(model.soe_ols).values)  # this model's layers
        block = axes[2 * index : 2 * index + 2]
        name = PROBED_NAMES.get(label, label)
        for row, measure in zip(block, MEASURES):
            draw_heatmaps(row, model, measure, name)
        same = None if reference is None else reference.sel(probed=label).sel(layer=model.layer)
        draw_counts(block[0, 2], model, "newton_iterations", f"{name}: best-matching Newton iterations", same)
        draw_counts(block[1, 2], model, "gd_steps", f"{name}: best-matching GD steps", same)
    axes[1, 2].set_yscale("log", base=2)
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


def draw_heatmaps(row, model: xr.Dataset, measure: str, name: str) -> None:
    """One model and measure: its Newton and GD heatmaps (the colour bar beside GD's), the last layer's similarity
    to online GD and least squares in GD's title."""
    newton = model[f"{measure}_newton"].transpose("layer", "newton_iterations")
    gd = model[f"{measure}_gd"].transpose("layer", "gd_steps")
    low = float(min(newton.min(), gd.min()))
    heatmap(row[0], newton, "Newton iterations", f"{name}, {MEASURES[measure]}:\nlayer vs Newton", low)
    online, ols = (float(model[f"{measure}_{baseline}"].values[-1]) for baseline in ("online_gd", "ols"))
    heatmap(row[1], gd, "GD steps", f"{name}, {SHORT[measure]}: layer vs GD\nlast layer vs online GD {online:.3f}, "
            f"least squares {ols:.3f}", low, colorbar=MEASURES[measure])


def draw_counts(ax: plt.Axes, model: xr.Dataset, grid: str, title: str, reference: xr.Dataset | None) -> None:
    """The best-matching count of ``grid`` per layer under each measure (and, dotted, the ``reference`` run's: the
    same GPT-2 trained at κ = 1): a cross on the panel's floor for a layer with no match, and a key below the panel."""
    method = grid.split("_")[0]
    layers = model.layer.values
    here = "" if reference is None else " (this κ)"
    measures = (("soe", "o", "-", "C0"), ("siw", "s", "--", "C1"))
    counts = [(model[f"{measure}_{method}"], marker + line, colour, "auto", f"{SHORT[measure]}{here}")
              for measure, marker, line, colour in measures]
    if reference is not None:  # each measure's colour, dotted with open markers
        counts += [(reference[f"{measure}_{method}"], f"{marker}:", colour, "white", f"{SHORT[measure]} at κ = 1")
                   for measure, marker, _, colour in measures]
    flat = False
    for values, style, colour, face, label in counts:
        values = values.transpose("layer", grid)
        best = best_match(values.values, values[grid].values)  # NaN: no match
        ax.plot(layers, best, style, color=colour, markerfacecolor=face, label=label)
        missing = layers[np.isnan(best)]
        ax.plot(missing, np.full(len(missing), 0.05), "x", color=colour, markersize=8, markeredgewidth=2,
                transform=ax.get_xaxis_transform())  # at the panel's floor: no count to draw
        flat |= len(missing) > 0
    if flat:
        ax.plot([], [], "x", color="0.3", markersize=8, markeredgewidth=2,
                label=f"no match (flat within {FLAT_TOLERANCE:g})")
    ax.set(xlabel="layer", ylabel=title.split(": ")[-1], title=title)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if method == "newton":
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)  # below the panel, off its data


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
