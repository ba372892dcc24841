"""Figure ``probe_layers`` (Fu, Chen, Jia, Sharan 2024, per-layer probes).

Squared error / d against the number of in-context examples, log scale. First, one panel per probed
model (GPT-2, and the LSTM if configured): the linear probe of every layer (colour: depth; 95% band
over seeds and prompts) and the model's own output; then iterative Newton after each iteration count
of the grid, and gradient descent after each step count. Least squares (exact from d examples on:
it leaves the axis) is on every panel, so a layer's curve can be read against the iterations of
each algorithm.
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import numpy as np
import xarray as xr
from matplotlib.ticker import MaxNLocator

from iclab.experiments.probe_layers import PROBED_NAMES
from iclab.intervals import band
from iclab.plots import save, theme

FLOOR = 1e-3  # lowest error/d drawn: least squares reaches 0


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    cube = cube.isel(d=0)
    d = int(cube.d)
    m = cube.position.values  # examples before each query
    probed = [str(label) for label in cube.probed.values]
    fig, axes = plt.subplots(1, len(probed) + 2, figsize=(5.4 * (len(probed) + 2), 4.8), sharey=True)
    letters = "abcdefgh"
    for ax, letter, label in zip(axes, letters, probed):
        depth = draw_probes(ax, cube.sel(probed=label), d)
        own, name = cube.risk.sel(learner=label).mean("seed"), PROBED_NAMES.get(label, label)
        ax.plot(m, own / d, "k-", linewidth=2.0, alpha=0.6, label=f"{name} output")
        ax.set_title(f"({letter}) {name}: probe of each layer ({depth} layers; colour: depth)")
    newton, gd = axes[-2:]
    draw_grid(newton, cube.newton_risk.transpose("newton_iterations", "position"), d, "Newton iterations: {}")
    newton.set_title(f"({letters[len(probed)]}) iterative Newton")
    draw_grid(gd, cube.gd_risk.transpose("gd_steps", "position"), d, "GD steps: {}")
    gd.set_title(f"({letters[len(probed) + 1]}) gradient descent, step {float(cube.gd_lr):g}")
    for ax in axes:
        ax.plot(m, np.maximum(cube.risk.sel(learner="ols").isel(seed=0) / d, FLOOR / 10), "k--", label="least squares")
        ax.axvline(d, color="grey", linestyle=":", linewidth=1)
        ax.set_yscale("log")
        ax.set_ylim(FLOOR, 2.0)
        ax.set_xlabel("in-context examples")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.legend(fontsize=7, loc="lower left")
    axes[0].set_ylabel("squared error / d")
    fig.suptitle(f"Per-layer probes against Newton and GD (d = {d}; dotted: d examples)")
    fig.tight_layout()
    save(fig, png)


def draw_probes(ax: plt.Axes, model: xr.Dataset, d: int) -> int:
    """One probed model's curve per layer (colour: depth, band over seeds and prompts); its layer count."""
    layers = [int(layer) for layer in model.layer.values if np.isfinite(model.probe_risk.sel(layer=layer)).all()]
    colours = plt.cm.viridis(np.linspace(0.0, 0.9, len(layers)))
    m = model.position.values
    for colour, layer in zip(colours, layers):
        risk = model.probe_risk.sel(layer=layer).transpose("position", "seed").values
        sems = model.probe_risk_sem.sel(layer=layer).transpose("position", "seed").values
        mean, lo, hi = band(risk, sems)
        ax.plot(m, mean / d, color=colour, label=f"layer {layer}" if layer in (layers[0], layers[-1]) else None)
        ax.fill_between(m, np.maximum(lo / d, FLOOR), hi / d, color=colour, alpha=0.15, linewidth=0)
    return len(layers) - 1


def draw_grid(ax: plt.Axes, risk: xr.DataArray, d: int, label: str) -> None:
    """One curve per count of an algorithm's grid (colour: count), the first and last labelled."""
    counts = risk[risk.dims[0]].values
    colours = plt.cm.magma(np.linspace(0.0, 0.85, len(counts)))
    for colour, count, values in zip(colours, counts, risk.values):
        named = count in (counts[0], counts[-1])
        name = label.format(count) if named else None
        ax.plot(risk.position.values, values / d, color=colour, linewidth=1.2, label=name)
