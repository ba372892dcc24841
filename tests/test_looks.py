"""The two-look design (``iclab.stats.looks``, ``claims.LOOK_ALPHAS``): the simulated rule is the table's, and its false
verdicts over both looks stay within 2.5% a side with the truth on the region's edge."""

import numpy as np
import pytest
import xarray as xr

from iclab.stats import looks
from iclab.stats.claims import LOOK_LEVELS, Claim, decisions, region, seeds_needed
from iclab.stats.estimates import exact, over_seeds

RELATIONS = [("≈", 1.0), ("<", 0.0), (">", 0.5), ("≤", 0.5), ("≥", 0.0)]
REPS = 4000


def binomial_bound(rate: float, reps: int = REPS) -> float:
    return rate + 3 * np.sqrt(rate * (1 - rate) / reps)


@pytest.mark.parametrize("relation, margin", RELATIONS)
def test_false_verdicts_over_both_looks_stay_within_their_rates_at_the_regions_edge(relation, margin):
    """Truth on the region's edge, one seed's spread 1, the prompts' s.e. 0.3, look 1 with the configs' seed counts:
    "holds" is false if the truth lies just outside the edge and "fails" if just inside, so each may happen in at most
    2.5% of rows (within 3 binomial s.e. of 4000); after a one-seed look 1 (never decided) only look 2 can err, at its
    0.5% (deciding look 2 at look 1's 2.0% would show here)."""
    start, end, _, _ = region(relation, margin)
    edge = start if np.isfinite(start) else end
    rng = np.random.default_rng(5)
    for s1 in (1, 2, 3, 5):
        result = looks.simulate(relation, margin, edge, 1.0, 0.3, s1, REPS, rng)
        limit = binomial_bound(0.005 if s1 == 1 else 0.025)
        assert result.rate("holds") <= limit and result.rate("fails") <= limit, (s1, result)
        if s1 == 1:
            assert result.second_looks == REPS and result.mean_seeds == looks.ONE_SEED_LOOK2


def test_the_simulated_rule_is_the_tables():
    """For 40 simulated look-1 draws: the vectorized interval's verdict is ``Claim.verdict``'s, and look 2's seeds
    are the table's "seeds needed" at look 2's level (0 where it names none, or past the cap)."""
    rng = np.random.default_rng(7)
    for relation, margin in RELATIONS:
        values = 0.4 + rng.normal(0.0, 1.0, size=(40, 3))
        mean, low, high = looks.intervals_of(values, 0.2, LOOK_LEVELS[0])
        simulated = decisions(relation, margin, low, high)
        seed_sd = values.std(axis=1, ddof=1)
        planned = looks.look2_seeds(mean, seed_sd, 0.2, relation, margin)
        sems = xr.DataArray(np.full(3, 0.2), dims="seed")
        for row, verdict, seeds in zip(values, simulated, planned):
            claim = Claim("c", "s", over_seeds(xr.DataArray(row, dims="seed"), sems), relation, exact(0.0), "b",
                          margin, "test")
            assert claim.verdict == verdict
            needed = seeds_needed(claim.difference, relation, margin, LOOK_LEVELS[1])
            expected = int(needed) if needed.isdigit() and int(needed) <= looks.LOOK2_MAX_SEEDS else 0
            assert seeds == expected, (relation, row, needed)


def test_a_true_effect_is_decided_more_often_after_the_second_look():
    """An ordering 1.5 seed-spreads beyond its edge, 3 seeds at look 1: look 2 adds decisions (power) and no row
    decided at look 1 changes."""
    result = looks.simulate(">", 0.0, 1.5, 1.0, 0.1, 3, REPS, np.random.default_rng(11))
    assert result.rate("holds") > result.rate("holds", final=False) + 0.05
    assert result.rate("fails") == result.rate("fails", final=False) == 0


def ordering(name: str, value: float, look: int = 1, verification: bool = False, seeds: int = 0) -> Claim:
    """'m < 0' on an estimate m ~ N(value, 1): seed-free (its one-sided p is Φ(value); "seeds needed" names none, so
    look 2 does not plan for it) or of one seed (p 1; look 2 plans ``ONE_SEED_LOOK2`` seeds)."""
    from iclab.stats.estimates import Estimate

    measured = Estimate((float(value),) * max(seeds, 1), 1.0, trained=seeds > 0)
    return Claim(name, "test", measured, "<", exact(0.0), "normal", look=look, verification=verification)


def test_the_table_of_both_looks_keeps_look_ones_decisions_and_takes_look_two_for_the_rows_it_planned():
    """Look 1: "decided" (p 0.001, holds at 2.0%), "open" (one seed: p 1, look 2 plans 3 seeds), "ignored" (p 0.3,
    no seeds to plan from: the paper tier) and a verification; look 2 measured "open" (own p 0.002 → holds at 0.5%),
    "decided" again and "ignored" (p 0.0001), both never used. The table has look 1's rows where look 1 decided or
    look 2 planned nothing, look 2's for "open"; Holm over the family of three: sorted p on the family's scale
    0.00125 (≤ 0.025/3), 0.01 (look 2's own 0.002 × 5, against look 1's 1; ≤ 0.025/2), 0.375: holds, holds,
    inconclusive. (Judging "ignored" at look 2 would make it hold.)"""
    from scipy import stats

    from iclab.stats.claims import claims_table

    first = {"e": [ordering("decided", stats.norm.ppf(0.001)), ordering("open", 0.0, seeds=1),
                   ordering("ignored", stats.norm.ppf(0.3)), ordering("check", -9.0, verification=True)]}
    second = {"e": [ordering("open", stats.norm.ppf(0.002), look=2), ordering("decided", 5.0, look=2),
                    ordering("ignored", stats.norm.ppf(0.0001), look=2)]}
    table = claims_table(second, first_look=first).set_index("claim")
    assert table["look"].to_dict() == {"decided": 1, "open": 2, "ignored": 1, "check": 1}
    assert table["verdict"].to_dict() == {"decided": "holds", "open": "holds", "ignored": "inconclusive",
                                          "check": "holds"}
    assert table["holm_verdict"].to_dict() == {"decided": "holds", "open": "holds", "ignored": "inconclusive",
                                               "check": "—"}


@pytest.mark.parametrize("text, need", [
    ("20", ("seeds", 20)), ("21", ("paper tier", 0)), ("unknown: 1 seed has no spread", ("seeds", 3)),
    ("none: the Monte-Carlo error alone is too large (~16× the prompts)", ("prompts", 16)),
    ("none: the Monte-Carlo error alone is too large (~17× the prompts)", ("paper tier", 0)),
    ("none: the estimate sits on the region's edge", ("paper tier", 0)), ("—", ("paper tier", 0)),
    ("> 10000", ("paper tier", 0)),
])
def test_look_two_plans_seeds_within_the_caps_and_nothing_else(text, need):
    """``claims.look2_need`` on each text "seeds needed" may hold, at the caps (20 seeds, 16× the prompts) and one
    past them."""
    from iclab.stats.claims import look2_need

    assert look2_need(text) == need


def test_an_experiments_seeds_reach_each_row_it_plans_for_and_no_other():
    """After a one-seed look 1 every row is planned ``ONE_SEED_LOOK2`` seeds, or the experiment's 12 where its other
    rows need 12; a row whose Monte-Carlo error alone is too large (prompt s.e. 1 against seeds' spread 0.01: an
    undecided look-1 mean lies within 2.05 of 0, short of the 2.05 + 0.84 that more seeds cannot shrink) is planned
    none, whatever the experiment trains, and keeps look 1's verdict."""
    rng = np.random.default_rng(3)
    alone = looks.simulate("<", 0.0, 0.0, 1.0, 0.1, 1, 200, rng)
    assert alone.second_looks == 200 and alone.mean_seeds == looks.ONE_SEED_LOOK2
    with_others = looks.simulate("<", 0.0, 0.0, 1.0, 0.1, 1, 200, rng, experiment_seeds=12)
    assert with_others.second_looks == 200 and with_others.mean_seeds == 12
    prompts_only = looks.simulate("<", 0.0, -0.1, 0.01, 1.0, 3, 200, rng, experiment_seeds=12)
    assert prompts_only.first["inconclusive"] > 150 and (prompts_only.second_looks, prompts_only.mean_seeds) == (0, 0.0)
    assert prompts_only.final == prompts_only.first


class Scripted:
    """A stand-in generator whose ``normal(loc, scale, size)`` returns loc + scale × the next scripted z, which must
    have the shape asked for, so that a simulated row's values are chosen by hand and every draw is accounted for."""

    def __init__(self, *script: np.ndarray):
        self.script = list(script)

    def normal(self, loc, scale, size):
        z = self.script.pop(0)
        assert z.shape == size, (z.shape, size)
        return loc + scale * z


# look 1's values of eight ">" rows at margin 0 (one seed's spread 1, prompt s.e. 0.1, each prompt error +0.1, S₁ = 3)
FIRST = np.array([[5.0, 5.5, 4.5],  # A: holds at look 1
                  [0.3, 1.3, 2.3], [0.3, 1.3, 2.3],  # B and H: inconclusive, 10 seeds needed at look 2
                  [0.0, 1.0, 2.0],  # C: 15 seeds
                  [-0.95, 0.05, 1.05],  # D: its Monte-Carlo error alone is too large
                  [-0.2, 0.8, 1.8],  # E: 21 seeds, past the cap
                  [-0.19, 0.81, 1.81],  # F: 20 seeds, at the cap
                  [0.65, 1.0, 1.35]])  # G: holds at look 1's 96%, not at look 2's 99%
C_NEW = -0.5 + 0.01 * (-1.0) ** np.arange(15)  # C's look-2 values: fails on its own


def table_claim(values, look):
    from iclab.stats.estimates import Estimate

    return Claim("row", "test", Estimate(tuple(float(v) for v in values), 0.1, trained=True), ">", exact(0.0), "b",
                 0.0, "test", look=look)


def test_the_scripted_rows_need_what_the_table_says():
    """The rows' look-1 verdicts and "seeds needed" by the table's own path (``Claim``, ``claims.seeds_needed``)."""
    shifted = FIRST + 0.1
    assert [table_claim(row, 1).verdict for row in shifted] == ["holds"] + ["inconclusive"] * 6 + ["holds"]
    assert table_claim(shifted[7], 2).verdict == "inconclusive"
    needed = [seeds_needed(table_claim(row, 1).difference, ">", 0.0, LOOK_LEVELS[1]) for row in shifted[1:7]]
    assert needed[:3] == ["10", "10", "15"] and "Monte-Carlo" in needed[3] and needed[4:] == ["21", "20"]
    assert [table_claim(np.full(10, 3.1), 2).verdict, table_claim(np.full(20, 3.1), 2).verdict,
            table_claim(C_NEW + 0.1, 2).verdict, table_claim(C_NEW - 0.3, 2).verdict,
            table_claim(C_NEW + 0.3, 2).verdict] == ["holds", "holds", "fails", "fails", "inconclusive"]
    assert table_claim(np.concatenate([shifted[3], C_NEW + 0.1]), 2).verdict == "inconclusive"  # pooled


def test_scripted_rows_get_the_tables_verdicts_and_seeds_at_both_looks():
    """``simulate`` on the rows above: A and G hold at look 1; B and H (10 seeds, all at 3) and F (20, at the cap)
    hold at look 2, C (15) fails on its own seeds (pooled it would not); D and E get no look 2. Every draw is the
    scripted one, in its shape: look 2's groups in order of S₂, each with its fresh prompt errors."""
    script = Scripted(np.ones((8, 1)), FIRST,
                      np.ones((2, 1)), np.full((2, 10), 3.0),  # B and H
                      np.full((1, 1), -3.0), C_NEW[None, :],  # C, its fresh prompts' error −0.3 (+0.3: inconclusive)
                      np.ones((1, 1)), np.full((1, 20), 3.0))  # F
    result = looks.simulate(">", 0.0, 0.0, 1.0, 0.1, 3, 8, script)
    assert not script.script
    assert result.first == {"holds": 2, "fails": 0, "inconclusive": 6}
    assert result.final == {"holds": 5, "fails": 1, "inconclusive": 2}
    assert (result.second_looks, result.mean_seeds) == (4, 13.75)


def test_scripted_rows_of_one_experiment_share_its_seeds_and_may_share_look_ones_prompts():
    """The rows above in an experiment that trains 15 new seeds for its other rows, on look 1's prompts: B, H and C
    form one group of 15 (B's and H's at 3: still hold), F keeps its 20, no prompt error is drawn for look 2, and D
    and E still get none."""
    script = Scripted(np.ones((8, 1)), FIRST, np.stack([np.full(15, 3.0), np.full(15, 3.0), C_NEW]),
                      np.full((1, 20), 3.0))
    result = looks.simulate(">", 0.0, 0.0, 1.0, 0.1, 3, 8, script, shared_prompts=True, experiment_seeds=15)
    assert not script.script and table_claim(np.full(15, 3.1), 2).verdict == "holds"
    assert result.final == {"holds": 5, "fails": 1, "inconclusive": 2}
    assert (result.second_looks, result.mean_seeds) == (4, 16.25)


def test_a_two_seed_look_one_decides_and_a_one_seed_look_one_never_does():
    """Two seeds at 5 and 5.2 hold at look 1 (t on 1 degree of freedom) and draw nothing more; one seed at 5 is
    inconclusive and gets ``ONE_SEED_LOOK2`` new seeds, here at 3: it holds at look 2."""
    two = looks.simulate(">", 0.0, 0.0, 1.0, 0.1, 2, 1, Scripted(np.zeros((1, 1)), np.array([[5.0, 5.2]])))
    assert (two.first["holds"], two.second_looks) == (1, 0)
    script = Scripted(np.zeros((1, 1)), np.array([[5.0]]), np.zeros((1, 1)), np.full((1, looks.ONE_SEED_LOOK2), 3.0))
    one = looks.simulate(">", 0.0, 0.0, 1.0, 0.1, 1, 1, script)
    assert not script.script and (one.first["inconclusive"], one.final["holds"], one.mean_seeds) == (1, 1, 3.0)


def test_pooling_decides_on_both_looks_seeds():
    """The same draws with look 1's seeds pooled into look 2 (the design not used): C's 3 look-1 seeds and 15 new ones
    together are inconclusive (``Claim`` on the 18 values), the others as before."""
    script = Scripted(np.ones((8, 1)), FIRST, np.ones((2, 1)), np.full((2, 10), 3.0), np.ones((1, 1)), C_NEW[None, :],
                      np.ones((1, 1)), np.full((1, 20), 3.0))
    result = looks.simulate(">", 0.0, 0.0, 1.0, 0.1, 3, 8, script, pooled=True)
    assert table_claim(np.concatenate([FIRST[1] + 0.1, np.full(10, 3.1)]), 2).verdict == "holds"
    assert result.final == {"holds": 5, "fails": 0, "inconclusive": 3}


def test_look_twos_rows_pair_with_look_ones_though_their_text_quotes_new_prompts():
    """probe_hidden_size's rows quote the zero predictor's error on the evaluation prompts: 4.98 at look 1 and, on
    look 2's fresh prompts, 4.97. The two lists pair in order (same length, sources and relations), so look 2's
    decided row is the table's; a list of another length pairs by identical text only."""
    from iclab.stats.claims import claims_table, same_claims

    first = [ordering("narrowest (zero predictor's error 4.98)", 0.0, seeds=1), ordering("widest (4.98)", 0.0, seeds=1)]
    second = [ordering("narrowest (zero predictor's error 4.97)", -5.0, look=2), ordering("widest (4.97)", 0.0, look=2)]
    assert same_claims(first, second) == second
    assert same_claims(first, second[:1]) == [None, None]
    assert same_claims(first, [first[1]]) == [None, first[1]]
    table = claims_table({"e": second}, first_look={"e": first})
    assert table["look"].tolist() == [2, 2] and table["verdict"].tolist() == ["holds", "inconclusive"]


def test_the_designs_error_by_quadrature_against_hand_cases():
    """``false_verdict_rates`` at the truth on an edge. By hand: a one-seed look 1 sends every row to look 2's 3 new
    seeds, whose t interval at 99% errs exactly 0.5% a side (no prompt error); with the prompts' error alone (seeds
    agreeing to 1e-9) look 1's normal interval errs exactly 2.0% and look 2 never comes (the Monte-Carlo error alone
    is too large for seeds to help). With 3 seeds and no prompt error look 2 adds to look 1's 2.0% less than its
    0.5% (a quadrature without look 2 would give 2.0%). benchmarks/two_looks.py sets it beside the simulation in
    every cell of its grid."""
    one_seed = looks.false_verdict_rates(">", 0.5, 0.5, 1.0, 0.0, 1)
    assert one_seed["holds"] == pytest.approx(0.005, rel=1e-4) and one_seed["fails"] == pytest.approx(0.005, rel=1e-4)
    prompts_only = looks.false_verdict_rates(">", 0.0, 0.0, 1e-9, 0.3, 3, chi_points=8, mean_points=50)
    assert prompts_only["holds"] == pytest.approx(0.020, rel=1e-6)
    rates = looks.false_verdict_rates(">", 0.5, 0.5, 1.0, 0.0, 3, chi_points=24, mean_points=120)
    assert 0.0205 < rates["holds"] < 0.025 and rates["fails"] == pytest.approx(rates["holds"], rel=1e-9)
