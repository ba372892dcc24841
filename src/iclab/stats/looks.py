"""The two-look design of the claims table (``claims.LOOK_ALPHAS``), simulated row by row: its false-verdict rate over
both looks and its power, for the rule exactly as the table applies it.

A simulated row has a relation with its margin, a true difference ``truth``, a spread ``sd`` of one training seed's
value and the Monte-Carlo s.e. ``mc_se`` of the evaluation prompts, common to the seeds. Look 1 draws S₁ seeds and
decides at ``LOOK_LEVELS[0]`` (one seed: inconclusive, as in the table). Where it is inconclusive, look 2's seeds S₂
are chosen from look 1's estimate as the table's "seeds needed" are (``claims.seeds_needed`` at ``LOOK_LEVELS[1]``;
``ONE_SEED_LOOK2`` after a one-seed look, whose spread is unknown); a row whose estimate sits on the region's edge,
whose Monte-Carlo error alone is too large, or whose S₂ passes ``LOOK2_MAX_SEEDS`` gets no look 2 (it needs the paper
tier or more prompts) and is not judged at look 2 (``claims.two_looks``). Look 2 draws S₂ new seeds evaluated on
fresh prompts (``decide.LOOK2_EVALUATION_SEED``: their prompt error is independent of look 1's) and decides on them
alone at ``LOOK_LEVELS[1]``; ``pooled=True`` decides look 1's seeds and the new ones together instead, the design
Proschan and Hunsberger warn about when S₂ depends on look 1, and ``shared_prompts=True`` evaluates look 2 on look 1's
prompts, as it was before it drew its own (benchmarks/two_looks.py measures all three).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclab.stats import claims, intervals
from iclab.stats.claims import (
    LOOK2_MAX_SEEDS, LOOK_LEVELS, ONE_SEED_LOOK2, decisions, deciding_seeds, distance_to_decide, monte_carlo_reach,
    region
)


@dataclass(frozen=True)
class Looks:
    """Verdict counts of ``reps`` simulated rows: after look 1 and after both looks, and the look-2 seeds drawn."""

    reps: int
    first: dict[str, int]
    final: dict[str, int]
    second_looks: int  # rows that had a look 2
    mean_seeds: float  # mean S₂ over them

    def rate(self, verdict: str, final: bool = True) -> float:
        return (self.final if final else self.first)[verdict] / self.reps


def intervals_of(values: np.ndarray, mc_se: float, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and ``level`` interval of each row's seed values (R, S) with the prompts' s.e. ``mc_se``, as
    ``claims.Estimate.interval`` makes them (t on the seeds' part, normal on the prompts', in quadrature)."""
    mean = values.mean(axis=1)
    seed_se = np.sqrt(intervals.seed_variance(values))  # (R,)
    half = np.hypot(intervals.quantile(values.shape[1], level) * seed_se, intervals.quantile(1, level) * mc_se)
    return mean, mean - half, mean + half


def look2_seeds(mean: np.ndarray, seed_sd: np.ndarray, mc_se: float, relation: str, margin: float) -> np.ndarray:
    """S₂ of each row from its look-1 mean and one seed's spread, as ``claims.seeds_needed`` at ``LOOK_LEVELS[1]``;
    0 where seeds cannot decide it (on the edge, the Monte-Carlo error alone too large, or past
    ``LOOK2_MAX_SEEDS``)."""
    start, end, _, _ = region(relation, margin)
    distance = np.array([distance_to_decide(relation, margin, value) for value in mean])
    mc_part = monte_carlo_reach(relation, mc_se, LOOK_LEVELS[1])
    seeds = np.zeros(len(mean), dtype=int)
    open_rows = np.flatnonzero((distance > 0) & (mc_part < distance))
    if len(open_rows):
        needed = deciding_seeds(mean[open_rows], seed_sd[open_rows], np.full(len(open_rows), mc_se), start, end,
                                LOOK_LEVELS[1], LOOK2_MAX_SEEDS)
        seeds[open_rows] = np.where(needed <= LOOK2_MAX_SEEDS, needed, 0)
    return seeds


def simulate(relation: str, margin: float, truth: float, sd: float, mc_se: float, s1: int, reps: int,
             rng: np.random.Generator, pooled: bool = False, shared_prompts: bool = False,
             experiment_seeds: int = 0) -> Looks:
    """``reps`` rows through both looks (module docstring). ``experiment_seeds``: the S₂ that the row's experiment
    trains for its other rows (``decide``: an experiment's S₂ is the most its rows need), so that a row planned for
    look 2 draws the larger of its own S₂ and it; a row planned for none is still not judged at look 2.
    ``shared_prompts``: look 2 on look 1's prompts (the design before look 2 drew its own)."""
    prompts = rng.normal(0.0, mc_se, size=(reps, 1))  # look 1's evaluation prompts' error, shared by its seeds
    first_values = truth + rng.normal(0.0, sd, size=(reps, s1)) + prompts  # (R, S₁)
    mean, low, high = intervals_of(first_values, mc_se, LOOK_LEVELS[0])
    first = decisions(relation, margin, low, high) if s1 > 1 else np.full(reps, "inconclusive")
    seed_sd = np.sqrt(intervals.seed_variance(first_values) * s1)  # one seed's spread, as seeds_needed reads it
    undecided = np.flatnonzero(first == "inconclusive")
    s2 = np.full(len(undecided), ONE_SEED_LOOK2) if s1 == 1 else look2_seeds(
        mean[undecided], seed_sd[undecided], mc_se, relation, margin)
    s2 = np.where(s2 > 0, np.maximum(s2, experiment_seeds), 0)
    final = first.copy()
    for seeds in np.unique(s2[s2 > 0]):
        rows = undecided[s2 == seeds]
        look2_prompts = prompts[rows] if shared_prompts else rng.normal(0.0, mc_se, size=(len(rows), 1))
        new = truth + rng.normal(0.0, sd, size=(len(rows), seeds)) + look2_prompts  # (r, S₂)
        values = np.concatenate([first_values[rows], new], axis=1) if pooled else new
        _, low2, high2 = intervals_of(values, mc_se, LOOK_LEVELS[1])
        final[rows] = decisions(relation, margin, low2, high2)
    drawn = s2[s2 > 0]
    return Looks(reps, counts(first), counts(final), len(drawn), float(drawn.mean()) if len(drawn) else 0.0)


def counts(verdict_of_each: np.ndarray) -> dict[str, int]:
    return {verdict: int(np.sum(verdict_of_each == verdict)) for verdict in ("holds", "fails", "inconclusive")}


FINE_GRID = 10_000  # χ² quantiles where a look's verdicts are in closed form: 0.5% comes out 0.49998% (400: 0.497%)


def verdict_probabilities(s: int, truth: float, sd: float, mc_se: float, start: float, end: float, level: float,
                          grid: int = FINE_GRID) -> tuple[float, float]:
    """P("holds") and P("fails", on either side of the region) of one look on ``s`` new seeds at ``level``
    (``claims.verdict_probabilities`` of one row, on ``grid`` quantiles of the χ²)."""
    holds, below, above = claims.verdict_probabilities(s, np.array([truth]), np.array([sd]), np.array([mc_se]), start,
                                                       end, level, grid)
    return float(holds[0]), float(below[0] + above[0])


def false_verdict_rates(relation: str, margin: float, truth: float, sd: float, mc_se: float, s1: int,
                        experiment_seeds: int = 0, chi_points: int = 64, mean_points: int = 400) -> dict[str, float]:
    """The rates of "holds" and "fails" over both looks of the design (look 2 on new seeds and fresh prompts), by
    quadrature where ``simulate`` draws rows: look 1's verdicts in closed form (``verdict_probabilities``: its mean
    is normal), then for each of ``chi_points`` quantiles of look 1's spread estimate and ``mean_points`` means in
    each band where look 1 is inconclusive, look 2's S₂ (``look2_seeds``, at least ``experiment_seeds``) and its
    verdicts. At the truth on the region's edge the larger is the design's false-verdict rate."""
    from scipy import special

    start, end, _, _ = region(relation, margin)
    low_level, high_level = LOOK_LEVELS
    look2 = {}  # S₂ → (P(holds), P(fails)) at look 2

    def second(s2: int) -> tuple[float, float]:
        if s2 not in look2:
            look2[s2] = verdict_probabilities(s2, truth, sd, mc_se, start, end, high_level)
        return look2[s2]

    if s1 == 1:  # no spread to decide on: every row goes to look 2 with ONE_SEED_LOOK2 seeds
        holds, fails = second(max(ONE_SEED_LOOK2, experiment_seeds))
        return {"holds": holds, "fails": fails}
    spread = np.sqrt(sd**2 / s1 + mc_se**2)
    first = np.array(verdict_probabilities(s1, truth, sd, mc_se, start, end, low_level))  # look 1 decides these
    chi2 = special.chdtri(s1 - 1, (np.arange(chi_points) + 0.5) / chi_points) / (s1 - 1)  # (C,)
    total = np.zeros(2)
    for seed_sd in sd * np.sqrt(chi2):  # one seed's spread as look 1 estimates it: the rest go to look 2
        half = np.hypot(intervals.quantile(s1, low_level) * seed_sd / np.sqrt(s1),
                        intervals.quantile(1, low_level) * mc_se)
        for low, high in inconclusive_bands(start, end, half):
            edges = np.linspace(low, high, mean_points + 1)
            means = (edges[:-1] + edges[1:]) / 2  # (M,) midpoints, each weighted by its band's probability
            weights = np.diff(special.ndtr((edges - truth) / spread))
            s2 = look2_seeds(means, np.full(mean_points, seed_sd), mc_se, relation, margin)
            s2 = np.where(s2 > 0, np.maximum(s2, experiment_seeds), 0)
            for seeds in np.unique(s2[s2 > 0]):
                total += weights[s2 == seeds].sum() * np.array(second(int(seeds)))
    holds, fails = first + total / chi_points
    return {"holds": float(holds), "fails": float(fails)}


def inconclusive_bands(start: float, end: float, half: float) -> list[tuple[float, float]]:
    """The means a look with interval half-width ``half`` leaves inconclusive: within ``half`` of a finite edge of
    [start, end] (one band where the region is narrower than the interval)."""
    if end - start < 2 * half:
        return [(start - half, end + half)]
    return [(edge - half, edge + half) for edge in (start, end) if np.isfinite(edge)]
