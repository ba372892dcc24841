"""Benchmark record: how far two runs' cubes agree (issue 82: reproducibility stated per machine).

    python benchmarks/cube_comparison.py NAME BASELINE_CUBES NEW_CUBES --baseline-made "…" --new-made "…"

Runs ``../shared/tools/compare_cubes.py`` (rtol 1e-6) on the two folders and stores, under NAME in
``benchmarks/results/cube_comparisons.json``: the cubes compared, how many are equal, how many more differ by round-off
only (every differing variable within ``ROUND_OFF`` relative), the largest relative difference and its cube, and each
cube's own largest one; with ``--verdicts``, both folders judged by this commit's claims code and the claims whose
verdict differs. The docs quote it through ``<!-- iclab:record cube_comparisons.json|NAME.… -->`` blocks.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from iclab.atomic import write_text
from iclab.config import load

ROOT = Path(__file__).resolve().parents[1]
COMPARE = ROOT.parent / "shared" / "tools" / "compare_cubes.py"
OUT = ROOT / "benchmarks" / "results" / "cube_comparisons.json"
RTOL = 1e-6  # compare_cubes.py's default: "equal"
ROUND_OFF = 1e-5  # a cube whose every difference is within this, relative, differs by round-off only
CUBE_LINE = re.compile(r"^(?P<cube>[\w.-]+)\.nc: (?P<status>equal|DIFFERS|MISSING)", re.M)
MAX_REL = re.compile(r"max rel (?P<rel>[0-9.e+-]+|nan|inf)\)")


def largest_differences(report: str) -> dict[str, float | None]:
    """Each cube of a compare_cubes report with its largest relative difference (0 if equal; None where a difference
    has no size: a missing cube or variable, a coordinate that differs)."""
    found, sections = {}, CUBE_LINE.split(report)[1:]
    for cube, status, body in zip(sections[0::3], sections[1::3], sections[2::3]):
        if status == "equal":
            found[cube] = 0.0
            continue
        lines = [line for line in body.splitlines() if line.strip().startswith("-")] if status == "DIFFERS" else []
        sizes = [MAX_REL.search(line) for line in lines]
        found[cube] = None if not lines or None in sizes else max(float(size["rel"]) for size in sizes)
    return found


def summary(largest: dict[str, float | None]) -> dict:
    sized = {cube: rel for cube, rel in largest.items() if rel is not None}
    worst = max(sized, key=sized.get) if sized else None
    return {"cubes": len(largest), "equal": sum(rel == 0.0 for rel in largest.values()),
            "round_off": sum(rel is not None and 0.0 < rel <= ROUND_OFF for rel in largest.values()),
            "round_off_rtol": ROUND_OFF, "rtol": RTOL,
            "largest_relative": sized.get(worst), "largest_relative_cube": worst, "by_cube": largest}


def judged(cubes: Path, out: Path) -> pd.DataFrame:
    """The claims table this commit's code judges from ``cubes`` (in the default config's experiment order)."""
    order = [name for name in load(ROOT / "config.yaml")["experiments"] if (cubes / f"{name}.nc").is_file()]
    done = subprocess.run([sys.executable, "-m", "iclab", "claims", "--out", str(out), "--cubes",
                           *[str(cubes / f"{name}.nc") for name in order]], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"cube_comparison: judging {cubes} failed (rc {done.returncode}):\n{done.stderr}")
    return pd.read_csv(out.with_suffix(".csv"))


def verdicts_compared(baseline: pd.DataFrame, new: pd.DataFrame) -> dict:
    """The claims (not verifications) both tables judge, and those whose verdict differs, as
    "experiment: claim: baseline's → new's"."""
    rows = baseline.merge(new, on=["experiment", "kind", "claim"], suffixes=("_baseline", "_new"))
    rows = rows[rows["kind"] == "claim"]
    changed = rows[rows["verdict_baseline"] != rows["verdict_new"]]
    return {"claims": len(rows), "differ": len(changed),
            "changed": [f"{r.experiment}: {r.claim}: {r.verdict_baseline} → {r.verdict_new}"
                        for r in changed.itertuples()]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", help="the comparison's key in the record, e.g. baselines")
    parser.add_argument("baseline", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--baseline-made", required=True, help="what made the baseline: commit, machine, capability")
    parser.add_argument("--new-made", required=True, help="what made the new cubes: commit, machine, capability")
    parser.add_argument("--verdicts", action="store_true",
                        help="also judge both with this commit's claims code and compare the claims' verdicts")
    args = parser.parse_args()
    for folder in (args.baseline, args.new):
        if not folder.is_dir() or not any(folder.glob("*.nc")):
            sys.exit(f"cube_comparison: {folder} is not a folder of .nc cubes")
    done = subprocess.run([sys.executable, str(COMPARE), str(args.baseline), str(args.new), "--rtol", str(RTOL)],
                          capture_output=True, text=True)
    if done.returncode not in (0, 1):
        sys.exit(f"cube_comparison: compare_cubes.py failed (rc {done.returncode}):\n{done.stderr}")
    record = json.loads(OUT.read_text()) if OUT.is_file() else {}
    record[args.name] = {"baseline": str(args.baseline), "baseline_made": args.baseline_made, "new": str(args.new),
                         "new_made": args.new_made, **summary(largest_differences(done.stdout))}
    if args.verdicts:
        with tempfile.TemporaryDirectory() as scratch:
            record[args.name]["verdicts"] = verdicts_compared(judged(args.baseline, Path(scratch) / "baseline"),
                                                              judged(args.new, Path(scratch) / "new"))
    write_text(OUT, json.dumps(record, indent=1) + "\n")
    print(json.dumps({key: value for key, value in record[args.name].items() if key != "by_cube"}, indent=1))


if __name__ == "__main__":
    main()
