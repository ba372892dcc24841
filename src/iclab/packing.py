"""Several trainings at once on one GPU (a local run with ``--resources gpu=k gpu_mem_mb=<the card's>``): how many
of each model family fit, how long a tier's GPU jobs take packed, and what rate would fit them in a day.

A modelled account, not a measurement (no GPU has run it): a packed job takes its time alone (``cluster``'s estimate
at its assumed rate) while the device has room, that is while k jobs' FLOP/s stay under ``DEVICE_RATE``; past it
they share the device and each slows by k · (one job's rate) / ``DEVICE_RATE``. What limits k:

- throughput: ``DEVICE_RATE`` over one job's assumed rate (``cluster.RATE["gpu"]``): more would only queue;
- cores: half the node's cores over a packed job's threads (``gpu_threads``), the other half for the CPU jobs;
- memory, job by job: the card's memory over the jobs' reservations (``cluster.device_memory_mb``, the training
  rule's ``gpu_mem_mb``): a family's k is what its largest job allows.

The tier's k (``--resources gpu=k``) is the smaller of the first two, and ``gpu_mem_mb`` holds back a job that would
not fit beside the running ones. The packed wall time is that schedule, longest jobs first (``makespan``).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from iclab import cluster

DEVICE_MEMORY_MB = 80_000  # one 80 GB card (H100, A100 80 GB)
# FLOP/s the whole card sustains over packed small trainings: assumed, 10% of an H100's dense bf16 peak (~1e15),
# 20 × one job's assumed rate (cluster.RATE["gpu"]): small matrices leave one job far below the card's peak
DEVICE_RATE = 1e14
DAY_S = 24 * 3600.0
# No card runs faster: the dense bf16 peak of an H100 SXM (and H200) by NVIDIA's data sheet, the fastest card a GPU
# tier targets; a packed card needing more cannot fit at any rate
CARD_PEAK_FLOPS = 989e12


@dataclass(frozen=True)
class FamilyPacking:
    """k of one model family on one card, and which limit sets it."""

    family: str
    jobs: int
    k: int
    by_memory: int
    by_throughput: int
    by_cores: int

    @property
    def limit(self) -> str:
        limits = {"memory": self.by_memory, "throughput": self.by_throughput, "cores": self.by_cores}
        return min(limits, key=limits.get)


def slots(cores: int, gpu_threads: int) -> int:
    """The tier's k: trainings packed at once, by throughput and by cores (memory is held job by job)."""
    return min(max(1, int(DEVICE_RATE // cluster.RATE["gpu"])), max(1, (cores // 2) // gpu_threads))


def family(job: dict[str, Any]) -> str:
    return job["model"]["name"]


def family_packing(jobs: list[dict[str, Any]], cores: int, gpu_threads: int, device_mb: int = DEVICE_MEMORY_MB,
                   rates: cluster.GpuRates | None = None) -> list[FamilyPacking]:
    """k of each family of the GPU training ``jobs`` (module docstring), a family's k set by its largest job."""
    by_family: dict[str, list[dict[str, Any]]] = {}
    for job in jobs:
        by_family.setdefault(family(job), []).append(job)
    by_throughput = max(1, int(DEVICE_RATE // cluster.RATE["gpu"]))
    by_cores = max(1, (cores // 2) // gpu_threads)
    rows = []
    for name, members in by_family.items():
        by_memory = max(1, device_mb // max(cluster.device_memory_mb(job, rates=rates) for job in members))
        rows.append(FamilyPacking(name, len(members), min(by_memory, by_throughput, by_cores), by_memory,
                                  by_throughput, by_cores))
    return rows


def makespan(jobs: Iterable[tuple[float, float]], k: int, device_mb: float = math.inf) -> float:
    """Wall time of jobs of (seconds, reserved MB) run at most ``k`` at a time within ``device_mb``, as Snakemake's
    ``--resources gpu=k gpu_mem_mb=<device_mb>`` runs them: whenever a job ends, the longest waiting jobs that fit
    start (longest processing time first)."""
    waiting = sorted(jobs, reverse=True)
    if any(mb > device_mb for _, mb in waiting):
        raise ValueError(f"a job reserves more than the card's {device_mb:g} MB")
    running: list[tuple[float, float]] = []  # (end, MB)
    now, free = 0.0, device_mb
    while waiting or running:
        for job in list(waiting):
            if len(running) < k and job[1] <= free:
                waiting.remove(job)
                heapq.heappush(running, (now + job[0], job[1]))
                free -= job[1]
        now, mb = heapq.heappop(running)
        free += mb
    return now


def job_seconds(job: dict[str, Any], per_job_rate: float) -> float:
    """A GPU training's seconds alone at ``per_job_rate`` FLOP/s (``cluster.estimated_seconds``'s model)."""
    return cluster.seconds_at(cluster.model_size(job), "gpu", per_job_rate)


def group_mb(group: list[dict[str, Any]], rates: cluster.GpuRates | None = None) -> int:
    """The GPU memory a training job of ``group``'s models reserves (the rule's ``gpu_mem_mb``)."""
    return max(cluster.device_memory_mb(job, rates=rates) for job in group)


def wall_seconds(groups: list[list[dict[str, Any]]], k: int, per_job_rate: float,
                 device_mb: int = DEVICE_MEMORY_MB) -> float:
    """Wall seconds of the GPU training jobs ``groups`` (each a job's models, trained one after another) packed k at
    a time within the card's memory, each at ``per_job_rate`` as if alone."""
    return makespan([(sum(job_seconds(job, per_job_rate) for job in group), group_mb(group)) for group in groups], k,
                    device_mb)


def packed_seconds(groups: list[list[dict[str, Any]]], k: int, per_job_rate: float = cluster.RATE["gpu"],
                   device_mb: int = DEVICE_MEMORY_MB) -> float:
    """``wall_seconds``, each job slowed by k · ``per_job_rate`` / ``DEVICE_RATE`` where the k pass the card's rate
    (a uniform slowdown scales the schedule)."""
    return max(1.0, k * per_job_rate / DEVICE_RATE) * wall_seconds(groups, k, per_job_rate, device_mb)


def rate_for(groups: list[list[dict[str, Any]]], k: int, wall_s: float = DAY_S,
             device_mb: int = DEVICE_MEMORY_MB) -> float:
    """The FLOP/s one packed job must sustain (the card: k times it) for the jobs to finish within ``wall_s`` packed
    k at a time, ignoring ``DEVICE_RATE``; infinite where their start-ups and per-step overheads alone pass it."""
    if overhead_seconds(groups, k, device_mb) >= wall_s:
        return math.inf
    low, high = 1e9, 1e18
    for _ in range(60):  # bisection on log rate: the wall time falls as the rate grows
        middle = math.sqrt(low * high)
        low, high = (middle, high) if wall_seconds(groups, k, middle, device_mb) > wall_s else (low, middle)
    return high


def beyond_any_card(rate: float, k: int) -> bool:
    """Whether k packed jobs at ``rate`` FLOP/s each need more than ``CARD_PEAK_FLOPS`` (or an infinite rate)."""
    return math.isinf(rate) or k * rate > CARD_PEAK_FLOPS


def day_rate(rate: float, k: int) -> str:
    """The FLOP/s a packed job needs for 24 h (``rate_for``), as the cost table prints it: "cannot fit at any rate"
    where it is ``beyond_any_card``, else the rate and the card's."""
    if beyond_any_card(rate, k):
        return "cannot fit at any rate"
    return f"{rate:.2g} (the card {k * rate:.2g})"


def overhead_seconds(groups: list[list[dict[str, Any]]], k: int, device_mb: int = DEVICE_MEMORY_MB) -> float:
    """Wall seconds of the start-ups and per-step overheads alone (an infinitely fast card), packed k at a time."""
    return wall_seconds(groups, k, math.inf, device_mb)
