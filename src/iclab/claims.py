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

The interval of a difference follows the design (``Estimate``): values per training seed are differenced seed
by seed (both sides trained on the same seeds' data: paired), the Student-t quantile multiplies the seed
component only, and the Monte-Carlo error of the evaluation prompts (known, not estimated) gets the normal
quantile. Two estimates on the same evaluation prompts have correlated errors: where the cube stores their
means over groups of prompts (``risk_groups``, batch means), the difference is paired prompt by prompt and its
Monte-Carlo s.e. is that of the groups' differences (Student-t over the groups); where it does not, it is
bounded by the sum of theirs (Cauchy–Schwarz). On different prompt sets it is the two in quadrature.
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
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from iclab import intervals
from iclab.atomic import write_text

LEVEL = intervals.LEVEL  # the level of the bands drawn in the figures
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
BOOTSTRAP_RESAMPLES = 1000  # of similarities and best counts (prompt groups and seeds)
# iclab's margins where a paper says "reaches", "near" or "does not depend on" without a number (stated, never
# taken from the measured value):
REACHES = 0.05  # "reaches a limit" at finite size: within 5% of the limit (the ±5% band figure ltb_gap draws)
REACHES_SOURCE = "iclab: within 5% of the limit, relative to it (a finite run's reach; ltb_gap's figure draws the band)"
NULL_FRACTION = 0.05  # "near least squares", "does not depend on": within 5% of the zero predictor's risk
NULL_SOURCE = "iclab: 5% of the zero predictor's risk (the scale from exact to no learning)"
RELATIONS = ("≈", "<", ">", "≤", "≥")
VERDICTS = ("holds", "fails", "inconclusive")
SMOKE_VERDICT = "not judged (smoke run)"  # every row of a smoke run's table (iclab.smoke): its models are untrained
KINDS = ("claim", "verification")  # a paper's claim, measured; a deterministic check of the theory's computation
COLUMNS = (
    "experiment", "kind", "claim", "source", "measured", "relation", "expected", "difference", "low", "high", "margin",
    "margin_source", "verdict", "holm_verdict", "seeds", "seeds_needed", "look", "basis",
)
# Holm's step-down over the family of the papers' claims: each row's verdict at a one-sided error rate of
# HOLM_ALPHA / (rows left), so that the chance of any false verdict in the family stays at HOLM_ALPHA
HOLM_ALPHA = sum(LOOK_ALPHAS)
# a row whose experiment's seeds were raised after an inconclusive verdict: its verdict was looked at twice
# The prompt set of an estimate whose set is not named: its Monte-Carlo error is bounded as if it shared its prompts
# with any other such estimate (the conservative sum), and its prompt groups never pair with another's.
UNNAMED_PROMPTS = "eval"
RAISED = "seeds raised from {before} after an inconclusive verdict (looked at twice: a 2.5% error becomes ~4.5%)"


@dataclass(frozen=True)
class Estimate:
    """A value per training seed (``per_seed``; one value for what does not depend on training), with the
    Monte-Carlo s.e. ``mc_se`` of the prompts or integral it was averaged over (common to the seeds). ``prompts``
    names that prompt set: two estimates on the same set have correlated Monte-Carlo errors, which their
    ``groups`` (``intervals.group_means``) let a difference pair prompt by prompt, where the set is named (not
    ``UNNAMED_PROMPTS``)."""

    per_seed: tuple[float, ...]
    mc_se: float = 0.0
    trained: bool = False  # per_seed holds one value per training seed
    prompts: str | None = None
    groups: tuple[float, ...] | None = None  # means over groups of ``prompts`` (averaged over seeds): batch means
    # per seed, the statistic on each bootstrap draw of the prompt groups (S, R): the same draws at every seed and
    # for every estimate (``bootstrapped``)
    replicates: tuple[tuple[float, ...], ...] | None = None

    def __post_init__(self):
        if not self.per_seed or (len(self.per_seed) > 1 and not self.trained):
            raise ValueError("an Estimate has one value, or one per training seed (trained=True)")

    @property
    def value(self) -> float:
        return float(np.mean(self.per_seed))

    @property
    def seeds(self) -> int:
        """Training seeds behind the value (0: it does not depend on training)."""
        return len(self.per_seed) if self.trained else 0

    @property
    def seed_se(self) -> float:
        """s.e. of the mean over seeds from their spread (0 for one seed or none)."""
        return float(np.sqrt(intervals.seed_variance(np.asarray(self.per_seed)))) if self.seeds > 1 else 0.0

    def seed_part(self, level: float = LEVEL) -> float:
        """The seeds' share of the half-width: the t quantile on S − 1 degrees of freedom × ``seed_se``."""
        return intervals.quantile(self.seeds, level) * self.seed_se if self.seeds > 1 else 0.0

    def half_width(self, level: float = LEVEL) -> float:
        """Half-width of the two-sided ``level`` interval: t quantile on the seed component, normal on the
        Monte-Carlo one, added in quadrature (for a bootstrapped value: half the interval's width)."""
        if self.replicates is not None:
            low, high = self.interval(level)
            return (high - low) / 2
        return math.hypot(self.seed_part(level), intervals.quantile(1, level) * self.mc_se)

    def interval(self, level: float = LEVEL) -> tuple[float, float]:
        """The two-sided ``level`` interval: the value ± ``half_width``. A bootstrapped value's: the percentile
        interval of the seed mean over the draws of prompt groups (the prompts' error, common to the seeds) and the
        seeds' t part, each side added in quadrature."""
        if self.replicates is not None:
            tail = (1 - level) / 2
            low, high = np.quantile(np.mean(self.replicates, axis=0), [tail, 1 - tail])  # over the R draws
            below, above = max(self.value - low, 0.0), max(high - self.value, 0.0)
            seeds = self.seed_part(level)
            return self.value - math.hypot(seeds, below), self.value + math.hypot(seeds, above)
        half = self.half_width(level)
        return self.value - half, self.value + half

    @property
    def prompt_se(self) -> float:
        """s.e. of the value from the prompts alone: ``mc_se``, or the bootstrap replicates' spread."""
        if self.replicates is None:
            return self.mc_se
        return float(np.std(np.mean(self.replicates, axis=0), ddof=1))


def exact(value: float) -> Estimate:
    """A value without error (a closed form, an exact limit, a deterministic computation)."""
    return Estimate((float(value),))


def with_sem(value, sem, prompts: str | None = None) -> Estimate:
    """A Monte-Carlo estimate with standard error ``sem`` that does not depend on training (a baseline on the
    evaluation prompts, a theory's integral over designs)."""
    return Estimate((float(value),), float(sem), prompts=prompts)


def over_seeds(
    values: xr.DataArray,
    sems: xr.DataArray | None = None,
    prompts: str | None = UNNAMED_PROMPTS,
    groups: xr.DataArray | None = None,
    seed_dim: str = "seed",
    trained: bool | None = None,
) -> Estimate:
    """A quantity per training seed (``values`` along ``seed_dim``) and the evaluation set's s.e. (``sems``, the mean
    over seeds: the evaluation set is common to the seeds, ``iclab.intervals``). ``trained``: whether it depends on
    training; by default the learner's kind in the cube (``learner_kind``: a baseline's values repeat along the
    seeds, one value), else True. A trained quantity equal at every seed is refused (a cube that repeats one model,
    or a baseline passed as trained): say ``trained=False`` if it does not depend on training. ``prompts`` names the
    evaluation set; the default treats every estimate as on one shared set (the conservative bound for a
    difference). ``groups``: the same quantity's means over groups of those prompts (``prompt_group``, and
    ``seed_dim`` where it has one), for differences paired prompt by prompt; they need the set named (``prompts``:
    the experiment and the sweep point, say), so that only estimates on the very same prompts pair."""
    if groups is not None and prompts in (None, UNNAMED_PROMPTS):
        raise ValueError("over_seeds: groups of prompts pair only on a named prompt set; pass prompts= naming the "
                         "evaluation set (the experiment and its sweep point)")
    if trained is None:
        kind = values.coords.get("learner_kind")
        trained = kind is None or kind.ndim > 0 or str(kind.values) != "baseline"
    if seed_dim not in values.dims:
        values, sems = values.expand_dims(seed_dim), None if sems is None else sems.expand_dims(seed_dim)
    per_seed = tuple(float(v) for v in np.ravel(values.transpose(seed_dim, ...).values))
    if len(per_seed) != values.sizes[seed_dim]:
        raise ValueError(f"over_seeds wants one value per {seed_dim}, got dims {values.dims}")
    mc_se = 0.0 if sems is None else float(np.mean(sems.values))
    prompts = prompts if sems is not None else None
    if groups is not None:
        groups = groups.mean(seed_dim) if seed_dim in groups.dims else groups
        groups = tuple(float(g) for g in groups.transpose("prompt_group").values)
    if not trained:
        return Estimate(per_seed[:1], mc_se, prompts=prompts, groups=groups)
    if len(per_seed) > 1 and len(set(per_seed)) == 1:
        raise ValueError(f"a trained quantity equal at all {len(per_seed)} seeds ({per_seed[0]:g}): one model "
                         "repeated, or a baseline (trained=False)")
    return Estimate(per_seed, mc_se, trained=True, prompts=prompts, groups=groups)


def _paired(a: Estimate, b: Estimate, combine) -> tuple[tuple[float, ...], bool]:
    """Per-seed values of combine(a, b): seed by seed when both are trained, else broadcast."""
    if a.trained and b.trained and len(a.per_seed) != len(b.per_seed):
        raise ValueError(f"cannot pair {len(a.per_seed)} seeds with {len(b.per_seed)}")
    n = max(len(a.per_seed), len(b.per_seed))
    pick = lambda e, i: e.per_seed[i if e.trained else 0]  # noqa: E731
    return tuple(combine(pick(a, i), pick(b, i)) for i in range(n)), a.trained or b.trained


def same_prompts(a: Estimate, b: Estimate) -> bool:
    return a.prompts is not None and a.prompts == b.prompts


def pairable(a: Estimate, b: Estimate) -> bool:
    """Whether a − b may be paired prompt by prompt: both have groups of one named prompt set."""
    named = same_prompts(a, b) and a.prompts != UNNAMED_PROMPTS
    return named and a.groups is not None and b.groups is not None and len(a.groups) == len(b.groups)


def mc_difference_se(a: Estimate, b: Estimate) -> float:
    """Monte-Carlo s.e. of a − b: bounded by the sum on the same prompts, in quadrature on independent ones."""
    return a.mc_se + b.mc_se if same_prompts(a, b) else math.hypot(a.mc_se, b.mc_se)


def batch_means_se(groups: np.ndarray) -> float:
    """s.e. of the mean of G group means, with the Student-t quantile of G − 1 degrees of freedom folded in (the
    interval multiplies it by the normal quantile)."""
    g = len(groups)
    return float(np.std(groups, ddof=1) / np.sqrt(g) * intervals.quantile(g) / intervals.quantile(1))


def replicates_of(e: Estimate) -> np.ndarray:
    """Bootstrap replicates of ``e`` per seed, (S, R) (an exact value: itself in every replicate, (1, R))."""
    return np.full((1, BOOTSTRAP_RESAMPLES), e.value) if e.replicates is None else np.array(e.replicates)


def difference(a: Estimate, b: Estimate) -> Estimate:
    """a − b, paired seed by seed, and prompt by prompt (batch means) where both have groups of the same prompts;
    a difference with an exact value keeps the other side's groups. Bootstrapped values are differenced seed by
    seed and replicate by replicate (the same draws of prompt groups)."""
    per_seed, trained = _paired(a, b, lambda x, y: x - y)
    if a.replicates is not None or b.replicates is not None:
        if any(e.replicates is None and (e.mc_se or e.seeds) for e in (a, b)):
            raise ValueError("a bootstrapped value is compared with bootstrapped or exact values only")
        replicates = replicates_of(a) - replicates_of(b)  # (S, R), an exact side broadcast over the seeds
        return Estimate(per_seed, 0.0, trained, replicates=tuple(map(tuple, replicates)))
    if pairable(a, b):
        groups = np.subtract(a.groups, b.groups)
        return Estimate(per_seed, batch_means_se(groups), trained, a.prompts, tuple(groups))
    for side, other, sign in ((a, b, 1.0), (b, a, -1.0)):
        if other.mc_se == 0 and other.groups is None:  # exact: the difference is this side's prompts shifted
            groups = None if side.groups is None else tuple(sign * (np.array(side.groups) - other.value))
            return Estimate(per_seed, side.mc_se, trained, side.prompts, groups)
    return Estimate(per_seed, mc_difference_se(a, b), trained)


def bootstrapped(groups: xr.DataArray, statistic, seed_dim: str = "seed") -> Estimate:
    """A statistic of similarities per group of prompts (``groups``: ``seed_dim``, then the statistic's axes,
    ``prompt_group`` last), per seed, and its bootstrap replicates per seed: the groups resampled with replacement
    (the same draws at every seed: the prompts are common to the seeds), the statistic per seed on each draw. The
    seeds are not resampled: with 3 seeds, all three draws are the lowest with probability 1/27 and the percentile
    interval shrinks to about their range; the seeds' spread enters the interval as a t on S − 1 degrees of
    freedom instead (``Estimate.interval``). Every call with the same number of groups draws the same resamples, so
    two estimates are compared replicate by replicate (paired). ``statistic`` maps (..., J) → (...), e.g. the best
    count over a grid of J counts."""
    data = groups.transpose(seed_dim, ..., "prompt_group").values  # (S, ..., G)
    g = data.shape[-1]
    group_draws = np.random.default_rng(0).integers(0, g, size=(BOOTSTRAP_RESAMPLES, g))  # (R, G)
    per_seed = statistic(np.nanmean(data, axis=-1))  # (S,)
    resampled = np.nanmean(data[..., group_draws], axis=-1)  # (S, ..., R)
    per_draw = statistic(np.moveaxis(resampled, -1, 1))  # (S, R): each seed's statistic on each draw of groups
    return Estimate(tuple(float(v) for v in per_seed), 0.0, True, replicates=tuple(map(tuple, per_draw.tolist())))


def ratio(a: Estimate, b: Estimate) -> Estimate:
    """a / b, paired seed by seed; the Monte-Carlo s.e. by the delta method."""
    per_seed, trained = _paired(a, b, lambda x, y: x / y)
    value = a.value / b.value
    relative = mc_difference_se(
        Estimate((1.0,), a.mc_se / abs(a.value), prompts=a.prompts),
        Estimate((1.0,), b.mc_se / abs(b.value), prompts=b.prompts),
    )
    return Estimate(per_seed, abs(value) * relative, trained)


def log(a: Estimate) -> Estimate:
    """The natural log, seed by seed (a geometric mean over seeds); Monte-Carlo s.e. by the delta method."""
    return Estimate(tuple(math.log(v) for v in a.per_seed), a.mc_se / a.value, a.trained, a.prompts)


def groups_at(ds: xr.Dataset, name: str = "risk_groups", **point) -> xr.DataArray | None:
    """``ds[name]`` at ``point`` (by label), or None where the cube predates prompt groups."""
    if name not in ds:
        return None
    return ds[name].sel(point)


def zero_predictor_risk(risk: xr.DataArray) -> float:
    """E y_q², the zero predictor's risk, read as least squares' (or any learner's that predicts 0 without
    examples) Monte-Carlo risk at position 0, where no example is seen."""
    return float(risk.isel(position=0).mean())


def has(cube: xr.Dataset, **coords) -> bool:
    """Whether the cube has every given coordinate value (a claim about a learner, a case or a sweep value that
    this config did not run is left out)."""
    return all(dim in cube.coords and value in cube[dim].values for dim, value in coords.items())


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
    mc_part = monte_carlo_reach(relation, difference.prompt_se, level)
    if mc_part >= distance:  # seeds cannot shrink the Monte-Carlo part: it needs more prompts
        return f"none: the Monte-Carlo error alone is too large (~{math.ceil((mc_part / distance) ** 2)}× the prompts)"
    if difference.seeds == 0:
        return "—"
    sd = difference.seed_se * math.sqrt(difference.seeds)  # spread of one seed's value
    start, end, _, _ = region(relation, margin)
    (s,) = deciding_seeds(np.array([difference.value]), np.array([sd]), np.array([difference.prompt_se]), start, end,
                          level, MAX_SEEDS)
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
    holds; outside: fails), when each seed's value has spread ``sd`` and the mean a Monte-Carlo error ``mc_se``: the
    mean is N(truth, sd²/S + mc_se²) and the seed spread's estimate sd·√(χ²_{S−1}/(S−1)) independent of it, averaged
    over ``grid`` quantiles of the χ²."""
    from scipy import special

    chi2 = special.chdtri(s - 1, (np.arange(grid) + 0.5) / grid) / (s - 1)  # (grid,) quantiles of χ²/(S − 1)
    seed_half = intervals.quantile(s, level) * sd[:, None] * np.sqrt(chi2 / s)  # (R, grid)
    half = np.hypot(seed_half, intervals.quantile(1, level) * mc_se[:, None])  # (R, grid)
    spread = np.sqrt(sd**2 / s + mc_se**2)[:, None]  # (R, 1)
    truth = truth[:, None]

    def cdf(x: np.ndarray) -> np.ndarray:  # P(mean ≤ x)
        return special.ndtr((x - truth) / spread)

    with np.errstate(invalid="ignore"):  # inf − inf where a region is unbounded: those rows take the other branch
        holds = np.clip(cdf(end - half) - cdf(start + half), 0, 1)  # start + half ≤ mean ≤ end − half
        fails = np.where(truth < start, cdf(start - half), 1 - cdf(end + half))  # beyond the region on truth's side
    probability = np.where((start <= truth) & (truth <= end), holds, fails)
    return probability.mean(axis=1)


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
                  on_prompts: Estimate | None = None) -> Claim:
    """"``measured`` reaches its limit" (≈ within REACHES of the exact ``limit``): against the limit predictor scored
    on the same prompts (``on_prompts``, with groups of the same named set: the prompts' error largely cancels)
    where the cube has it, else against the exact value."""
    if on_prompts is None:
        return Claim(claim, source, measured, "≈", limit, f"{basis} and evaluation prompts (normal); exact limit",
                     REACHES * limit.value, REACHES_SOURCE)
    return Claim(claim, source, measured, "≈", on_prompts, f"{basis}; {PAIRED_LIMIT}", REACHES * limit.value,
                 REACHES_SOURCE)


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


INTERVAL_COLUMN = f"difference [{LOOK_LEVELS[0]:.0%} interval; {LOOK_LEVELS[1]:.0%} at look 2]"


def summary(table: pd.DataFrame) -> str:
    """'N claims: a hold, b fail, c inconclusive (96% intervals)' and the verifications' count, or a smoke run's
    warning."""
    if (table["verdict"] == SMOKE_VERDICT).any():
        return (
            f"SMOKE RUN: {len(table)} claims, none judged. The models trained a few steps on one seed (iclab.smoke): "
            "the values below only show that every claim computes at these shapes."
        )
    claims, checks = (table[table["kind"] == kind] for kind in KINDS)
    counts, holm = ({v: int((claims[column] == v).sum()) for v in VERDICTS} for column in ("verdict", "holm_verdict"))
    text = (
        f"{len(claims)} claims: {counts['holds']} hold, {counts['fails']} fail, {counts['inconclusive']} "
        f"inconclusive ({LOOK_LEVELS[0]:.0%} intervals of measured − expected); Holm-adjusted over the {len(claims)} "
        f"({HOLM_ALPHA:.1%} family-wise a side): {holm['holds']} hold, {holm['fails']} fail, "
        f"{holm['inconclusive']} inconclusive."
    )
    if len(checks):
        passed = int((checks["verdict"] == "holds").sum())
        text += f" {len(checks)} verifications of the theory's computation (not counted): {passed} pass."
    return text


NUMBERS = ("measured", "expected", "difference", "low", "high", "margin")


def shown(table: pd.DataFrame) -> pd.DataFrame:
    out = table.copy()
    for column in NUMBERS:
        out[column] = [f"{v:.4g}" for v in out[column]]
    return out


VERIFICATIONS = "Verifications (deterministic checks of the theory's computation; not counted among the claims):"


PLURAL = {"holds": "hold", "fails": "fail"}  # "3 hold", as the summary counts
FULL_COLUMNS = ("Every column (the interval's basis, the margin's source, full precision) is in claims.csv and "
                "claims.html beside this page.")


def markdown(table: pd.DataFrame) -> str:
    """The table for people: the count of each verdict, then per experiment its counts and one line a claim (the
    claim and its source; measured against expected, with the margin; the difference's interval; the verdict and
    Holm's; the seeds, and how many would decide it), then the verifications. Numbers to 4 significant digits."""
    claims, checks = (table[table["kind"] == kind] for kind in KINDS)
    parts = [summary(table), FULL_COLUMNS]
    for experiment, rows in claims.groupby("experiment", sort=False):
        counts = ", ".join(f"{n} {PLURAL.get(verdict, verdict)}" for verdict in (*VERDICTS, SMOKE_VERDICT)
                           if (n := int((rows["verdict"] == verdict).sum())))
        title = f"## {experiment}: {len(rows)} claim{'s' * (len(rows) > 1)}, {counts}"
        parts += [title, readable(rows).to_markdown(index=False)]
    if len(checks):
        parts += [f"## {VERIFICATIONS}", readable(checks).to_markdown(index=False)]
    return "\n\n".join(parts) + "\n"


NO_SEEDS = "closed form or Monte Carlo only"  # a row's seeds where no trained model is behind it (seeds 0)


def number(value: float) -> str:
    """A value as the human tables print it: four significant digits."""
    return f"{value:.4g}"


def readable(rows: pd.DataFrame) -> pd.DataFrame:
    """One plain line a row: five columns instead of the CSV's seventeen."""
    def compared(row) -> str:
        room = f" (margin {number(row.margin)})" if row.margin > 0 else ""
        return f"{number(row.measured)} {row.relation} {number(row.expected)}{room}"

    def verdict(row) -> str:
        holm = row.holm_verdict
        return row.verdict + (f" (Holm: {holm})" if holm not in ("—", row.verdict) else "")

    def seeds(row) -> str:
        trained = NO_SEEDS if row.seeds == 0 else str(row.seeds)
        return trained + (f"; to decide: {row.seeds_needed}" if row.seeds_needed else "")

    return pd.DataFrame({
        "claim (source)": [f"{row.claim} ({row.source})" for row in rows.itertuples()],
        "measured vs expected": [compared(row) for row in rows.itertuples()],
        INTERVAL_COLUMN: [f"{number(row.difference)} [{number(row.low)}, {number(row.high)}]"
                          for row in rows.itertuples()],
        "verdict": [verdict(row) for row in rows.itertuples()],
        "seeds": [seeds(row) for row in rows.itertuples()],
    })


COLOURS = {
    "fails": "background: #fde2e2",
    "inconclusive": "background: #fff4d6",
    "holds": "",
    SMOKE_VERDICT: "background: #e8e8e8",
}


def html(table: pd.DataFrame) -> str:
    """The table as a standalone HTML page (what the Snakemake report shows): failing rows red, inconclusive
    ones yellow."""
    claims, checks = (
        shown(table[table["kind"] == kind]).style.hide(axis="index").apply(
            lambda row: [COLOURS[row["verdict"]]] * len(row), axis=1
        ).to_html()
        for kind in KINDS
    )
    verifications = f"<p>{VERIFICATIONS}</p>{checks}" if (table["kind"] == "verification").any() else ""
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>iclab claims</title><style>"
        "body{font-family:sans-serif;font-size:13px}td,th{padding:3px 6px;border-bottom:1px solid #ddd}</style>"
        f"</head><body><p>{summary(table)}</p>{claims}{verifications}</body></html>\n"
    )


def write_claims(table: pd.DataFrame, stem: Path) -> None:
    """``stem``.csv (full precision), ``stem``.md and ``stem``.html, each written atomically."""
    write_text(stem.with_suffix(".csv"), table.to_csv(index=False, float_format="%.10g"))
    write_text(stem.with_suffix(".md"), markdown(table))
    write_text(stem.with_suffix(".html"), html(table))
