"""Figure ``ltb_gap``: ICL risk at the final query against ‖β*‖ (Zhang, Wu, Bartlett 2024).

Top: risk of the trained LSA, LTB and GD-β (mean over seeds, 95% t-band), the closed-form
GD-β optimum, the LSA class's optimum and the Bayes risk (lines). Bottom: excess risk over the
GD-β optimum in percent, paired: relative to the optimal GD-β evaluated on the same prompts when
that baseline is in the cube (this removes the evaluation set's Monte-Carlo error), else to the
closed form; the line is Theorem 4.1's gap, LSA optimum over GD-β optimum, exact.
One column per context length n.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import seaborn as sns
import xarray as xr

from iclab.stats.intervals import band
from iclab.report.plots import LEARNER_LABELS, learner_colours, lines_with_bands, save, theme

# Title phrases that state a claim → the claims table's row (its text's start) that holds it; every other title
# describes what is drawn (tests/test_figure_titles.py)
TITLE_CLAIMS: dict[str, str] = {
    "even the best LSA falls behind GD-β as ‖β*‖ grows": "trained LSA stays above the GD-β optimum when β* ≠ 0",
    "LTB matches the optimal GD-β": "trained LTB reaches the GD-β optimum",
}

TRAINED = ("lsa", "ltb", "gd_beta")
STYLES = {
    "lsa": dict(marker="o", linestyle="-"),
    "ltb": dict(marker="s", linestyle="--", markersize=8),
    "gd_beta": dict(marker="^", linestyle=":"),
}
ROWS = ("risk", "excess")


def reference(at_n: xr.Dataset) -> np.ndarray:
    """The GD-β optimum (norms,): on the evaluation set where the cube has it (paired), else its closed form."""
    if "gd_beta_optimal" in at_n.learner.values:
        return at_n.query_risk.sel(learner="gd_beta_optimal").isel(seed=0).values
    return at_n.theory_risk.sel(theory="gd_beta_optimum").values


def tidy(cube: xr.Dataset) -> pd.DataFrame:
    """One row per (n, trained learner, row, ‖β*‖): the risk at the query, or its excess over the GD-β optimum in %
    (paired: the evaluation error cancels, the band is over seeds only), mean over seeds and band."""
    rows = []
    for n in cube.n.values:
        at_n = cube.sel(n=n)
        for name in (m for m in TRAINED if m in at_n.learner.values):
            risk = at_n.query_risk.sel(learner=name).transpose("beta_star_norm", "seed").values  # (norms, seeds)
            sem = at_n.query_risk_sem.sel(learner=name).transpose("beta_star_norm", "seed").values
            excess = 100 * (risk / reference(at_n)[:, None] - 1)
            for row, stats in zip(ROWS, (band(risk, sem), band(excess))):
                rows.append(pd.DataFrame(dict(zip(("mean", "low", "high"), stats)) | {
                    "beta_star_norm": cube.beta_star_norm.values, "n": n, "row": row, "learner": name}))
    return pd.concat(rows, ignore_index=True)


def trained_lines(data: pd.DataFrame, palette: dict, color=None, label=None) -> None:
    for name, group in data.groupby("learner", sort=False):
        lines_with_bands(group, x="beta_star_norm", color=palette[name], label=LEARNER_LABELS[name], alpha=0.25,
                         **STYLES[name])


def theory_lines(risk_ax, excess_ax, at_n: xr.Dataset, lsa_colour) -> None:
    """The closed forms (GD-β optimum, Bayes risk, the LSA class optimum and Theorem 4.1's gap), and the optima
    evaluated on the evaluation set where the cube has them."""
    norms = at_n.beta_star_norm.values
    optimum = at_n.theory_risk.sel(theory="gd_beta_optimum").values  # (norms,)
    risk_ax.plot(norms, optimum, "k--", label="GD-β optimum (closed form)")
    bayes = at_n.theory_risk.sel(theory="bayes").values
    bayes_sem = at_n.theory_risk_sem.sel(theory="bayes").values
    risk_ax.plot(norms, bayes, "k:", label="Bayes risk")
    risk_ax.fill_between(norms, bayes - 2 * bayes_sem, bayes + 2 * bayes_sem, color="k", alpha=0.1, linewidth=0)
    paired = "gd_beta_optimal" in at_n.learner.values
    if paired:
        risk_ax.plot(norms, reference(at_n), "kx", label="GD-β optimum on the eval set")
    lsa_optimum = at_n.theory_risk.sel(theory="lsa_optimum").values  # (norms,)
    wide = dict(color=lsa_colour, alpha=0.6, linewidth=3)
    risk_ax.plot(norms, lsa_optimum, "-", label="LSA class optimum", **wide)
    gap = 100 * (lsa_optimum / optimum - 1)  # (norms,), exact
    excess_ax.plot(norms, gap, "-", label="Theorem 4.1 gap: LSA optimum / GD-β optimum − 1", **wide)
    if paired and "lsa_optimal" in at_n.learner.values:
        on_eval = at_n.query_risk.sel(learner="lsa_optimal").isel(seed=0).values  # (norms,)
        cross = dict(color=lsa_colour, markersize=10)
        risk_ax.plot(norms, on_eval, "+", label="LSA optimum on the eval set", **cross)
        excess_ax.plot(norms, 100 * (on_eval / reference(at_n) - 1), "+", **cross)
    excess_ax.axhspan(-5, 5, color="grey", alpha=0.15, label="±5% of the optimum")
    excess_ax.axhline(0, color="k", linestyle="--", linewidth=1)
    excess_ax.set_ylabel("excess over GD-β optimum (%)" + (", paired" if paired else ""))


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    palette = learner_colours(TRAINED)
    grid = sns.FacetGrid(tidy(cube), row="row", col="n", row_order=ROWS, sharex=True, sharey="row", height=4.0,
                         aspect=1.43, gridspec_kws={"height_ratios": [3, 2]})
    grid.map_dataframe(trained_lines, palette=palette)
    for col, n in enumerate(cube.n.values):
        risk_ax, excess_ax = grid.axes[:, col]
        theory_lines(risk_ax, excess_ax, cube.sel(n=n), palette["lsa"])
        risk_ax.set_title(f"n = {n} context examples")
        risk_ax.set_ylabel("ICL risk  E(f − y)²")
        excess_ax.set_title("")
        excess_ax.set_xlabel("‖β*‖ (task mean)")
    keys = {}  # both rows' lines once, in one legend under the panels, off the data
    for ax in grid.axes[:, 0]:
        keys |= dict(zip(*reversed(ax.get_legend_handles_labels())))
    grid.figure.legend(list(keys.values()), list(keys), loc="lower center", ncol=2, frameon=False)
    title = "Shared signal: even the best LSA falls behind GD-β as ‖β*‖ grows; LTB matches the optimal GD-β"
    grid.figure.suptitle(title)
    grid.tight_layout(rect=(0, 0.17, 1, 1))
    save(grid.figure, png, cube)
