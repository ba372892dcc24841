"""The claims table: one row per reproduced claim, each with a verdict a statistician would sign.

A claim compares a measured value m with an expected value e (a closed form, an exact limit, another measured
value) through a relation, and decides on the ``LEVEL`` interval of the difference m − e:

- ``≈`` is an equivalence test: it holds when the interval lies inside ±margin, fails when it lies outside,
  and is inconclusive otherwise. The margin comes from the paper or the theory and names its source; it is
  never taken from the measured value or its interval.
- ``<`` / ``>``: m − e < −margin / > margin (an ordering, margin 0 unless the claim states an effect size);
- ``≤`` / ``≥``: m − e ≤ margin / ≥ −margin (a bound, the margin a rounding the theory allows).
Each relation is a region of m − e: the claim holds when the interval lies inside it, fails when the interval
misses it, and is inconclusive otherwise. A claim about training measured on one training seed is inconclusive
("1 seed": one seed says nothing of the spread between seeds). An inconclusive row states the seeds needed to
decide it, from the measured spread between seeds.

The intervals of differences are ``iclab.stats.estimates``'; the table's files (markdown, HTML, CSV) are
``iclab.report.claims_report``'s.
A row is decided in at most two looks (``LOOK_ALPHAS``): the config's run at a one-sided 2.0% (its interval at
96%), and where that leaves it inconclusive, new seeds or prompts only at 0.5% (99%): an ordering that is not there
holds in at most 2.5% of runs over both looks, and so does an equivalence at the margin's edge. "Seeds needed" are
those of look 2, at 99%. The figures' bands stay at ``LEVEL`` = 95%.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from iclab.stats import intervals
from iclab.stats.estimates import LEVEL, Estimate, difference

# The two-look design (docs/claims.md), fixed before any data: look 1 is the config's run, look 2 the seeds or
# prompts that its inconclusive rows need, new ones only. Each look decides at its own one-sided error rate, so that
# a row's chance of a false verdict over both looks is at most their sum, HOLM_ALPHA (Bonferroni over the looks).
# 2.0% + 0.5%: look 1 loses little against a single look at 2.5%, look 2 is still cheap in seeds
# (benchmarks/results/two_looks.json: the simulation that checks the error and measures the power).
LOOK_ALPHAS = (0.020, 0.005)
LOOK_LEVELS = tuple(1 - 2 * alpha for alpha in LOOK_ALPHAS)  # two-sided levels of each look's interval: 96%, 99%
POWER = 0.8  # "seeds needed": the seeds that decide the claim with this probability if the truth is the estimate
ONE_SEED_LOOK2 = 3  # new seeds after a one-seed look 1: the fewest whose spread is worth a t quantile (2 d.o.f.)
LOOK2_MAX_SEEDS = 20  # beyond this a row needs the paper tier (4× the default's largest seed count per experiment)
# beyond this factor of its evaluation prompts a row needs the paper tier: 16× random_covariance's default set is
# ~0.6 GB of prompts and 16× its evaluation's job-seconds, within a look's budget and memory; its ~300× (~8 GB) is not
LOOK2_MAX_PROMPTS = 16
PROMPTS_NEEDED = re.compile(r"~(?P<factor>\d+)× the prompts")
MAX_SEEDS = 10_000  # beyond this, seeds alone do not decide the claim
# iclab's margins where a paper says "reaches", "near" or "does not depend on" without a number (stated, never
# taken from the measured value):
REACHES = 0.05  # "reaches a limit" at finite size: within 5% of the limit (the ±5% band figure ltb_gap draws)
REACHES_SOURCE = "iclab: within 5% of the limit, relative to it (a finite run's reach; ltb_gap's figure draws the band)"
NULL_FRACTION = 0.05  # "near least squares", "does not depend on": within 5% of the zero predictor's risk
NULL_SOURCE = "iclab: 5% of the zero predictor's risk (the scale from exact to no learning)"
# an equivalence whose lower edge cannot bind: the measured risk is at least the expected one by definition (a
# class's optimum, the Bayes risk, least squares' exact 0), so "≈" decides "at most +margin above it" in effect
ONE_EDGE = "one edge: the risk cannot lie below {}, so only the upper edge (+margin) binds"
RELATIONS = ("≈", "<", ">", "≤", "≥")
VERDICTS = ("holds", "fails", "inconclusive")
SMOKE_VERDICT = "not judged (smoke run)"  # every row of a smoke run's table (iclab.pipeline.smoke): models untrained
KINDS = ("claim", "verification")  # a paper's claim, measured; a deterministic check of the theory's computation
COLUMNS = (
    "experiment", "kind", "claim", "source", "measured", "relation", "expected", "difference", "low", "high", "margin",
    "margin_source", "verdict", "holm_verdict", "seeds", "seeds_needed", "look", "basis",
)
# Holm's step-down over the family of the papers' claims: each row's verdict at a one-sided error rate of
# HOLM_ALPHA / (rows left), so that the chance of any false verdict in the family stays at HOLM_ALPHA
HOLM_ALPHA = sum(LOOK_ALPHAS)
# a row whose experiment's seeds were raised after an inconclusive verdict: its verdict was looked at twice
RAISED = "seeds raised from {before} after an inconclusive verdict (looked at twice: a 2.5% error becomes ~4.5%)"


def region(relation: str, margin: float) -> tuple[float, float, bool, bool]:
    """The region of m − e where ``relation`` holds: (low end, high end, low end included, high end included)."""
    return {
        "≈": (-margin, margin, True, True),
        "<": (-math.inf, -margin, False, False),
        ">": (margin, math.inf, False, False),
        "≤": (-math.inf, margin, False, True),
        "≥": (-margin, math.inf, True, False),
    }[relation]



def decide(relation: str, margin: float, low: float, high: float) -> str:
    """``holds`` when [low, high] lies inside the relation's region, ``fails`` when it misses it."""
    return str(decisions(relation, margin, np.asarray(low), np.asarray(high)))



def decisions(relation: str, margin: float, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """``decide`` on arrays of interval ends (R,): "holds", "fails" or "inconclusive" each."""
    start, end, start_in, end_in = region(relation, margin)
    above_start = low >= start if start_in else low > start
    below_end = high <= end if end_in else high < end
    misses = (high < start if start_in else high <= start) | (low > end if end_in else low >= end)
    return np.where(above_start & below_end, "holds", np.where(misses, "fails", "inconclusive"))



def distance_to_decide(relation: str, margin: float, value: float) -> float:
    """How far the interval's half-width may reach around ``value`` for the verdict ``value`` points to: inside
    the region, the distance to its nearest end; outside, the distance to the region."""
    start, end, _, _ = region(relation, margin)
    if start <= value <= end:
        return min(value - start, end - value)
    return start - value if value < start else value - end



def seeds_needed(difference: Estimate, relation: str, margin: float, level: float = LEVEL) -> str:
    """Training seeds with which the claim is decided with probability ``POWER`` if the truth is the estimate
    and the spread between seeds the measured one: the smallest S ≥ 2 with ``decision_probability`` ≥ POWER.
    Where the Monte-Carlo part alone cannot fit (its interval, widened by the power's normal quantile, reaches
    past the region's edge), the factor of prompts it would need instead."""
    if difference.seeds == 1:
        return "unknown: 1 seed has no spread"
    distance = distance_to_decide(relation, margin, difference.value)
    if distance <= 0:
        return "none: the estimate sits on the region's edge"
    # the prompts' s.e. as the interval at ``level`` spends it: batch means' t quantile over the normal one that the
    # planning below assumes (1 for an s.e. over many prompts)
    prompt_se = difference.prompt_se * difference.mc_quantile(level) / intervals.quantile(1, level)
    mc_part = monte_carlo_reach(relation, prompt_se, level)
    if mc_part >= distance:  # seeds cannot shrink the Monte-Carlo part: it needs more prompts
        return f"none: the Monte-Carlo error alone is too large (~{math.ceil((mc_part / distance) ** 2)}× the prompts)"
    if difference.seeds == 0:
        return "—"
    sd = difference.seed_se * math.sqrt(difference.seeds)  # spread of one seed's value
    start, end, _, _ = region(relation, margin)
    (s,) = deciding_seeds(np.array([difference.value]), np.array([sd]), np.array([prompt_se]), start, end, level,
                          MAX_SEEDS)
    return str(s) if s <= MAX_SEEDS else f"> {MAX_SEEDS}"



def look2_need(seeds_needed_text: str) -> tuple[str, int]:
    """What look 2 does for an inconclusive row whose "seeds needed" (``seeds_needed`` at look 2's level) is
    ``seeds_needed_text``: ("seeds", S₂) new seeds (``ONE_SEED_LOOK2`` after a one-seed look), ("prompts", factor) for
    a Monte-Carlo error that more prompts would fix (listed, not run) or ("paper tier", 0): past
    ``LOOK2_MAX_SEEDS`` seeds or ``LOOK2_MAX_PROMPTS``× the prompts, on the region's edge, or no seeds to plan from.
    Only "seeds" rows are judged at look 2."""
    if seeds_needed_text.isdigit():
        seeds = int(seeds_needed_text)
        return ("seeds", seeds) if seeds <= LOOK2_MAX_SEEDS else ("paper tier", 0)
    if seeds_needed_text.startswith("unknown: 1 seed"):
        return "seeds", ONE_SEED_LOOK2
    if match := PROMPTS_NEEDED.search(seeds_needed_text):
        factor = int(match["factor"])
        return ("prompts", factor) if factor <= LOOK2_MAX_PROMPTS else ("paper tier", 0)
    return "paper tier", 0



def monte_carlo_reach(relation: str, prompt_se: float, level: float) -> float:
    """How far the Monte-Carlo part of an interval reaches when it must decide with ``POWER``: its ``level``
    quantile widened by the power's normal quantile, × ``prompt_se``. Seeds cannot shrink it."""
    tails = 2 if relation == "≈" else 1  # an equivalence must clear both ends: each may miss with half the risk
    power_level = 1 - 2 * (1 - POWER) / tails  # two-sided level of the power's quantile (one-sided 0.84 at 80%)
    return (intervals.quantile(1, level) + intervals.quantile(1, power_level)) * prompt_se



def deciding_seeds(truth: np.ndarray, sd: np.ndarray, mc_se: np.ndarray, start: float, end: float, level: float,
                   cap: int) -> np.ndarray:
    """Per row of (truth, sd, mc_se) (R,): the smallest S in 2…``cap`` with ``decision_probabilities`` ≥ POWER,
    ``cap`` + 1 where none is."""
    needed = np.full(len(truth), cap + 1)
    open_rows = np.arange(len(truth))
    for s in range(2, cap + 1):
        decided = decision_probabilities(s, truth[open_rows], sd[open_rows], mc_se[open_rows], start, end, level)
        needed[open_rows[decided >= POWER]] = s
        open_rows = open_rows[decided < POWER]
        if not len(open_rows):
            break
    return needed



def decision_probability(
    s: int, truth: float, sd: float, mc_se: float, start: float, end: float, level: float = LEVEL, grid: int = 400
) -> float:
    """``decision_probabilities`` of one row."""
    return float(decision_probabilities(s, np.array([truth]), np.array([sd]), np.array([mc_se]), start, end, level,
                                        grid)[0])



def decision_probabilities(s: int, truth: np.ndarray, sd: np.ndarray, mc_se: np.ndarray, start: float, end: float,
                           level: float = LEVEL, grid: int = 400) -> np.ndarray:
    """Per row (R,), the probability that S seeds decide the claim the way ``truth`` points (inside [start, end]:
    holds; outside: fails, on truth's side), from ``verdict_probabilities``."""
    holds, below, above = verdict_probabilities(s, truth, sd, mc_se, start, end, level, grid)
    return np.where((start <= truth) & (truth <= end), holds, np.where(truth < start, below, above))


def verdict_probabilities(s: int, truth: np.ndarray, sd: np.ndarray, mc_se: np.ndarray, start: float, end: float,
                          level: float = LEVEL, grid: int = 400) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row (R,), the probabilities that S seeds give "holds", "fails" below the region and "fails" above it,
    when each seed's value has spread ``sd`` and the mean a Monte-Carlo error ``mc_se``: the mean is N(truth, sd²/S +
    mc_se²) and the seed spread's estimate sd·√(χ²_{S−1}/(S−1)) independent of it, averaged over ``grid`` quantiles
    of the χ²."""
    from scipy import special

    chi2 = special.chdtri(s - 1, (np.arange(grid) + 0.5) / grid) / (s - 1)  # (grid,) quantiles of χ²/(S − 1)
    seed_half = intervals.quantile(s, level) * sd[:, None] * np.sqrt(chi2 / s)  # (R, grid)
    half = np.hypot(seed_half, intervals.quantile(1, level) * mc_se[:, None])  # (R, grid)
    spread = np.sqrt(sd**2 / s + mc_se**2)[:, None]  # (R, 1)
    truth = truth[:, None]

    def cdf(x: np.ndarray) -> np.ndarray:  # P(mean ≤ x)
        return special.ndtr((x - truth) / spread)

    with np.errstate(invalid="ignore"):  # inf − inf where a truth is unbounded
        holds = np.clip(cdf(end - half) - cdf(start + half), 0, 1)  # start + half ≤ mean ≤ end − half
        below, above = cdf(start - half), 1 - cdf(end + half)
    return holds.mean(axis=1), below.mean(axis=1), above.mean(axis=1)



@dataclass(frozen=True)
class Claim:
    claim: str
    source: str  # paper and result: "Zhang, Wu, Bartlett 2024, Thm 4.1"
    measured: Estimate
    relation: str
    expected: Estimate
    basis: str  # what the interval is made of
    margin: float = 0.0
    margin_source: str = ""  # where the margin comes from (required for ≈ and any non-zero margin)
    notes: tuple[str, ...] = field(default_factory=tuple)  # e.g. a censored best count
    look: int = 1  # the look of the design whose seeds and prompts the estimates are made of (``LOOK_ALPHAS``)
    # a check that cannot come out otherwise by chance (a deterministic ODE, an order the closed forms decide by far
    # or that holds by construction): listed apart as a verification, not counted among the papers' claims
    verification: bool = False

    def __post_init__(self):
        if self.relation not in RELATIONS:
            raise ValueError(f"relation {self.relation!r}: allowed {', '.join(RELATIONS)}")
        if self.margin < 0 or not math.isfinite(self.margin):
            raise ValueError(f"{self.claim}: margin {self.margin!r} must be finite and ≥ 0")
        if (self.relation == "≈" or self.margin > 0) and not self.margin_source:
            raise ValueError(f"{self.claim}: a margin needs its source (margin_source)")
        if self.look not in (1, 2):
            raise ValueError(f"{self.claim}: look {self.look!r}; allowed 1 (the config's run) or 2 (the second look)")

    @property
    def level(self) -> float:
        """The two-sided level of this look's interval (``LOOK_LEVELS``)."""
        return LOOK_LEVELS[self.look - 1]

    @property
    def holm_p(self) -> float:
        """``decision_p`` on the scale of the family's error rate: decision_p × HOLM_ALPHA / the look's alpha, so that
        Holm at rate r decides a row of look j at its own rate r × α_j / HOLM_ALPHA (a row of both looks takes the
        smaller of the two: min(p₁·α/α₁, p₂·α/α₂))."""
        return min(1.0, self.decision_p * HOLM_ALPHA / LOOK_ALPHAS[self.look - 1])

    @cached_property
    def difference(self) -> Estimate:
        return difference(self.measured, self.expected)

    @cached_property
    def verdict(self) -> str:
        return self.verdict_at(self.level)

    def verdict_at(self, level: float) -> str:
        """The verdict of the two-sided ``level`` interval (one seed: inconclusive)."""
        d = self.difference
        if d.seeds == 1:
            return "inconclusive"
        return decide(self.relation, self.margin, *d.interval(level))

    @cached_property
    def decision_p(self) -> float:
        """The smallest one-sided error rate α at which the row is decided (its interval at level 1 − 2α inside or
        outside the region; intervals nest, so the verdict only waits for a wider α): by bisection on log α, to a
        relative 1e-9. 1 if it is not decided even at α = 1/2, or has one seed; 0 if decided at α = 1e-12."""
        decided = lambda alpha: self.verdict_at(1 - 2 * alpha) != "inconclusive"  # noqa: E731
        low, high = math.log(1e-12), math.log(0.5)
        if not decided(math.exp(high)):
            return 1.0
        if decided(math.exp(low)):
            return 0.0
        for _ in range(35):
            middle = (low + high) / 2
            low, high = (low, middle) if decided(math.exp(middle)) else (middle, high)
        return math.exp(high)

    @cached_property
    def look2_seeds_needed(self) -> str:
        """``seeds_needed`` at look 2's level: the table's column for an inconclusive row, and what look 2 plans."""
        return seeds_needed(self.difference, self.relation, self.margin, LOOK_LEVELS[1])

    def row(self, experiment: str) -> dict:
        d = self.difference
        low, high = d.interval(self.level)
        needed = self.look2_seeds_needed if self.verdict == "inconclusive" else ""
        notes = ("1 seed",) * (d.seeds == 1) + self.notes
        return {
            "experiment": experiment,
            "kind": KINDS[self.verification],
            "claim": self.claim,
            "source": self.source,
            "measured": self.measured.value,
            "relation": self.relation,
            "expected": self.expected.value,
            "difference": d.value,
            "low": low,
            "high": high,
            "margin": self.margin,
            "margin_source": self.margin_source or "—",
            "verdict": self.verdict,
            "holm_verdict": "—",
            "seeds": d.seeds,
            "seeds_needed": needed,
            "look": self.look,
            "basis": "; ".join((self.basis,) + notes),
        }

PAIRED_LIMIT = ("paired prompt by prompt (batch means) with the limit predictor on the same evaluation prompts; "
                "margin on the exact limit")


def reaches_limit(claim: str, source: str, measured: Estimate, limit: Estimate, basis: str,
                  on_prompts: Estimate | None = None, notes: tuple[str, ...] = ()) -> Claim:
    """"``measured`` reaches its limit" (≈ within REACHES of the exact ``limit``): against the limit predictor scored
    on the same prompts (``on_prompts``, with groups of the same named set: the prompts' error largely cancels)
    where the cube has it, else against the exact value; ``notes`` as ``Claim``'s."""
    if on_prompts is None:
        return Claim(claim, source, measured, "≈", limit, f"{basis} and evaluation prompts (normal); exact limit",
                     REACHES * limit.value, REACHES_SOURCE, notes=notes)
    return Claim(claim, source, measured, "≈", on_prompts, f"{basis}; {PAIRED_LIMIT}", REACHES * limit.value,
                 REACHES_SOURCE, notes=notes)



def claims_table(
    claims: Mapping[str, list[Claim]], smoke: bool = False, raised: Mapping[str, int] | None = None,
    first_look: Mapping[str, list[Claim]] | None = None,
) -> pd.DataFrame:
    """One row per claim of every experiment (name → its claims), in the given order, with the Holm-adjusted
    verdicts over the papers' claims (the verifications are not in that family); a smoke run's judges none.
    ``raised``: experiment → the seeds it had when its claims came out inconclusive and its seeds were raised:
    its rows on trained models say so. ``first_look``: ``claims`` are a second look's (``look`` 2), and the table
    is both looks' (``two_looks``)."""
    if first_look is None:
        named = [(name, claim) for name, rows in claims.items() for claim in rows]
        looks = [(claim,) for _, claim in named]
    else:
        named, looks = two_looks(first_look, claims)
    table = pd.DataFrame([claim.row(name) for name, claim in named], columns=list(COLUMNS))
    family = [i for i, (_, claim) in enumerate(named) if not claim.verification]
    table.loc[family, "holm_verdict"] = holm_verdicts([looks[i] for i in family])
    for name, before in (raised or {}).items():
        rows = (table["experiment"] == name) & (table["seeds"] > 0)
        table.loc[rows, "basis"] += "; " + RAISED.format(before=before)
    if smoke:
        table["verdict"], table["holm_verdict"], table["seeds_needed"] = SMOKE_VERDICT, SMOKE_VERDICT, ""
    return table



def two_looks(first: Mapping[str, list[Claim]], second: Mapping[str, list[Claim]]
              ) -> tuple[list[tuple[str, Claim]], list[tuple[Claim, ...]]]:
    """Both looks' rows, in look 1's order: a row decided at look 1 (or a verification, or one that look 2 did not
    measure, or one whose need at look 1 was not new seeds: ``look2_need``) keeps look 1's claim; an inconclusive one
    that look 2 planned seeds for takes look 2's (same experiment and claim), and its p for Holm is the smaller of the
    two looks' scaled ones. Returns (experiment, the row's claim) and each row's claims."""
    named, looks = [], []
    for name, rows in first.items():
        later_rows = same_claims(rows, second.get(name, []))
        for claim, later in zip(rows, later_rows):
            if (claim.verification or claim.verdict != "inconclusive" or later is None
                    or look2_need(claim.look2_seeds_needed)[0] != "seeds"):
                named.append((name, claim))
                looks.append((claim,))
            else:
                named.append((name, later))
                looks.append((claim, later))
    return named, looks



def same_claims(first: list[Claim], second: list[Claim]) -> list[Claim | None]:
    """For each of look 1's claims of an experiment, look 2's of the same claim (None where it has none). A claim's
    text may quote a measured value (the zero predictor's error on the evaluation prompts, which look 2 draws
    afresh), so the two looks' lists, made by the same code from the same config, pair in order where they have the
    same length and each pair the same source and relation; otherwise by identical text."""
    if len(first) == len(second) and all((a.source, a.relation) == (b.source, b.relation)
                                         for a, b in zip(first, second)):
        return list(second)
    by_text = {claim.claim: claim for claim in second}
    return [by_text.get(claim.claim) for claim in first]



def holm_verdicts(claims: list[Claim | tuple[Claim, ...]], alpha: float = HOLM_ALPHA) -> list[str]:
    """Holm's step-down over ``claims`` (each row a claim, or its looks' claims: its p the smallest of their
    ``holm_p``, its verdict that look's): in order of p, the k-th smallest (from 0) keeps its verdict at the error
    rate alpha / (m − k) (its look's share of it: × α_look / HOLM_ALPHA) while its p is within it; from the first
    that is not, every row is inconclusive. The chance that any row's verdict is false stays at ``alpha`` whatever
    the rows' dependence."""
    best = [min(row, key=lambda claim: claim.holm_p) if isinstance(row, tuple) else row for row in claims]
    m = len(best)
    verdicts = ["inconclusive"] * m
    for k, i in enumerate(sorted(range(m), key=lambda i: best[i].holm_p)):
        rate = alpha / (m - k)
        if best[i].holm_p > rate:
            break
        look_rate = rate * LOOK_ALPHAS[best[i].look - 1] / HOLM_ALPHA
        verdicts[i] = best[i].verdict_at(1 - 2 * look_rate)
    return verdicts

