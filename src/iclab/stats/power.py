"""The design of a tier that must decide named effects: for each, the evaluation prompts and training seeds that decide
its claim with ``claims.POWER`` (80%) at look 1's level if the paper's effect size holds.

An effect is a row of an experiment's claims table (``EFFECTS``: the experiment and the start of the claim's text) and
the truth that the paper reports for it, as the claim's difference (measured − expected) at the paper's scale. Where
the paper gives no size, the truth is the claim's own estimate at CPU size (``Effect.truth`` None; the design then
asks what it takes to confirm what the CPU run saw). The spread of one training seed's value and the prompts' s.e.
are those measured at CPU size (``Spread``, read from a run's cubes by ``benchmarks/gpu_node_power.py``): an
assumption at the paper's shapes, where neither was measured.

``least_favourable``: the truth and spreads to design for when the paper's size may not carry over with the spreads
measured at CPU size (issue 80): an ordering claim at the effect-to-spread ratio measured at CPU size (the paper's
effect with the seed spread and prompt s.e. scaled by |paper's effect| / |CPU estimate|, the CPU's sign kept); an
equivalence at the CPU estimate wherever it lies nearer the region's edge than the paper's value. No paper here
states the spread of its effect, so every ordering row takes the CPU ratio.

``upper_spread``: the seed spread at its 80% upper confidence bound (issue 101). The spreads measured at CPU size come
from two or three seeds, one or two degrees of freedom, so the estimate may be far below the truth; a tier designed at
the bound (2.12× the estimate at two degrees of freedom, 3.95× at one) keeps its power unless the spread is larger
still. ``edge_verdicts``: at the region's edge no design decides; there "holds" and "fails" are each about the
look's error rate.

``design``: the prompts first, as the smallest power-of-two multiple of the measured run's whose Monte-Carlo part of
the interval (``claims.monte_carlo_reach``: its quantile widened by the power's) takes at most half the distance from
the truth to the region's edge; then the seeds, the fewest that decide with ``POWER`` given that s.e.
(``claims.deciding_seeds``), and the power they reach (``claims.decision_probability``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import numpy as np

from iclab.stats.claims import (
    LOOK_LEVELS, decision_probability, deciding_seeds, distance_to_decide, monte_carlo_reach, region,
    verdict_probabilities
)

LEVEL = LOOK_LEVELS[0]  # a tier's own run decides at look 1's level
MAX_SEEDS = 20  # beyond this an effect does not fit one GPU node (each GPT-2 seed is GPU-hours)
MAX_PROMPT_FACTOR = 1024  # beyond this the evaluation set outgrows one node's memory
MC_SHARE = 0.5  # the Monte-Carlo part may take at most this share of the distance to the region's edge
SPREAD_CONFIDENCE = 0.8  # a tier is designed at its seed spread's upper confidence bound at this level (issue 101)


@dataclass(frozen=True)
class Effect:
    """A headline effect: the claim that states it and the truth the paper reports (None: not reported)."""

    name: str
    experiment: str
    claim: str  # the start of the claim's text in the experiment's claims table
    truth: float | None
    truth_source: str


EFFECTS = (
    Effect("MLP gap", "ltb_table1", "GPT-2 with its MLP beats GPT-2 without it", 0.013 - 8.871,
           "Zhang, Wu, Bartlett 2024, Table 1: 0.013 with the MLP, 8.871 without, at β* ≠ 0"),
    Effect("near least squares at M = N", "zfb_figure1", "GPT-2 trained and tested on the fixed covariance is near",
           0.0, "Zhang, Frei, Bartlett 2024, Figure 1: GPT-2 follows least squares up to M = N (difference 0)"),
    Effect("random covariances help", "zfb_figure1", "training on random covariances helps on them", None,
           "Zhang, Frei, Bartlett 2024, Figure 1: no size stated"),
    Effect("GPT-2's risk independent of d", "single_index", "the pretrained GPT-2's risk does not depend on d", 0.0,
           "Oko, Song, Suzuki, Wu 2024 / Suzuki's talk: no dependence on d (difference 0)"),
    Effect("Newton count grows at κ = 100", "probe_illconditioned",
           "at κ = 100 the best-matching Newton iteration count still grows", 20.0,
           "Fu, Chen, Jia, Sharan 2024, §5: ~21 iterations at the top layer, ~1 at layer 1"),
    Effect("same Newton count at κ = 100 and κ = 1", "probe_illconditioned",
           "the last layer (layer", 0.0, "Fu, Chen, Jia, Sharan 2024, §5: ~21 at both (difference 0)"),
    Effect("narrow GPT-2 misses least squares", "probe_hidden_size", "the narrowest 1-head GPT-2", None,
           "Fu, Chen, Jia, Sharan 2024, §5: hidden 8 does not reach least squares (no size stated)"),
    Effect("wide GPT-2 reaches least squares", "probe_hidden_size", "the widest", 0.0,
           "Fu, Chen, Jia, Sharan 2024, §5: hidden 32 and 64 reach least squares (difference 0)"),
    Effect("LSTM closer to GD than Newton", "probe_similarity", "the LSTM's output is more similar to online GD", 0.034,
           "Fu, Chen, Jia, Sharan 2024, Table 1: LSTM 0.954 against online GD, 0.920 against Newton"),
)


# The experiments gpu_node runs at the papers' shapes (issue 101): the narrower set whose tier design packs into a
# day's 20 hours at the conservative end (docs/gpu_node.md#why-these-effects). The other effects are designed here,
# but their experiments run there at the default's CPU size, where they decide nothing.
DAY_EXPERIMENTS = ("ltb_table1", "zfb_figure1")


@dataclass(frozen=True)
class Spread:
    """What a run at CPU size measured of an effect's claim: its estimate, relation and margin, the seeds, one seed's
    spread ``sd`` of the difference, the prompts' s.e. ``mc_se`` and the evaluation prompts behind it."""

    estimate: float
    relation: str
    margin: float
    seeds: int
    sd: float
    mc_se: float
    prompts: int


def favourable_truth(effect: Effect, spread: Spread) -> float:
    """The truth the paper reports for ``effect``, or the CPU estimate where it reports none."""
    return spread.estimate if effect.truth is None else effect.truth


def least_favourable(effect: Effect, spread: Spread) -> tuple[float, Spread]:
    """The least favourable plausible truth of ``effect`` and the spreads that go with it (module docstring)."""
    paper = favourable_truth(effect, spread)
    if spread.relation == "≈":
        def reach(truth: float) -> float:  # how far from the region's edge
            return distance_to_decide("≈", spread.margin, truth)

        return (spread.estimate if reach(spread.estimate) < reach(paper) else paper), spread
    if spread.estimate == 0:
        raise ValueError(f"{effect.name}: a CPU estimate of 0 has no effect-to-spread ratio")
    scale = abs(paper / spread.estimate)
    scaled = replace(spread, sd=spread.sd * scale, mc_se=spread.mc_se * scale)
    return spread.estimate * scale, scaled


def upper_spread(spread: Spread, confidence: float = SPREAD_CONFIDENCE) -> Spread:
    """``spread`` with its seed spread at its one-sided ``confidence`` upper confidence bound, sd·√(ν ÷ χ²_ν(1 −
    confidence)), ν = seeds − 1 the degrees of freedom of the seeds' sample standard deviation (the χ² interval of a
    normal sample's σ: (ν s² / σ²) ~ χ²_ν). The prompts' s.e. stays: its degrees of freedom are the prompts'."""
    from scipy import special

    dof = spread.seeds - 1
    if dof < 1:
        raise ValueError(f"a spread of {spread.seeds} seed(s) has no degrees of freedom: its bound needs two seeds")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence {confidence!r}: allowed strictly between 0 and 1")
    lower_quantile = special.chdtri(dof, confidence)  # χ²_ν's (1 − confidence) quantile (chdtri takes the upper tail)
    return replace(spread, sd=spread.sd * math.sqrt(dof / lower_quantile))


def side(truth: float, spread: Spread) -> str:
    """The verdict a decision at ``truth`` would be: "holds" inside the claim's region (its ends as the region
    includes them: an equivalence's, not a strict ordering's), else "fails" (a design there has power to refute the
    claim, and P(holds) is about 0)."""
    start, end, start_in, end_in = region(spread.relation, spread.margin)
    above_start = start <= truth if start_in else start < truth
    below_end = truth <= end if end_in else truth < end
    return "holds" if above_start and below_end else "fails"


def region_edge(truth: float, spread: Spread) -> float:
    """The end of the claim's region nearest ``truth``: where no design decides."""
    start, end, _, _ = region(spread.relation, spread.margin)
    return min((edge for edge in (start, end) if math.isfinite(edge)), key=lambda edge: abs(edge - truth))


def edge_verdicts(truth: float, spread: Spread, seeds: int, prompts: int, level: float = LEVEL) -> dict[str, float]:
    """P("holds") and P("fails") with ``seeds`` seeds at ``prompts`` prompts when the truth sits on the region's edge
    nearest ``truth`` (``region_edge``), by the quadrature of ``claims.verdict_probabilities``."""
    start, end, _, _ = region(spread.relation, spread.margin)
    edge = region_edge(truth, spread)
    mc_se = spread.mc_se * math.sqrt(spread.prompts / prompts)
    holds, below, above = verdict_probabilities(seeds, np.array([edge]), np.array([spread.sd]), np.array([mc_se]),
                                                start, end, level)
    return {"truth": edge, "holds": float(holds[0]), "fails": float(below[0] + above[0])}


@dataclass(frozen=True)
class Design:
    """Prompts and seeds for one effect, and the power they reach (NaN where none fits: ``reason`` says why)."""

    truth: float
    prompts: int
    seeds: int
    power: float
    reason: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def tier_design(effect: Effect, spread: Spread) -> Design:
    """What a tier runs for ``effect`` (issue 101): the design at the paper's size (``favourable_truth``) with the seed
    spread at its 80% upper confidence bound (``upper_spread``), its seeds and prompts raised to those of the least
    favourable truth's design at the estimated spread wherever that needs more (and has one). Its power is the one at
    the bound at the paper's size. Where no design at the bound fits ``MAX_SEEDS`` (or the prompts' cap), that design
    is returned, NaN power and its reason: the effect is not powered in a tier."""
    truth = favourable_truth(effect, spread)
    upper = upper_spread(spread)
    at_bound = design(truth, upper)
    if not math.isfinite(at_bound.power):
        return at_bound
    worst = design(*least_favourable(effect, spread))
    if not math.isfinite(worst.power):
        return at_bound
    seeds, prompts = max(at_bound.seeds, worst.seeds), max(at_bound.prompts, worst.prompts)
    return Design(truth, prompts, seeds, power_as_run(truth, upper, seeds, prompts))


def power_as_run(truth: float, spread: Spread, seeds: int, prompts: int, level: float = LEVEL) -> float:
    """The power with which ``seeds`` seeds at ``prompts`` evaluation prompts decide the claim if the truth is
    ``truth``: the prompts' s.e. scaled from the ``spread.prompts`` it was measured at by √(spread.prompts ÷
    prompts)."""
    start, end, _, _ = region(spread.relation, spread.margin)
    mc_se = spread.mc_se * math.sqrt(spread.prompts / prompts)
    return decision_probability(seeds, truth, spread.sd, mc_se, start, end, level)


def design(truth: float, spread: Spread, level: float = LEVEL) -> Design:
    """The prompts and seeds that decide the claim with ``POWER`` if the truth is ``truth`` (module docstring)."""
    distance = distance_to_decide(spread.relation, spread.margin, truth)
    if distance <= 0:
        return Design(truth, spread.prompts, 0, math.nan, "the truth sits on the region's edge")
    factor = 1
    while monte_carlo_reach(spread.relation, spread.mc_se / math.sqrt(factor), level) > MC_SHARE * distance:
        factor *= 2
        if factor > MAX_PROMPT_FACTOR:
            return Design(truth, spread.prompts * factor, 0, math.nan, f"over {MAX_PROMPT_FACTOR}× the prompts")
    mc_se = spread.mc_se / math.sqrt(factor)
    start, end, _, _ = region(spread.relation, spread.margin)
    (seeds,) = deciding_seeds(np.array([truth]), np.array([spread.sd]), np.array([mc_se]), start, end, level,
                              MAX_SEEDS)
    if seeds > MAX_SEEDS:
        return Design(truth, spread.prompts * factor, int(seeds), math.nan, f"over {MAX_SEEDS} seeds")
    power = decision_probability(int(seeds), truth, spread.sd, mc_se, start, end, level)
    return Design(truth, spread.prompts * factor, int(seeds), power)
