"""Figure ``random_covariance`` (Zhang, Frei, Bartlett 2024, Theorem 8).

(a) Entries of the trained u₋₁U₁₁ against the theorem's limit K = E[Λ²]·(E[ΓΛ²])⁻¹. (b) On new prompts
with new covariances: E(ŷ − x_qᵀKΛ_new w)² / E(x_qᵀKΛ_new w)² against M, measured and for the limit
model (theory). (c) The error this costs: trained LSA, the limit model (theory) and least squares.
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import xarray as xr

from iclab.report.plots import lines_with_bands, log_positions, save, seed_bands, theme

# Title phrases that state a claim → the claims table's row (its text's start) that holds it; every other title
# describes what is drawn (tests/test_figure_titles.py)
TITLE_CLAIMS: dict[str, str] = {}

MEASURED = dict(marker="o", linestyle="none", label="trained LSA", alpha=0.25)


def weight_summary(learned: np.ndarray) -> pd.DataFrame:
    """One row per (seed, coordinate i) of the trained u₋₁U₁₁ (seeds, d, d): its diagonal entry and the largest
    |off-diagonal| entry of its row, in long form (``entry``: which)."""
    seeds, d, _ = learned.shape
    diag = np.eye(d, dtype=bool)
    frame = pd.DataFrame({
        "seed": np.repeat(np.arange(seeds), d),
        "coordinate": np.tile(np.arange(d), seeds),
        "trained u₋₁U₁₁, diagonal": learned[:, diag].ravel(),
        "largest |off-diagonal| in the row": np.abs(learned[:, ~diag]).reshape(seeds, d, d - 1).max(axis=2).ravel(),
    })
    return frame.melt(id_vars=["seed", "coordinate"], var_name="entry", value_name="value")


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    n = cube.n.values[0]
    at = cube.sel(n=n)
    fig, (ax_w, ax_gap, ax_err) = plt.subplots(1, 3, figsize=(15.0, 5.4))  # reads at the README's width
    limit = at.product_limit.values
    sns.stripplot(data=weight_summary(at.product_learned.values), x="coordinate", y="value", hue="entry",
                  dodge=True, jitter=False, alpha=0.7, ax=ax_w)
    ax_w.axhline(limit[0, 0], color="k", linestyle="--", label="Theorem 8: E[λ²]/E[(ΓΛ²)ᵢᵢ]")
    ax_w.set_xlabel("coordinate i")
    ax_w.set_ylabel("entry")
    ax_w.set_ylim(bottom=0)
    ax_w.legend()
    m_max = int(at.position.max())
    ms = log_positions(m_max)
    every = np.arange(1, m_max + 1)
    lines_with_bands(seed_bands(at.prediction_gap.sel(position=ms), log=True), x="position", ax=ax_gap, **MEASURED)
    ax_gap.loglog(every, at.theory_gap.sel(position=every), "k-", label="limit model (theory, ∝ 1/M)")
    ax_gap.set_xlabel("test prompt length M (new covariance per prompt)")
    ax_gap.set_ylabel("relative gap E(ŷ − xᵀKΛ′w)² / E(xᵀKΛ′w)²")
    ax_gap.legend()
    lsa = at.sel(learner="lsa", position=ms)
    lines_with_bands(seed_bands(lsa.risk, lsa.risk_sem, log=True), x="position", ax=ax_err, **MEASURED)
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
    ax_err.legend()
    for ax, title in zip(
        (ax_w, ax_gap, ax_err),
        ("(a) learned weights", "(b) predictions → xᵀKΛ′w (Λ′: the prompt's covariance)", "(c) the cost"),
    ):
        ax.set_title(title)
    fig.suptitle(f"LSA trained on random covariances (N = {n}): a fixed K, not the prompt's Λ⁻¹")
    fig.tight_layout()
    save(fig, png, cube)
