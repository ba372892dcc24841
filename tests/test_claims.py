"""The claims table's verdicts: each relation's region by hand, the intervals against scipy, and Monte-Carlo error
rates and power of the verdicts on synthetic estimates with a known truth."""

import numpy as np
import pytest
import xarray as xr
from scipy import stats

from iclab import experiments
from iclab.stats.claims import Claim, decide, seeds_needed
from iclab.stats.estimates import Estimate, difference, exact, over_seeds, with_sem
from iclab.errors import UsageError

Z = stats.norm.ppf(0.975)


@pytest.mark.parametrize(
    "relation, margin, low, high, verdict",
    [
        ("≈", 1.0, -0.5, 0.9, "holds"),  # inside ±1
        ("≈", 1.0, 0.5, 1.5, "inconclusive"),  # straddles the edge
        ("≈", 1.0, 1.2, 2.0, "fails"),  # outside
        ("≈", 1.0, -3.0, -1.1, "fails"),
        ("≈", 1.0, -2.0, 2.0, "inconclusive"),  # wider than the region: never holds
        (">", 0.0, 0.1, 0.5, "holds"),
        (">", 0.0, -0.1, 0.5, "inconclusive"),
        (">", 0.0, -0.5, 0.0, "fails"),  # the region is open at 0
        ("<", 0.0, -0.5, -0.1, "holds"),
        ("<", 0.0, 0.0, 0.3, "fails"),
        ("≤", 0.1, -1.0, 0.1, "holds"),  # closed at the margin
        ("≤", 0.1, 0.2, 0.3, "fails"),
        ("≥", 0.1, -0.1, 2.0, "holds"),
        ("≥", 0.1, -0.3, 0.0, "inconclusive"),
    ],
)
def test_each_relation_is_a_region_of_the_difference(relation, margin, low, high, verdict):
    assert decide(relation, margin, low, high) == verdict


def test_the_interval_puts_student_t_on_the_seeds_and_the_normal_quantile_on_the_prompts():
    seeds, sem = np.array([1.0, 2.0, 4.0]), np.array([0.1, 0.2, 0.3])
    estimate = over_seeds(xr.DataArray(seeds, dims="seed"), xr.DataArray(sem, dims="seed"))
    seed_part = stats.t.ppf(0.975, 2) * seeds.std(ddof=1) / np.sqrt(3)
    low, high = estimate.interval()
    assert estimate.value == pytest.approx(7 / 3)
    assert high - estimate.value == pytest.approx(np.hypot(seed_part, Z * 0.2))
    assert low == pytest.approx(2 * estimate.value - high)


def test_differences_pair_seeds_and_bound_the_error_of_shared_prompts():
    a = over_seeds(xr.DataArray([1.0, 2.0, 3.0], dims="seed"), xr.DataArray([0.3, 0.3, 0.3], dims="seed"))
    b = over_seeds(xr.DataArray([0.5, 1.8, 2.0], dims="seed"), xr.DataArray([0.4, 0.4, 0.4], dims="seed"))
    paired = difference(a, b)
    assert paired.per_seed == pytest.approx((0.5, 0.2, 1.0)) and paired.seeds == 3
    assert paired.mc_se == pytest.approx(0.7)  # same prompts: Cauchy–Schwarz, 0.3 + 0.4
    apart = over_seeds(xr.DataArray([0.5, 1.8, 2.0], dims="seed"), xr.DataArray([0.4] * 3, dims="seed"), "other")
    assert difference(a, apart).mc_se == pytest.approx(0.5)  # independent prompts: in quadrature
    assert difference(a, exact(1.0)).per_seed == pytest.approx((0.0, 1.0, 2.0))  # broadcast
    with pytest.raises(ValueError, match="cannot pair 3 seeds with 2"):
        difference(a, over_seeds(xr.DataArray([1.0, 2.0], dims="seed")))


def test_a_baseline_repeated_along_seed_does_not_depend_on_training():
    """Told so, or by the cube's learner kind; a trained quantity equal at every seed is refused, not taken for a
    baseline's."""
    values, sems = xr.DataArray([2.0, 2.0, 2.0], dims="seed"), xr.DataArray([0.1] * 3, dims="seed")
    estimate = over_seeds(values, sems, trained=False)
    assert estimate.seeds == 0 and estimate.half_width() == pytest.approx(Z * 0.1)
    baseline = values.assign_coords(learner_kind="baseline")
    assert over_seeds(baseline, sems).seeds == 0
    with pytest.raises(ValueError, match="trained quantity equal at all 3 seeds"):
        over_seeds(values.assign_coords(learner_kind="trained"), sems)
    with pytest.raises(ValueError, match="trained quantity equal at all 3 seeds"):
        over_seeds(values, sems)


def test_one_training_seed_gives_no_verdict_and_says_so():
    one = over_seeds(xr.DataArray([5.0], dims="seed"), xr.DataArray([0.01], dims="seed"))
    claim = Claim("c", "s", one, ">", exact(0.0), "b")
    row = claim.row("e")
    assert claim.verdict == "inconclusive" and "1 seed" in row["basis"]
    assert row["seeds_needed"] == "unknown: 1 seed has no spread"
    assert Claim("c", "s", with_sem(5.0, 0.01), ">", exact(0.0), "b").verdict == "holds"  # not about training


def test_a_margin_needs_its_source_and_a_bad_relation_is_refused():
    with pytest.raises(ValueError, match="margin needs its source"):
        Claim("c", "s", exact(1.0), "≈", exact(1.0), "b", margin=0.1)
    with pytest.raises(ValueError, match="allowed ≈, <, >, ≤, ≥"):
        Claim("c", "s", exact(1.0), "=", exact(1.0), "b")
    with pytest.raises(ValueError, match="finite and ≥ 0"):
        Claim("c", "s", exact(1.0), "≤", exact(1.0), "b", margin=-1.0, margin_source="x")


def simulated(rng, reps: int, seeds: int, mean: float, seed_sd: float, eval_sem: float) -> np.ndarray:
    """Per-seed estimates (reps, seeds): each seed's own spread, plus one evaluation-set error shared by every
    seed (the evaluation set is common to the seeds)."""
    return mean + rng.normal(0.0, seed_sd, size=(reps, seeds)) + rng.normal(0.0, eval_sem, size=(reps, 1))


def verdicts(values: np.ndarray, eval_sem: float, relation: str, margin: float, trained: bool = True,
             look: int = 1) -> np.ndarray:
    sems = xr.DataArray(np.full(values.shape[1], eval_sem), dims="seed")
    return np.array([
        Claim("c", "s", over_seeds(xr.DataArray(v, dims="seed"), sems, trained=trained), relation, exact(0.0), "b",
              margin, "test", look=look).verdict
        for v in values
    ])


@pytest.mark.parametrize("seeds, seed_sd, eval_sem", [(2, 1.0, 0.1), (3, 1.0, 0.3), (5, 0.5, 0.5), (3, 0.0, 1.0)])
def test_an_equivalence_at_the_margins_edge_holds_at_most_in_5_percent(seeds, seed_sd, eval_sem):
    values = simulated(np.random.default_rng(0), 2000, seeds, 1.0, seed_sd, eval_sem)  # true difference = margin
    assert np.mean(verdicts(values, eval_sem, "≈", 1.0, trained=seed_sd > 0) == "holds") <= 0.05


def test_an_ordering_that_is_not_there_holds_at_most_in_5_percent():
    values = simulated(np.random.default_rng(1), 2000, 3, 0.0, 1.0, 0.2)  # true difference 0
    assert np.mean(verdicts(values, 0.2, ">", 0.0) == "holds") <= 0.05


@pytest.mark.parametrize(
    "seeds, truth, relation, seed_sd, eval_sem",
    [(4, 0.2, "≈", 1.0, 0.1), (10, 0.5, ">", 1.0, 0.2), (6, 1.6, "≈", 0.5, 0.3)],
)
def test_the_probability_that_seeds_decide_a_claim_matches_monte_carlo(seeds, truth, relation, seed_sd, eval_sem):
    from iclab.stats.claims import LOOK_LEVELS, decision_probability, region

    start, end, _, _ = region(relation, 1.0)
    values = simulated(np.random.default_rng(8), 4000, seeds, truth, seed_sd, eval_sem)
    decided = "holds" if start <= truth <= end else "fails"
    measured = np.mean(verdicts(values, eval_sem, relation, 1.0) == decided)  # at look 1's level
    expected = decision_probability(seeds, truth, seed_sd, eval_sem, start, end, LOOK_LEVELS[0])
    assert abs(measured - expected) <= 3 * np.sqrt(expected * (1 - expected) / 4000) + 1e-3


@pytest.mark.parametrize("seed_sd, eval_sem, margin", [(1.0, 0.1, 1.0), (0.5, 0.2, 0.8), (2.0, 0.0, 1.0)])
def test_the_seeds_the_table_asks_for_decide_a_true_equivalence_in_80_percent(seed_sd, eval_sem, margin):
    """A pilot whose estimate is the truth (0) and whose spread is the true one; second looks with the seeds it says
    are needed (at look 2's level) hold in 80% (within 3 Monte-Carlo s.e. of 2000 runs), and half as many do not."""
    from iclab.stats.claims import LOOK_LEVELS

    pilot = Estimate(tuple(seed_sd * np.array([-1.0, 0.0, 1.0])), eval_sem, trained=True)  # sd = seed_sd exactly
    needed = int(seeds_needed(pilot, "≈", margin, LOOK_LEVELS[1]))
    rng = np.random.default_rng(2)
    looks = simulated(rng, 2000, needed, 0.0, seed_sd, eval_sem)
    held = np.mean(verdicts(looks, eval_sem, "≈", margin, look=2) == "holds")
    assert needed > 3 and held >= 0.8 - 3 * np.sqrt(0.16 / 2000)
    fewer = simulated(rng, 2000, needed // 2, 0.0, seed_sd, eval_sem)
    half = np.mean(verdicts(fewer, eval_sem, "≈", margin, look=2) == "holds")
    assert half < 0.8 - 3 * np.sqrt(0.16 / 2000)  # the count is not padded far beyond what is needed


@pytest.mark.parametrize(
    "seeds, shared_sd, own_sd, eval_sem", [(2, 1.0, 0.3, 0.1), (3, 2.0, 0.5, 0.2), (5, 1.0, 1.0, 0.3)]
)
def test_paired_intervals_cover_the_true_difference_in_at_least_94_percent(seeds, shared_sd, own_sd, eval_sem):
    """Two learners of each seed share that seed's training draw (a large common effect that pairing removes)
    and the evaluation prompts (their Monte-Carlo errors correlated); the interval of a − b covers 0.7."""
    rng = np.random.default_rng(3)
    reps = 2000
    shared = rng.normal(0.0, shared_sd, size=(reps, seeds))
    prompts = rng.normal(0.0, eval_sem, size=(reps, 1))  # the evaluation set's error, shared by both learners
    a = 1.7 + shared + rng.normal(0.0, own_sd, size=(reps, seeds)) + prompts
    b = 1.0 + shared + rng.normal(0.0, own_sd, size=(reps, seeds)) + 0.5 * prompts
    sems = xr.DataArray(np.full(seeds, eval_sem), dims="seed")
    covered = []
    for x, y in zip(a, b):
        low, high = difference(over_seeds(xr.DataArray(x, dims="seed"), sems),
                               over_seeds(xr.DataArray(y, dims="seed"), 0.5 * sems)).interval()
        covered.append(low <= 0.7 <= high)
    assert np.mean(covered) >= 0.94


def test_an_experiment_without_claims_is_named():
    with pytest.raises(UsageError, match="no_such_experiment"):
        experiments.claims("no_such_experiment", xr.Dataset())


def test_a_best_count_at_the_grids_end_is_reported_censored():
    from iclab.experiments.probe_similarity.claims import best_count

    grid = [0, 1, 2, 3]
    soe = xr.DataArray([[0.1, 0.5, 0.9, 0.95], [0.2, 0.9, 0.5, 0.1]], dims=("seed", "it"), coords={"it": grid})
    estimate, note = best_count(soe, None)
    assert estimate.per_seed == (3.0, 1.0) and "1 seed(s) best at the grid's end (3)" in note[0]
    assert best_count(soe.isel(seed=[1]), None)[1] == ()


def test_the_bootstrap_resamples_prompt_groups_with_the_same_draws_for_both_sides():
    """Groups of prompts with a known spread, one seed: the bootstrap interval of a mean similarity covers its truth
    at about the level, and two sides drawn identically cancel exactly."""
    from iclab.stats.estimates import bootstrapped

    rng = np.random.default_rng(6)
    covered = []
    for _ in range(300):
        groups = xr.DataArray(0.8 + 0.05 * rng.standard_normal((1, 1, 32)), dims=("seed", "grid", "prompt_group"))
        low, high = bootstrapped(groups, lambda x: x[..., 0]).interval()
        covered.append(low <= 0.8 <= high)
    assert 0.9 <= np.mean(covered) <= 0.99
    same = bootstrapped(groups, lambda x: x[..., 0])
    assert difference(same, same).interval() == (0.0, 0.0)


def test_the_bootstrap_draws_every_prompt_group_as_often_as_chance_and_each_seed_on_its_own_values():
    """Group j of 32 marked at every seed (seed s's value 32·(s + 1) in group j, 0 elsewhere): a draw's mean is
    (s + 1) × the times j was drawn, Binomial(32, 1/32), mean 1 and variance 31/32. Over the 1000 draws every group's
    mean count is 1 within 4 binomial standard errors (a group never drawn gives 0), and seed 2's replicates are
    twice seed 1's (the same draws, each seed's own values)."""
    from iclab.stats.estimates import BOOTSTRAP_RESAMPLES, bootstrapped

    g = 32
    marks = g * np.eye(g)[None] * np.array([1.0, 2.0])[:, None, None]  # (seed, grid j, prompt_group)
    groups = xr.DataArray(marks, dims=("seed", "grid", "prompt_group"))
    se = np.sqrt((1 - 1 / g) / BOOTSTRAP_RESAMPLES)
    for j in range(g):
        replicates = np.array(bootstrapped(groups, lambda x: x[..., j]).replicates)  # (seed, R)
        assert replicates.shape == (2, BOOTSTRAP_RESAMPLES)
        assert abs(replicates[0].mean() - 1) < 4 * se, j
        np.testing.assert_array_equal(replicates[1], 2 * replicates[0])
        assert set(np.unique(replicates[0])) <= set(range(g + 1))  # whole counts: groups drawn, not weighted


def three_seeds(rng, truth: float, seed_effects: np.ndarray, prompt_noise: np.ndarray) -> xr.DataArray:
    """Similarities per seed and prompt group: the truth, each seed's training effect, the prompts' noise (common to
    the seeds: one evaluation set) and a little of each seed's own: (seed, grid, prompt_group)."""
    values = truth + seed_effects[:, None] + prompt_noise[None, :] + 0.002 * rng.standard_normal((3, 32))
    return xr.DataArray(values[:, None, :], dims=("seed", "grid", "prompt_group"))


def test_the_bootstrap_over_three_seeds_covers_when_the_seeds_spread_dominates():
    """3 seeds whose training spread (0.05) dwarfs the prompts' (0.01 a group): the interval covers the truth at
    ≥ 93% (nominal 95%). Resampling the seeds with replacement covered ~75% (at 1/27 all draws are the lowest
    seed); leaving the seeds out of the interval, far less."""
    from iclab.stats.estimates import bootstrapped

    rng = np.random.default_rng(11)
    covered = []
    for _ in range(600):
        groups = three_seeds(rng, 0.8, 0.05 * rng.standard_normal(3), 0.01 * rng.standard_normal(32))
        low, high = bootstrapped(groups, lambda x: x[..., 0]).interval()
        covered.append(low <= 0.8 <= high)
    assert np.mean(covered) >= 0.93


def test_the_bootstrap_over_three_seeds_rarely_finds_an_order_that_is_not_there():
    """Two similarities of the same models with equal truths (each seed's effects on both correlated, 0.5): the
    claim "a > b" holds in ≤ 3% of runs (one-sided nominal 2.5%; resampling the seeds gave ~12%)."""
    from iclab.stats.estimates import bootstrapped

    rng = np.random.default_rng(12)
    holds = []
    for _ in range(600):
        shared, own = rng.standard_normal(3), rng.standard_normal((2, 3))
        effects = 0.05 * (np.sqrt(0.5) * shared + np.sqrt(0.5) * own)  # (2, 3): a's and b's seed effects
        a, b = (bootstrapped(three_seeds(rng, 0.8, effects[i], 0.01 * rng.standard_normal(32)), lambda x: x[..., 0])
                for i in range(2))
        holds.append(decide(">", 0.0, *difference(a, b).interval()) == "holds")
    assert np.mean(holds) <= 0.03


def test_batch_means_pair_two_learners_on_the_same_prompts_and_cover():
    """Per-prompt errors of two seed-free learners that share most of their prompt-to-prompt variation: the
    difference from group means covers the true difference at ≥ 94% and is far narrower than the Cauchy–Schwarz
    bound used without groups."""
    from iclab.stats.intervals import group_means, mean_and_sem

    rng = np.random.default_rng(4)
    covered, widths, bounds = [], [], []
    for _ in range(1000):
        hard = rng.exponential(1.0, size=500)  # how hard each prompt is, for both learners
        a, b = hard + 0.1 * rng.standard_normal(500) + 0.05, hard + 0.1 * rng.standard_normal(500)
        (ma, sa), (mb, sb) = mean_and_sem(a), mean_and_sem(b)
        ga, gb = (tuple(group_means(x)) for x in (a, b))
        paired = difference(Estimate((ma,), sa, prompts="p", groups=ga), Estimate((mb,), sb, prompts="p", groups=gb))
        low, high = paired.interval()
        covered.append(low <= 0.05 <= high)
        widths.append(paired.mc_se)
        bounds.append(sa + sb)
    assert np.mean(covered) >= 0.94 and np.mean(widths) < 0.2 * np.mean(bounds)


def test_a_prompt_only_difference_errs_at_each_looks_stated_rate():
    """By hand (scipy.stats.t, not iclab's quantile): 32 batch means of a paired difference, no seeds; the mean over
    its s.e. sd/√32 is Student-t on 31 degrees of freedom, so look 1's 96% interval must reach t₃₁(0.98) = 2.1438
    s.e. and look 2's 99% t₃₁(0.995) = 2.7440: one-sided errors 2.0% and 0.5% exactly. Folding the 95% t quantile into
    the s.e. (the old rule: 2.0537 · 2.0395/1.9600 = 2.1371 and 2.6804) erred 2.03% and 0.58%; the normal quantile
    alone (2.0537, 2.5758) 2.43% and 0.75%. A combination keeps the fewest degrees of freedom of its parts."""
    from scipy import stats

    from iclab.stats.estimates import log, ratio

    rng = np.random.default_rng(11)
    ga, gb = (tuple(1.0 + 0.2 * rng.standard_normal(32)) for _ in range(2))
    paired = difference(Estimate((1.0,), 0.05, prompts="p", groups=ga), Estimate((1.0,), 0.05, prompts="p", groups=gb))
    se = np.std(np.subtract(ga, gb), ddof=1) / np.sqrt(32)
    assert paired.mc_se == pytest.approx(se) and paired.mc_dof == 31
    for level, quantile in ((0.96, 2.1438), (0.99, 2.7440)):
        assert stats.t.ppf(0.5 + level / 2, 31) == pytest.approx(quantile, abs=1e-4)
        assert paired.half_width(level) == pytest.approx(quantile * se, rel=1e-4)
        assert stats.t.sf(paired.half_width(level) / se, 31) == pytest.approx((1 - level) / 2, rel=1e-3)
    assert difference(paired, exact(0.5)).mc_dof == 31 and log(difference(paired, exact(-1.0))).mc_dof == 31
    assert ratio(difference(paired, exact(-1.0)), Estimate((2.0,), 0.01)).mc_dof == 31  # the other part: normal
    assert difference(Estimate((1.0,), 0.1), Estimate((2.0,), 0.1)).mc_dof is None  # many prompts: normal


def test_the_prompts_quantile_and_the_delta_methods_by_hand():
    """By hand (scipy.stats): an s.e. over many prompts takes the normal quantile (0.1 · 2.0537 at 96%), one from 3
    batch means the t on 2 degrees of freedom (0.1 · 4.8487, not t₃'s 3.4819); a part without Monte-Carlo error
    brings no degrees of freedom into a combination. The ratio 2/4 of independent sets: relative s.e. √(0.05² + 0.05²)
    times 0.5; the log of 2 ± 0.1: 0.05."""
    from scipy import stats

    from iclab.stats.estimates import fewest_dof, log, ratio

    many, few = Estimate((1.0,), 0.1), Estimate((1.0,), 0.1, mc_dof=2)
    assert many.half_width(0.96) == pytest.approx(0.1 * stats.norm.ppf(0.98), rel=1e-9)
    assert few.half_width(0.96) == pytest.approx(0.1 * stats.t.ppf(0.98, 2), rel=1e-9)
    exact_with_dof = Estimate((1.0,), 0.0, mc_dof=2)
    assert fewest_dof(exact_with_dof, Estimate((1.0,), 0.1, mc_dof=31)) == 31 and fewest_dof(exact_with_dof) is None
    quotient = ratio(Estimate((2.0,), 0.1, prompts="a"), Estimate((4.0,), 0.2, prompts="b"))
    assert quotient.value == 0.5 and quotient.mc_se == pytest.approx(0.5 * np.hypot(0.05, 0.05))
    assert log(Estimate((2.0,), 0.1)).mc_se == pytest.approx(0.05)


def test_groups_pair_only_on_one_named_prompt_set():
    """Groups of two estimates pair only when both name the same prompt set: unnamed sets (the default) keep the
    conservative sum of the Monte-Carlo errors, and over_seeds refuses groups without a name."""
    from iclab.stats.estimates import UNNAMED_PROMPTS

    ga, gb = (1.0, 2.0, 3.0, 4.0), (1.1, 2.1, 2.9, 4.0)
    paired = difference(Estimate((2.5,), 0.5, prompts="x n=4", groups=ga), Estimate((2.5,), 0.5, prompts="x n=4", groups=gb))
    assert paired.mc_se < 0.1 and paired.groups is not None
    for names in ((UNNAMED_PROMPTS, UNNAMED_PROMPTS), ("x n=4", "x n=8")):
        a, b = (Estimate((2.5,), 0.5, prompts=name, groups=g) for name, g in zip(names, (ga, gb)))
        unpaired = difference(a, b)
        assert unpaired.groups is None
        assert unpaired.mc_se == pytest.approx(1.0 if names[0] == names[1] else np.hypot(0.5, 0.5))
    values = xr.DataArray([1.0, 1.2], dims="seed")
    groups = xr.DataArray([[1.0, 1.2], [1.1, 1.1]], dims=("seed", "prompt_group"))
    with pytest.raises(ValueError, match="named prompt set"):
        over_seeds(values, xr.DataArray(0.1), groups=groups)
    assert over_seeds(values, xr.DataArray(0.1), prompts="x n=4", groups=groups).groups == pytest.approx((1.05, 1.15))


def test_a_difference_with_an_exact_value_keeps_the_groups():
    a = Estimate((2.0,), 0.1, prompts="p", groups=(1.0, 2.0, 3.0))
    shifted = difference(a, exact(1.0))
    assert shifted.groups == pytest.approx((0.0, 1.0, 2.0)) and shifted.mc_se == 0.1
    assert difference(exact(1.0), a).groups == pytest.approx((0.0, -1.0, -2.0))


def test_verifications_are_listed_apart_and_not_counted_among_the_claims():
    from iclab.report.claims_report import VERIFICATIONS, html, markdown, summary
    from iclab.stats.claims import claims_table

    rows = {
        "e": [
            Claim("a measured claim", "paper", over_seeds(xr.DataArray([1.0, 1.1, 0.9], dims="seed")), "<",
                  exact(2.0), "t"),
            Claim("an ODE's end", "paper", exact(0.0), "<", exact(0.1), "deterministic", verification=True),
            Claim("a failing ODE", "paper", exact(0.5), "<", exact(0.1), "deterministic", verification=True),
        ]
    }
    table = claims_table(rows)
    assert list(table.kind) == ["claim", "verification", "verification"]
    assert summary(table).startswith("1 claims: 1 hold, 0 fail, 0 inconclusive")
    assert "2 verifications of the theory's computation (not counted): 1 pass." in summary(table)
    text = markdown(table)
    assert text.index("a measured claim") < text.index(VERIFICATIONS) < text.index("an ODE's end")
    assert VERIFICATIONS in html(table) and VERIFICATIONS not in markdown(table.iloc[:1])
    assert html(table) == html(table.copy())  # one table, one page: no random style ids (pandas draws them)


def normal_claim(value: float, se: float, look: int = 1) -> Claim:
    """'m < 0' for a seed-free Monte-Carlo estimate m ~ N(value, se²): its one-sided p-value is Φ(value / se)."""
    return Claim("m < 0", "test", with_sem(value, se), "<", exact(0.0), "normal", look=look)


def family_scaled(p: float, look: int = 1) -> float:
    """The z of a row of ``look`` whose p on the family's scale (``Claim.holm_p``: its own p × 2.5% / its look's
    alpha, 2.0% or 0.5%) is ``p``."""
    return stats.norm.ppf(p * (0.020, 0.005)[look - 1] / 0.025)


def test_a_rows_decision_p_is_its_one_sided_p_value():
    for value in (-3.0, -2.1, -0.5, 1.7):
        assert normal_claim(value, 1.0).decision_p == pytest.approx(stats.norm.cdf(-abs(value)), rel=1e-6)


def test_holm_steps_down_from_the_smallest_p():
    """p = 0.001, 0.02, 0.03 on the family's scale at a family-wise 2.5%: only the first holds (0.02 > 0.025 / 2);
    row by row (look 1 at its 2.0%: own p 0.0008, 0.016, 0.024), two."""
    from iclab.stats.claims import holm_verdicts

    rows = [normal_claim(family_scaled(p), 1.0) for p in (0.02, 0.001, 0.03)]
    assert [row.verdict for row in rows] == ["holds", "holds", "inconclusive"]
    assert holm_verdicts(rows) == ["inconclusive", "holds", "inconclusive"]
    assert holm_verdicts(rows[:1]) == ["holds"]  # alone, 0.02 ≤ 0.025


def family(p_values: tuple[float, ...], failing: tuple[int, ...] = ()) -> list[Claim]:
    """Rows 'm < 0' of look 1 whose one-sided p-values on the family's scale are ``p_values``; the rows at
    ``failing`` point the other way (their interval lies above 0: the verdict they decide is "fails", with the same
    p)."""
    return [normal_claim(family_scaled(p) * (-1 if i in failing else 1), 1.0) for i, p in enumerate(p_values)]


# Holm at a family-wise 2.5% (α = 0.025): the k-th smallest p (from 0) of m rows is judged at α / (m − k) while every
# smaller one passed its own; Bonferroni judges every row at α / m. Each family's verdicts are worked out by hand
# beside it; the rows are listed out of order, and some point the other way ("fails").
HOLM_FAMILIES = [
    # m = 2: thresholds 0.0125, 0.025. Holm: both pass. Bonferroni (0.0125 each): only 0.001.
    ((0.001, 0.02), (), ["holds", "holds"]),
    ((0.02, 0.001), (0,), ["fails", "holds"]),
    # m = 3: thresholds 0.00833, 0.0125, 0.025
    ((0.011, 0.009, 0.02), (), ["inconclusive"] * 3),  # stops at the first: 0.009 > 0.00833 (0.02 alone would pass)
    ((0.02, 0.008, 0.013), (), ["inconclusive", "holds", "inconclusive"]),  # stops at the second: 0.013 > 0.0125
    ((0.008, 0.026, 0.012), (1,), ["holds", "inconclusive", "holds"]),  # stops at the third: 0.026 > 0.025
    ((0.024, 0.012, 0.008), (0,), ["fails", "holds", "holds"]),  # all pass; Bonferroni (0.00833): only 0.008
    # m = 4: thresholds 0.00625, 0.00833, 0.0125, 0.025
    ((0.0085, 0.006, 0.02, 0.01), (), ["inconclusive", "holds", "inconclusive", "inconclusive"]),  # stops at 2nd
    ((0.006, 0.03, 0.012, 0.008), (2,), ["holds", "inconclusive", "fails", "holds"]),  # stops at the fourth
    # m = 5: thresholds 0.005, 0.00625, 0.00833, 0.0125, 0.025
    ((0.024, 0.004, 0.0084, 0.006, 0.012), (), ["inconclusive", "holds", "inconclusive", "holds", "inconclusive"]),
    ((0.004, 0.006, 0.008, 0.012, 0.024), (4,), ["holds", "holds", "holds", "holds", "fails"]),  # Bonferroni: 1
    ((0.004, 0.006, 0.008, 0.026, 0.012), (), ["holds", "holds", "holds", "inconclusive", "holds"]),
]


@pytest.mark.parametrize("p_values, failing, verdicts", HOLM_FAMILIES)
def test_holm_steps_down_and_stops_where_worked_out_by_hand(p_values, failing, verdicts):
    from iclab.stats.claims import HOLM_ALPHA, holm_verdicts

    assert HOLM_ALPHA == pytest.approx(0.025)
    rows = family(p_values, failing)
    assert [row.holm_p for row in rows] == pytest.approx(p_values, rel=1e-6)
    assert [row.decision_p for row in rows] == pytest.approx([0.8 * p for p in p_values], rel=1e-6)
    assert holm_verdicts(rows) == verdicts


def test_holm_decides_more_than_bonferroni_where_the_step_down_reaches_further():
    """p = (0.001, 0.02) at 2.5%: Bonferroni judges 0.02 at 0.0125 (inconclusive), Holm at 0.025 after 0.001 passed."""
    from iclab.stats.claims import holm_verdicts

    rows = family((0.001, 0.02))
    bonferroni = [row.verdict_at(1 - 2 * 0.020 / 2) for row in rows]  # look 1's share of 0.025 / 2
    assert bonferroni == ["holds", "inconclusive"] and holm_verdicts(rows) == ["holds", "holds"]


# Rows of both looks in one family (worked by hand): a row's own p scaled to the family's 2.5% by 2.5/2.0 (look 1)
# or 2.5/0.5 (look 2); Holm's thresholds for m = 2 are 0.0125, then 0.025.
LOOK_FAMILIES = [
    # look 1 own 0.008 → 0.01, look 2 own 0.003 → 0.015: 0.01 ≤ 0.0125, then 0.015 ≤ 0.025: both hold
    (((1, 0.008), (2, 0.003)), ["holds", "holds"]),
    # look 1 own 0.012 → 0.015, look 2 own 0.0022 → 0.011: 0.011 ≤ 0.0125, then 0.015 ≤ 0.025
    (((1, 0.012), (2, 0.0022)), ["holds", "holds"]),
    # look 1 own 0.016 → 0.02, look 2 own 0.0026 → 0.013 > 0.0125: stops at once, though each holds on its own look
    (((1, 0.016), (2, 0.0026)), ["inconclusive", "inconclusive"]),
    # alone, a look-2 row of own p 0.004 (→ 0.02) holds, one of 0.006 (→ 0.03) does not
    (((2, 0.004),), ["holds"]),
    (((2, 0.006),), ["inconclusive"]),
]


@pytest.mark.parametrize("rows, verdicts", LOOK_FAMILIES)
def test_holm_scales_each_rows_p_by_its_looks_share_of_the_error(rows, verdicts):
    from iclab.stats.claims import holm_verdicts

    claims = [normal_claim(stats.norm.ppf(p), 1.0, look=look) for look, p in rows]
    own = ["holds" if p <= (0.020, 0.005)[look - 1] else "inconclusive" for look, p in rows]  # at its look's rate
    assert [claim.verdict for claim in claims] == own
    assert holm_verdicts(claims) == verdicts


def test_holm_keeps_the_family_wise_error_at_its_rate():
    """20 orderings that are not there (true difference 0): some row holds in ≤ 3.5% of 300 families under Holm
    (nominal 2.5%), against ~40% row by row."""
    from iclab.stats.claims import holm_verdicts

    rng = np.random.default_rng(13)
    any_holm, any_raw = [], []
    for _ in range(300):
        rows = [normal_claim(v, 1.0) for v in rng.standard_normal(20)]
        any_holm.append("holds" in holm_verdicts(rows))
        any_raw.append(any(row.verdict == "holds" for row in rows))
    assert np.mean(any_holm) <= 0.035 and np.mean(any_raw) >= 0.3


def test_rows_of_an_experiment_whose_seeds_were_raised_say_so():
    from iclab.stats.claims import claims_table

    trained = over_seeds(xr.DataArray([1.0, 1.1, 0.9], dims="seed"))
    rows = {"e": [Claim("trained", "p", trained, "<", exact(2.0), "t"), Claim("exact", "p", exact(0.0), "<",
                                                                              exact(1.0), "closed forms")],
            "f": [Claim("other", "p", trained, "<", exact(2.0), "t")]}
    basis = claims_table(rows, raised={"e": 2})["basis"].tolist()
    assert "seeds raised from 2 after an inconclusive verdict" in basis[0]
    assert "raised" not in basis[1] and "raised" not in basis[2]


def ltb_gap_cube(rng, relative_offset: float, prompts: int = 2000, seeds: int = 3) -> xr.Dataset:
    """An ltb_gap cube at one ‖β*‖ and n: per-prompt squared errors at the final query of the LSA at its class's
    optimum (exponential: most of the spread is in how hard each prompt is) and of a trained LSA per seed (the
    same prompts' errors × (1 + relative_offset), plus a little per-seed noise); the optimum's exact risk is 1."""
    from iclab.stats.intervals import group_means, mean_and_sem

    hard = rng.exponential(1.0, size=prompts)  # (B,)
    errors = {"lsa_optimal": np.tile(hard, (seeds, 1))}  # (S, B): a baseline repeats along the seeds
    errors["lsa"] = hard * (1 + relative_offset) + 0.05 * rng.standard_normal((seeds, prompts))
    stats_ = {name: [mean_and_sem(e) for e in errs] for name, errs in errors.items()}
    risk = [[[m for m, _ in stats_[name]]] for name in errors]  # (L, 1, S)
    sem = [[[s for _, s in stats_[name]]] for name in errors]
    groups = np.stack([group_means(errs.T).T for errs in errors.values()])[:, None, :, None, :]  # (L, 1, S, 1, G)
    point = {"learner": list(errors), "beta_star_norm": [2.0], "seed": list(range(seeds))}
    return xr.Dataset(
        {
            "query_risk": (("learner", "beta_star_norm", "seed"), np.transpose(risk, (0, 1, 2))),
            "query_risk_sem": (("learner", "beta_star_norm", "seed"), np.transpose(sem, (0, 1, 2))),
            "risk_groups": (("learner", "beta_star_norm", "seed", "position", "prompt_group"), groups),
            "theory_risk": (("beta_star_norm", "theory"), [[1.0]]),
            "theory_risk_sem": (("beta_star_norm", "theory"), [[0.0]]),
        },
        coords=point | {"position": [20], "theory": ["lsa_optimum"], "n": 20,
                        "learner_kind": ("learner", ["baseline" if n == "lsa_optimal" else "trained" for n in errors])},
    )


def test_ltb_gap_pairs_the_trained_lsa_with_its_class_optimum_on_the_same_prompts():
    """Monte Carlo over evaluation sets: paired with the optimal LSA on the same prompts, an LSA at the optimum
    holds (≥ 95%) and one 1.5 margins (7.5%) above it fails (≥ 95%); the unpaired row (against the exact risk) is
    more than 10 times wider."""
    from iclab.stats.claims import REACHES
    from iclab.experiments.ltb_gap.claims import reaches_optimum

    def lsa_reaches_its_class_optimum(cube, norm, where):
        return reaches_optimum(cube, "", "", "lsa", norm, "lsa_optimum", "lsa_optimal")

    rng = np.random.default_rng(7)
    for offset, wanted in ((0.0, "holds"), (1.5 * REACHES, "fails")):
        rows = [lsa_reaches_its_class_optimum(ltb_gap_cube(rng, offset), 2.0, "") for _ in range(100)]
        assert np.mean([row.verdict == wanted for row in rows]) >= 0.95, offset
    cube = ltb_gap_cube(rng, 0.0)
    unpaired = lsa_reaches_its_class_optimum(cube.drop_sel(learner="lsa_optimal"), 2.0, "")
    paired = lsa_reaches_its_class_optimum(cube, 2.0, "")
    assert paired.difference.half_width() < 0.1 * unpaired.difference.half_width()


def test_a_bootstrap_interval_keeps_each_side_of_a_skewed_draw_on_its_side():
    """By hand: three seeds at 1.0 (no seed spread) and draws of the prompt groups at 0.9, 1.0, 1.0, 1.5, 3.0 (a
    fifth each): the 50% percentile interval runs from the 25% quantile (1.0) to the 75% (1.5):
    [1.0, 1.5], not [0.5, 1.0] with its sides swapped (symmetric noise cannot tell the two apart); so "above 0.95"
    holds on it, and would be inconclusive swapped."""
    from iclab.stats.estimates import BOOTSTRAP_RESAMPLES, Estimate

    draws = tuple(np.tile([0.9, 1.0, 1.0, 1.5, 3.0], BOOTSTRAP_RESAMPLES // 5))  # the five, 200 times each
    skewed = Estimate((1.0, 1.0, 1.0), 0.0, True, replicates=(draws, draws, draws))
    assert skewed.interval(0.5) == pytest.approx((1.0, 1.5))
    assert Claim("above", "hand", skewed, ">", exact(0.95), "bootstrap").verdict_at(0.5) == "holds"


def illconditioned_cube(best_at_kappa: list[int], best_at_one: list[int], groups: int = 32,
                        gd_peak: float = 0.9) -> xr.Dataset:
    """A probe_illconditioned cube (κ = 100 and the well-conditioned κ = 1) whose Similarity of Errors at every
    layer peaks at 0.9 at the given Newton count per seed, with small noise per group of prompts; GD's peak at 4
    steps, at ``gd_peak``."""
    rng = np.random.default_rng(3)
    newton, steps, layers = np.arange(12), np.array([1, 2, 4, 8]), np.arange(4)

    def peaked(grid: np.ndarray, best: list[int], peak: float) -> np.ndarray:  # (seed, layer, grid, group)
        curve = peak - 0.04 * np.abs(grid[None, :] - np.asarray(best)[:, None])  # (S, J)
        noise = 0.002 * rng.standard_normal((len(best), len(layers), len(grid), groups))
        return curve[:, None, :, None] + noise

    def run(best: list[int]) -> dict:
        out = {}
        for name, grid, at, peak in (("newton", newton, best, 0.9), ("gd", steps, [2] * len(best), gd_peak)):
            groups_ = peaked(grid, at, peak)
            out[f"soe_{name}_groups"] = groups_
            out[f"soe_{name}"] = groups_.mean(-1)
        return out

    ill, well = run(best_at_kappa), run(best_at_one)
    dims = {"newton": "newton_iterations", "gd": "gd_steps"}
    data = {}
    for name in ill:
        grid = dims[name.split("_")[1]]
        core = ("seed", "layer", grid) + (("prompt_group",) if name.endswith("groups") else ())
        stacked = np.stack([ill[name], well[name]])[:, None, None]  # (κ, d, probed, ...)
        data[name] = (("condition_number", "d", "probed") + core, stacked)
    coords = {"condition_number": [100.0, 1.0], "d": [5], "probed": ["gpt2"], "seed": range(len(best_at_kappa)),
              "layer": layers, "newton_iterations": newton, "gd_steps": steps}
    return xr.Dataset(data, coords=coords)


@pytest.mark.parametrize(
    "best_at_kappa, best_at_one, verdict",
    [([7, 7, 7], [7, 7, 7], "holds"), ([4, 4, 4], [7, 7, 7], "fails"), ([7], [7], "inconclusive")],
)
def test_the_cross_run_newton_claim_compares_kappa_with_the_well_conditioned_run(best_at_kappa, best_at_one, verdict):
    """Fu et al. §5's cross-run row on a hand-built cube: equal best Newton counts at κ = 100 and κ = 1 hold within
    10% (at least one iteration), a planted offset of 3 iterations (43%) fails, and one seed decides nothing."""
    from iclab.experiments.probe_illconditioned.claims import claims

    rows = claims(illconditioned_cube(best_at_kappa, best_at_one))
    (cross,) = [row for row in rows if "well-conditioned" in row.claim]
    assert cross.measured.per_seed == tuple(map(float, best_at_kappa))
    assert cross.expected.per_seed == tuple(map(float, best_at_one))
    assert cross.verdict == verdict and cross.margin == pytest.approx(max(0.1 * best_at_one[0], 1.0))
    assert len(claims(illconditioned_cube(best_at_kappa, best_at_one).isel(condition_number=[0]))) == len(rows) - 1


@pytest.mark.parametrize("gd_peak, verdict", [(0.9, "holds"), (0.905, "holds"), (0.92, "fails")])
def test_matching_newton_at_least_as_well_as_gd_is_non_inferiority_within_a_hundredth(gd_peak, verdict):
    """Fu et al. §5's "at least as well" on a hand-built cube (3 seeds, noise 0.002 per prompt group): Newton's best
    similarity equal to GD's (0.9 and 0.9), or 0.005 below it, holds; 0.02 below it fails. As strict superiority
    (margin 0) the equal match would hold in 2% of runs and the one 0.005 below would fail."""
    from iclab.experiments.probe_illconditioned.claims import claims

    (row,) = [row for row in claims(illconditioned_cube([7, 7, 7], [7, 7, 7], gd_peak=gd_peak))
              if "at least as well" in row.claim]
    assert row.relation == "≥" and row.margin == 0.01 and "FLAT_TOLERANCE" in row.margin_source
    assert row.difference.value == pytest.approx(0.9 - gd_peak, abs=0.002)
    assert row.verdict == verdict


def test_the_markdown_table_is_one_plain_line_a_claim_under_its_experiments_counts():
    from iclab.report.claims_report import markdown
    from iclab.stats.claims import claims_table

    rows = {
        "first": [Claim("a holds", "paper A", over_seeds(xr.DataArray([1.0, 1.1, 0.9], dims="seed")), "<",
                        exact(2.0), "t"),
                  Claim("a one-seed row", "paper A", over_seeds(xr.DataArray([1.0], dims="seed")), "≈", exact(1.0),
                        "t", 0.1, "a stated margin")],
        "second": [Claim("a closed form", "paper B", exact(3.0), ">", exact(2.0), "exact")],
    }
    text = markdown(claims_table(rows))
    assert "## first: 2 claims, 1 hold, 1 inconclusive" in text and "## second: 1 claim, 1 hold" in text
    (line,) = [line for line in text.splitlines() if line.startswith("| a one-seed row")]
    cells = [cell.strip() for cell in line.strip("|").split("|")]
    assert cells[0] == "a one-seed row (paper A)" and cells[1] == "1 ≈ 1 (margin 0.1)"
    assert cells[3] == "inconclusive" and cells[4].startswith("1; to decide:")
    (line,) = [line for line in text.splitlines() if line.startswith("| a closed form")]
    assert "closed form or Monte Carlo only" in line and len(line.strip("|").split("|")) == 5


def test_seeds_needed_names_the_prompts_factor_and_its_ends_by_hand(monkeypatch):
    """By hand (scipy.stats.norm): "m − e > 0" with value 0.1 and a prompt s.e. 0.05 over many prompts at 99%: the
    Monte-Carlo part must reach (z₀.₉₉₅ + z₀.₈) · 0.05 = (2.5758 + 0.8416) · 0.05 = 0.1709 past 0.1, so it needs
    ⌈1.709²⌉ = ⌈2.92⌉ = 3× the prompts (not 2 or 5, the ratio or its cube). A value without training seeds far from
    the edge needs none ("—"). Capped at 2 seeds: a spread of 7e-4 around 1 decides at 2 seeds (its t₁ half-width is
    ~0.03), and two seeds at −1 and 1.2 past the cap say "> 2"."""
    from iclab.stats import claims

    z = stats.norm.ppf(0.995) + stats.norm.ppf(0.8)
    assert np.ceil((z * 0.05 / 0.1) ** 2) == 3
    assert seeds_needed(Estimate((0.1, 0.1), 0.05, trained=True), ">", 0.0, 0.99) == (
        "none: the Monte-Carlo error alone is too large (~3× the prompts)")
    assert seeds_needed(Estimate((0.5,), 0.01), ">", 0.0, 0.99) == "—"
    monkeypatch.setattr(claims, "MAX_SEEDS", 2)
    assert seeds_needed(Estimate((1.0, 1.001), trained=True), ">", 0.0, 0.99) == "2"
    assert seeds_needed(Estimate((-1.0, 1.2), trained=True), ">", 0.0, 0.99) == "> 2"


def test_a_truth_on_the_regions_edge_is_planned_as_holding():
    """decision_probabilities' convention, from its docstring: a truth inside [start, end], ends included, is decided
    when the claim holds; just outside, when it fails on that side. The region [−1, −0.5] is narrower than most
    intervals of 3 seeds of spread 0.5, so at its ends "holds" (~0.001) and "fails" on that side (~0.02) differ."""
    from iclab.stats.claims import decision_probabilities, verdict_probabilities

    truth = np.array([-1.0, -0.5, -1.001, -0.499])
    spread, mc_se = np.full(4, 0.5), np.full(4, 0.1)
    holds, below, above = verdict_probabilities(3, truth, spread, mc_se, -1.0, -0.5)
    decided = decision_probabilities(3, truth, spread, mc_se, -1.0, -0.5)
    assert decided.tolist() == [holds[0], holds[1], below[2], above[3]]
    assert min(abs(holds[0] - below[0]), abs(holds[1] - above[1])) > 0.01


def test_reaching_an_exact_limit_takes_five_percent_of_it_as_margin():
    """Without the limit predictor on the same prompts, the row compares with the exact limit 2.0 itself, margin
    0.05 · 2.0 = 0.1 (not 2.05 or 40)."""
    from iclab.stats.claims import reaches_limit

    row = reaches_limit("reaches 2", "a paper", with_sem(2.05, 0.001), exact(2.0), "basis")
    assert (row.relation, row.expected.value, row.margin) == ("≈", 2.0, pytest.approx(0.1))
    assert row.verdict == "holds"
