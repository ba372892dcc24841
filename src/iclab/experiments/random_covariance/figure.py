"""Figure ``random_covariance`` (Zhang, Frei, Bartlett 2024, Theorem 8).

(a) Entries of the trained u₋₁U₁₁ against the theorem's limit K = E[Λ²](E[ΓΛ²])⁻¹. (b) On new prompts
with new covariances: E(ŷ − x_qᵀKΛ_new w)² / E(x_qᵀKΛ_new w)² against M, measured and for the limit
model (theory). (c) The error this costs: trained LSA, the limit model (theory) and least squares.
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import numpy as np
import xarray as xr

from iclab.intervals import band
from iclab.plots import log_positions, save, theme


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    n = cube.n.values[0]
    at = cube.sel(n=n)
    fig, (ax_w, ax_gap, ax_err) = plt.subplots(1, 3, figsize=(16.0, 4.8))
    learned = at.product_learned.values  # (seeds, d, d)
    limit = at.product_limit.values
    d = limit.shape[0]
    diag = np.eye(d, dtype=bool)
    for i in range(learned.shape[0]):
        ax_w.plot(
            np.arange(d),
            learned[i][diag],
            "o",
            color="C0",
            alpha=0.7,
            label="trained u₋₁U₁₁, diagonal" if i == 0 else None,
        )
        ax_w.plot(
            np.arange(d) + 0.2,
            np.abs(learned[i][~diag]).reshape(d, d - 1).max(axis=1),
            "x",
            color="C1",
            label="largest |off-diagonal| in the row" if i == 0 else None,
        )
    ax_w.axhline(limit[0, 0], color="k", linestyle="--", label="Theorem 8: E[λ²]/E[(ΓΛ²)ᵢᵢ]")
    ax_w.set_xlabel("coordinate i")
    ax_w.set_ylabel("entry")
    ax_w.set_ylim(bottom=0)
    ax_w.legend(fontsize=8)
    m_max = int(at.position.max())
    ms = log_positions(m_max)
    mean, lo, hi = band(at.prediction_gap.sel(position=ms).transpose("position", "seed").values)
    ax_gap.loglog(ms, mean, "o", color="C0", label="trained LSA")
    ax_gap.fill_between(ms, lo, hi, color="C0", alpha=0.25, linewidth=0)
    every = np.arange(1, m_max + 1)
    ax_gap.loglog(every, at.theory_gap.sel(position=every), "k-", label="limit model (theory, ∝ 1/M)")
    ax_gap.set_xlabel("test prompt length M (new covariance per prompt)")
    ax_gap.set_ylabel("E(ŷ − x_qᵀKΛ_new w)² / E(x_qᵀKΛ_new w)²")
    ax_gap.legend(fontsize=8)
    mean, lo, hi = band(
        *(v.sel(learner="lsa", position=ms).transpose("position", "seed").values for v in (at.risk, at.risk_sem))
    )
    ax_err.loglog(ms, mean, "o", color="C0", label="trained LSA")
    ax_err.fill_between(ms, lo, hi, color="C0", alpha=0.25, linewidth=0)
    ax_err.loglog(every, at.theory_error.sel(position=every), "k-", label="limit model (theory)")
    if "ols" in at.learner.values:
        ax_err.loglog(
            ms,
            at.risk.sel(learner="ols", position=ms).isel(seed=0),
            "s--",
            color="C2",
            label="least squares (exact for M ≥ d)",
        )
        ax_err.set_ylim(bottom=1e-2)  # noiseless: least squares is exact for M ≥ d (error ~1e-28), below the axis
    ax_err.set_xlabel("test prompt length M")
    ax_err.set_ylabel("error E(ŷ − y)²")
    ax_err.legend(fontsize=8)
    for ax, title in zip(
        (ax_w, ax_gap, ax_err), ("(a) learned weights", "(b) predictions → x_qᵀKΛ_new w", "(c) the cost")
    ):
        ax.set_title(title)
    fig.suptitle(f"LSA trained on random covariances (N = {n}): a fixed K, not the prompt's Λ⁻¹")
    fig.tight_layout()
    save(fig, png)
