"""The claims table's arithmetic: each relation by hand, and Monte-Carlo error rates of its tolerances."""

import numpy as np
import pytest
import xarray as xr

from iclab import claims
from iclab.claims import Claim, Estimate, over_seeds
from iclab.errors import UsageError


@pytest.mark.parametrize(
    "measured, relation, expected, holds",
    [
        (Estimate(1.0, 0.3), "≈", Estimate(1.4, 0.4), True),  # |−0.4| ≤ hypot(0.3, 0.4) = 0.5
        (Estimate(1.0, 0.3), "≈", Estimate(1.6, 0.4), False),
        (Estimate(1.0, 0.3), "<", Estimate(1.6, 0.4), True),  # 1.0 < 1.6 − 0.5
        (Estimate(1.0, 0.3), "<", Estimate(1.4, 0.4), False),
        (Estimate(2.0, 0.3), ">", Estimate(1.4, 0.4), True),
        (Estimate(1.8, 0.3), ">", Estimate(1.4, 0.4), False),
        (Estimate(1.8, 0.3), "≤", Estimate(1.4, 0.4), True),  # 1.8 ≤ 1.4 + 0.5
        (Estimate(2.0, 0.3), "≤", Estimate(1.4, 0.4), False),
        (Estimate(1.0, 0.3), "≥", Estimate(1.4, 0.4), True),
        (Estimate(0.8, 0.3), "≥", Estimate(1.4, 0.4), False),
    ],
)
def test_each_relation_by_hand(measured, relation, expected, holds):
    claim = Claim("c", "s", measured, relation, expected, "b")
    assert claim.tolerance == pytest.approx(0.5)
    assert claim.holds is holds


def test_slack_widens_the_tolerance_and_a_bad_relation_is_refused():
    claim = Claim("c", "s", Estimate(1e-7), "≤", Estimate(0.0), "b", slack=1e-6)
    assert claim.holds and claim.tolerance == 1e-6
    with pytest.raises(ValueError, match="allowed ≈, <, >, ≤, ≥"):
        Claim("c", "s", Estimate(1.0), "=", Estimate(1.0), "b")


def simulated_seeds(rng, reps: int, seeds: int, mean: float, seed_sd: float, eval_sem: float) -> xr.DataArray:
    """Per-seed estimates: each seed's own spread, plus one evaluation-set error shared by every seed (the
    evaluation set is common to the seeds)."""
    shared = rng.normal(0.0, eval_sem, size=(reps, 1))
    values = mean + rng.normal(0.0, seed_sd, size=(reps, seeds)) + shared
    return xr.DataArray(values, dims=("rep", "seed"))


@pytest.mark.parametrize("seeds, seed_sd, eval_sem", [(3, 1.0, 0.0), (3, 0.5, 0.5), (1, 0.0, 1.0), (5, 1.0, 0.2)])
def test_a_true_claim_fails_at_most_at_the_bands_rate(seeds, seed_sd, eval_sem):
    """≈ against the exact value holds in ≥ 95% of repetitions (minus Monte-Carlo slack, 4000 reps)."""
    rng = np.random.default_rng(0)
    values = simulated_seeds(rng, 4000, seeds, 3.0, seed_sd, eval_sem)
    sems = xr.full_like(values, eval_sem)
    held = [Claim("c", "s", over_seeds(v, s), "≈", Estimate(3.0), "b").holds for v, s in zip(values, sems)]
    assert np.mean(held) >= 0.94


def test_an_ordering_without_a_difference_is_claimed_rarely():
    """Two learners with the same mean: '<' holds in at most a few percent of repetitions (one-sided and the
    bands of both sides added in quadrature: well under 2.5%)."""
    rng = np.random.default_rng(1)
    a, b = (simulated_seeds(rng, 4000, 3, 1.0, 0.3, 0.1) for _ in range(2))
    sem = xr.full_like(a.isel(rep=0), 0.1)
    held = [Claim("c", "s", over_seeds(x, sem), "<", over_seeds(y, sem), "b").holds for x, y in zip(a, b)]
    assert np.mean(held) <= 0.025


def test_over_seeds_is_the_mean_and_the_student_t_half_width():
    from scipy import stats

    values = xr.DataArray([1.0, 2.0, 4.0], dims="seed")
    estimate = over_seeds(values)
    assert estimate.value == pytest.approx(7 / 3)
    assert estimate.half_width == pytest.approx(stats.t.ppf(0.975, 2) * np.std([1, 2, 4], ddof=1) / np.sqrt(3))


def test_an_experiment_without_claims_is_named():
    with pytest.raises(UsageError, match="no_such_experiment"):
        claims.experiment_claims("no_such_experiment", xr.Dataset())
