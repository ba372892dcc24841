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

from iclab.stats import intervals
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
