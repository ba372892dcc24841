"""Figure ``single_index_subspace`` (Oko, Song, Suzuki, Wu 2024, stage 1): recovery of the task
subspace V by one gradient step, against the number of pretraining prompts T₁, one line per d.
(a) the smallest principal cosine between V and W's top-r right singular subspace (1 = V found);
(b) the rows' mean energy in V, with its value for random rows (r/d) dashed. Lines: mean over seeds;
bands: the range over seeds (few seeds: a t-interval would be wider than the axis).
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import xarray as xr

from iclab.plots import save, theme


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    fig, axes = plt.subplots(1, 2, figsize=(11.0, 4.5))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    t1 = cube.t1.values
    for color, d in zip(colors, cube.d.values):
        at = cube.sel(d=d)
        smallest = at.principal_cosines.min("principal_angle").transpose("t1", "seed").values
        for ax, values in ((axes[0], smallest), (axes[1], at.subspace_energy.transpose("t1", "seed").values)):
            mean, lo, hi = values.mean(axis=1), values.min(axis=1), values.max(axis=1)
            ax.plot(t1, mean, "o-", color=color, label=f"d = {d}")
            ax.fill_between(t1, lo, hi, color=color, alpha=0.2, linewidth=0)
        axes[1].axhline(float(at.subspace_energy_chance.max()), color=color, linestyle="--", linewidth=0.8)
    r = int(cube.principal_angle.size)
    axes[0].set_ylabel(f"smallest principal cosine (V vs top-{r} of W)")
    axes[1].set_ylabel("mean row energy in V (dashed: random rows, r/d)")
    for ax, title in zip(axes, ("(a) subspace found", "(b) rows aligned with V")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("stage-1 pretraining prompts T₁")
        ax.set_ylim(0, 1.02)
        ax.set_title(title)
        ax.legend(fontsize=8)
    fig.suptitle(f"Stage 1: one gradient step moves the MLP rows into the r = {r} subspace; larger d needs more T₁")
    fig.tight_layout()
    save(fig, png)
