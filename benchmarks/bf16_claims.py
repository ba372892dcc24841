"""bfloat16 autocast against each claim's margin: ltb_table1's GPT-2s trained in float32 and under bf16 autocast.

    python benchmarks/bf16_claims.py FLOAT32_CUBE BF16_CUBE   # writes benchmarks/results/bf16_claims.json

FLOAT32_CUBE: the default run's ``results/cubes/ltb_table1.nc``. BF16_CUBE: the same experiment with
``train.precision: bfloat16`` (a copy of config.yaml holding only ltb_table1, that key added, run with
``snakemake --configfile it results/cubes/ltb_table1.nc``): the same seeds, batches and evaluation prompts, so the
two differ only by the precision of training. Per learner and ‖β*‖: the final-query risk per seed both ways and
their difference (training in bf16 moves a trajectory, so this difference holds the rounding and its
consequences); per claim: the measured value and interval both ways against its margin, and the two verdicts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import xarray as xr

from iclab import experiments

OUT = Path(__file__).resolve().parent / "results" / "bf16_claims.json"


def risks(cube: xr.Dataset) -> dict[str, list[float]]:
    return {f"{learner} ‖β*‖={norm:g}": [round(float(v), 5) for v in
                                          cube.query_risk.sel(learner=learner, beta_star_norm=norm).values]
            for learner in cube.learner.values for norm in cube.beta_star_norm.values}


def claims(cube: xr.Dataset) -> list[dict]:
    rows = []
    for claim in experiments.claims("ltb_table1", cube):
        low, high = claim.difference.interval()
        rows.append({"claim": claim.claim, "relation": claim.relation, "margin": claim.margin,
                     "difference": round(claim.difference.value, 5), "interval": [round(low, 5), round(high, 5)],
                     "verdict": claim.verdict})
    return rows


def main(float32_path: str, bf16_path: str) -> None:
    cubes = {name: xr.open_dataset(path, engine="netcdf4") for name, path in
             (("float32", float32_path), ("bfloat16", bf16_path))}
    per_seed = {name: risks(cube) for name, cube in cubes.items()}
    gaps = {key: [round(b - f, 5) for f, b in zip(per_seed["float32"][key], per_seed["bfloat16"][key])]
            for key in per_seed["float32"]}
    spread = {key: round(float(np.std(values, ddof=1)), 5) for key, values in per_seed["float32"].items()}
    result = {
        "final-query risk per seed": per_seed,
        "bfloat16 − float32 per seed": gaps,
        "float32 spread between seeds (sd)": spread,
        "claims": {name: claims(cube) for name, cube in cubes.items()},
    }
    OUT.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main(*sys.argv[1:])
