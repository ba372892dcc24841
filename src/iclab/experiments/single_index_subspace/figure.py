"""Figure ``single_index_subspace`` (Oko, Song, Suzuki, Wu 2024, stage 1): recovery of the task
subspace V by one gradient step, against the number of pretraining prompts T₁, one line per d.
(a) the smallest principal cosine between V and W's top-r right singular subspace (1 = V found);
(b) the rows' mean energy in V, with its value for random rows (r/d) dashed. Lines: mean over seeds;
bands: the range over seeds (few seeds: a t-interval would be wider than the axis).
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import pandas as pd
import xarray as xr

from iclab.report.plots import colours, declare_flat, lines_with_bands, save, theme

# Title phrases that state a claim → the claims table's row (its text's start) that holds it; every other title
# describes what is drawn (tests/test_figure_titles.py)
TITLE_CLAIMS: dict[str, str] = {}


def seed_range(values: xr.DataArray) -> pd.DataFrame:
    """Tidy frame of the mean over seeds and the seeds' range (min to max) at each (d, T₁)."""
    stats = {"mean": values.mean("seed"), "low": values.min("seed"), "high": values.max("seed")}
    return xr.Dataset(stats).reset_coords(drop=True).to_dataframe().reset_index()


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    fig, axes = plt.subplots(1, 2, figsize=(11.0, 4.5))
    palette = colours([f"d = {d}" for d in cube.d.values])
    for ax, values in ((axes[0], cube.principal_cosines.min("principal_angle")), (axes[1], cube.subspace_energy)):
        frame = seed_range(values)
        frame["label"] = [f"d = {d}" for d in frame.d]
        lines_with_bands(frame, x="t1", hue="label", palette=palette, ax=ax, marker="o")
    for d in cube.d.values:
        chance = float(cube.subspace_energy_chance.sel(d=d).max())
        axes[1].axhline(chance, color=palette[f"d = {d}"], linestyle="--", linewidth=0.8)
    r = int(cube.principal_angle.size)
    axes[0].set_ylabel(f"smallest principal cosine\n(V vs top-{r} of W)")
    axes[1].set_ylabel("mean row energy in V\n(dashed: random rows, r/d)")
    for ax, title in zip(axes, ("(a) subspace found", "(b) rows aligned with V")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("stage-1 pretraining prompts T₁")
        ax.set_ylim(0, 1.02)
        ax.set_title(title)
    handles, labels = axes[0].get_legend_handles_labels()  # the same d in both panels: one key, below them, off the
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), bbox_to_anchor=(0.5, -0.01), frameon=False)
    declare_flat(axes[0], "cosines on their whole range 0–1: how near 1 they come is what the panel shows")
    fig.suptitle(f"Stage 1 of the two-stage transformer: how well one gradient step's MLP rows\nfind the "
                 f"r = {r} subspace V, against T₁ and d")
    fig.tight_layout(rect=(0, 0.07, 1, 1))  # data wherever the seeds put it (a legend inside covered it at look 2)
    save(fig, png, cube)
