"""Figure ``zfb_figure1`` (Zhang, Frei, Bartlett 2024, Figure 1).

Four panels: GPT-2 trained on the fixed or the random covariance (rows), tested on the fixed
covariance or on random covariances scaled by c (columns). The final query's squared error divided
by d against the number of in-context examples M: GPT-2 (mean over training seeds, 90% bootstrap
band over prompts), least squares (dotted), the zero estimator (dash-dot), and the LSA limit of the
theory for the same training distribution (dashed).
The dotted vertical line marks the training length N. Colours: the test covariance.
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import xarray as xr

from iclab.experiments.zfb_figure1.conditions import FIXED
from iclab.plots import save, theme


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    n = int(cube.n.values[0])
    trains = list(cube.train.values)
    fig, axes = plt.subplots(len(trains), 2, figsize=(12.0, 4.5 * len(trains)), squeeze=False, sharey=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    randoms = [t for t in cube.test.values if t != FIXED]
    for row, train in enumerate(trains):
        for col, tests in enumerate(([FIXED], randoms)):
            ax = axes[row, col]
            for color, test in zip(colors, tests):
                at = cube.sel(train=train, n=n, test=test)
                ms = at.position.values[1:]
                d = float(at.d)
                ax.plot(ms, at.gpt2_error.sel(position=ms), "-", color=color, label=f"GPT-2, test {test}")
                ax.fill_between(
                    ms,
                    at.gpt2_band_low.sel(position=ms),
                    at.gpt2_band_high.sel(position=ms),
                    color=color,
                    alpha=0.25,
                    linewidth=0,
                )
                ax.plot(ms, at.lsa_limit_error.sel(position=ms), "--", color=color, linewidth=1)
                ax.plot(ms, at.risk.sel(learner="ols", position=ms).isel(seed=0) / d, ":", color=color, linewidth=1)
                ax.plot(ms, at.risk.sel(learner="zero", position=ms).isel(seed=0) / d, "-.", color=color, linewidth=0.8)
            ax.plot([], [], "k--", linewidth=1, label="LSA limit (theory)")
            ax.plot([], [], "k:", linewidth=1, label="least squares (exact for M ≥ d)")
            ax.plot([], [], "k-.", linewidth=0.8, label="zero estimator")
            ax.axvline(n, color="k", linestyle=":", linewidth=0.8)
            ax.set_yscale("log")
            ax.set_ylim(1e-2, 1e4)
            ax.set_title(f"trained on {train} covariance, tested on {'fixed' if col == 0 else 'random (scale c)'}")
            ax.set_xlabel("in-context examples M")
            ax.set_ylabel("squared error / d")
            ax.legend(fontsize=7)
    fig.suptitle(f"GPT-2 under covariate shift (training length N = {n}, dotted line); 90% bootstrap bands")
    fig.tight_layout()
    save(fig, png)
