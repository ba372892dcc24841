"""Figure ``mean_field`` (Kim & Suzuki 2024; Suzuki's 2024 talk). Top row, along training (mean over
seeds, 95% t-band): the realisable case's ICL risk at the final query, and the population risk
min_Γ L(μ, Γ) (the two-timescale objective) of the realisable (solid) and misaligned (dashed) models
with their values at the global minimum. Then, per case, the risk against the number of context examples
of the trained models and the baselines on the same test prompts, with the case's n → ∞ risk at the
pretraining objective's global minimum."""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import numpy as np
import xarray as xr

from iclab.intervals import band
from iclab.plots import LEARNER_LABELS, save, theme

CASE_TITLES = {
    "realisable": "realisable (k = k°)",
    "misaligned": "misaligned teacher (k° > k)",
    "max": "nonlinear test task max_j f°_j(x)",
    "norm_sq": "nonlinear test task ‖f°(x)‖²",
}


def shade(ax, x, lo, hi, color, floor: float) -> None:
    """A band on a log axis, cut at ``floor`` (the panel's bottom): a t-band over few seeds reaches below 0."""
    ax.fill_between(x, np.maximum(lo, floor), np.maximum(hi, floor), color=color, alpha=0.2, linewidth=0)


def bottom(cube: xr.Dataset, variable: str) -> float:
    """The bottom of a log panel: a third of the smallest positive mean over seeds of ``variable``."""
    means = cube[variable].mean("seed").values
    return float(np.nanmin(np.where(means > 0, means, np.nan))) / 3


def training_panel(ax, cube: xr.Dataset, variable: str, case: str, colors: dict, **style) -> None:
    steps = cube.step.values
    at = cube.sel(case=case)
    for label in cube.trained.values:
        values = at[variable].sel(trained=label).transpose("step", "seed").values  # (S, seeds)
        sems = None
        if f"{variable}_sem" in at:
            sems = at[f"{variable}_sem"].sel(trained=label).transpose("step", "seed").values
        mean, lo, hi = band(values, sems)
        label_text = LEARNER_LABELS[label] if case == "realisable" else None
        ax.plot(steps, mean, color=colors[label], label=label_text, **style)
        shade(ax, steps, lo, hi, colors[label], bottom(cube, variable))
    ax.set_yscale("log")
    ax.set_ylim(bottom=bottom(cube, variable))
    ax.set_xlabel("training step")


def context_panel(ax, cube: xr.Dataset, case: str, colors: dict) -> None:
    at = cube.sel(case=case)
    positions = at.position.values[1:]
    for label in at.learner.values:
        risk = at.risk.sel(learner=label).transpose("position", "seed").values[1:]  # (K−1, seeds)
        sem = at.risk_sem.sel(learner=label).transpose("position", "seed").values[1:]
        trained = str(at.learner_kind.sel(learner=label).values) == "trained"
        mean, lo, hi = band(risk, sem)
        style = dict(color=colors[label], linestyle="-" if trained else "--")
        ax.plot(positions, mean, label=LEARNER_LABELS[label], **style)
        if trained:
            shade(ax, positions, lo, hi, colors[label], bottom(at, "risk"))
    if float(at.global_minimum_risk) > 0:  # off a log axis when 0 (realisable)
        label = "n → ∞ risk at the global minimum of L(μ)"
        ax.axhline(float(at.global_minimum_risk), color="k", linestyle=":", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(bottom(at, "risk"), 2.0)
    ax.set_title(CASE_TITLES.get(case, case))
    ax.set_xlabel("context examples n")


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colors = {label: palette[i % len(palette)] for i, label in enumerate(cube.learner.values)}
    colors["zero"] = "0.5"
    cases = list(cube.case.values)
    cols = max(3, len(cases) - 1)
    fig, axes = plt.subplots(2, cols, figsize=(5.0 * cols, 8.4), squeeze=False)
    training_panel(axes[0, 0], cube, "training_risk", "realisable", colors)
    if "teacher_attention" in cube.learner.values:
        optimum = cube.risk.sel(case="realisable", learner="teacher_attention").isel(position=-1).mean()
        style = dict(color=colors["teacher_attention"], linestyle="--", label=LEARNER_LABELS["teacher_attention"])
        axes[0, 0].axhline(float(optimum), **style)
    axes[0, 0].set_title("realisable: ICL risk at the final query")
    axes[0, 0].set_ylabel("E(ŷ − y)²  (zero predictor ≈ 1)")
    axes[0, 0].legend(fontsize=7)
    for case, linestyle in (("realisable", "-"), ("misaligned", "--")):
        if case in cases:
            training_panel(axes[0, 1], cube, "population_risk", case, colors, linestyle=linestyle)
            minimum = float(cube.global_minimum_risk.sel(case=case))
            if minimum > 0:  # the realisable minimum is 0: off a log axis
                axes[0, 1].axhline(minimum, color="k", linestyle=linestyle, lw=0.8)
    axes[0, 1].set_title(
        "two-timescale objective L(μ) = min_Γ L(μ, Γ)\n"
        "realisable (solid, minimum 0), misaligned (dashed, its minimum black)"
    )
    axes[0, 1].set_ylabel("population risk (n → ∞)")
    panels = [axes[0, 2]] + list(axes[1])
    for ax, case in zip(panels, cases):
        context_panel(ax, cube, case, colors)
    for ax in panels[len(cases) :]:
        fig.delaxes(ax)
    panels[0].set_ylabel("ICL risk E(ŷ − y)²")
    axes[1, 0].set_ylabel("ICL risk E(ŷ − y)²")
    panels[0].legend(fontsize=7)
    fig.suptitle("Mean-field transformer (Kim & Suzuki 2024): global convergence, misalignment, nonlinear tasks")
    fig.tight_layout()
    save(fig, png)
