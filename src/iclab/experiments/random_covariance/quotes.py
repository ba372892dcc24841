"""The numbers the docs quote from the random_covariance cube (Theorem 8) at its largest N: the trained u₋₁U₁₁'s
distance to the limit K, and the relative prediction gap to xᵀKΛ′w at M = N and at the longest M, beside the limit
model's and its slope in M."""

import numpy as np

from iclab.report.plots import loglog_slope
from iclab.report.quotes import Quote, fixed, significant


def weights_distance(at) -> float:
    """‖u₋₁U₁₁ − K‖/‖K‖ (Frobenius), mean over seeds, as the claim."""
    gap = at.product_learned - at.product_limit  # (seed, row, col)
    per_seed = np.sqrt((gap**2).sum(("row", "col")) / (at.product_limit**2).sum(("row", "col")))  # (seed,)
    return float(per_seed.mean("seed"))


def quotes(cube) -> list[Quote]:
    at = cube.sel(n=cube.n.max())
    n, m = int(at.n), int(at.position.max())
    early = min(n, m)
    gap = at.prediction_gap.mean("seed")  # (position,)
    return [
        Quote("weights_distance", significant(weights_distance(at)),
              f"the trained u₋₁U₁₁'s relative distance to E[Λ²]·(E[ΓΛ²])⁻¹, mean over seeds (N = {n}; "
              "product_learned, product_limit)"),
        Quote("gap_early", significant(gap.sel(position=early)),
              f"the trained LSA's relative prediction gap to xᵀKΛ′w at M = {early}, mean over seeds (prediction_gap)"),
        Quote("gap_last", significant(gap.sel(position=m)), f"the same at M = {m}"),
        Quote("gap_last_theory", significant(at.theory_gap.sel(position=m)),
              f"the limit model's gap at M = {m} (theory_gap)"),
        Quote("gap_slope", fixed(loglog_slope([early, m], gap.sel(position=[early, m]).values), 2),
              f"the slope of the log gap against log M from M = {early} to {m}, mean over seeds (prediction_gap)"),
    ]
