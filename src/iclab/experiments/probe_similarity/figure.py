"""Figure ``probe_similarity`` (Fu, Chen, Jia, Sharan 2024, Figs. 2–3 and their Def. 3.4).

Top row Similarity of Errors, bottom row Similarity of Induced Weights, each between every layer's
probe and (left) iterative Newton at each iteration count, (middle) gradient descent at each step
count (log-spaced), mean over training seeds; (right) the best-matching count per layer for both
algorithms (Newton on the left axis, GD's steps on a log₂ axis on the right), with the last layer's
similarity to online GD and to least squares written in the panel.
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import numpy as np
import xarray as xr
from matplotlib.ticker import MaxNLocator

from iclab.plots import save, theme
from iclab.similarity import best_match

MEASURES = {"soe": "Similarity of Errors", "siw": "Similarity of Induced Weights"}


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    cube = cube.isel(d=0).mean("seed")
    fig, axes = plt.subplots(
        2, 3, figsize=(17.0, 8.5), gridspec_kw={"width_ratios": [1.0, 1.0, 0.9]}, layout="constrained"
    )
    layers = cube.layer.values
    for row, (measure, title) in zip(axes, MEASURES.items()):
        newton = cube[f"{measure}_newton"].transpose("layer", "newton_iterations")
        gd = cube[f"{measure}_gd"].transpose("layer", "gd_steps")
        low = float(min(newton.min(), gd.min()))
        heatmap(row[0], newton, "Newton iterations", f"{title}: layer vs Newton", low)
        image = heatmap(row[1], gd, "GD steps", f"{title}: layer vs GD", low)
        fig.colorbar(image, ax=row[1], fraction=0.05, pad=0.02, label=title)
        best_newton = best_match(newton.values, newton.newton_iterations.values)
        best_gd = best_match(gd.values, gd.gd_steps.values)
        ax = row[2]
        ax.plot(layers, best_newton, "o-", color="C0", label="Newton iterations (left)")
        ax.set_ylabel("best-matching Newton iterations", color="C0")
        twin = ax.twinx()
        twin.plot(layers, best_gd, "s--", color="C1", label="GD steps (right)")
        twin.set_yscale("log", base=2)
        twin.set_ylabel("best-matching GD steps", color="C1")
        twin.grid(False)
        ax.set_xlabel("layer")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(f"best match per layer ({title.split()[-1].lower()})")
        lines = ax.get_lines() + twin.get_lines()
        ax.legend(lines, [line.get_label() for line in lines], fontsize=8, loc="upper left")
        for name, style in (("online_gd", "online GD"), ("ols", "least squares")):
            values = cube[f"{measure}_{name}"].values
            ax.annotate(
                f"{style}: {values[-1]:.3f} (last layer)",
                xy=(0.02, 0.80 if name == "online_gd" else 0.72),
                xycoords="axes fraction",
                fontsize=8,
            )
    fig.suptitle(f"GPT-2 layers vs iterative Newton and gradient descent (d = {int(cube.d)}; mean over seeds)")
    save(fig, png)


def heatmap(ax: plt.Axes, values: xr.DataArray, xlabel: str, title: str, low: float):
    """Layers (rows, 0 at the bottom) × the grid's counts (columns, labelled by their values)."""
    counts = values[values.dims[1]].values
    image = ax.imshow(values.values, origin="lower", aspect="auto", cmap="viridis", vmin=low, vmax=1.0)
    step = max(1, len(counts) // 8)
    ax.set_xticks(np.arange(len(counts))[::step], [str(c) for c in counts[::step]])
    ax.set_xlabel(xlabel)
    ax.set_ylabel("layer")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(title, fontsize=10)
    ax.grid(False)
    return image
