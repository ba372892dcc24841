"""Benchmark: a job's start-up time under two checkouts, alternating in one run (issue 84: the layout before and after).

    python benchmarks/startup.py BEFORE_ROOT AFTER_ROOT [--repeats 9]   # writes benchmarks/results/startup.json

Times ``python -m iclab --help`` (the parser: every command module imported) and one small job, the tiny config's
first data set (``python -m iclab data``: imports, one evaluation set, one cube written), each checkout's ``src``
first on PYTHONPATH, the two alternating so that the machine's drift falls on both. Stores each one's median and runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from iclab.atomic import write_text
from iclab.config import load
from iclab.pipeline.plan import build_plan

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "startup.json"


def data_spec() -> str:
    """The tiny config's first data set's spec, as the workflow passes it."""
    plan = build_plan(load(ROOT / "tests" / "data" / "tiny.yaml"))
    return json.dumps(next(iter(plan.data.values())).to_dict())


def timed(root: Path, args: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "iclab", *args], cwd=root, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    spec, roots = data_spec(), {"before": args.before, "after": args.after}
    runs: dict[str, list[float]] = {}
    for _ in range(args.repeats):
        for name, root in roots.items():
            runs.setdefault(f"{name}, --help", []).append(timed(root, ["--help"]))
        for name, root in roots.items():
            with tempfile.TemporaryDirectory() as scratch:
                out = str(Path(scratch) / "data.nc")
                runs.setdefault(f"{name}, data job", []).append(timed(root, ["data", "--spec", spec, "--out", out]))
    commit = {name: subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                                   text=True).stdout.strip() for name, root in roots.items()}
    record = {"before": commit["before"], "after": commit["after"], "repeats": args.repeats,
              **{key: {"median_s": statistics.median(v), "runs_s": v} for key, v in runs.items()}}
    write_text(OUT, json.dumps(record, indent=1) + "\n")
    print(json.dumps({key: value["median_s"] for key, value in record.items() if isinstance(value, dict)}, indent=1))


if __name__ == "__main__":
    main()
