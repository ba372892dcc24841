"""Figure ``ltb_training``: risk at the final query against the training step (Zhang, Wu, Bartlett 2024,
Figure 1), one panel per ‖β*‖: the trained models' snapshots on the evaluation set (mean over seeds, 95%
t-band) and the GD-β optimum, the LSA class's optimum and the Bayes risk as horizontal lines."""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import xarray as xr

from iclab.intervals import band
from iclab.plots import LEARNER_LABELS, save, theme

REFERENCES = {  # theory → line style
    "gd_beta_optimum": dict(color="k", linestyle="--", label="GD-β optimum (closed form)"),
    "lsa_optimum": dict(linestyle="-", linewidth=3, alpha=0.5, label="LSA class optimum (Theorem 4.1)"),
    "bayes": dict(color="k", linestyle=":", label="Bayes risk"),
}


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    norms = cube.beta_star_norm.values
    cols = min(len(norms), 2)
    rows = -(-len(norms) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.5 * cols, 4.0 * rows), squeeze=False, sharey=True)
    for ax in axes.flat[len(norms) :]:
        ax.set_visible(False)
    colors = dict(zip(cube.trained.values, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    steps = cube.step.values
    for ax, norm in zip(axes.flat, norms):
        at = cube.sel(beta_star_norm=norm)
        for label in cube.trained.values:
            risk = at.training_risk.sel(trained=label).transpose("step", "seed").values  # (S, seeds)
            sem = at.training_risk_sem.sel(trained=label).transpose("step", "seed").values
            mean, lo, hi = band(risk, sem)
            ax.plot(steps, mean, color=colors[label], label=LEARNER_LABELS[label])
            ax.fill_between(steps, lo, hi, color=colors[label], alpha=0.25, linewidth=0)
        for theory, style in REFERENCES.items():
            style = {"color": colors.get("lsa", "C0"), **style}
            ax.axhline(float(at.theory_risk.sel(theory=theory)), **style)
        ax.set_yscale("log")
        ax.set_xscale("symlog", linthresh=max(steps[1], 1) if len(steps) > 1 else 1)  # the early steps, and step 0
        ax.set_xlim(0, steps[-1])
        ax.set_title(f"‖β*‖ = {norm:g}")
        ax.set_xlabel("training step")
    for ax in axes[:, 0]:
        ax.set_ylabel("ICL risk at the final query  E(f − y)²")
    axes[0, 0].legend(fontsize=8, loc="upper right")
    fig.suptitle("Test risk along training: LTB reaches the GD-β optimum, LSA stops at its class's optimum")
    fig.tight_layout()
    save(fig, png)
