"""Benchmark: aggregating many per-job evaluation cubes into one experiment cube (the aggregate stage).

    python benchmarks/bench_aggregate.py    # writes benchmarks/results/aggregate.json

Synthetic evaluation cubes shaped as the paper tier's ltb_gap (9 learners, 5 seeds, 41 positions) on a
two-dimensional sweep of S settings, S = 16 … 1024 (the paper tier's largest sweeps have 15): each is written
with iclab's own writer, then ``python -m iclab aggregate`` (the stage the workflow runs, start-up included)
reads, combines and writes them. Also timed in-process: reading, combining and writing. Fastest of three.
"""

from __future__ import annotations

import json
import math
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import xarray as xr

from iclab.store.cubes import EVAL_KIND, EXPERIMENT_KIND, experiment_cube, read_cube, write_cube

OUT = Path(__file__).parent / "results" / "aggregate.json"
SETTINGS = (16, 64, 256, 1024)
LEARNERS, SEEDS, POSITIONS = 9, 5, 41
REPEATS = 3


def sweep(count: int) -> dict[str, list[float]]:
    """A two-dimensional sweep of ``count`` settings (a × b)."""
    rows = 2 ** math.ceil(math.log2(count) / 2)
    return {"beta_star_norm": [float(i) for i in range(rows)], "n": [float(j) for j in range(count // rows)]}


def evaluation_cube(a: float, b: float, rng: np.random.Generator) -> xr.Dataset:
    """One setting's evaluation: risks and their s.e. per learner, seed and position (sweep values as
    length-1 dimensions, as the evaluate stage writes them)."""
    shape = (1, 1, LEARNERS, SEEDS, POSITIONS)
    dims = ("beta_star_norm", "n", "learner", "seed", "position")
    return xr.Dataset(
        {
            "risk": (dims, rng.random(shape)),
            "risk_sem": (dims, rng.random(shape)),
            "query_risk": (dims[:-1], rng.random(shape[:-1])),
            "query_risk_sem": (dims[:-1], rng.random(shape[:-1])),
        },
        coords={
            "beta_star_norm": [a],
            "n": [b],
            "learner": [f"learner_{i}" for i in range(LEARNERS)],
            "seed": np.arange(SEEDS),
            "position": np.arange(POSITIONS),
        },
    )


def write_inputs(folder: Path, order: dict[str, list[float]]) -> list[Path]:
    rng = np.random.default_rng(0)
    paths = []
    for a in order["beta_star_norm"]:
        for b in order["n"]:
            path = folder / f"{len(paths):05d}.nc"
            spec = {"experiment": "ltb_gap", "coords": {"beta_star_norm": a, "n": b}}
            write_cube(evaluation_cube(a, b, rng), path, kind=EVAL_KIND, spec=spec)
            paths.append(path)
    return paths


def stage_seconds(paths: list[Path], order: dict, out: Path) -> float:
    cmd = [sys.executable, "-m", "iclab", "aggregate", "--experiment", "ltb_gap", "--order", json.dumps(order)]
    cmd += ["--inputs", *map(str, paths), "--out", str(out)]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - start


def in_process_seconds(paths: list[Path], order: dict, out: Path) -> dict[str, float]:
    start = time.perf_counter()
    cubes = [read_cube(p, kind=EVAL_KIND, experiment="ltb_gap") for p in paths]
    read = time.perf_counter()
    cube = experiment_cube(cubes, xr.Dataset(), order)
    combined = time.perf_counter()
    write_cube(cube, out, kind=EXPERIMENT_KIND, spec={"experiment": "ltb_gap", "order": order})
    return {"read": read - start, "combine": combined - read, "write": time.perf_counter() - combined}


def main() -> None:
    rows = []
    for count in SETTINGS:
        order = sweep(count)
        with tempfile.TemporaryDirectory() as tmp:
            paths = write_inputs(Path(tmp), order)
            out = Path(tmp) / "cube.nc"
            stage = min(stage_seconds(paths, order, out) for _ in range(REPEATS))
            parts = min((in_process_seconds(paths, order, out) for _ in range(REPEATS)), key=lambda p: sum(p.values()))
            size = out.stat().st_size
        rows.append({"settings": count, "stage seconds": stage, "cube MB": size / 1e6} | {
            f"{name} seconds": seconds for name, seconds in parts.items()})
        print(rows[-1], flush=True)
    result = {"machine": platform.machine(), "python": sys.version.split()[0], "repeats": REPEATS,
              "learners": LEARNERS, "seeds": SEEDS, "positions": POSITIONS, "rows": rows}
    OUT.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
