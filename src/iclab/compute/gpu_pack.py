"""Trainings packed on one GPU, measured (``python -m iclab gpu-pack``): the prepared check of gpu_node's packing
(docs/gpu_node.md), for a session with a GPU. Like ``iclab.compute.gpu_check`` it runs where only torch, transformers,
numpy, pandas and pyyaml are installed (``PYTHONPATH=src python3 -m iclab gpu-pack``).

For one of the tier's trainings (``--shape``: ``gpu_check.tier_shapes``' busiest, longest or LSTM, at its full shape,
seed 0; or ``batched``, a batched group of GPT-2s, ``batched_group``), in fresh processes, each training ``steps``
steps (a model in the training loop, ``gpu_check.trained_and_timed``; a group in ``gpu_backlog.timed_learner``, its
batches made before the clock starts), under ``fit.sgd.deterministic_kernels``:

1. the training alone, twice: whether the two runs' weights are the same bit for bit (their SHA-256), seconds a step
   after ``gpu_check.WARMUP_STEPS``, peak device memory;
2. k copies of it at once on the one device: whether each one's weights equal the lone run's bit for bit, their
   seconds a step (the slowdown against alone; k over it is packing's gain in throughput), peak memory, and how much
   of the k timed windows overlapped (the processes start seconds apart).

``--mps`` runs the k copies under NVIDIA's MPS daemon (``mps_daemon``: started for them, stopped after; the lone runs
stay outside it, as a training runs today). Where the image has no ``nvidia-cuda-mps-control``, the result file says
so and nothing trains.

Writes ``gpu_pack_<shape>[_mps]_<card>.json`` (atomic). ``--tiny`` runs the same on the CPU at tiny widths (the
suite's check): no number of it is a speed of anything.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import torch

from iclab.atomic import write_text
from iclab.compute import cluster
from iclab.compute.gpu_backlog import batched_groups, timed_learner, tiny_job
from iclab.compute.gpu_check import (WARMUP_STEPS, Shape, card_name, device_memory, file_card, fresh_peak, longest,
                                     tier_shapes, tiny, trained_and_timed, weights_digest)
from iclab.errors import UsageError
from iclab.store.jobs import TrainJob


def train_and_time(job: TrainJob, device: torch.device, steps: int, start_at: float | None = None) -> dict[str, Any]:
    """``job`` trained ``steps`` steps from its seed in the training loop (``gpu_check.trained_and_timed``, no time
    cap, its first step not before ``start_at``): its weights' digest, seconds a step after the warm-up, the timed
    window (epoch seconds) and peak memory."""
    model, timing, window = trained_and_timed(job, device, False, steps - WARMUP_STEPS, math.inf, start_at)
    return {"sha256": weights_digest(model), "seconds_per_step": timing["seconds_per_step"], "window": list(window),
            "peak_memory_mb": timing["peak_memory_mb"]}


def group_train_and_time(jobs: list[TrainJob], device: torch.device, steps: int,
                         start_at: float | None = None) -> dict[str, Any]:
    """``jobs`` trained ``steps`` steps from their seeds as one batched group (``gpu_backlog.timed_learner``, its first
    step not before ``start_at``): ``train_and_time``'s fields, the digest of the whole group's weights."""
    fresh_peak(device)
    module, seconds, window, _ = timed_learner(jobs, device, steps - WARMUP_STEPS, WARMUP_STEPS, start_at)
    return {"sha256": weights_digest(module), "seconds_per_step": seconds, "window": list(window),
            "peak_memory_mb": device_memory(device)["peak_memory_mb"]}


def launch(spec: dict[str, Any] | list[dict[str, Any]], device: str, steps: int, copies: int,
           scratch: Path) -> list[dict[str, Any]]:
    """``copies`` worker processes (``gpu-pack --worker``) on ``spec`` (a job, or a batched group's list), their first
    steps together ``BARRIER_S`` seconds after their start (their imports and model builds take some of it); their
    results."""
    outs = [scratch / f"worker_{time.monotonic_ns()}_{i}.json" for i in range(copies)]
    command = [sys.executable, "-m", "iclab", "gpu-pack", "--worker", json.dumps(spec), "--device", device,
               "--steps", str(steps), "--start-at", str(time.time() + BARRIER_S)]
    workers = [subprocess.Popen(command + ["--out", str(out)], env=os.environ.copy()) for out in outs]
    for worker in workers:
        if worker.wait() != 0:
            raise RuntimeError(f"gpu-pack worker exited with {worker.returncode}: {' '.join(command)}")
    return [json.loads(out.read_text()) for out in outs]


def overlap(windows: list[list[float]]) -> float:
    """The share of the longest timed window during which every window was open."""
    common = min(end for _, end in windows) - max(start for start, _ in windows)
    return max(common, 0.0) / max(end - start for start, end in windows)


def busiest_shape(config: Path) -> Shape:
    """The tier's training shape with the most models (its largest share of FLOPs first among equals)."""
    shapes = tier_shapes(config)
    return max(shapes, key=lambda shape: (shape.models, shape.share))


def chosen_shape(config: Path, which: str) -> Shape:
    """``busiest`` (the most models), ``longest`` (the longest prompts) or ``lstm`` (the LSTM with the most models)."""
    if which == "busiest":
        return busiest_shape(config)
    shapes = tier_shapes(config)
    if which == "longest":
        return longest(shapes)
    lstms = [shape for shape in shapes if shape.job.model["name"] == "lstm"]
    if which != "lstm" or not lstms:
        raise UsageError(f"gpu-pack: --shape {which}; allowed: {', '.join(PACKED)}"
                         + ("" if which != "lstm" else f" (config {config} trains no LSTM)"))
    return max(lstms, key=lambda shape: (shape.models, shape.share))


def batched_group(config: Path) -> tuple[str, list[TrainJob]]:
    """The tier's batched group of GPT-2s (``gpu_backlog.batched_groups``: its first experiment and the members it
    trains, at the full shape) with the most members among those two of whose GPU memory requests
    (``cluster.group_device_memory_mb``) fit one ``PACK_CARD_MB`` card; the most training FLOPs among equals."""
    groups = batched_groups(config)
    if not groups:
        raise UsageError(f"gpu-pack: --shape batched; config {config} trains no batched group (batched_training)")
    fitting = [(experiment, jobs) for experiment, jobs in groups
               if 2 * cluster.group_device_memory_mb([job.to_dict() for job in jobs]) <= PACK_CARD_MB]
    if not fitting:
        raise UsageError(f"gpu-pack: --shape batched; no batched group of config {config} fits twice on a "
                         f"{PACK_CARD_MB} MB card")
    return max(fitting, key=lambda group: len(group[1]))  # max keeps the first (most FLOPs) among equals


def packed_training(config: Path, which: str, tiny_shape: bool) -> tuple[str, dict | list[dict], int]:
    """What ``pack`` packs: the experiment, the spec a worker trains (a job's, or a batched group's list) and how
    many models train at it in the tier (a group: its members)."""
    if which == "batched":
        experiment, jobs = batched_group(config)
        return experiment, [(tiny_job(job) if tiny_shape else job).to_dict() for job in jobs], len(jobs)
    shape = chosen_shape(config, which)
    return shape.experiment, (tiny(shape) if tiny_shape else shape).spec, shape.models


SHAPES = ("busiest", "longest", "lstm")  # a model's shapes (chosen_shape)
PACKED = (*SHAPES, "batched")  # what --shape packs
# Seconds from starting the workers to their first steps: the GPU image's imports and a model build take ~10 (the
# first H200 run); the LSTM's windows overlapped 22% when each started as soon as it could (the second)
BARRIER_S = 20.0
PACK_CARD_MB = 80_000  # the smaller card lent (the H100's 80 GB): two packed batched groups must fit it
MPS_CONTROL = "nvidia-cuda-mps-control"  # NVIDIA's MPS daemon's control program


@contextmanager
def mps_daemon(scratch: Path) -> Iterator[None]:
    """NVIDIA's MPS daemon (``MPS_CONTROL -d``) for the processes this one starts: its pipe and log folders under
    ``scratch``, in this process's environment (which workers inherit) while it runs; stopped (``quit``) after."""
    control = shutil.which(MPS_CONTROL)
    if control is None:
        raise UsageError(f"gpu-pack --mps: {MPS_CONTROL} is not on PATH")
    folders = {"CUDA_MPS_PIPE_DIRECTORY": scratch / "mps_pipe", "CUDA_MPS_LOG_DIRECTORY": scratch / "mps_log"}
    for folder in folders.values():
        folder.mkdir()
    saved = {name: os.environ.get(name) for name in folders}
    os.environ.update({name: str(folder) for name, folder in folders.items()})
    try:
        subprocess.run([control, "-d"], stdin=subprocess.DEVNULL, check=True)
        yield
    finally:
        subprocess.run([control], input="quit\n", text=True, check=False)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name)
            else:
                os.environ[name] = value


def pack(config: Path, out_dir: Path, k: int, steps: int, tiny_shape: bool, which: str = "busiest",
         mps: bool = False) -> Path:
    """``python -m iclab gpu-pack`` (module docstring): on CUDA, or at a tiny shape on the CPU."""
    if steps <= WARMUP_STEPS:
        raise UsageError(f"gpu-pack: --steps {steps}; allowed: more than the {WARMUP_STEPS} warm-up steps")
    if not tiny_shape and not torch.cuda.is_available():
        raise UsageError("gpu-pack: no CUDA device here (torch.cuda.is_available() is False); "
                         "--tiny runs it at a tiny shape on the CPU")
    device = torch.device("cpu" if tiny_shape else "cuda")
    experiment, spec, models = packed_training(config, which, tiny_shape)
    card = card_name(device)
    path = out_dir / f"gpu_pack_{which}{'_mps' if mps else ''}_{file_card(card)}.json"
    found = {"card": card, "shape": which, "experiment": experiment, "models_at_this_shape": models, "spec": spec,
             "steps": steps, "k": k, "mps": mps}
    if mps and shutil.which(MPS_CONTROL) is None:
        write_text(path, json.dumps(found | {"not_run": f"{MPS_CONTROL} is not on PATH: no MPS daemon in this "
                                                        "image"}, indent=1) + "\n")
        return path
    with tempfile.TemporaryDirectory() as scratch:
        alone = [launch(spec, device.type, steps, 1, Path(scratch))[0] for _ in range(2)]
        with mps_daemon(Path(scratch)) if mps else nullcontext():
            packed = launch(spec, device.type, steps, k, Path(scratch))
    alone_s = min(run["seconds_per_step"] for run in alone)
    packed_s = sum(run["seconds_per_step"] for run in packed) / k
    write_text(path, json.dumps(found | {
        "alone": alone, "packed": packed, "alone_bit_for_bit": alone[0]["sha256"] == alone[1]["sha256"],
        "packed_equal_alone": all(run["sha256"] == alone[0]["sha256"] for run in packed),
        "slowdown": packed_s / alone_s, "throughput_gain": k * alone_s / packed_s,
        "packed_overlap": overlap([run["window"] for run in packed]),
    }, indent=1) + "\n")
    return path


def worker_result(spec: dict[str, Any] | list[dict[str, Any]], device: torch.device, steps: int,
                  start_at: float | None = None) -> dict[str, Any]:
    """One packed or lone training: a job's ``train_and_time``, or (``spec`` a list) a batched group's
    ``group_train_and_time``."""
    if isinstance(spec, list):
        return group_train_and_time([TrainJob.from_dict(job) for job in spec], device, steps, start_at)
    return train_and_time(TrainJob.from_dict(spec), device, steps, start_at)


def worker(spec: str, device: str, steps: int, out: Path, start_at: float | None = None) -> None:
    """``gpu-pack --worker``: ``worker_result`` of the JSON ``spec``, written to ``out``."""
    write_text(out, json.dumps(worker_result(json.loads(spec), torch.device(device), steps, start_at)))
