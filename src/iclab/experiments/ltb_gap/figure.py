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

import matplotlib.pyplot as plt
import xarray as xr

from iclab.intervals import band
from iclab.plots import LEARNER_LABELS, save, theme

TRAINED = ("lsa", "ltb", "gd_beta")
STYLES = {
    "lsa": dict(marker="o", linestyle="-"),
    "ltb": dict(marker="s", linestyle="--", markersize=8),
    "gd_beta": dict(marker="^", linestyle=":"),
}


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    ns = cube.n.values
    fig, axes = plt.subplots(
        2, len(ns), figsize=(5.0 * len(ns), 7.0), squeeze=False, sharex=True, gridspec_kw={"height_ratios": [3, 2]}
    )
    norms = cube.beta_star_norm.values
    colors = dict(zip(TRAINED, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    for col, n in enumerate(ns):
        at_n = cube.sel(n=n)
        optimum = at_n.theory_risk.sel(theory="gd_beta_optimum").values  # (norms,)
        paired = "gd_beta_optimal" in at_n.learner.values
        reference = at_n.query_risk.sel(learner="gd_beta_optimal").isel(seed=0).values if paired else optimum
        top, bottom = axes[0, col], axes[1, col]
        for name in (m for m in TRAINED if m in at_n.learner.values):
            risk = at_n.query_risk.sel(learner=name).transpose("beta_star_norm", "seed").values  # (norms, seeds)
            sem = at_n.query_risk_sem.sel(learner=name).transpose("beta_star_norm", "seed").values
            excess = 100 * (risk / reference[:, None] - 1)  # paired: the evaluation error cancels (seeds only)
            for ax, (values, sems) in ((top, (risk, sem)), (bottom, (excess, None))):
                mean, lo, hi = band(values, sems)
                ax.plot(norms, mean, color=colors[name], label=LEARNER_LABELS[name], **STYLES[name])
                ax.fill_between(norms, lo, hi, color=colors[name], alpha=0.25, linewidth=0)
        top.plot(norms, optimum, "k--", label="GD-β optimum (closed form)")
        bayes = at_n.theory_risk.sel(theory="bayes").values
        bayes_sem = at_n.theory_risk_sem.sel(theory="bayes").values
        top.plot(norms, bayes, "k:", label="Bayes risk")
        top.fill_between(norms, bayes - 2 * bayes_sem, bayes + 2 * bayes_sem, color="k", alpha=0.1, linewidth=0)
        if paired:
            top.plot(norms, reference, "kx", label="GD-β optimum on the eval set")
        lsa_optimum = at_n.theory_risk.sel(theory="lsa_optimum").values  # (norms,)
        top.plot(norms, lsa_optimum, "-", color=colors["lsa"], alpha=0.6, linewidth=3, label="LSA class optimum")
        gap = 100 * (lsa_optimum / optimum - 1)  # (norms,), exact
        label = "Theorem 4.1 gap: LSA optimum / GD-β optimum − 1"
        bottom.plot(norms, gap, "-", color=colors["lsa"], alpha=0.6, linewidth=3, label=label)
        if paired and "lsa_optimal" in at_n.learner.values:
            on_eval = at_n.query_risk.sel(learner="lsa_optimal").isel(seed=0).values  # (norms,)
            top.plot(norms, on_eval, "+", color=colors["lsa"], markersize=10, label="LSA optimum on the eval set")
            bottom.plot(norms, 100 * (on_eval / reference - 1), "+", color=colors["lsa"], markersize=10)
        bottom.axhspan(-5, 5, color="grey", alpha=0.15, label="±5% of the optimum")
        bottom.axhline(0, color="k", linestyle="--", linewidth=1)
        top.set_title(f"n = {n} context examples")
        top.set_ylabel("ICL risk  E(f − y)²")
        bottom.set_ylabel("excess over GD-β optimum (%)" + (", paired" if paired else ""))
        bottom.set_xlabel("‖β*‖ (task mean)")
    axes[0, 0].legend(fontsize=8, loc="upper left")
    axes[1, 0].legend(fontsize=8, loc="upper left")
    fig.suptitle("Shared signal: even the best LSA falls behind GD-β as ‖β*‖ grows; LTB matches the optimal GD-β")
    fig.tight_layout()
    save(fig, png)
