"""Benchmark: the figure stage (``python -m iclab figure``, start-up included) on a run's cubes, for two versions
of the code in one run.

    python benchmarks/bench_figures.py --cubes RESULTS/cubes --before REV   # writes benchmarks/results/figures.json

REV's ``src/`` is checked out into a temporary git worktree; each cube's figure is drawn by REV's code and by the
working tree's, alternately, fastest of ``--repeats``. Also timed: importing seaborn after matplotlib and pandas.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from iclab.experiments import product_names

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "figures.json"


def figure_seconds(src: Path, name: str, cube: Path, out: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(src)}
    cmd = [sys.executable, "-m", "iclab", "figure", name, "--cube", str(cube), "--out", str(out)]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def seaborn_import_seconds() -> float:
    code = "import time, matplotlib.pyplot, pandas; t = time.perf_counter(); import seaborn; "
    code += "print(time.perf_counter() - t)"
    return float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)


def commit(rev: str) -> str:
    result = subprocess.run(["git", "rev-parse", rev], cwd=ROOT, check=True, capture_output=True, text=True)
    return result.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cubes", type=Path, required=True, help="a run's results/cubes")
    parser.add_argument("--before", required=True, help="git revision of the code to compare with")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    cubes = [cube for cube in sorted(args.cubes.glob("*.nc")) if cube.stem in product_names("figure")]
    if not cubes:
        parser.error(f"--cubes {args.cubes}: no cube of an experiment with a figure there")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        worktree = Path(tmp) / "before"
        subprocess.run(["git", "worktree", "add", "--detach", str(worktree), args.before], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            versions = {"before": worktree / "src", "after": ROOT / "src"}
            for cube in cubes:
                best = {version: float("inf") for version in versions}
                for _ in range(args.repeats):
                    for version, src in versions.items():
                        out = Path(tmp) / version / f"{cube.stem}.png"
                        out.parent.mkdir(exist_ok=True)
                        best[version] = min(best[version], figure_seconds(src, cube.stem, cube, out))
                rows.append({"figure": cube.stem, "before seconds": best["before"], "after seconds": best["after"]})
                print(rows[-1], flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=ROOT, check=True)
    total = {version: sum(row[f"{version} seconds"] for row in rows) for version in ("before", "after")}
    result = {
        "machine": platform.machine(),
        "cores": os.cpu_count(),
        "python": sys.version.split()[0],
        "repeats": args.repeats,
        "before": commit(args.before),
        "after": commit("HEAD") + " + working tree",
        "seaborn import seconds": min(seaborn_import_seconds() for _ in range(3)),
        "total before seconds": total["before"],
        "total after seconds": total["after"],
        "rows": rows,
    }
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print({key: value for key, value in result.items() if key != "rows"})


if __name__ == "__main__":
    main()
