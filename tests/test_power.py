"""iclab.stats.power (the seeds and prompts that decide an effect) against a Monte Carlo of the decision, its least
favourable truth by hand, config/gpu_node.yaml against its design, and iclab.compute.packing's floor by hand."""

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats

from iclab.compute import cluster, packing
from iclab.stats.power import (
    DAY_EXPERIMENTS, EFFECTS, LEVEL, MC_SHARE, Effect, Spread, design, edge_verdicts, least_favourable, power_as_run,
    region_edge, side, tier_design, upper_spread
)

REPO = Path(__file__).resolve().parents[1]


def decided_rate(truth: float, sd: float, mc_se: float, seeds: int, end: float, reps: int, rng) -> float:
    """Monte Carlo of a "<" claim with margin 0 (region below ``end`` = 0): the share of runs of ``seeds`` seeds, each
    N(truth, sd²), sharing one prompt error N(0, mc_se²), whose LEVEL interval (t on the seeds, normal on the prompts,
    in quadrature) lies below 0."""
    values = truth + rng.normal(0, sd, (reps, seeds)) + rng.normal(0, mc_se, (reps, 1))  # (R, S)
    tail = (1 + LEVEL) / 2
    half = np.hypot(stats.t.ppf(tail, seeds - 1) * values.std(axis=1, ddof=1) / math.sqrt(seeds),
                    stats.norm.ppf(tail) * mc_se)
    return float(np.mean(values.mean(axis=1) + half < end))


def test_design_seeds_are_the_fewest_that_decide_with_80_percent_power_by_monte_carlo():
    rng = np.random.default_rng(5)
    spread = Spread(estimate=-0.5, relation="<", margin=0.0, seeds=3, sd=1.2, mc_se=0.05, prompts=1000)
    plan = design(-1.0, spread)
    assert plan.prompts == 1000 and 2 < plan.seeds < 20
    mc_se = spread.mc_se
    at = decided_rate(-1.0, spread.sd, mc_se, plan.seeds, 0.0, 40_000, rng)
    below = decided_rate(-1.0, spread.sd, mc_se, plan.seeds - 1, 0.0, 40_000, rng)
    assert at >= 0.8 - 0.01 and below < 0.8 + 0.01, (at, below)
    assert plan.power == pytest.approx(at, abs=0.015)


def test_design_prompts_leave_the_seeds_half_the_distance():
    """An equivalence (≈, margin 0.1) at truth 0 with a prompt s.e. of 0.2: the prompts grow by powers of two until
    the Monte-Carlo part, (z at the level + z at the power's two-sided 90%) × s.e./√f, is at most half the margin."""
    spread = Spread(estimate=0.0, relation="≈", margin=0.1, seeds=3, sd=0.01, mc_se=0.2, prompts=500)
    plan = design(0.0, spread)
    reach = (stats.norm.ppf((1 + LEVEL) / 2) + stats.norm.ppf(0.9)) * spread.mc_se
    factor = plan.prompts // spread.prompts
    assert reach / math.sqrt(factor) <= MC_SHARE * 0.1 < reach / math.sqrt(factor / 2)
    assert design(0.1, spread).seeds == 0 and "edge" in design(0.1, spread).reason


def test_the_least_favourable_truth_by_hand():
    """An ordering claim keeps the effect-to-spread ratio measured at CPU size: the paper's −10 against a CPU estimate
    of −0.5 (sd 0.4, prompt s.e. 0.02) scales the spreads by 20 (sd 8, s.e. 0.4), so its seeds are the CPU ratio's,
    not the 2 that the paper's effect at the CPU spread would need; a CPU estimate of the other sign keeps its sign
    (+0.034 reported, −0.0375 measured: −0.034). An equivalence (margin 0.05) takes the CPU estimate where it lies
    nearer the region's edge than 0: 0.093 (0.043 outside) and 0.01 (0.04 inside), but not 0.12 (0.07 outside)."""
    gap = Effect("gap", "x", "c", -10.0, "paper")
    spread = Spread(estimate=-0.5, relation="<", margin=0.0, seeds=3, sd=0.4, mc_se=0.02, prompts=1000)
    truth, scaled = least_favourable(gap, spread)
    assert truth == pytest.approx(-10.0) and (scaled.sd, scaled.mc_se) == (pytest.approx(8.0), pytest.approx(0.4))
    assert design(truth, scaled).seeds == design(-0.5, spread).seeds > design(-10.0, spread).seeds == 2
    lstm = Effect("lstm", "x", "c", 0.034, "paper")
    other_sign = Spread(estimate=-0.0375, relation=">", margin=0.0, seeds=3, sd=0.01, mc_se=0.001, prompts=1000)
    truth, scaled = least_favourable(lstm, other_sign)
    assert truth == pytest.approx(-0.034) and scaled.sd == pytest.approx(0.01 * 0.034 / 0.0375)
    flat = Effect("flat", "x", "c", 0.0, "paper")
    for estimate, expected in ((0.093, 0.093), (0.01, 0.01), (0.12, 0.0), (-0.093, -0.093)):
        near = Spread(estimate=estimate, relation="≈", margin=0.05, seeds=3, sd=0.03, mc_se=0.001, prompts=1000)
        assert least_favourable(flat, near) == (pytest.approx(expected), near), estimate


def test_an_ordering_with_a_unicode_relation_keeps_the_cpu_ratio_and_a_zero_estimate_is_refused():
    """"≥" and "≤" are orderings like ">" and "<" (their code points lie above "≈"'s): the paper's 2 against a CPU
    estimate of 0.5 scales the spreads by 4. A CPU estimate of 0 has no ratio: a ValueError naming the effect."""
    paper = Effect("bound", "x", "c", 2.0, "paper")
    for relation in ("≥", "≤"):
        spread = Spread(estimate=0.5, relation=relation, margin=0.0, seeds=3, sd=0.1, mc_se=0.01, prompts=1000)
        truth, scaled = least_favourable(paper, spread)
        assert truth == pytest.approx(2.0) and scaled.sd == pytest.approx(0.4), relation
    zero = Spread(estimate=0.0, relation=">", margin=0.0, seeds=3, sd=0.1, mc_se=0.01, prompts=1000)
    with pytest.raises(ValueError, match="bound: a CPU estimate of 0 has no effect-to-spread ratio"):
        least_favourable(paper, zero)


def mc_reach(mc_se: float) -> float:
    """The Monte-Carlo part of a ">" claim's interval at LEVEL widened by the power's one-sided 80% quantile, by hand."""
    return (stats.norm.ppf((1 + LEVEL) / 2) + stats.norm.ppf(0.8)) * mc_se


def test_the_prompt_factor_at_its_bounds_by_hand():
    """A ">" claim (margin 0) with prompt s.e. 0.32 at 1,000 prompts: a truth whose half-distance equals the reach at
    1× exactly keeps 1,000 prompts (the bound is inclusive); a truth 1.0001 × twice the reach at 1024× (s.e. 0.01) needs
    exactly 1024× (512× reaches √2 farther): 1,024,000 prompts; a truth 0.9999 × that is past the cap: "over 1024×
    the prompts", at 2,048,000 prompts and no seeds."""
    from iclab.stats.claims import monte_carlo_reach

    spread = Spread(estimate=1.0, relation=">", margin=0.0, seeds=3, sd=0.01, mc_se=0.32, prompts=1000)
    edge = 2 * monte_carlo_reach(">", 0.32, LEVEL)  # exactly: the tie that the inclusive bound decides
    assert edge / 2 == pytest.approx(mc_reach(0.32), rel=1e-12)
    assert design(edge, spread).prompts == 1000
    at_cap = design(1.0001 * 2 * mc_reach(0.01), spread)
    assert at_cap.prompts == 1_024_000 and at_cap.seeds >= 2 and at_cap.reason == ""
    past = design(0.9999 * 2 * mc_reach(0.01), spread)
    assert (past.prompts, past.seeds, past.reason) == (2_048_000, 0, "over 1024× the prompts")
    assert math.isnan(past.power)


def test_the_seed_cap_is_inclusive_and_past_it_the_design_keeps_its_prompts():
    """A ">" claim (margin 0, one seed's spread 1, prompt s.e. 0.15 at 1,000 prompts): scanning the truth, the one
    whose fewest deciding seeds (``claims.deciding_seeds`` at 1× and 2× the prompts) are exactly 20 gets 20 and a
    power ≥ 80%; one that needs 21 is "over 20 seeds" with NaN power, at the prompts the design chose (2,000: the
    Monte-Carlo part at 1× takes more than half the distance)."""
    from iclab.stats.claims import deciding_seeds

    spread = Spread(estimate=1.0, relation=">", margin=0.0, seeds=3, sd=1.0, mc_se=0.15, prompts=1000)
    truths = np.linspace(0.45, 0.9, 400)
    halved = 0.15 / math.sqrt(2)  # the prompts' s.e. at 2×
    needed = deciding_seeds(truths, np.ones(400), np.full(400, halved), 0.0, math.inf, LEVEL, 20)
    twenty, past = truths[needed == 20][0], truths[needed == 21][-1]
    for truth in (twenty, past):
        assert mc_reach(0.15) > truth / 2 >= mc_reach(halved), truth
    at_cap = design(twenty, spread)
    assert (at_cap.prompts, at_cap.seeds, at_cap.reason) == (2000, 20, "") and at_cap.power >= 0.8
    over = design(past, spread)
    assert (over.prompts, over.seeds, over.reason) == (2000, 21, "over 20 seeds") and math.isnan(over.power)


def test_both_designs_of_the_power_file_are_power_designs_on_its_spreads():
    """Each row of benchmarks/results/gpu_node_power.json: the favourable design at the paper's truth (the CPU estimate
    where none is stated) and the least favourable one at least_favourable's, both on the row's spreads."""
    power = json.loads((REPO / "benchmarks" / "results" / "gpu_node_power.json").read_text())
    for effect, row in zip(EFFECTS, power["effects"], strict=True):
        spread = Spread(**row["spread"])
        assert design(spread.estimate if effect.truth is None else effect.truth, spread).seeds == row["design"]["seeds"]
        truth, scaled = least_favourable(effect, spread)
        worst = row["least_favourable"]
        assert (worst["design"]["truth"], worst["sd"]) == (pytest.approx(truth), pytest.approx(scaled.sd))
        assert design(truth, scaled).seeds == worst["design"]["seeds"], effect.name


def test_the_seed_spreads_upper_bound_by_hand_and_by_monte_carlo():
    """At two degrees of freedom (three seeds) χ²₂'s 20% quantile is −2 ln 0.8, so the 80% upper bound of σ is
    s·√(1 / −ln 0.8) = 2.1169 s; at one (two seeds) χ²₁'s is Φ⁻¹(0.6)², so 1 / Φ⁻¹(0.6) = 3.9472 s. Against a
    Monte Carlo of three normal seeds it covers σ 80% of the time (a two-sided 80% bound, 3.08 s, would cover 90%;
    counting seeds, not degrees of freedom, 1.73 s, 71%). The prompts' s.e. stays; one seed has no bound."""
    three = Spread(estimate=1.0, relation=">", margin=0.0, seeds=3, sd=0.5, mc_se=0.07, prompts=1000)
    assert upper_spread(three).sd == pytest.approx(0.5 * math.sqrt(1 / -math.log(0.8)), rel=1e-10)
    assert upper_spread(three).sd == pytest.approx(1.05847, abs=1e-5) and upper_spread(three).mc_se == 0.07
    two = Spread(estimate=1.0, relation=">", margin=0.0, seeds=2, sd=1.0, mc_se=0.07, prompts=1000)
    assert upper_spread(two).sd == pytest.approx(1 / stats.norm.ppf(0.6), rel=1e-10)
    assert upper_spread(two).sd == pytest.approx(3.94715, abs=1e-5)
    samples = np.random.default_rng(11).normal(0.0, 1.0, (200_000, 3))  # σ = 1
    factor = upper_spread(replace(three, sd=1.0)).sd
    assert np.mean(samples.std(axis=1, ddof=1) * factor >= 1.0) == pytest.approx(0.8, abs=0.004)
    with pytest.raises(ValueError, match="a spread of 1 seed"):
        upper_spread(replace(three, seeds=1))
    # at 50% the bound is the χ²₂ median's, 2 ln 2: s·√(1 / ln 2) = 1.2011 s; 0 and 1 are no confidence
    assert upper_spread(replace(three, sd=1.0), confidence=0.5).sd == pytest.approx(math.sqrt(1 / math.log(2)))
    for bad in (0.0, 1.0):
        with pytest.raises(ValueError, match=f"confidence {bad}: allowed strictly between 0 and 1"):
            upper_spread(three, confidence=bad)


def test_the_side_and_the_edge_of_a_claims_region_by_hand():
    """"≈" with margin 0.05: a truth of 0.093 lies outside (fails), its nearest edge 0.05; −0.01 inside (holds), edge
    −0.05. "<" with margin 0.2 (region below −0.2): −1 holds, its one finite edge −0.2; ">" margin 0: 0.034 holds at
    edge 0. On an edge itself: ±0.05 hold (the equivalence includes them), −0.2 and 0 fail (strict orderings)."""
    near = Spread(estimate=0.0, relation="≈", margin=0.05, seeds=3, sd=0.03, mc_se=0.001, prompts=1000)
    assert (side(0.093, near), region_edge(0.093, near)) == ("fails", 0.05)
    assert (side(-0.01, near), region_edge(-0.01, near)) == ("holds", -0.05)
    below = replace(near, relation="<", margin=0.2)
    assert (side(-1.0, below), region_edge(-1.0, below), side(-0.1, below)) == ("holds", -0.2, "fails")
    above = replace(near, relation=">", margin=0.0)
    assert (side(0.034, above), region_edge(0.034, above)) == ("holds", 0.0)
    # on an edge: an equivalence includes its ends, a strict ordering does not
    assert (side(0.05, near), side(-0.05, near), side(-0.2, below), side(0.0, above)) == (
        "holds", "holds", "fails", "fails")


def test_at_the_regions_edge_each_verdict_has_the_looks_error_by_hand():
    """With no prompt error and the other edge far away, the truth on an edge makes (mean − edge) / (s / √S) a
    Student t with S − 1 degrees of freedom, so "holds" (the interval inside) has probability P(T ≥ t at 98%) = 2%
    exactly, and "fails" too: the quadrature's 400 χ² quantiles reach it within 5e-4. A prompt error adds to the
    interval's half-width more than to the mean's spread (√(a² + b²) < a + b), so each falls below 2%."""
    wide = Spread(estimate=0.0, relation="≈", margin=100.0, seeds=3, sd=1.0, mc_se=1e-12, prompts=1000)
    at_edge = edge_verdicts(99.0, wide, seeds=10, prompts=1000)
    assert at_edge["truth"] == 100.0
    assert (at_edge["holds"], at_edge["fails"]) == (pytest.approx(0.02, abs=5e-4), pytest.approx(0.02, abs=5e-4))
    noisy = edge_verdicts(99.0, replace(wide, mc_se=0.3), seeds=10, prompts=1000)
    assert noisy["holds"] < 0.0195 and noisy["fails"] < 0.0195
    assert edge_verdicts(99.0, replace(wide, mc_se=0.3), seeds=10, prompts=4000)["holds"] > noisy["holds"]


def simulated_verdicts(truth: float, spread: Spread, seeds: int, prompts: int, reps: int, rng) -> tuple[float, float]:
    """Monte Carlo of a claim's look-1 verdict: ``seeds`` seeds each N(truth, sd²), one prompt error N(0, mc_se² ×
    measured prompts / prompts) shared by them, the LEVEL interval (t on the seeds, normal on the prompts, in
    quadrature) against the region built by hand: the shares of "holds" (inside) and "fails" (outside)."""
    low, high = {"≈": (-spread.margin, spread.margin), "<": (-math.inf, -spread.margin),
                 ">": (spread.margin, math.inf)}[spread.relation]
    mc_se = spread.mc_se * math.sqrt(spread.prompts / prompts)
    values = truth + rng.normal(0, spread.sd, (reps, seeds)) + rng.normal(0, mc_se, (reps, 1))  # (R, S)
    tail = (1 + LEVEL) / 2
    half = np.hypot(stats.t.ppf(tail, seeds - 1) * values.std(axis=1, ddof=1) / math.sqrt(seeds),
                    stats.norm.ppf(tail) * mc_se)
    mean = values.mean(axis=1)
    return float(np.mean((mean - half > low) & (mean + half < high))), float(np.mean((mean + half < low)
                                                                                    | (mean - half > high)))


@pytest.mark.parametrize("name", ["MLP gap", "near least squares at M = N"])
def test_the_power_files_upper_bound_rows_against_a_monte_carlo(name):
    """Two rows of benchmarks/results/gpu_node_power.json, each recomputed by the quadrature from its spreads, then
    checked by a Monte Carlo of the decision (40,000 runs: ±0.006 at 2 s.e.): the tier's power at the least
    favourable truth with the seed spread at its 80% upper bound (the MLP gap's, and near least squares', whose least
    favourable truth lies on the failing side, so its power is the power to refute), and P(holds) and P(fails) at the
    region's edge."""
    power = json.loads((REPO / "benchmarks" / "results" / "gpu_node_power.json").read_text())
    row = next(row for row in power["effects"] if row["effect"] == name)
    effect = next(effect for effect in EFFECTS if effect.name == name)
    spread, as_run = Spread(**row["spread"]), row["as_run"]
    seeds, prompts = as_run["seeds"], as_run["prompts"]
    truth, scaled = least_favourable(effect, spread)
    worst = upper_spread(scaled)
    assert row["upper_bound"]["least_favourable"]["sd"] == pytest.approx(worst.sd)
    assert as_run["power_least_favourable_upper"] == pytest.approx(power_as_run(truth, worst, seeds, prompts))
    rng = np.random.default_rng(3)
    holds, fails = simulated_verdicts(truth, worst, seeds, prompts, 40_000, rng)
    assert as_run["power_least_favourable_upper"] == pytest.approx(holds if side(truth, spread) == "holds" else fails,
                                                                   abs=0.008)
    edge = as_run["edge"]
    assert edge == pytest.approx(edge_verdicts(row["design"]["truth"], spread, seeds, prompts))
    edge_holds, edge_fails = simulated_verdicts(edge["truth"], spread, seeds, prompts, 40_000, rng)
    assert (edge["holds"], edge["fails"]) == (pytest.approx(edge_holds, abs=0.003),
                                              pytest.approx(edge_fails, abs=0.003))


UNPOWERED = {"near least squares at M = N"}  # in the day, but no design at the spread's bound within power.MAX_SEEDS


def test_gpu_node_config_runs_the_tier_design_of_the_days_effects():
    """Issue 101: every effect of ``power.DAY_EXPERIMENTS``' experiments runs at least its ``tier_design``'s seeds and
    prompts (the paper's size at the spread's 80% bound, raised to the least favourable truth's design), but for
    UNPOWERED (over the seed cap at the bound: run and judged, not powered). Its power as run, recomputed from the
    file's spreads, is ≥ 80% at the paper's size at both the estimated spread and its bound (UNPOWERED: at the
    estimate only). The other effects' experiments run exactly as config.yaml's (CPU size), their rows say not in
    the day, and the day's GPU experiments train at the papers' 500,000 steps with a captured step."""
    power = json.loads((REPO / "benchmarks" / "results" / "gpu_node_power.json").read_text())
    assert [row["effect"] for row in power["effects"]] == [effect.name for effect in EFFECTS]
    experiments = yaml.safe_load((REPO / "config" / "gpu_node.yaml").read_text())["experiments"]
    default = yaml.safe_load((REPO / "config.yaml").read_text())["experiments"]
    for effect, row in zip(EFFECTS, power["effects"], strict=True):
        spread = Spread(**row["spread"])
        assert row["tier_design"] == pytest.approx(tier_design(effect, spread).to_dict(), nan_ok=True), effect.name
        section = experiments[row["experiment"]]
        if effect.experiment not in DAY_EXPERIMENTS:
            assert row["as_run"] is None and row["in_day"] is False and section == default[effect.experiment]
            continue
        assert section["train"]["steps"] == 500_000 and section["train"]["capture"] is True, effect.name
        planned = row["tier_design"] if effect.name not in UNPOWERED else row["design"]
        assert math.isfinite(row["tier_design"]["power"]) == (effect.name not in UNPOWERED), effect.name
        assert len(section["seeds"]) >= planned["seeds"] and section["eval_prompts"] >= planned["prompts"]
        truth, scaled = least_favourable(effect, spread)
        seeds, prompts = len(section["seeds"]), section["eval_prompts"]
        as_run = row["as_run"]
        assert (as_run["seeds"], as_run["prompts"]) == (seeds, prompts), effect.name
        assert as_run["power"] == pytest.approx(power_as_run(row["design"]["truth"], spread, seeds, prompts))
        assert as_run["power_least_favourable"] == pytest.approx(power_as_run(truth, scaled, seeds, prompts))
        assert as_run["power_upper"] == pytest.approx(power_as_run(row["design"]["truth"], upper_spread(spread),
                                                                   seeds, prompts))
        assert as_run["power"] >= 0.8 and (as_run["power_upper"] >= 0.8) == (effect.name not in UNPOWERED)


def test_the_tier_design_by_hand():
    """An ordering ("<", margin 0) measured at −0.4 over three seeds (sd 0.4, prompt s.e. 0.02 at 1,000 prompts), the
    paper's −1: at the bound (sd 0.4 × 2.1169 = 0.8468) the paper's size needs 9 seeds; the least favourable truth
    (the CPU's ratio: sd 1.0, s.e. 0.05 at −1) needs 11, so the tier runs 11, with the power at the bound at the
    paper's size. Measured at −0.5 (sd 0.8 there: fewer) the bound's 9 bind; at −0.25 (sd 1.6) the least favourable
    design passes 20 seeds and the bound's 9 stand. An equivalence whose bound design passes 20 seeds returns it, NaN power
    and its reason."""
    gap = Effect("gap", "x", "c", -1.0, "paper")
    spread = Spread(estimate=-0.4, relation="<", margin=0.0, seeds=3, sd=0.4, mc_se=0.02, prompts=1000)
    at_bound = design(-1.0, replace(spread, sd=0.4 * math.sqrt(1 / -math.log(0.8))))
    worst = design(-1.0, replace(spread, sd=1.0, mc_se=0.05))
    assert (worst.seeds, at_bound.seeds) == (11, 9)
    planned = tier_design(gap, spread)
    assert (planned.seeds, planned.prompts) == (worst.seeds, max(worst.prompts, at_bound.prompts))
    assert planned.power == pytest.approx(power_as_run(-1.0, upper_spread(spread), worst.seeds, planned.prompts))
    assert tier_design(gap, replace(spread, estimate=-0.5)).seeds == 9
    assert tier_design(gap, replace(spread, estimate=-0.25)).seeds == 9
    flat = Effect("flat", "x", "c", 0.0, "paper")
    wide = Spread(estimate=0.01, relation="≈", margin=0.05, seeds=3, sd=0.2, mc_se=0.001, prompts=1000)
    over = tier_design(flat, wide)
    assert (over.seeds, over.reason) == (21, "over 20 seeds") and math.isnan(over.power)


def test_power_as_run_scales_the_prompts_error_by_hand():
    """power_as_run at the measured prompts is design's power at its seeds; at 4× the prompts the s.e. halves: the
    same as a spread measured with half the s.e. at the design's prompts."""
    spread = Spread(estimate=-0.5, relation="<", margin=0.0, seeds=3, sd=1.2, mc_se=0.3, prompts=1000)
    plan = design(-1.0, spread)
    assert power_as_run(-1.0, spread, plan.seeds, plan.prompts) == pytest.approx(plan.power)
    halved = Spread(estimate=-0.5, relation="<", margin=0.0, seeds=3, sd=1.2, mc_se=0.15, prompts=1000)
    assert power_as_run(-1.0, spread, 5, 4000) == pytest.approx(power_as_run(-1.0, halved, 5, 1000))
    assert power_as_run(-1.0, spread, 5, 4000) > power_as_run(-1.0, spread, 5, 1000)


def test_the_floor_of_the_cards_peak_by_hand():
    """Table 1's GPT-2 at the paper's size, 16,886,071,296 FLOPs a step (tests/test_cost.py), 500k steps: at the
    dense bf16 peak of 989e12 FLOP/s 8.537 s; the same job in float32 at 67e12 126.0 s; with TF32 at 495e12 17.06 s."""
    job = {"model": {"name": "gpt2", "n_embd": 128, "n_layer": 6, "n_head": 4, "prompt_format": "token_matrix"},
           "task": {"d": 20, "n_points": 41}, "train": {"steps": 500_000, "batch_size": 64, "precision": "bfloat16"}}
    assert cluster.model_size(job).flops_per_step == 16_886_071_296
    assert packing.floor_seconds([[job]]) == pytest.approx(8.537, abs=1e-3)
    float32 = job | {"train": job["train"] | {"precision": "float32"}}
    assert packing.floor_seconds([[float32]]) == pytest.approx(126.0, abs=0.1)
    tf32 = job | {"train": float32["train"] | {"tf32": True}}
    assert packing.floor_seconds([[job], [float32, tf32]]) == pytest.approx(8.537 + 126.0 + 17.06, abs=0.02)
