"""Figure ``mean_field`` (Kim & Suzuki 2024; Suzuki's 2024 talk). Top row, along training (mean over
seeds, 95% t-band, multiplicative on the log axes): the realisable case's ICL risk at the final query, and the
population risk min_Γ L(μ, Γ) (the two-timescale objective) of the realisable (solid) and misaligned (dashed)
models with their values at the global minimum. Then, per case, the risk against the number of context examples
of the trained models and the baselines on the same test prompts, with the case's n → ∞ risk at the
pretraining objective's global minimum."""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
import xarray as xr

from iclab.report.plots import LEARNER_LABELS, learner_colours, lines_with_bands, save, seed_bands, theme

# Title phrases that state a claim → the claims table's row (its text's start) that holds it; every other title
# describes what is drawn (tests/test_figure_titles.py)
TITLE_CLAIMS: dict[str, str] = {}

CASE_TITLES = {
    "realisable": "realisable (k = k°)",
    "misaligned": "misaligned teacher (k° > k)",
    "max": "nonlinear test task: the largest teacher feature",
    "norm_sq": "nonlinear test task: the teacher features' squared norm",
}


MINIMUM_LABEL = "n → ∞ risk at the global minimum of L(μ)"


def bottom(cube: xr.Dataset, variable: str) -> float:
    """The bottom of a log panel: a third of the smallest positive mean over seeds of ``variable``."""
    means = cube[variable].mean("seed").values
    return float(np.nanmin(np.where(means > 0, means, np.nan))) / 3


def training_panel(ax, cube: xr.Dataset, variable: str, case: str, colors: dict, **style) -> None:
    at = cube.sel(case=case)
    sems = at[f"{variable}_sem"] if f"{variable}_sem" in at else None
    frame = seed_bands(at[variable], sems, log=True)  # (trained, step) rows
    floor = bottom(cube, variable)
    for label, group in frame.groupby("trained", sort=False):
        label_text = LEARNER_LABELS[label] if case == "realisable" else None
        lines_with_bands(group, x="step", color=colors[label], label=label_text, ax=ax, **style)
    ax.set_yscale("log")
    ax.set_ylim(bottom=floor)
    ax.set_xlabel("training step")


def context_panel(ax, cube: xr.Dataset, case: str, colors: dict) -> None:
    at = cube.sel(case=case).isel(position=slice(1, None))
    frame = seed_bands(at.risk, at.risk_sem, log=True)  # (learner, position) rows
    floor = bottom(cube.sel(case=case), "risk")
    for label, group in frame.groupby("learner", sort=False):
        if str(at.learner_kind.sel(learner=label).values) == "trained":
            lines_with_bands(group, x="position", color=colors[label], label=LEARNER_LABELS[label], ax=ax,
                             alpha=0.12, linewidth=1.2)
        else:
            sns.lineplot(data=group, x="position", y="mean", color=colors[label], linestyle="--",
                         label=LEARNER_LABELS[label], estimator=None, errorbar=None, legend=False, ax=ax)
    if float(at.global_minimum_risk) > 0:  # off a log axis when 0 (realisable)
        ax.axhline(float(at.global_minimum_risk), color="k", linestyle=":", label=MINIMUM_LABEL)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(floor, 2.0)
    ax.set_title(CASE_TITLES.get(case, case))
    ax.set(xlabel="context examples n", ylabel="")


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    colors = learner_colours(cube.learner.values)
    cases = list(cube.case.values)
    cols = max(3, len(cases) - 1)
    fig, axes = plt.subplots(2, cols, figsize=(5.0 * cols, 9.5), squeeze=False)
    training_panel(axes[0, 0], cube, "training_risk", "realisable", colors)
    if "teacher_attention" in cube.learner.values:
        optimum = cube.risk.sel(case="realisable", learner="teacher_attention").isel(position=-1).mean()
        style = dict(color=colors["teacher_attention"], linestyle="--", label=LEARNER_LABELS["teacher_attention"])
        axes[0, 0].axhline(float(optimum), **style)
    axes[0, 0].set_title("realisable: ICL risk at the final query")
    axes[0, 0].set_ylabel("E(ŷ − y)²  (zero predictor ≈ 1)")
    for case, linestyle in (("realisable", "-"), ("misaligned", "--")):
        if case in cases:
            training_panel(axes[0, 1], cube, "population_risk", case, colors, linestyle=linestyle)
            minimum = float(cube.global_minimum_risk.sel(case=case))
            if minimum > 0:  # the realisable minimum is 0: off a log axis
                axes[0, 1].axhline(minimum, color="k", linestyle=linestyle, lw=0.8,
                                   label=f"{case}: global minimum of L(μ)")
    axes[0, 1].set_title(
        "two-timescale objective L(μ) = minimum over Γ of L(μ, Γ)\n"
        "realisable (solid, minimum 0), misaligned (dashed)"
    )
    axes[0, 1].set_ylabel("population risk (n → ∞)")
    panels = [axes[0, 2]] + list(axes[1])
    for ax, case in zip(panels, cases):
        context_panel(ax, cube, case, colors)
    for ax in panels[len(cases) :]:
        fig.delaxes(ax)
    panels[0].set_ylabel("ICL risk E(ŷ − y)²")
    axes[1, 0].set_ylabel("ICL risk E(ŷ − y)²")
    keys = {}  # every learner and reference line once, in one legend under the panels
    for ax in axes.flat:
        keys |= {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}
    fig.legend(list(keys.values()), list(keys), loc="lower center", ncol=2, frameon=False)
    fig.suptitle("Mean-field transformer (Kim & Suzuki 2024): global convergence, misalignment, nonlinear tasks")
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    save(fig, png, cube)
