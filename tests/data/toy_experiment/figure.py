"""Toy figure: final-query risk of every learner against σ, and the label power against theory."""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import xarray as xr

from iclab.stats.intervals import band
from iclab.report.plots import save, theme


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    sigma = cube.sigma.values
    for learner in cube.learner.values:
        risk = cube.query_risk.sel(learner=learner).transpose("sigma", "seed")
        sem = cube.query_risk_sem.sel(learner=learner).transpose("sigma", "seed")
        mean, low, high = band(risk.values, sem.values)
        left.plot(sigma, mean, marker="o", label=str(learner))
        left.fill_between(sigma, low, high, alpha=0.25, linewidth=0)
    right.plot(sigma, cube.theory_label_power, "k--", label="d + σ²")
    power, low, high = band(cube.label_power.values[:, None], cube.label_power_sem.values[:, None])
    right.errorbar(sigma, power, yerr=[power - low, high - power], fmt="o", label="probe prompts")
    left.set(xlabel="σ", ylabel="risk at the final query")
    right.set(xlabel="σ", ylabel="E y²")
    left.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3, frameon=False)  # off the data
    right.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)
    save(fig, png, cube)
