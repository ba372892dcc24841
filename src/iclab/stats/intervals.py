"""The one definition of the bands drawn in figures and the ± written in tables.

A reported value is the mean over S training seeds of a per-seed estimate (a risk on the shared
evaluation set, a distance, a gain). Its error has two parts: the spread between training seeds, and
the Monte-Carlo error of the evaluation set. The evaluation set is shared by every seed, so its
error is common to the seeds and does not average out over them:

    s.e.² = Var_seeds / S  +  (mean over seeds of the evaluation-set s.e.)²,

the second term the s.e. of fully correlated evaluations (an upper bound; left out where an estimate
has none, e.g. a weight distance). The band is mean ± q·s.e. with q the Student-t quantile of the
level with S − 1 degrees of freedom. Where the seeds' values are identical (a learner that does not
depend on the seed, such as a baseline, or S = 1), the seed term is known to be 0 rather than estimated,
and q is the normal quantile: the band holds the evaluation error only (for S = 1: one seed says nothing
of the spread between seeds). (Welch–Satterthwaite degrees of freedom were tried for the mixed case and
cover 89% at S = 2: two seeds' variance is too often near 0 by chance.) A Monte-Carlo test checks the coverage.

``bootstrap_band`` is the percentile bootstrap over prompts that Zhang, Frei, Bartlett 2024 draw in
their Figure 1 (90%, 1000 resamples); only that figure uses it.
"""

from __future__ import annotations

import numpy as np

LEVEL = 0.95
PROMPT_GROUPS = 32  # batch means: the evaluation prompts in this many contiguous groups (paired comparisons)
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_LEVEL = 0.90


def mean_and_sem(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean over prompts (axis 0) and its standard error; NaN where a prompt has NaN."""
    return samples.mean(axis=0), samples.std(axis=0, ddof=1) / np.sqrt(len(samples))


def ratio_and_sem(numerators: np.ndarray, denominators: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """R = mean(numerators) / mean(denominators) over prompts (axis 0) and its standard error by the delta method,
    sd(numerator − R · denominator) / (√B · |mean(denominator)|) (a ratio of two means of the same prompts)."""
    ratio = numerators.mean(axis=0) / denominators.mean(axis=0)
    residuals = numerators - ratio * denominators  # (B, ...)
    return ratio, residuals.std(axis=0, ddof=1) / np.sqrt(len(numerators)) / np.abs(denominators.mean(axis=0))


def group_means(samples: np.ndarray, groups: int = PROMPT_GROUPS) -> np.ndarray:
    """Means of ``samples`` (B, ...) over ``groups`` contiguous groups of prompts (axis 0): (groups, ...).

    Batch means: prompts are i.i.d., so the group means are too, and any statistic that is linear in the
    prompts (a difference of two learners, of two positions, a mean over positions) has the s.e. of its
    group means' mean, sd/√G, with the correlations between learners and positions kept. Groups differ in
    size by at most one prompt; with fewer prompts than groups, each prompt is a group."""
    return np.stack([part.mean(axis=0) for part in np.array_split(samples, min(groups, len(samples)))])


def quantile(n_seeds: int, level: float = LEVEL) -> float:
    """Two-sided quantile of the band: Student-t with S − 1 degrees of freedom, normal for S = 1."""
    from scipy import special  # the functions behind scipy.stats' t.ppf and norm.ppf; stats costs a job ~0.5 s more

    tail = 0.5 + level / 2
    return float(special.stdtrit(n_seeds - 1, tail) if n_seeds > 1 else special.ndtri(tail))


def seed_variance(values: np.ndarray) -> np.ndarray:
    """Var over the last axis (seeds) of ``values`` divided by S: (...), 0 for one seed."""
    values = np.asarray(values, dtype=float)
    s = values.shape[-1]
    return values.var(axis=-1, ddof=1) / s if s > 1 else np.zeros(values.shape[:-1])


def standard_error(values: np.ndarray, sems: np.ndarray | None = None) -> np.ndarray:
    """s.e. of the mean over the last axis (seeds) of ``values``, with their evaluation ``sems``: (...)."""
    variance = seed_variance(values)
    if sems is not None:
        variance = variance + np.mean(np.asarray(sems, dtype=float), axis=-1) ** 2
    return np.sqrt(variance)


def band(
    values: np.ndarray, sems: np.ndarray | None = None, level: float = LEVEL
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean over the last axis (seeds), and the band's low and high ends: (...) each. The quantile is
    Student-t's with S − 1 degrees of freedom, the normal one where every seed has the same value."""
    mean = np.asarray(values, dtype=float).mean(axis=-1)
    q = np.where(seed_variance(values) > 0, quantile(np.shape(values)[-1], level), quantile(1, level))
    half = q * standard_error(values, sems)
    return mean, mean - half, mean + half


def bootstrap_band(errors: np.ndarray, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """90% percentile bootstrap interval of the mean over prompts (axis 0), at every position: (K,), (K,).

    Resampling prompts with replacement is drawing multinomial counts; each resample's mean is
    counts @ errors / B, so the 1000 resamples cost one matrix product.
    """
    b = len(errors)
    counts = np.random.default_rng(seed).multinomial(b, np.full(b, 1 / b), size=BOOTSTRAP_RESAMPLES)  # (R, B)
    means = counts @ errors / b  # (R, K)
    tail = (1 - BOOTSTRAP_LEVEL) / 2
    return np.quantile(means, tail, axis=0), np.quantile(means, 1 - tail, axis=0)
