"""Figure ``probe_layers`` (Fu, Chen, Jia, Sharan 2024, per-layer probes).

Squared error / d against the number of in-context examples, log scale. First, one panel per probed
model (GPT-2, and the LSTM if configured): the linear probe of every layer (colour: depth, on the panel's colour
scale; the mean over seeds and its 95% band made multiplicative: the seeds' errors differ by decades, and an
arithmetic band would run from the top of the axis to its floor) and the model's own output (mean over seeds); then
iterative Newton after each iteration count of the grid, and gradient descent after each step count (colour: the
count, on the colour scale). Least
squares (exact from d examples on: it leaves the axis) is on every panel, so a layer's curve can be read against the
iterations of each algorithm.
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
import xarray as xr
from matplotlib.ticker import MaxNLocator

from iclab.experiments.probe_layers import PROBED_NAMES
from iclab.report.plots import colour_scale, colours, lines_with_bands, save, seed_bands, theme

# Title phrases that state a claim → the claims table's row (its text's start) that holds it; every other title
# describes what is drawn (tests/test_figure_titles.py)
TITLE_CLAIMS: dict[str, str] = {}

FLOOR = 1e-3  # lowest error/d drawn: least squares reaches 0


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    cube = cube.isel(d=0)
    d = int(cube.d)
    m = cube.position.values  # examples before each query
    probed = [str(label) for label in cube.probed.values]
    columns = 2  # wrapped: four panels in a row are too small to read at the gallery's width
    rows = -(-(len(probed) + 2) // columns)
    fig, grid = plt.subplots(rows, columns, figsize=(6.4 * columns, 4.6 * rows), sharey=True, squeeze=False)
    axes = list(grid.flat)[: len(probed) + 2]
    for ax in list(grid.flat)[len(probed) + 2 :]:
        fig.delaxes(ax)
    letters = "abcdefgh"
    for ax, letter, label in zip(axes, letters, probed):
        depth = draw_probes(ax, cube.sel(probed=label), d)
        own, name = cube.risk.sel(learner=label).mean("seed"), PROBED_NAMES.get(label, label)
        ax.plot(m, own / d, "k-", linewidth=2.0, alpha=0.6, label=f"{name} output")
        spread = ("one seed (no band)" if cube.seed.size == 1 else
                  f"mean over {cube.seed.size} seeds, 95% band (multiplicative)")
        ax.set_title(f"({letter}) {name}: probe of each layer ({depth} layers)\n{spread}")
    newton, gd = axes[-2:]
    draw_grid(newton, cube.newton_risk.transpose("newton_iterations", "position"), d, "Newton iterations")
    newton.set_title(f"({letters[len(probed)]}) iterative Newton")
    draw_grid(gd, cube.gd_risk.transpose("gd_steps", "position"), d, "GD steps")
    gd.set_title(f"({letters[len(probed) + 1]}) gradient descent, step {float(cube.gd_lr):g}")
    for ax in axes:
        ax.plot(m, np.maximum(cube.risk.sel(learner="ols").isel(seed=0) / d, FLOOR / 10), "k--", label="least squares")
        ax.axvline(d, color="grey", linestyle=":", linewidth=1)
        ax.set_yscale("log")
        ax.set_ylim(FLOOR, 2.0)
        ax.set_xlabel("in-context examples")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.legend(loc="lower left")
    for ax in grid[:, 0]:
        ax.set_ylabel("squared error / d")
    fig.suptitle(f"Per-layer probes against Newton and GD (d = {d}; dotted: d examples)")
    fig.tight_layout()
    save(fig, png, cube)


def draw_probes(ax: plt.Axes, model: xr.Dataset, d: int) -> int:
    """One probed model's curve per layer (colour: depth, with its scale; mean and band over seeds); its layer
    count."""
    layers = [int(layer) for layer in model.layer.values if np.isfinite(model.probe_risk.sel(layer=layer)).all()]
    probes = model.sel(layer=layers)
    frame = seed_bands(probes.probe_risk, scale=d, log=True)  # (layer, position) rows
    palette = colours(layers, "viridis")
    lines_with_bands(frame, x="position", hue="layer", palette=palette, ax=ax, floor=FLOOR, alpha=0.15, legend=False)
    colour_scale(ax, palette, "layer")
    return len(layers) - 1


def draw_grid(ax: plt.Axes, risk: xr.DataArray, d: int, label: str) -> None:
    """One curve per count of an algorithm's grid (colour: count, with its scale)."""
    count = risk.dims[0]
    frame = (risk / d).rename("error").to_dataframe().reset_index()
    palette = colours(risk[count].values, "magma")
    sns.lineplot(data=frame, x="position", y="error", hue=count, palette=palette, linewidth=1.2, legend=False, ax=ax)
    colour_scale(ax, palette, label)
