"""Figure ``lsa_shifts`` (Zhang, Frei, Bartlett 2024, §5): the trained LSA under distribution shift.

(a) Error at M = N (the training length) against the covariate scale c (x → c·x): trained LSA and,
when configured, GPT-2 (95% bands over seeds, multiplicative on the log axis) and the LSA's exact limit error
(theory); the noiseless baselines are exact, below the axis.
(b) The LSA's gain E[ŷy]/E[y²] against c: the c² law, with the fitted exponent. (c) Error against M for
the unshifted test and the task shifts (noisy, ReLU labels), the condition as marker and dashes, colour the
learner as in every panel: tolerated, on the theory curves (GPT-2's mean at M ≤ N). (d) Query shifts at M = N.
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
import xarray as xr
from matplotlib.lines import Line2D

from iclab.experiments.lsa_shifts.conditions import QUERY_SHIFTS, TASK_SHIFTS
from iclab.plots import (
    LEARNER_LABELS, learner_colours, lines_with_bands, log_positions, loglog_slope, save, seed_bands, theme
)

TRAINED = ("lsa", "gpt2")
COLOURS = learner_colours([*TRAINED, "ols"])  # each learner's colour in every panel and figure
CONDITION_STYLES = (("o", "-"), ("s", "--"), ("^", "-."))  # (c): each task condition's marker and dashes
CLIP = 30.0  # panel (c)'s top: this many times the highest LSA or theory error (least squares peaks far above at M ≈ d)


def unshifted(cube: xr.Dataset) -> list[str]:
    """The unshifted test: the covariate condition with c = 1 (absent if the config has no c = 1)."""
    return [str(c) for c, scale in zip(cube.condition.values, cube.covariate_scale.values) if scale == 1.0]


def shown_name(cube: xr.Dataset, condition: str) -> str:
    return "no shift" if condition in unshifted(cube) else condition


def trained_learners(cube: xr.Dataset) -> list[str]:
    return [name for name in TRAINED if name in cube.learner.values]


def covariate_panels(cube: xr.Dataset, ax_err: plt.Axes, ax_gain: plt.Axes) -> None:
    """(a) error at M = N against c, (b) the LSA's gain against c."""
    n = int(cube.train_n.max())
    scales = cube.covariate_scale.values
    rows = [i for i, c in enumerate(scales) if np.isfinite(c)]
    conds, cs = cube.condition.values[rows], scales[rows]
    order = np.argsort(cs)
    conds, cs = conds[order], cs[order]
    at_n = cube.risk.sel(condition=conds, position=n)  # (condition, learner, seed)
    sem_n = cube.risk_sem.sel(condition=conds, position=n)
    for name in trained_learners(cube):
        errors = seed_bands(at_n.sel(learner=name), sem_n.sel(learner=name), log=True)  # (condition) rows
        ax_err.semilogy(cs, errors["mean"], "o-", color=COLOURS[name], label=LEARNER_LABELS[name])
        ax_err.fill_between(cs, errors.low, errors.high, color=COLOURS[name], alpha=0.25, linewidth=0)
    ax_err.semilogy(cs, cube.theory_error.sel(condition=conds, position=n), "k-", label="LSA limit Γ⁻¹ (theory)")
    ax_err.set_ylim(bottom=1e-3)  # noiseless: the baselines are exact (error ~1e-16), below the axis: not drawn
    ax_err.text(0.98, 0.04, "least squares, ridge, Bayes: error < 1e-12 (noiseless, exact for M ≥ d)",
                transform=ax_err.transAxes, ha="right")
    ax_err.set_xlabel("covariate scale c (test x → c·x)")
    ax_err.set_ylabel(f"error at M = N = {n}")
    ax_err.legend()
    gains = seed_bands(cube.lsa_gain.sel(condition=conds))
    gains["c"] = cs
    lines_with_bands(gains, x="c", ax=ax_gain, marker="o", linestyle="none", label="trained LSA: E[ŷy]/E[y²]",
                     alpha=0.25)
    mean = gains["mean"].to_numpy()
    ax_gain.loglog(cs, cube.theory_gain.sel(condition=conds), "k-", label="theory c²·tr(ΛΓ⁻¹Λ)/tr Λ")
    ax_gain.text(0.02, 0.9, f"fitted exponent {loglog_slope(cs, mean):.3f} (theory 2)", transform=ax_gain.transAxes)
    ax_gain.set_xlabel("covariate scale c")
    ax_gain.set_ylabel("prediction gain")
    ax_gain.legend(loc="lower right")


def task_shift_panel(cube: xr.Dataset, ax: plt.Axes) -> None:
    """(c) error against M per task shift: colour is the learner, as in every panel; the condition is the marker
    (measured) and the dashes (theory, least squares)."""
    names = unshifted(cube) + [c for c in TASK_SHIFTS if c in cube.condition.values]
    n = int(cube.train_n.max())
    highest, ols_peak = 0.0, 0.0
    for (marker, dashes), name in zip(CONDITION_STYLES, names):
        at = cube.sel(condition=name)
        m_max = int(at.risk.dropna("position", how="all").position.max())
        ms = log_positions(m_max, 18)
        lsa = seed_bands(*(v.sel(learner="lsa", position=ms) for v in (at.risk, at.risk_sem)), log=True)
        ax.loglog(ms, lsa["mean"], marker, color=COLOURS["lsa"], markersize=5, linestyle="none")
        ax.fill_between(ms, lsa.low, lsa.high, color=COLOURS["lsa"], alpha=0.12, linewidth=0)
        if "gpt2" in cube.learner.values:  # only at the lengths GPT-2 was trained on
            within = [m for m in ms if m <= n]
            gpt2 = at.risk.sel(learner="gpt2", position=within).mean("seed")
            ax.loglog(within, gpt2, marker, color=COLOURS["gpt2"], markersize=5, linestyle="none")
        every = np.arange(1, m_max + 1)
        ax.loglog(every, at.theory_error.sel(position=every), dashes, color="k", linewidth=1.2)
        highest = max(highest, float(lsa.high.max()), float(at.theory_error.sel(position=every).max()))
        if "ols" in cube.learner.values:
            ols = at.risk.sel(learner="ols", position=ms).isel(seed=0)
            ax.loglog(ms, ols, dashes, color=COLOURS["ols"], linewidth=0.9)
            ols_peak = max(ols_peak, float(ols.max()))
    ax.set_ylim(1e-2, CLIP * highest)
    clipped = f"axis clipped: least squares peaks at {ols_peak:.1e} near M = d" if ols_peak > CLIP * highest else None
    ax.set_xlabel("test prompt length M")
    ax.set_ylabel("error")
    conditions = [Line2D([], [], color="0.3", marker=marker, linestyle=dashes, label=shown_name(cube, name))
                  for (marker, dashes), name in zip(CONDITION_STYLES, names)]
    learners = [Line2D([], [], color=COLOURS["lsa"], marker="o", linestyle="none", label=LEARNER_LABELS["lsa"])]
    if "gpt2" in cube.learner.values:
        learners.append(Line2D([], [], color=COLOURS["gpt2"], marker="o", linestyle="none",
                               label=f"{LEARNER_LABELS['gpt2']}, M ≤ N = {n}"))
    learners.append(Line2D([], [], color="k", label="LSA theory (Theorem 5)"))
    if "ols" in cube.learner.values:
        learners.append(Line2D([], [], color=COLOURS["ols"], label="least squares (noiseless: exact for M ≥ d)"))
    ax.legend(handles=conditions + learners, title=clipped, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2,
              frameon=False)  # off the data


def query_shift_panel(cube: xr.Dataset, ax: plt.Axes) -> None:
    """seaborn bars of each learner's error at M = N (mean over seeds) and the LSA theory, per query shift."""
    names = unshifted(cube) + [c for c in QUERY_SHIFTS if c in cube.condition.values]
    n = int(cube.train_n.max())
    learners = [name for name in ("lsa", "gpt2", "ols", "ridge", "bayes") if name in cube.learner.values]
    at = cube.sel(condition=names, position=n)
    bars = at.risk.sel(learner=learners).mean("seed").to_pandas().T  # (learner, condition)
    bars.index = [LEARNER_LABELS[name] for name in learners]
    bars.loc["LSA theory"] = at.theory_error.to_pandas()
    frame = bars.rename(columns=lambda c: shown_name(cube, c)).rename_axis("learner").reset_index()
    frame = frame.melt(id_vars="learner", var_name="condition", value_name="error")
    palette = learner_colours(learners, by_label=True) | {"LSA theory": "k"}
    sns.barplot(data=frame, x="condition", y="error", hue="learner", palette=palette, ax=ax)
    ax.set_xlabel("missing bars: error < 1e-12 (noiseless, exact for M ≥ d)")
    ax.set_ylabel(f"error at M = N = {n}")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=3, frameon=False)  # off the bars


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    fig, axes = plt.subplots(2, 2, figsize=(14.0, 12.0))
    covariate_panels(cube, axes[0, 0], axes[0, 1])
    task_shift_panel(cube, axes[1, 0])
    query_shift_panel(cube, axes[1, 1])
    titles = ("(a) covariate shift", "(b) the c² law", "(c) no shift and task shifts, against M", "(d) query shift")
    for ax, title in zip(axes.flat, titles):
        ax.set_title(title)
    fig.suptitle("Trained LSA under distribution shift: task and query shifts tolerated, covariate shift not")
    fig.tight_layout()
    save(fig, png, cube)
