"""Benchmark: how long Snakemake takes to plan each tier (a dry run builds the DAG of every job),
and how many jobs it plans. The paper tier's target: at most 10 s here.

    python benchmarks/bench_dry_run.py      # writes benchmarks/results/dry_run.json

Each tier is dry-run three times in a fresh scratch directory (nothing exists, so every job is planned);
the fastest run is reported (this machine is shared and noisy).
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = Path(__file__).parent / "results" / "dry_run.json"
SNAKEMAKE = Path(sys.executable).with_name("snakemake")
TIERS = {  # tier → (config, extra arguments)
    "default": ("config.yaml", []),
    "paper": ("config/paper.yaml", []),
    "paper, SLURM profile": ("config/paper.yaml", ["--profile", str(REPO / "profiles" / "slurm")]),
    "tiny": ("tests/data/tiny.yaml", []),
}
REPEATS = 3


def dry_run(config: str, extra: list[str]) -> tuple[float, int]:
    """Seconds of one dry run of ``config`` in a fresh directory, and the number of jobs it plans. Through the
    SLURM profile each job's cluster resources are computed too (snakemake-executor-plugin-slurm installed)."""
    with tempfile.TemporaryDirectory() as workdir:
        cmd = [str(SNAKEMAKE), "--snakefile", str(REPO / "Snakefile"), "--directory", workdir]
        cmd += ["--configfile", str(REPO / config), "--replace-workflow-config", "-n", "--quiet", "rules", *extra]
        start = time.perf_counter()
        result = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=workdir)
        seconds = time.perf_counter() - start
    counts = result.stdout.split("total")[1].split()[0]
    return seconds, int(counts)


def main() -> None:
    result = {"machine": platform.machine(), "python": sys.version.split()[0], "repeats": REPEATS, "tiers": {}}
    for tier, (config, extra) in TIERS.items():
        runs = [dry_run(config, extra) for _ in range(REPEATS)]
        result["tiers"][tier] = {"config": config, "jobs": runs[0][1], "seconds": min(s for s, _ in runs)}
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
