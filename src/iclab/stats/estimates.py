"""Estimates and the intervals of their differences, as the claims table decides on them (``iclab.stats.claims``).

The interval of a difference follows the design (``Estimate``): values per training seed are differenced seed
by seed (both sides trained on the same seeds' data: paired), the Student-t quantile multiplies the seed
component only, and the Monte-Carlo error of the evaluation prompts (known, not estimated) gets the normal
quantile. Two estimates on the same evaluation prompts have correlated errors: where the cube stores their
means over groups of prompts (``risk_groups``, batch means), the difference is paired prompt by prompt and its
Monte-Carlo s.e. is that of the groups' differences (Student-t over the groups); where it does not, it is
bounded by the sum of theirs (Cauchy–Schwarz). On different prompt sets it is the two in quadrature.
Similarities and best counts get a percentile bootstrap over prompt groups (``bootstrapped``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import xarray as xr

from iclab.stats import intervals

LEVEL = intervals.LEVEL  # the level of the bands drawn in the figures
BOOTSTRAP_RESAMPLES = 1000  # of similarities and best counts (prompt groups and seeds)
# The prompt set of an estimate whose set is not named: its Monte-Carlo error is bounded as if it shared its prompts
# with any other such estimate (the conservative sum), and its prompt groups never pair with another's.
UNNAMED_PROMPTS = "eval"


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
    # degrees of freedom of ``mc_se`` where G batch means estimate it (G − 1): its quantile is Student-t's at each
    # interval's own level, so that each look errs at its stated rate; None: an s.e. over many prompts or an
    # integral, normal
    mc_dof: int | None = None

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

    def mc_quantile(self, level: float = LEVEL) -> float:
        """The two-sided ``level`` quantile of the Monte-Carlo part: Student-t on ``mc_dof`` degrees of freedom where
        batch means estimate ``mc_se``, normal otherwise."""
        return intervals.quantile(1 if self.mc_dof is None else self.mc_dof + 1, level)

    def half_width(self, level: float = LEVEL) -> float:
        """Half-width of the two-sided ``level`` interval: t quantile on the seed component, ``mc_quantile`` on the
        Monte-Carlo one, added in quadrature (for a bootstrapped value: half the interval's width)."""
        if self.replicates is not None:
            low, high = self.interval(level)
            return (high - low) / 2
        return math.hypot(self.seed_part(level), self.mc_quantile(level) * self.mc_se)

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
    over seeds: the evaluation set is common to the seeds, ``iclab.stats.intervals``). ``trained``: whether it depends
    on training; by default the learner's kind in the cube (``learner_kind``: a baseline's values repeat along the
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
    """s.e. of the mean of G group means, sd/√G: estimated on G − 1 degrees of freedom, which go with it
    (``Estimate.mc_dof``), so that each interval takes the t quantile of its own level. (Folding the 95% t quantile
    into the s.e., as before issue 96, made look 1 err 2.03% and look 2 0.58% a side on a prompt-only difference.)"""
    return float(np.std(groups, ddof=1) / np.sqrt(len(groups)))


def fewest_dof(*estimates: Estimate) -> int | None:
    """The fewest ``mc_dof`` of ``estimates`` whose Monte-Carlo s.e. enters a combination (None where none has any):
    the combination's quantile is then at least each part's, never narrower than a part's own."""
    dofs = [e.mc_dof for e in estimates if e.mc_dof is not None and e.mc_se > 0]
    return min(dofs) if dofs else None



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
        return Estimate(per_seed, batch_means_se(groups), trained, a.prompts, tuple(groups), mc_dof=len(groups) - 1)
    for side, other, sign in ((a, b, 1.0), (b, a, -1.0)):
        if other.mc_se == 0 and other.groups is None:  # exact: the difference is this side's prompts shifted
            groups = None if side.groups is None else tuple(sign * (np.array(side.groups) - other.value))
            return Estimate(per_seed, side.mc_se, trained, side.prompts, groups, mc_dof=side.mc_dof)
    return Estimate(per_seed, mc_difference_se(a, b), trained, mc_dof=fewest_dof(a, b))



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
    return Estimate(per_seed, abs(value) * relative, trained, mc_dof=fewest_dof(a, b))



def log(a: Estimate) -> Estimate:
    """The natural log, seed by seed (a geometric mean over seeds); Monte-Carlo s.e. by the delta method."""
    return Estimate(tuple(math.log(v) for v in a.per_seed), a.mc_se / a.value, a.trained, a.prompts, mc_dof=a.mc_dof)



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

