"""Trainings packed on one GPU, measured (``python -m iclab gpu-pack``): the prepared check of gpu_node's packing
(docs/gpu_node.md), for a session with a GPU. Like ``iclab.compute.gpu_check`` it runs where only torch, transformers,
numpy, pandas and pyyaml are installed (``PYTHONPATH=src python3 -m iclab gpu-pack``).

For the tier's training shape that trains the most models (``gpu_check.tier_shapes``, at its full shape, seed 0), in
fresh processes, each training ``steps`` steps in the training loop (``gpu_check.trained_and_timed``, under
``fit.sgd.deterministic_kernels``):

1. the training alone, twice: whether the two runs' weights are the same bit for bit (their SHA-256), seconds a step
   after ``gpu_check.WARMUP_STEPS``, peak device memory;
2. k copies of it at once on the one device: whether each one's weights equal the lone run's bit for bit, their
   seconds a step (the slowdown against alone; k over it is packing's gain in throughput), peak memory, and how much
   of the k timed windows overlapped (the processes start seconds apart).

Writes ``gpu_pack_<card>.json`` (atomic). ``--tiny`` runs the same on the CPU at tiny widths (the suite's check): no
number of it is a speed of anything.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from iclab.atomic import write_text
from iclab.errors import UsageError
from iclab.compute.gpu_check import (WARMUP_STEPS, Shape, card_name, file_card, longest, tier_shapes, tiny,
                                     trained_and_timed, weights_digest)
from iclab.store.jobs import TrainJob


def train_and_time(job: TrainJob, device: torch.device, steps: int, start_at: float | None = None) -> dict[str, Any]:
    """``job`` trained ``steps`` steps from its seed in the training loop (``gpu_check.trained_and_timed``, no time
    cap, its first step not before ``start_at``): its weights' digest, seconds a step after the warm-up, the timed
    window (epoch seconds) and peak memory."""
    model, timing, window = trained_and_timed(job, device, False, steps - WARMUP_STEPS, math.inf, start_at)
    return {"sha256": weights_digest(model), "seconds_per_step": timing["seconds_per_step"], "window": list(window),
            "peak_memory_mb": timing["peak_memory_mb"]}


def launch(spec: dict[str, Any], device: str, steps: int, copies: int, scratch: Path) -> list[dict[str, Any]]:
    """``copies`` worker processes (``gpu-pack --worker``) on ``spec``, their first steps together ``BARRIER_S``
    seconds after their start (their imports and model builds take some of it); their results."""
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
        raise UsageError(f"gpu-pack: --shape {which}; allowed: {', '.join(SHAPES)}"
                         + ("" if which != "lstm" else f" (config {config} trains no LSTM)"))
    return max(lstms, key=lambda shape: (shape.models, shape.share))


SHAPES = ("busiest", "longest", "lstm")
# Seconds from starting the workers to their first steps: the GPU image's imports and a model build take ~10 (the
# first H200 run); the LSTM's windows overlapped 22% when each started as soon as it could (the second)
BARRIER_S = 20.0


def pack(config: Path, out_dir: Path, k: int, steps: int, tiny_shape: bool, which: str = "busiest") -> Path:
    """``python -m iclab gpu-pack`` (module docstring): on CUDA, or at a tiny shape on the CPU."""
    if steps <= WARMUP_STEPS:
        raise UsageError(f"gpu-pack: --steps {steps}; allowed: more than the {WARMUP_STEPS} warm-up steps")
    if not tiny_shape and not torch.cuda.is_available():
        raise UsageError("gpu-pack: no CUDA device here (torch.cuda.is_available() is False); "
                         "--tiny runs it at a tiny shape on the CPU")
    device = torch.device("cpu" if tiny_shape else "cuda")
    shape = chosen_shape(config, which)
    shape = tiny(shape) if tiny_shape else shape
    with tempfile.TemporaryDirectory() as scratch:
        alone = [launch(shape.spec, device.type, steps, 1, Path(scratch))[0] for _ in range(2)]
        packed = launch(shape.spec, device.type, steps, k, Path(scratch))
    alone_s = min(run["seconds_per_step"] for run in alone)
    packed_s = sum(run["seconds_per_step"] for run in packed) / k
    result = {
        "card": card_name(device), "shape": which, "experiment": shape.experiment, "models_at_this_shape": shape.models,
        "spec": shape.spec, "steps": steps, "k": k, "alone": alone, "packed": packed,
        "alone_bit_for_bit": alone[0]["sha256"] == alone[1]["sha256"],
        "packed_equal_alone": all(run["sha256"] == alone[0]["sha256"] for run in packed),
        "slowdown": packed_s / alone_s, "throughput_gain": k * alone_s / packed_s,
        "packed_overlap": overlap([run["window"] for run in packed]),
    }
    path = out_dir / f"gpu_pack_{which}_{file_card(result['card'])}.json"
    write_text(path, json.dumps(result, indent=1) + "\n")
    return path


def worker(spec: str, device: str, steps: int, out: Path, start_at: float | None = None) -> None:
    """One packed or lone training (``gpu-pack --worker``): its ``train_and_time`` written to ``out``."""
    result = train_and_time(TrainJob.from_dict(json.loads(spec)), torch.device(device), steps, start_at)
    write_text(out, json.dumps(result))
