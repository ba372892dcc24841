"""The one band definition (``iclab.stats.intervals``) and the LTB paper's Table 1 layout."""

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from iclab.experiments.ltb_table1.table import table as ltb_table1
from iclab.stats.intervals import band, quantile


def test_band_combines_seed_spread_and_the_shared_evaluation_error():
    risk, sem = np.array([1.0, 1.2, 1.1]), np.array([0.03, 0.04, 0.05])
    mean, low, high = band(risk, sem)
    assert mean == pytest.approx(1.1)
    expected = 4.302653 * np.sqrt(np.var(risk, ddof=1) / 3 + np.mean(sem) ** 2)  # t quantile, 2 d.o.f.
    assert high - mean == pytest.approx(expected, rel=1e-6) and mean - low == pytest.approx(expected, rel=1e-6)
    no_evaluation_error = band(risk)
    assert no_evaluation_error[2] - 1.1 == pytest.approx(4.302653 * np.std(risk, ddof=1) / np.sqrt(3), rel=1e-6)
    one_seed = band(np.array([2.0]), np.array([0.1]))
    assert one_seed[2] - one_seed[0] == pytest.approx(1.959964 * 0.1, rel=1e-6)
    same_for_every_seed = band(np.array([2.0, 2.0]), np.array([0.1, 0.1]))  # a baseline: no seed spread
    assert same_for_every_seed[2] - 2.0 == pytest.approx(1.959964 * 0.1, rel=1e-6)
    assert quantile(1) == pytest.approx(1.959964, rel=1e-6) and quantile(3) == pytest.approx(4.302653, rel=1e-6)


@pytest.mark.parametrize(
    "seeds, prompt_sd, seed_sd, interaction_sd",
    [
        (2, 0.1, 1.0, 0.1),
        (3, 0.1, 1.0, 0.1),
        (5, 1.0, 1.0, 1.0),
        (40, 1.0, 0.1, 0.1),
        (40, 0.1, 1.0, 0.1),
    ],
)
def test_band_covers_the_true_mean_at_least_at_its_level(seeds, prompt_sd, seed_sd, interaction_sd):
    """Monte Carlo of the design: every seed is scored on the same prompts; the error of seed s on
    prompt b is a_b + c_s + e_sb (prompt difficulty shared by the seeds, seed offset, interaction),
    mean 0. Over 2000 repetitions the band covers 0 at least 95% of the time (within Monte-Carlo
    error), and is not grossly wide where no term is small."""
    rng = np.random.default_rng(seeds)
    reps, prompts = 2000, 200
    errors = (
        prompt_sd * rng.standard_normal((reps, 1, prompts))
        + seed_sd * rng.standard_normal((reps, seeds, 1))
        + interaction_sd * rng.standard_normal((reps, seeds, prompts))
    )  # (R, S, B)
    risk = errors.mean(axis=-1)  # (R, S)
    sem = errors.std(axis=-1, ddof=1) / np.sqrt(prompts)  # (R, S)
    _, low, high = band(risk, sem)
    coverage = np.mean((low < 0) & (0 < high))
    assert coverage > 0.95 - 3 * np.sqrt(0.95 * 0.05 / reps)
    if min(prompt_sd, seed_sd, interaction_sd) == 1.0:
        assert coverage < 0.99


def test_ltb_table1_layout(tmp_path):
    learners, seeds, norms = ["gpt2", "gpt2_nomlp", "bayes"], [0, 1], [0.0, 5.0]
    risk = np.array([[[0.5, 0.6], [0.52, 0.58], [0.3, 0.3]], [[1.0, 1.1], [1.6, 1.7], [0.3, 0.3]]])
    cube = xr.Dataset(
        {
            "query_risk": (("beta_star_norm", "learner", "seed"), risk),
            "query_risk_sem": (("beta_star_norm", "learner", "seed"), np.full_like(risk, 0.01)),
            "theory_risk": (("beta_star_norm", "theory"), [[1.44, 0.34], [1.44, 0.34]]),
        },
        coords={"beta_star_norm": norms, "learner": learners, "seed": seeds, "theory": ["gd_beta_optimum", "bayes"]},
    )
    frame = ltb_table1(cube, tmp_path / "t")
    assert list(frame["setting"]) == ["β* = 0", "‖β*‖ = 5"]
    assert frame.loc[1, "GPT2-noMLP"] == pytest.approx(1.65)
    assert frame.loc[0, "GPT2"] == pytest.approx(0.55)
    assert frame.loc[1, "noMLP / GPT2"] == pytest.approx(1.65 / 1.05)
    assert frame.loc[0, "GPT2 / best"] == pytest.approx(0.55 / 0.34)  # the Bayes risk is the better reference
    assert list(frame["paper GPT2-noMLP"]) == [0.024, 8.871]
    csv = pd.read_csv(tmp_path / "t.csv")
    assert list(csv.columns[:3]) == ["setting", "GPT2", "GPT2 ±95%"]
    md = (tmp_path / "t.md").read_text()
    assert "| setting" in md and "1.6500 ±" in md
    assert "\\begin{tabular}" in (tmp_path / "t.tex").read_text()


def test_single_index_band_is_the_band_of_the_risk_relative_to_the_zero_predictors_on_the_same_prompts():
    """The ratio per seed is mean(risk groups) / mean(zero's groups), its s.e. the delta method's over the same groups
    (worked out by hand below); the band is the seeds' t-band of those ratios with their s.e.s."""
    import xarray as xr

    from iclab.experiments.single_index.figure import relative_curves, relative_risk

    rng = np.random.default_rng(3)
    zero = 2.0 + rng.standard_exponential((4, 2))  # (G, P): the zero predictor's risk per prompt group
    groups = zero[:, :, None] * np.array([0.5, 0.6, 0.55]) + 0.05 * rng.standard_normal((4, 2, 3))  # (G, P, S)
    ratio, sem = relative_risk(xr.DataArray(groups, dims=("prompt_group", "position_bin", "seed")),
                               xr.DataArray(zero, dims=("prompt_group", "position_bin")))
    by_hand = groups.mean(axis=0) / zero.mean(axis=0)[:, None]  # (P, S)
    residuals = groups - by_hand[None] * zero[:, :, None]
    np.testing.assert_allclose(ratio, by_hand)
    np.testing.assert_allclose(sem, residuals.std(axis=0, ddof=1) / 2 / zero.mean(axis=0)[:, None])
    assert (sem < 0.5 * groups.std(axis=0, ddof=1) / 2 / zero.mean(axis=0)[:, None]).all()  # the common part cancels
    frame = relative_curves(np.array([4, 8]), ratio, sem, per_seed=False)
    half = 4.302653 * np.sqrt(np.var(ratio, axis=1, ddof=1) / 3 + np.mean(sem, axis=1) ** 2)  # t, 2 d.o.f.
    np.testing.assert_allclose(frame["mean"], ratio.mean(axis=1))
    np.testing.assert_allclose(frame["high"] - frame["mean"], half, rtol=1e-6)
    np.testing.assert_allclose(frame["mean"] - frame["low"], half, rtol=1e-6)
    # two seeds or fewer: the mean without a band, and each seed's curve
    frame = relative_curves(np.array([4, 8]), ratio[:, :2], sem[:, :2], per_seed=True)
    assert list(frame.seed) == [-1, -1, 0, 0, 1, 1] and frame[["low", "high"]].isna().all().all()
    np.testing.assert_allclose(frame["mean"], [*ratio[:, :2].mean(axis=1), *ratio[:, 0], *ratio[:, 1]])


def test_a_learner_that_does_not_depend_on_the_seed_covers_at_its_level_with_the_normal_quantile():
    """A baseline scored on the shared prompts has the same value for every seed: its only error is the
    evaluation set's, and the normal quantile covers at the level (t with S − 1 d.o.f. would be 6.5×
    wider at S = 2)."""
    rng = np.random.default_rng(7)
    reps, prompts, seeds = 4000, 200, 2
    errors = rng.standard_normal((reps, 1, prompts)) + 0.3 * rng.standard_exponential((reps, 1, prompts)) - 0.3
    risk = np.repeat(errors.mean(axis=-1), seeds, axis=-1)  # (R, S), equal over seeds
    sem = np.repeat(errors.std(axis=-1, ddof=1) / np.sqrt(prompts), seeds, axis=-1)
    _, low, high = band(risk, sem)
    coverage = np.mean((low < 0) & (0 < high))
    assert abs(coverage - 0.95) < 3 * np.sqrt(0.95 * 0.05 / reps)
    np.testing.assert_allclose(high - low, 2 * 1.959964 * sem[:, 0], rtol=1e-6)


def test_group_means_are_the_means_of_contiguous_groups_of_prompts():
    from iclab.stats.intervals import group_means

    samples = np.arange(12.0).reshape(6, 2)  # (B, K)
    np.testing.assert_allclose(group_means(samples, 3), [[1.0, 2.0], [5.0, 6.0], [9.0, 10.0]])
    np.testing.assert_allclose(group_means(samples, 4)[[0, 3]], [[1.0, 2.0], [10.0, 11.0]])  # sizes 2, 2, 1, 1
    assert group_means(samples, 32).shape == (6, 2)  # fewer prompts than groups: a prompt a group


def test_the_ratio_of_two_means_has_the_delta_methods_error_by_monte_carlo():
    """Correlated numerators and denominators on the same prompts (squared errors and squared targets): over 2000
    repeated evaluation sets of 400 prompts, the spread of the ratio matches the delta-method s.e. within 10%,
    and the ratio ± 1.96 s.e. covers the ratio of the true means at 93–97%."""
    from iclab.stats.intervals import ratio_and_sem

    rng = np.random.default_rng(8)
    target = rng.standard_normal((2000, 400))  # (R, B)
    errors = 0.3 * target + 0.2 * rng.standard_normal((2000, 400))
    ratios, sems = np.array([ratio_and_sem(e**2, t**2) for e, t in zip(errors, target)]).T  # (R,) each
    truth = (0.3**2 + 0.2**2) / 1.0  # E(0.3 t + 0.2 u)² / E t²
    assert np.std(ratios) == pytest.approx(np.mean(sems), rel=0.1)
    assert 0.93 <= np.mean(np.abs(ratios - truth) <= 1.96 * sems) <= 0.97


def test_the_prompt_bootstrap_draws_every_prompt_as_often_as_chance():
    """32 prompts, position k's error 32 on prompt k and 0 elsewhere: a resample's mean at k is the times prompt k was
    drawn, Binomial(32, 1/32). Every position's 90% band is then the binomial's quantiles: 0 to 3 (scipy), so a
    prompt never drawn (its band 0 to 0) or drawn twice as often (its band reaching 5) fails."""
    from scipy import stats

    from iclab.stats.intervals import BOOTSTRAP_LEVEL, bootstrap_band

    b = 32
    low, high = bootstrap_band(b * np.eye(b))  # (K,), (K,)
    tail = (1 - BOOTSTRAP_LEVEL) / 2
    expected_low, expected_high = stats.binom.ppf([tail, 1 - tail], b, 1 / b)  # 0 and 3
    assert np.all(np.abs(low - expected_low) <= 0.5) and np.all(np.abs(high - expected_high) <= 0.5), (low, high)
