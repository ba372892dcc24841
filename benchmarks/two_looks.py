"""Benchmark: the two-look design of the claims table (``claims.LOOK_ALPHAS``, simulated by ``iclab.stats.looks``).

    python benchmarks/two_looks.py   # writes benchmarks/results/two_looks.json (~10–20 min, one thread)
    python benchmarks/two_looks.py --quadrature   # adds the error by quadrature to that record (~2 min)

1. False verdicts: for each relation (margins as the suite's), look 1 with S₁ ∈ {1, 2, 3, 5} seeds (the configs'
   counts), one seed's spread 1 and the prompts' s.e. 0, 0.1 or 0.5 (relative to it; 0: the worst case, no prompt
   error to widen the interval), the truth on the region's edge:
   the rates of "holds" (false if the truth is just outside the edge) and "fails" (false if just inside) after look 1
   and after both looks, for look 2 on its new seeds and fresh prompts alone (the design), with the row's experiment
   training ``EXPERIMENT_SEEDS`` seeds for its other rows (S₂ the larger of the row's and that), on look 1's prompts
   (the design before look 2 drew its own) and pooled with look 1's seeds.
   With ``--quadrature``, the same rates by quadrature (``looks.false_verdict_rates``: the design's exact error, to
   the quadrature's ~0.01%) for the design and for the experiment's S₂, beside each simulated cell, and the largest
   of each; the simulation's maxima are maxima over noisy cells (binomial s.e. ~0.11% at 2.5%), so they run above.
2. Power: the truth 0.5 and 1.5 spreads inside the region's nearest edge (an ordering or a bound that is there, an
   equivalence well within its margin), S₁ ∈ {2, 3, 5}: the rate of the right verdict after look 1, after both, and
   at a single look at 2.5% a side (the table before the design), with the share of rows that had a look 2 and
   their mean S₂, and the right verdicts after both looks where the experiment trains ``EXPERIMENT_SEEDS``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from iclab.stats.claims import LOOK2_MAX_SEEDS, LOOK_ALPHAS, ONE_SEED_LOOK2, decisions, region
from iclab.stats.estimates import LEVEL
from iclab.stats.looks import false_verdict_rates, intervals_of, simulate

OUT = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "two_looks.json"
REPS = 20_000
RELATIONS = [("≈", 1.0), ("<", 0.0), (">", 0.5), ("≤", 0.5), ("≥", 0.0)]
EXPERIMENT_SEEDS = 14  # the most a default experiment's rows asked at look 2 (nonparametric_icl, docs/claims.md)
DESIGNS = {"new seeds": {}, "experiment S2": {"experiment_seeds": EXPERIMENT_SEEDS},
           "shared prompts": {"shared_prompts": True}, "pooled": {"pooled": True}}


def edge_and_inside(relation: str, margin: float, depth: float) -> tuple[float, float]:
    """The region's finite edge (the lower one of ≈) and the point ``depth`` inside it."""
    start, end, _, _ = region(relation, margin)
    if np.isfinite(start):
        return start, (0.0 if relation == "≈" and depth > margin else start + depth)
    return end, end - depth


def single_look_right(relation: str, margin: float, truth: float, s1: int, rng: np.random.Generator) -> float:
    """The rate of the right verdict at one look at ``LEVEL`` (2.5% a side), as the table decided before the design."""
    values = truth + rng.normal(0.0, 1.0, size=(REPS, s1)) + rng.normal(0.0, 0.1, size=(REPS, 1))
    _, low, high = intervals_of(values, 0.1, LEVEL)
    return float(np.mean(decisions(relation, margin, low, high) == "holds"))


QUADRATURE = {"new seeds": 0, "experiment S2": EXPERIMENT_SEEDS}  # design → the experiment's S₂
QUADRATURE_POINTS = {"chi_points": 48, "mean_points": 200}


def add_quadrature() -> None:
    """The false-verdict rates of every simulated cell of the record by quadrature, beside the simulation's, and the
    largest of each design (the record's other entries untouched)."""
    result = json.loads(OUT.read_text())
    started = time.perf_counter()
    for row in result["false verdicts at the edge"]:
        for design, experiment_seeds in QUADRATURE.items():
            rates = false_verdict_rates(row["relation"], row["margin"], row["truth"], 1.0, row["mc_se"], row["s1"],
                                        experiment_seeds, **QUADRATURE_POINTS)
            row[design]["by quadrature"] = {verdict: round(rate, 6) for verdict, rate in rates.items()}
        print(row["relation"], row["mc_se"], row["s1"], row["new seeds"]["by quadrature"], flush=True)
    cells = result["false verdicts at the edge"]
    for design in QUADRATURE:
        result[f"largest false-verdict rate by quadrature, {design}"] = max(
            max(row[design]["by quadrature"].values()) for row in cells)
        result[f"largest gap, simulated − quadrature, in binomial s.e., {design}"] = round(max(
            abs(row[design][verdict] - row[design]["by quadrature"][verdict])
            / np.sqrt(max(row[design]["by quadrature"][verdict], 1e-4) / result["reps"])
            for row in cells for verdict in ("holds", "fails")), 2)
    result["quadrature points"] = QUADRATURE_POINTS
    result["quadrature seconds"] = round(time.perf_counter() - started, 1)
    OUT.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quadrature", action="store_true", help="add the rates by quadrature to the record")
    if parser.parse_args().quadrature:
        add_quadrature()
        return
    rng = np.random.default_rng(2026)
    started = time.perf_counter()
    false_verdicts = []
    for relation, margin in RELATIONS:
        edge, _ = edge_and_inside(relation, margin, 0.0)
        for mc_se in (0.0, 0.1, 0.5):
            for s1 in (1, 2, 3, 5):
                row = {"relation": relation, "margin": margin, "truth": edge, "mc_se": mc_se, "s1": s1}
                for design, options in DESIGNS.items():
                    looks = simulate(relation, margin, edge, 1.0, mc_se, s1, REPS, rng, **options)
                    row[design] = {"holds look 1": looks.rate("holds", False), "fails look 1": looks.rate("fails", False),
                                   "holds": looks.rate("holds"), "fails": looks.rate("fails"),
                                   "second looks": looks.second_looks / REPS, "mean S2": round(looks.mean_seeds, 2)}
                false_verdicts.append(row)
                print(row, flush=True)
    power = []
    for relation, margin in RELATIONS:
        for depth in (0.5, 1.5):
            _, truth = edge_and_inside(relation, margin, depth)
            for s1 in (2, 3, 5):
                looks = simulate(relation, margin, truth, 1.0, 0.1, s1, REPS, rng)
                with_experiment = simulate(relation, margin, truth, 1.0, 0.1, s1, REPS, rng,
                                           experiment_seeds=EXPERIMENT_SEEDS)
                row = {"relation": relation, "margin": margin, "truth": truth, "s1": s1,
                       "right after look 1": looks.rate("holds", False), "right after both": looks.rate("holds"),
                       f"right after both, experiment S2 {EXPERIMENT_SEEDS}": with_experiment.rate("holds"),
                       "right at one look at 2.5%": single_look_right(relation, margin, truth, s1, rng),
                       "second looks": looks.second_looks / REPS, "mean S2": round(looks.mean_seeds, 2)}
                power.append(row)
                print(row, flush=True)
    worst = {f"largest false-verdict rate, {design}": max(max(row[design]["holds"], row[design]["fails"])
                                                            for row in false_verdicts) for design in DESIGNS}
    result = {"reps": REPS, "look alphas (one-sided)": list(LOOK_ALPHAS), "look-2 seed cap": LOOK2_MAX_SEEDS,
              "look-2 seeds after one seed": ONE_SEED_LOOK2, "experiment's S2": EXPERIMENT_SEEDS,
              "one seed's spread": 1.0, "binomial s.e. at 2.5%": float(np.sqrt(0.025 * 0.975 / REPS)), **worst,
              "false verdicts at the edge": false_verdicts, "power": power,
              "seconds": round(time.perf_counter() - started, 1)}
    OUT.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
