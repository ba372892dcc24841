"""Figure ``zfb_figure1`` (Zhang, Frei, Bartlett 2024, Figure 1).

One panel per test covariance (the fixed one, then random covariances scaled by c), two panels a row, each with both trainings: GPT-2
trained on the fixed covariance and GPT-2 trained on random ones, so that "training on random covariances helps"
is read within one panel. The final query's squared error divided by d against the number of in-context examples M:
GPT-2 (mean over training seeds, 95% band over seeds with the evaluation's error, as every band and claim:
``iclab.stats.intervals.band``, multiplicative on the log axis; its edges drawn, so that the two trainings' bands both
read where they overlap), least squares (dotted) and the zero estimator
(dash-dot). The LSA limit of the theory (dashed, in each training's colour) is drawn where it lies within the panels'
axis, which the GPT-2s and the zero estimator set; where it lies above, the panel's title gives its value at M = N. The
grey vertical line marks the training length N.
"""

from __future__ import annotations

import os

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import xarray as xr

from iclab.report.plots import save, seed_bands, theme, tight_layout_above

# Title phrases that state a claim → the claims table's row (its text's start) that holds it; every other title
# describes what is drawn (tests/test_figure_titles.py)
TITLE_CLAIMS: dict[str, str] = {}

TRAININGS = {"fixed": "C0", "random": "C1"}  # each training distribution's colour in every panel
COLUMNS = 2  # panels a row: two read at the README's width (iclab.report.legibility)
TOP = 3.0  # the axis's top: this many times the highest zero-estimator error (the LSA limit reaches 10³–10⁴)


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    n = int(cube.n.values[0])
    at = cube.isel(n=0, position=slice(1, None))
    d, m = int(at.d.max()), at.position.values  # one d in every (test, train) setting
    tests = [str(test) for test in at.test.values]
    rows = -(-len(tests) // COLUMNS)
    fig, axes = plt.subplots(rows, COLUMNS, figsize=(5.5 * COLUMNS, 4.4 * rows + 1.2), sharey=True, squeeze=False)
    top = TOP * float((at.risk.sel(learner="zero").isel(seed=0) / d).max())
    for ax in axes.flat[len(tests):]:
        ax.remove()
    for ax, test in zip(axes.flat, tests):
        above = []
        for train in at.train.values:
            sel, colour = at.sel(test=test, train=train), TRAININGS.get(str(train), "C2")
            gpt2 = seed_bands(*(v.sel(learner="gpt2", drop=True) / d for v in (sel.risk, sel.risk_sem)), log=True)
            ax.plot(m, gpt2["mean"], color=colour, label=f"GPT-2 trained on {train} covariances")
            ax.fill_between(m, gpt2.low, gpt2.high, facecolor=matplotlib.colors.to_rgba(colour, 0.15),
                            edgecolor=colour, linewidth=0.6)  # its edge drawn: two overlapping bands both read
            limit = sel.lsa_limit_error.values
            ax.plot(m, np.where(limit <= top, limit, np.nan), "--", color=colour, linewidth=1,
                    label=f"LSA limit, trained on {train} (theory)")
            if float(sel.lsa_limit_error.sel(position=n)) > top:
                above.append(f"{train} {float(sel.lsa_limit_error.sel(position=n)):.0f}")
        baselines = at.risk.sel(test=test).isel(train=0, seed=0) / d  # the same prompts for every training
        ax.plot(m, baselines.sel(learner="ols"), ":", color="k", linewidth=1, label="least squares (exact for M ≥ d)")
        ax.plot(m, baselines.sel(learner="zero"), "-.", color="0.4", linewidth=0.8, label="zero estimator")
        ax.axvline(n, color="0.5", linewidth=1.0)
        limits = f"\nLSA limit at M = N above the axis: {', '.join(above)}" if above else ""
        ax.set(yscale="log", ylim=(1e-2, top), title=f"tested on {test}{limits}")
    for ax in axes[:, 0]:
        ax.set_ylabel("squared error / d")
    for ax in axes.flat[max(0, len(tests) - COLUMNS):len(tests)]:  # each column's lowest panel
        ax.set_xlabel("in-context examples M")
    keys = {}
    for ax in fig.axes:  # an LSA limit drawn in a later panel only
        keys |= {label: handle for handle, label in zip(*ax.get_legend_handles_labels())}
    key = fig.legend(list(keys.values()), list(keys), loc="lower center", ncol=2, frameon=False)
    seeds = cube.sizes["seed"]
    fig.suptitle(f"GPT-2 under covariate shift, trained on fixed or random covariances\n(training length N = {n}, grey "
                 f"line; {seeds} seed{'s' if seeds > 1 else ''}, 95% bands with their edges drawn)")
    tight_layout_above(fig, key)
    save(fig, png, cube)
