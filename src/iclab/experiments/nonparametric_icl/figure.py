"""Figure ``nonparametric_icl`` (Kim, Nakamaki, Suzuki 2024; Suzuki's 2024 talk). (a) the excess risk against the
number of context examples, per pretraining-set size T, with the known-basis references and kernel ridge, slopes
fitted over the last octaves; (b) the risk on new tasks and on the pretraining tasks against T (the memorisation
gap); (c) how well span φ covers the basis against T. Bands: 95% over seeds and evaluation prompts, multiplicative
on the log axes."""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import xarray as xr
from matplotlib.ticker import NullFormatter

from iclab.experiments.nonparametric_icl.rates import bin_centres, fit_bins, fitted_slope
from iclab.stats.intervals import band
from iclab.report.plots import (LEARNER_LABELS, colours, declare_flat, lines_with_bands, save, seed_bands, theme,
                                twin_axis)

# Title phrases that state a claim → the claims table's row (its text's start) that holds it; every other title
# describes what is drawn (tests/test_figure_titles.py)
TITLE_CLAIMS: dict[str, str] = {}


def excess_panel(ax, cube: xr.Dataset, fit_from: int) -> None:
    noise = float(cube.noise_variance.isel(pretraining_tasks=0))
    centres = bin_centres(cube.bin_first.values, cube.bin_last.values)
    mask = fit_bins(cube, fit_from)
    model = cube.sel(learner=str(cube.learner.values[0]))
    frame = seed_bands(model.binned_risk - noise, model.binned_risk_sem, log=True)  # (T, bin) rows
    frame["centre"] = centres[frame.position_bin.to_numpy()]
    slopes = {t: fitted_slope(centres[mask], group["mean"].to_numpy()[mask])
              for t, group in frame.groupby("pretraining_tasks", sort=False)}
    frame["label"] = [f"pretrained, T = {t} (slope {slopes[t]:.2f})" for t in frame.pretraining_tasks]
    palette = colours(frame.label.unique(), "viridis")
    lines_with_bands(frame, x="centre", hue="label", palette=palette, ax=ax, marker="o", markersize=3)
    first = cube.isel(pretraining_tasks=0)
    for name, style in (("krr", dict(color="0.35", ls="--")), ("basis_bayes", dict(color="k", ls="none", marker="x"))):
        if name in cube.learner.values:
            excess = first.binned_risk.sel(learner=name).isel(seed=0).values - noise
            label = f"{LEARNER_LABELS[name]} (slope {fitted_slope(centres[mask], excess[mask]):.2f})"
            ax.plot(centres, excess, label=label, **style)
    positions = first.position.values[1:]
    bayes = first.bayes_risk.values[1:] - noise
    ax.plot(positions, bayes, color="k", lw=1.2, label="theory: Bayes risk with the known basis")
    ax.plot(positions, first.attention_optimum_risk.values[1:] - noise, color="k", ls=":", lw=1,
            label="theory: attention on f°, optimal Γ per n")
    ax.plot(positions, first.single_gamma_risk.values[1:] - noise, color="tab:red", ls=":", lw=1,
            label="theory: attention on f°, one Γ for every n")
    exponent = float(first.rate_exponent)
    anchor = positions >= fit_from
    scale = bayes[anchor][0] / positions[anchor][0] ** exponent
    ax.plot(positions[anchor], scale * positions[anchor] ** exponent, color="tab:orange", lw=2, alpha=0.6,
            label=f"rate: n to the power −2s/(2s+1) = {exponent:.2f}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(bayes.min() / 2, 2 * frame["mean"].max())  # every mean drawn (a band may leave the panel)
    ax.set_xlabel("context examples n")
    ax.set_ylabel("excess risk E(ŷ − y)² − σ²")
    ax.set_title("(a) risk on new tasks against n, per pretraining-set size T")


def memorisation_panel(ax, cube: xr.Dataset) -> None:
    t = cube.pretraining_tasks.values
    model = str(cube.learner.values[0])
    last = cube.isel(position_bin=-1)
    new = last.binned_risk.sel(learner=model).transpose("pretraining_tasks", "seed")
    new_sem = last.binned_risk_sem.sel(learner=model).transpose("pretraining_tasks", "seed")
    pre = cube.pretraining_risk.transpose("pretraining_tasks", "seed")
    pre_sem = cube.pretraining_risk_sem.fillna(0).transpose("pretraining_tasks", "seed")
    for values, sems, color, label in ((new, new_sem, "tab:blue", "new tasks"),
                                       (pre, pre_sem, "tab:red", "its pretraining tasks (memorisation)")):
        risk = seed_bands(values, sems, log=True)
        ax.plot(t, risk["mean"], "o-", color=color, label=label)
        ax.fill_between(t, risk.low, risk.high, color=color, alpha=0.2, linewidth=0)
    span = f"n = {int(last.bin_first)}–{int(last.bin_last)}"
    noise = float(cube.noise_variance.isel(pretraining_tasks=0))
    bayes = float(cube.bayes_risk.isel(pretraining_tasks=0).sel(position=slice(int(last.bin_first), None)).mean())
    ax.axhline(bayes, color="k", lw=1, label="theory: Bayes risk, known basis")
    ax.axhline(noise, color="0.5", ls="--", lw=1, label="noise σ²")
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(NullFormatter())  # T within a decade or two: 2×10⁰, 3×10⁰, … would overlap
    ax.set_yscale("log")
    ax.set_xlabel("pretraining tasks T")
    ax.set_ylabel(f"risk E(ŷ − y)² over {span}")
    ax.set_title("(b) small T: memorisation; large T: generalisation")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, frameon=False)  # off the data


def coverage_panel(ax, cube: xr.Dataset) -> None:
    t = cube.pretraining_tasks.values
    residual = seed_bands(cube.feature_residual, log=True)
    ax.plot(t, residual["mean"], "o-", color="tab:green", label="share of f° outside span φ (prior-weighted)")
    ax.fill_between(t, residual.low, residual.high, color="tab:green", alpha=0.2, linewidth=0)
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(NullFormatter())  # as in (b)
    ax.set_yscale("log")
    ax.set_xlabel("pretraining tasks T")
    ax.set_ylabel("Σλⱼ‖P⊥fⱼ‖² / Σλⱼ", color="tab:green")
    twin = twin_axis(ax, "two measures of one span in two units (a share of variance, an angle in degrees); "
                          "neither scale is fitted to the other (the angle's axis is 0–90° always)")
    mean, lo, hi = band(cube.principal_angle.transpose("pretraining_tasks", "seed").values)
    twin.plot(t, mean, "s--", color="tab:purple", label="largest principal angle (right axis)")
    twin.fill_between(t, lo, hi, color="tab:purple", alpha=0.15, linewidth=0)
    twin.set_ylabel("largest principal angle to the leading fⱼ° (degrees)", color="tab:purple")
    twin.set_ylim(0, 90)
    declare_flat(twin, "angles on their whole range 0–90°: a flat line near 90° is no alignment at all")
    ax.set_title("(c) how well the pretrained features span the basis")
    handles = ax.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.13), frameon=False)  # off the data


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    fig, axes = plt.subplots(2, 2, figsize=(13.0, 10.0))
    excess_panel(axes[0, 0], cube, int(cube.fit_from.isel(pretraining_tasks=0)))
    legend = axes[0, 1]  # (a)'s many lines are named beside it, off its data
    legend.legend(*axes[0, 0].get_legend_handles_labels(), loc="center left", title="(a)")
    legend.axis("off")
    memorisation_panel(axes[1, 0], cube)
    coverage_panel(axes[1, 1], cube)
    fig.suptitle("Nonparametric ICL (Kim, Nakamaki, Suzuki 2024): risk against n and against the pretraining tasks T, "
                 "and how well the pretrained features span the basis")
    fig.tight_layout()
    save(fig, png, cube)
