"""Figure ``lsa_rates`` (Zhang, Frei, Bartlett 2024, Theorem 5).

Left: test error of the trained LSA against the test prompt length M (log-log), one colour per
training length N: measured (markers, mean over seeds with 95% t-band), the converged model's
exact error with A = Γ_N⁻¹ (line) and the trained weights' exact error (dashed). Right: the
M → ∞ floor against N, theory (A = Γ_N⁻¹) and trained weights, with a 1/N² reference.
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import numpy as np
import xarray as xr

from iclab.stats.intervals import band
from iclab.report.plots import colours, lines_with_bands, log_positions, loglog_slope, save, seed_bands, theme

# Title phrases that state a claim → the claims table's row (its text's start) that holds it; every other title
# describes what is drawn (tests/test_figure_titles.py)
TITLE_CLAIMS: dict[str, str] = {}


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    fig, (left, right) = plt.subplots(1, 2, figsize=(14.0, 6.0))
    ns = cube.n.values
    m_max = int(cube.position.max())
    ms = log_positions(m_max)
    lsa = cube.sel(learner="lsa", position=ms)
    measured = seed_bands(lsa.risk, lsa.risk_sem, log=True)
    measured = measured.assign(label=lambda f: [f"N = {n}: trained LSA" for n in f.n])
    palette = colours(measured.label.unique(), "viridis")  # N is ordered: light to dark would fade; viridis spans it
    lines_with_bands(measured, "position", hue="label", palette=palette, ax=left, marker="o", markersize=4,
                     linestyle="none")
    m_all = np.arange(1, m_max + 1)
    for colour, n in zip(palette.values(), ns):
        at = cube.sel(n=n)
        left.loglog(m_all, at.theory_error.sel(position=m_all), "-", color=colour, linewidth=1.5)
        left.loglog(m_all, at.trained_theory_error.sel(position=m_all).mean("seed"), "--", color=colour, linewidth=1)
    small_m = ms[ms <= max(2, m_max // 50)]
    excess = cube.risk.sel(learner="lsa", position=small_m).mean("seed") - cube.trained_theory_floor.mean("seed")
    theory_excess = cube.theory_error.sel(position=small_m) - cube.theory_floor
    left.set_title(f"slope of error − floor over M ≤ {small_m[-1]} (N = {ns[-1]}): measured "
                   f"{loglog_slope(small_m, excess.sel(n=ns[-1]).values):.2f}, theory "
                   f"{loglog_slope(small_m, theory_excess.sel(n=ns[-1]).values):.2f}")
    left.plot([], [], "k-", label="theory, A = Γ⁻¹ of its N (Theorem 5)")
    left.plot([], [], "k--", label="theory, trained weights")
    reference = cube.theory_error.sel(n=ns[-1], position=10).item() * 10 / ms.astype(float)
    left.loglog(ms, reference, ":", color="grey", label="∝ 1/M")
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("test prompt length M")
    left.set_ylabel("test error E(ŷ − y)²")
    left.legend(ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.14), frameon=False)  # below, off the data
    floor = cube.theory_floor.values
    right.loglog(ns, floor, "k-o", label="M → ∞ floor, A = Γ⁻¹ of N")
    trained_floor = cube.trained_theory_floor.transpose("n", "seed").values
    mean, lo, hi = band(trained_floor)  # (n,)
    right.errorbar(
        ns, mean, yerr=[mean - lo, hi - mean], fmt="s", color="C1", capsize=3, label="floor of the trained weights"
    )
    measured_max = cube.risk.sel(learner="lsa", position=m_max).transpose("n", "seed").values
    right.loglog(ns, measured_max.mean(axis=1), "^", color="C2", label=f"measured error at M = {m_max}")
    right.loglog(ns, floor[0] * (ns[0] / ns.astype(float)) ** 2, ":", color="grey", label="∝ 1/N²")
    right.set_title(f"slope over the last two N: theory {loglog_slope(ns[-2:], floor[-2:]):.2f}, "
                    f"trained {loglog_slope(ns[-2:], mean[-2:]):.2f} (→ −2 as N → ∞)")
    right.set_xlabel("training prompt length N")
    right.set_ylabel("error")
    right.legend()
    fig.suptitle("Trained LSA: error ≈ (M-term)/M + (N-term)/N²")
    fig.tight_layout()
    save(fig, png, cube)
