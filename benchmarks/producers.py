"""Benchmark record (issue 100): how fast gpu_node's batched groups of GPT-2s get their batches, made by the loop's
thread (P = 0) and by 1 and 2 producer processes (``loop.producers``), on this machine's CPU.

    python benchmarks/producers.py [--steps 40] [--config config/gpu_node.yaml]   # benchmarks/results/producers.json

For each group (``gpu_backlog.batched_groups``: the members it trains, at the full shape, the curriculum's last and
largest batches), a ``BatchFeed`` on the CPU device is drained as fast as it gives batches, ``--steps`` steps after
its first (a process's start is not counted), at P = 0, 1 and 2, in one run: milliseconds a step. Beside each, the
group's GPU step by scenario (``cluster.group_step_seconds``: estimates, not yet run on a GPU), whether the loop's
thread alone keeps up with it, and the producers it needs at the measured rate of one (⌈ms a batch at P = 1 / ms a
GPU step⌉). This machine has 2 cores: beyond P = 2 the producers' rate is an extrapolation (P × one's, until the
node's cores run out), written as one (``extrapolated_ms_at_16_producers``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path

import torch

from iclab.atomic import write_text
from iclab.compute import cluster
from iclab.compute.gpu_backlog import batched_groups
from iclab.fit.prefetch import BatchFeed
from iclab.fit.sgd import batch_maker
from iclab.tasks import task_from_dict

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "producers.json"
PRODUCERS = (0, 1, 2)


def ms_a_step(make, producers: int, steps: int) -> float:
    """Milliseconds between batches of a feed drained as fast as it gives them, over ``steps`` after its first."""
    with BatchFeed(make, 0, steps + 1, torch.device("cpu"), ahead=True, producers=producers) as feed:
        next(feed)
        started = time.perf_counter()
        for _ in feed:
            pass
        return 1e3 * (time.perf_counter() - started) / steps


def group_row(experiment: str, jobs: list, steps: int) -> dict:
    make = batch_maker(jobs, [task_from_dict(job.task) for job in jobs], batched=True)
    specs = [job.to_dict() for job in jobs]
    measured = {f"P={p}": ms_a_step(make, p, steps) for p in PRODUCERS}
    gpu_ms = {s.name: 1e3 * cluster.group_step_seconds(specs, scenario=s) for s in cluster.BATCHED_SCENARIOS}
    return {"experiment": experiment, "members": len(jobs), "d": jobs[0].task["d"],
            "n_points": jobs[0].task["n_points"], "batch_size": jobs[0].train.batch_size,
            "ms_a_step": measured, "gpu_step_ms_estimated": gpu_ms,
            "thread_keeps_up": {name: measured["P=0"] < ms for name, ms in gpu_ms.items()},
            "producers_needed": {name: math.ceil(measured["P=1"] / ms) for name, ms in gpu_ms.items()},
            "extrapolated_ms_at_16_producers": measured["P=1"] / 16}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--config", type=Path, default=ROOT / "config" / "gpu_node.yaml")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rows = [group_row(experiment, jobs, args.steps) for experiment, jobs in batched_groups(args.config)]
    write_text(args.out, json.dumps({
        "note": f"{args.config.name}'s batched groups, {args.steps} steps each way in one run on this machine "
                f"({os.cpu_count()} cores, torch CPU capability {torch.backends.cpu.get_cpu_capability()}); "
                "beyond P = 2 an extrapolation",
        "steps": args.steps, "groups": rows,
        "most_producers_needed": {name: max(row["producers_needed"][name] for row in rows)
                                  for name in rows[0]["producers_needed"]},
        "thread_keeps_up_everywhere": all(all(row["thread_keeps_up"].values()) for row in rows),
        "slowest_thread_over_fastest_step": max(row["ms_a_step"]["P=0"] / min(row["gpu_step_ms_estimated"].values())
                                                for row in rows),
    }, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
