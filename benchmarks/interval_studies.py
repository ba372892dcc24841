"""Benchmark record: Monte-Carlo studies of the claims table's intervals and multiplicity (``iclab.stats.claims``), the
numbers docs/claims.md quotes (issue 82: run-derived numbers generated from a record).

    python benchmarks/interval_studies.py   # writes benchmarks/results/interval_studies.json (~2 min, one thread)

1. Holm over a family (``claims.holm_verdicts``): ``FAMILY`` orderings "m < 0" that are not there (m ~ N(0, 1), a
   seed-free estimate of s.e. 1), ``FAMILIES`` families: the share in which some row holds under Holm (the design
   keeps it at ``claims.HOLM_ALPHA``) and row by row (each row at its look's 2.0%).
2. The percentile bootstrap over prompt groups with 3 seeds (``estimates.bootstrapped``; the seeds' spread as a t on
   2 degrees of freedom, not resampled): similarities whose seeds' spread (0.05) dwarfs the prompts' (0.01 a group);
   the share of runs whose interval covers the truth (nominal 95%), and of runs in which "a > b" holds for two equal
   truths whose seeds' effects correlate 0.5 (nominal 2.5% one-sided). The same set-up as tests/test_claims.py's,
   with more runs.

Each rate is stored with its binomial standard error.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import xarray as xr

from iclab.atomic import write_text
from iclab.stats.claims import Claim, decide, holm_verdicts
from iclab.stats.estimates import bootstrapped, difference, exact, with_sem

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "interval_studies.json"
FAMILY, FAMILIES = 20, 4000
BOOTSTRAP_RUNS = 4000
SEEDS, GROUPS = 3, 32
SEED_SD, GROUP_SD, OWN_SD = 0.05, 0.01, 0.002  # a seed's training effect, a prompt group's noise, a seed's own on it
TRUTH = 0.8


def rate(hits: list[bool]) -> dict:
    share = float(np.mean(hits))
    return {"rate": share, "se": float(np.sqrt(share * (1 - share) / len(hits))), "runs": len(hits)}


def holm_family(rng: np.random.Generator) -> dict:
    """Section 1: the share of null families with a false "holds", under Holm and row by row."""
    any_holm, any_row = [], []
    for _ in range(FAMILIES):
        rows = [Claim("m < 0", "null", with_sem(value, 1.0), "<", exact(0.0), "normal")
                for value in rng.standard_normal(FAMILY)]
        any_holm.append("holds" in holm_verdicts(rows))
        any_row.append(any(row.verdict == "holds" for row in rows))
    return {"family": FAMILY, "holm": rate(any_holm), "row_by_row": rate(any_row)}


def three_seeds(rng: np.random.Generator, seed_effects: np.ndarray) -> xr.DataArray:
    """Similarities (seed, grid, prompt_group): the truth, each seed's effect, the prompts' noise (one evaluation set,
    common to the seeds) and a little of each seed's own."""
    values = (TRUTH + seed_effects[:, None] + GROUP_SD * rng.standard_normal(GROUPS)[None, :]
              + OWN_SD * rng.standard_normal((SEEDS, GROUPS)))  # (S, G)
    return xr.DataArray(values[:, None, :], dims=("seed", "grid", "prompt_group"))


def bootstrap_three_seeds(rng: np.random.Generator) -> dict:
    """Section 2: coverage of the truth, and a false "a > b" between equal truths."""
    first = lambda x: x[..., 0]  # noqa: E731 (the statistic: the grid's only point)
    covered, ordered = [], []
    for _ in range(BOOTSTRAP_RUNS):
        low, high = bootstrapped(three_seeds(rng, SEED_SD * rng.standard_normal(SEEDS)), first).interval()
        covered.append(low <= TRUTH <= high)
        shared, own = rng.standard_normal(SEEDS), rng.standard_normal((2, SEEDS))
        effects = SEED_SD * (np.sqrt(0.5) * shared + np.sqrt(0.5) * own)  # (2, S): a's and b's seed effects
        a, b = (bootstrapped(three_seeds(rng, effects[i]), first) for i in range(2))
        ordered.append(decide(">", 0.0, *difference(a, b).interval()) == "holds")
    return {"seeds": SEEDS, "seed_sd": SEED_SD, "group_sd": GROUP_SD, "coverage": rate(covered),
            "false_order": rate(ordered)}


if __name__ == "__main__":
    start = time.perf_counter()
    record = {"holm": holm_family(np.random.default_rng(13)),
              "bootstrap": bootstrap_three_seeds(np.random.default_rng(11))}
    record["wall_s"] = round(time.perf_counter() - start, 1)
    write_text(OUT, json.dumps(record, indent=1) + "\n")
    print(json.dumps(record, indent=1))
