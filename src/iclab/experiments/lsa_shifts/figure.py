"""Figure ``lsa_shifts`` (Zhang, Frei, Bartlett 2024, §5): the trained LSA under distribution shift.

Top: (a) error at M = N (the training length) against the covariate scale c (x → c·x): trained LSA and, when
configured, GPT-2 (95% bands over seeds, multiplicative on the log axis) and the LSA's exact limit error (theory);
the noiseless baselines are exact, below the axis. (b) Query shifts at M = N. Bottom: error against M, one panel per
task condition (no shift, noisy labels, ReLU labels) on one shared axis, colour the learner as in every panel: the
trained LSA (band), GPT-2 at M ≤ N, Theorem 5's curve, least squares (its peak near M = d above the axis, as the panel
says). The LSA's prediction gain E[ŷy]/E[y²] grows as c² by its limit's closed form, an identity rather than a
finding: its fitted exponent is a line of the title, not a panel.
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
import xarray as xr
from matplotlib.lines import Line2D

from iclab.experiments.lsa_shifts.conditions import QUERY_SHIFTS, TASK_SHIFTS
from iclab.report.plots import (
    LEARNER_LABELS, learner_colours, lines_with_bands, log_positions, loglog_slope, save, seed_bands, theme
)

# Title phrases that state a claim → the claims table's row (its text's start) that holds it; every other title
# describes what is drawn (tests/test_figure_titles.py)
TITLE_CLAIMS: dict[str, str] = {}

TRAINED = ("lsa", "gpt2")
COLOURS = learner_colours([*TRAINED, "ols"])  # each learner's colour in every panel and figure
CLIP = 30.0  # the task panels' top: this many times their highest LSA or theory error (least squares peaks far
# above it at M ≈ d)


def unshifted(cube: xr.Dataset) -> list[str]:
    """The unshifted test: the covariate condition with c = 1 (absent if the config has no c = 1)."""
    return [str(c) for c, scale in zip(cube.condition.values, cube.covariate_scale.values) if scale == 1.0]


def shown_name(cube: xr.Dataset, condition: str) -> str:
    return "no shift" if condition in unshifted(cube) else condition.replace("relu", "ReLU")


def trained_learners(cube: xr.Dataset) -> list[str]:
    return [name for name in TRAINED if name in cube.learner.values]


def covariate_panel(cube: xr.Dataset, ax: plt.Axes) -> None:
    """(a) error at M = N against c."""
    n = int(cube.train_n.max())
    conds, cs = covariate_conditions(cube)
    at_n = cube.risk.sel(condition=conds, position=n)  # (condition, learner, seed)
    sem_n = cube.risk_sem.sel(condition=conds, position=n)
    for name in trained_learners(cube):
        errors = seed_bands(at_n.sel(learner=name), sem_n.sel(learner=name), log=True)  # (condition) rows
        ax.semilogy(cs, errors["mean"], "o-", color=COLOURS[name], label=LEARNER_LABELS[name])
        ax.fill_between(cs, errors.low, errors.high, color=COLOURS[name], alpha=0.25, linewidth=0)
    ax.semilogy(cs, cube.theory_error.sel(condition=conds, position=n), "k-", label="LSA limit Γ⁻¹ (theory)")
    ax.set_ylim(bottom=1e-3)  # noiseless: the baselines are exact (error ~1e-16), below the axis: not drawn
    ax.text(0.98, 0.04, "least squares, ridge, Bayes: error < 1e-12 (noiseless, exact for M ≥ d)",
            transform=ax.transAxes, ha="right")
    ax.set_xlabel("covariate scale c (test x → c·x)")
    ax.set_ylabel(f"error at M = N = {n}")
    ax.legend()


def covariate_conditions(cube: xr.Dataset) -> tuple[np.ndarray, np.ndarray]:
    """The covariate-scaling conditions and their c, in increasing c."""
    scales = cube.covariate_scale.values
    rows = [i for i, c in enumerate(scales) if np.isfinite(c)]
    order = np.argsort(scales[rows])
    return cube.condition.values[rows][order], scales[rows][order]


def gain_exponent(cube: xr.Dataset) -> str:
    """The title's line on the c² law: the trained LSA's gain's fitted exponent in c (theory 2)."""
    conds, cs = covariate_conditions(cube)
    gain = cube.lsa_gain.sel(condition=conds).mean("seed").values
    return (f"the LSA's gain E[ŷy]/E[y²] against c: fitted exponent {loglog_slope(cs, gain):.3f} (its limit's closed "
            "form gives c², an identity)")


def task_shift_panels(cube: xr.Dataset, axes: list[plt.Axes]) -> None:
    """Error against M, one panel per task condition (shared axis): the LSA's band, GPT-2 at M ≤ N, Theorem 5's curve,
    least squares; the axis clipped at CLIP × the highest LSA or theory error, as each panel says."""
    names = unshifted(cube) + [c for c in TASK_SHIFTS if c in cube.condition.values]
    n = int(cube.train_n.max())
    highest, peaks = 0.0, []
    for ax, name in zip(axes, names):
        at = cube.sel(condition=name)
        m_max = int(at.risk.dropna("position", how="all").position.max())
        ms = log_positions(m_max, 18)
        lsa = seed_bands(*(v.sel(learner="lsa", position=ms) for v in (at.risk, at.risk_sem)), log=True)
        ax.loglog(ms, lsa["mean"], "o", color=COLOURS["lsa"], markersize=5, label=LEARNER_LABELS["lsa"])
        ax.fill_between(ms, lsa.low, lsa.high, color=COLOURS["lsa"], alpha=0.2, linewidth=0)
        if "gpt2" in cube.learner.values:  # only at the lengths GPT-2 was trained on
            within = [m for m in ms if m <= n]
            gpt2 = at.risk.sel(learner="gpt2", position=within).mean("seed")
            ax.loglog(within, gpt2, "s", color=COLOURS["gpt2"], markersize=5,
                      label=f"{LEARNER_LABELS['gpt2']}, M ≤ N = {n}")
        every = np.arange(1, m_max + 1)
        ax.loglog(every, at.theory_error.sel(position=every), "-", color="k", linewidth=1.2,
                  label="LSA theory (Theorem 5)")
        highest = max(highest, float(lsa.high.max()), float(at.theory_error.sel(position=every).max()))
        peaks.append(0.0)
        if "ols" in cube.learner.values:
            ols = at.risk.sel(learner="ols", position=ms).isel(seed=0)
            ax.loglog(ms, ols, "--", color=COLOURS["ols"], linewidth=1.0,
                      label="least squares (exact for M ≥ d without label noise)")
            peaks[-1] = float(ols.max())
    for letter, ax, name, peak in zip("cde", axes, names, peaks):
        ax.set_ylim(1e-2, CLIP * highest)
        above = f"\nleast squares peaks at {peak:.0e} near M = d, above the axis" if peak > CLIP * highest else ""
        ax.set(xlabel="test prompt length M", title=f"({letter}) {shown_name(cube, name)}{above}")
    axes[0].set_ylabel("error")
    axes[1].legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)  # off the data


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
    fig = plt.figure(figsize=(14.5, 11.5))  # reads at the README's width (iclab.report.legibility)
    grid = fig.add_gridspec(2, 6)
    covariate, query = fig.add_subplot(grid[0, :3]), fig.add_subplot(grid[0, 3:])
    tasks = [fig.add_subplot(grid[1, 2 * i : 2 * i + 2]) for i in range(3)]
    for ax in tasks[1:]:
        ax.sharey(tasks[0])
    covariate_panel(cube, covariate)
    query_shift_panel(cube, query)
    task_shift_panels(cube, tasks)
    covariate.set_title("(a) covariate shift")
    query.set_title("(b) query shift")
    seeds = cube.sizes["seed"]
    fig.suptitle(f"Trained LSA under distribution shift: covariate, query and task shifts ({seeds} "
                 f"seed{'s' if seeds > 1 else ''})\n{gain_exponent(cube)}")
    fig.tight_layout()
    save(fig, png, cube)
