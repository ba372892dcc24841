"""Figure ``ltb_bayes_gap`` (Zhang, Wu, Bartlett 2024, Lemma 6.1 and Corollary 6.2).

(a) Excess risk over the noise, E(f − y_q)² − σ², against the number of context examples n, log-log:
the GD-β optimum's closed form (solid) and the Bayes risk (dashed, averaged over designs; band: 95%),
one colour per signal-to-noise ratio; markers: the two predictors' Monte-Carlo excess on the
evaluation prompts (95% intervals), at log-spaced n. (b) The ratio of the two risks against n
(theory, lines; Monte Carlo, markers): bounded, with a bound that grows with the SNR.
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import numpy as np
import xarray as xr

from iclab.stats.intervals import band
from iclab.report.plots import colours, save, theme

# Title phrases that state a claim → the claims table's row (its text's start) that holds it; every other title
# describes what is drawn (tests/test_figure_titles.py)
TITLE_CLAIMS: dict[str, str] = {}

MARKED = 10  # log-spaced context lengths with Monte-Carlo markers


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    fig, (excess, ratio) = plt.subplots(1, 2, figsize=(12.5, 4.8))
    n = cube.position.values[1:]  # context lengths n ≥ 1
    marked = np.unique(np.geomspace(1, n[-1], MARKED).round().astype(int))
    for snr, colour in colours(cube.snr.values, "viridis").items():
        point = cube.sel(snr=snr).isel(position=slice(1, None))
        floor = float(point.noise_variance)  # σ²
        theory = point.theory_risk
        excess.plot(n, theory.sel(predictor="gd_beta_optimum") - floor, "-", color=colour, label=f"SNR {snr:g}")
        bayes_mean, lo, hi = band(
            theory.sel(predictor="bayes").values[:, None], point.theory_risk_sem.sel(predictor="bayes").values[:, None]
        )
        excess.plot(n, bayes_mean - floor, "--", color=colour)
        excess.fill_between(n, lo - floor, hi - floor, color=colour, alpha=0.2, linewidth=0)
        for predictor, marker in (("gd_beta_optimum", "o"), ("bayes", "s")):
            mc = point.sel(predictor=predictor, position=marked)
            mean, lo, hi = band(mc.mc_risk.values[:, None], mc.mc_risk_sem.values[:, None])
            yerr = [mean - lo, hi - mean]
            excess.errorbar(marked, mean - floor, yerr=yerr, fmt=marker, ms=3.5, color=colour, capsize=2)
        ratio.plot(n, theory.sel(predictor="gd_beta_optimum") / theory.sel(predictor="bayes"), "-", color=colour)
        mc = point.mc_risk.sel(position=marked)
        ratio.plot(marked, mc.sel(predictor="gd_beta_optimum") / mc.sel(predictor="bayes"), "o", ms=3.5, color=colour)
    excess.plot([], [], "k-", label="GD-β optimum (closed form)")
    excess.plot([], [], "k--", label="Bayes (posterior mean)")
    excess.plot([], [], "ko", ms=3.5, label="Monte Carlo (○ GD-β, □ Bayes)")
    excess.set_xscale("log")
    excess.set_yscale("log")
    excess.set_xlabel("context examples n")
    excess.set_ylabel("risk − σ²")
    excess.set_title("(a) excess risk over the noise")
    ratio.axhline(1.0, color="grey", linewidth=1)
    ratio.set_xscale("log")
    ratio.set_xlabel("context examples n")
    ratio.set_ylabel("GD-β optimum risk / Bayes risk")
    ratio.set_title("(b) ratio (lines: theory; markers: Monte Carlo)")
    d, signal = int(cube.dimension.values.flat[0]), float(cube.signal_variance.values.flat[0])
    fig.suptitle(f"Optimal GD-β against Bayes (d = {d}, tr(HΨ) = {signal:g}, H = I; SNR = tr(HΨ)/σ²)")
    fig.legend(*excess.get_legend_handles_labels(), loc="lower center", ncol=4, frameon=False)  # (a)'s, off the data
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    save(fig, png, cube)
