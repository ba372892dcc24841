"""The structured record of a finished run: its jobs, job-seconds, memory and disk, from its results folder.

    python benchmarks/run_record.py --results RESULTS --out benchmarks/results/runs/NAME.json \
        [--config config.yaml] [--wall-s SECONDS] [--note TEXT]

Read from ``RESULTS/benchmarks/<rule>/*.tsv`` (Snakemake's ``benchmark:`` files: one a job) and the folder's files:
every job's wall seconds by rule, the largest resident memory of any job (Snakemake's ``max_rss``, MiB), the bytes
on disk by top-level folder (MB: 10⁶ bytes).
With ``--config``, each experiment's job-seconds as the second look prices them
(``iclab.compute.decide.experiment_seconds``: trainings and evaluations, then its data sets, optima, theory,
aggregation, figure and table; a training shared by two experiments counts in each; a batched group by its members'
share, ``decide.batched_look2_seconds`` at the run's own seeds). The run's wall time is not in its
files: give it (``--wall-s``) from the clock that timed the run. The docs quote the record through ``python -m iclab
docs`` (``iclab.publish.docblocks``' ``run`` blocks).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pandas as pd

from iclab.atomic import write_text
from iclab.errors import UsageError


def job_table(results: Path) -> pd.DataFrame:
    """One row a benchmarked job: its rule, wall seconds and largest resident memory (MB)."""
    rows = [{"rule": path.relative_to(results / "benchmarks").with_suffix("").parts[0],
             **pd.read_csv(path, sep="\t").iloc[0]}
            for path in sorted((results / "benchmarks").rglob("*.tsv"))]
    if not rows:
        raise UsageError(f"--results {results}: no benchmark files under {results / 'benchmarks'} (a finished run has "
                         "one a job)")
    return pd.DataFrame(rows)[["rule", "s", "max_rss"]]


def disk_bytes(folder: Path) -> int:
    """The bytes of the files under ``folder`` (links not followed)."""
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file() and not path.is_symlink())


def experiment_job_seconds(config_path: Path, results: Path) -> dict[str, dict[str, int]]:
    from iclab.config import load
    from iclab.compute.decide import batched_look2_seconds, experiment_seconds
    from iclab.pipeline.plan import build_plan

    plan = build_plan(load(config_path))
    costs = {}
    for experiment in plan.settings:
        scaled, fixed = experiment_seconds(plan, experiment, results)
        scaled += batched_look2_seconds(plan, experiment, results, 1, 1)  # its share of its batched groups' jobs
        costs[experiment] = {"train_evaluate_job_s": round(scaled), "other_job_s": round(fixed),
                             "job_s": round(scaled + fixed)}
    return costs


def record(results: Path, config: Path | None, wall_s: float | None, note: str) -> dict:
    jobs = job_table(results)
    by_rule = jobs.groupby("rule")["s"].agg(["count", "sum"])
    folders = sorted(path for path in results.iterdir() if path.is_dir())
    return {
        "note": note, "results": str(results),
        "wall_s": wall_s, "benchmarked_jobs": len(jobs), "job_s": round(float(jobs["s"].sum())),
        "by_rule": {rule: {"jobs": int(row["count"]), "job_s": round(float(row["sum"]))}
                    for rule, row in by_rule.iterrows()},
        "largest_job_max_rss_mb": round(float(jobs["max_rss"].max())),  # Snakemake's max_rss (MiB)
        "disk_mb": round(disk_bytes(results) / 1e6, 1),
        "disk_mb_by_folder": {folder.name: round(disk_bytes(folder) / 1e6, 1) for folder in folders},
        "experiments": experiment_job_seconds(config, results) if config is not None else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, required=True, help="a finished run's results folder")
    parser.add_argument("--out", type=Path, required=True, help="the record to write (JSON)")
    parser.add_argument("--config", type=Path, help="the run's config: each experiment's job-seconds")
    parser.add_argument("--wall-s", type=float, help="the run's wall seconds, from the clock that timed it")
    parser.add_argument("--note", default="", help="what was run: date, commit, command, what ran beside it")
    args = parser.parse_args()
    if not args.results.is_dir():
        raise SystemExit(f"--results {args.results}: no such folder")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    write_text(args.out, json.dumps(record(args.results, args.config, args.wall_s, args.note), indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
