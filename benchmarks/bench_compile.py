"""Benchmark: torch.compile of the training step (``train.compile``) on this CPU, one thread (``threads: 1``).

    python benchmarks/bench_compile.py            # writes benchmarks/results/compile.json (~15 min)
    python benchmarks/bench_compile.py --padded   # adds part 1 with train.pad_points = K to it (~2 min)

1. Recompiles: every distinct GPT-2 and LSTM training of ``config.yaml`` with a curriculum, its model compiled as
   ``iclab.fit.sgd.step_model`` compiles it, is stepped once on the first batch of each curriculum stage: the
   graphs Inductor is handed (the first compile, then one per recompile or graph break) against the stages.
2. Rates: every distinct GPT-2 training of the default, on the batch of its last step (the curriculum's full
   size): steps/s eager and compiled (medians of ``RATE_ROUNDS`` × ``RATE_STEPS`` steps, alternated, after the
   compiled model's first step), and that first step's seconds with an empty Inductor cache (a cold compile, as a
   job on a fresh machine pays it). Projected whole training: steps ÷ eager rate against compile + steps ÷ compiled
   rate (the curriculum's recompiles, part 1, not counted).
3. Speed: the default's ltb_table1 GPT-2 (the one GPT-2 of the default trained without a curriculum, so every
   step has one shape), trained whole by ``iclab.fit.sgd.train`` eager and compiled (each compiled run with an
   empty Inductor cache), alternated, ``ROUNDS`` times each: wall seconds of the training (compile included) and
   the compiled run's ratio, with its losses' largest difference from the eager run's.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from iclab.config import load
from iclab.fit.sgd import (CountingInductor, batch_at, curriculum_stage, loss_points, make_optimizer,
                          prompt_loss, train)
from iclab.store.jobs import TrainJob
from iclab.models import build_model
from iclab.pipeline.plan import build_plan
from iclab.tasks import task_from_dict

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "compile.json"
ROUNDS = 2
RATE_STEPS, RATE_ROUNDS = 50, 3
MODELS = ("gpt2", "lstm")


def trainings() -> dict[str, TrainJob]:
    """One job per distinct (model, task, training config) of the default config's GPT-2 and LSTM models, seed 0."""
    jobs = {}
    for job in build_plan(load(ROOT / "config.yaml")).train.values():
        if job.model["name"] in MODELS and job.seed == 0:
            task = task_from_dict(job.task)
            jobs.setdefault(f"{job.model} d={task.d} points={task.n_points} train={job.train}", job)
    return jobs


def stage_starts(job: TrainJob) -> list[int]:
    """The first step of each curriculum stage (the shapes a training meets)."""
    task = task_from_dict(job.task)
    starts, seen = [], set()
    for step in range(job.train.steps):
        shape = curriculum_stage(job.train, task, step)
        if shape not in seen:
            seen.add(shape)
            starts.append(step)
    return starts


def graphs_over_the_curriculum(job: TrainJob) -> dict:
    """One compiled training step on the first batch of each stage (at its padded length where ``train.pad_points``
    is set): the graphs compiled, the stages, the seconds."""
    task = task_from_dict(job.task)
    torch.manual_seed(job.seed)
    model = build_model(job.model, task.d)
    optimizer = make_optimizer(job.train, model.parameters())
    backend = CountingInductor()
    compiled = torch.compile(model, backend=backend)
    started = time.perf_counter()
    with torch._dynamo.config.patch(fail_on_recompile_limit_hit=True):
        for step in stage_starts(job):
            batch = batch_at(job.train, task, job.seed, step, None)
            optimizer.zero_grad(set_to_none=True)
            loss = prompt_loss(compiled, torch.from_numpy(batch.xs), torch.from_numpy(batch.ys),
                               job.train.loss_positions, loss_points(job.train, task, step, None))
            loss.backward()
            optimizer.step()
    torch._dynamo.reset()
    return {"stages": len(stage_starts(job)), "graphs": backend.graphs,
            "seconds": round(time.perf_counter() - started, 1)}


def cold_inductor_cache() -> None:
    """Point Inductor at an empty cache directory: the next compile pays in full, as on a fresh machine."""
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="iclab-bench-inductor-")
    torch._dynamo.reset()


def rates(job: TrainJob) -> dict:
    """Eager and compiled steps/s of ``job``'s model on its last step's batch, and the cold compile's seconds."""
    task = task_from_dict(job.task)
    batch = batch_at(job.train, task, job.seed, job.train.steps - 1, None)
    xs, ys = torch.from_numpy(batch.xs), torch.from_numpy(batch.ys)
    models = {}
    for variant in ("eager", "compiled"):
        torch.manual_seed(job.seed)
        model = build_model(job.model, task.d)
        models[variant] = (model, make_optimizer(job.train, model.parameters()))

    def steps(variant: str, forward, count: int) -> float:
        _, optimizer = models[variant]
        started = time.perf_counter()
        for _ in range(count):
            optimizer.zero_grad(set_to_none=True)
            prompt_loss(forward, xs, ys, job.train.loss_positions).backward()
            optimizer.step()
        return time.perf_counter() - started

    cold_inductor_cache()
    compiled = torch.compile(models["compiled"][0], backend=CountingInductor())
    compile_seconds = steps("compiled", compiled, 1)
    forwards = {"eager": models["eager"][0], "compiled": compiled}
    steps("eager", forwards["eager"], 1)  # warm-up
    per_second = {variant: [] for variant in forwards}
    for _ in range(RATE_ROUNDS):
        for variant, forward in forwards.items():
            per_second[variant].append(RATE_STEPS / steps(variant, forward, RATE_STEPS))
    eager, fast = (statistics.median(per_second[variant]) for variant in ("eager", "compiled"))
    total = job.train.steps
    return {"steps": total, "eager steps/s": round(eager, 2), "compiled steps/s": round(fast, 2),
            "cold compile s": round(compile_seconds, 1),
            "projected training s (eager, compiled)": [round(total / eager, 1),
                                                       round(compile_seconds + total / fast, 1)],
            "projected eager / compiled": round((total / eager) / (compile_seconds + total / fast), 3)}


def timed_training(job: TrainJob) -> tuple[float, np.ndarray]:
    started = time.perf_counter()
    _, losses, _ = train(job, log_every=job.train.steps)
    torch._dynamo.reset()  # the next compiled run compiles again, as a new job's process does
    return time.perf_counter() - started, losses


def padded_to_full_length(job: TrainJob) -> TrainJob:
    """``job`` with every curriculum stage trained at the task's full length (``train.pad_points`` = K)."""
    return replace(job, train=replace(job.train, pad_points=task_from_dict(job.task).n_points))


def padded_recompiles() -> None:
    """Part 1 again with ``train.pad_points`` = K, added to the results file (``--padded``)."""
    torch.set_num_threads(1)
    padded = {name: graphs_over_the_curriculum(padded_to_full_length(job))
              for name, job in trainings().items() if job.train.curriculum}
    for name, row in padded.items():
        print(name, row, flush=True)
    result = json.loads(OUT.read_text())
    result["recompiles over the curriculum, padded to the task's length (train.pad_points = K)"] = padded
    OUT.write_text(json.dumps(result, indent=2) + "\n")


def main() -> None:
    if sys.argv[1:] == ["--padded"]:
        padded_recompiles()
        return
    torch.set_num_threads(1)
    jobs = trainings()
    recompiles = {name: graphs_over_the_curriculum(job) for name, job in jobs.items() if job.train.curriculum}
    for name, row in recompiles.items():
        print(name, row, flush=True)
    speeds = {name: rates(job) for name, job in jobs.items() if job.model["name"] == "gpt2"}
    for name, row in speeds.items():
        print(name, row, flush=True)
    (name, eager), *_ = [(name, job) for name, job in jobs.items() if job.train.curriculum is None
                         and job.model["name"] == "gpt2"]
    compiled = replace(eager, train=replace(eager.train, compile=True))
    seconds, losses = {"eager": [], "compiled": []}, {}
    for _ in range(ROUNDS):
        for variant, job in (("eager", eager), ("compiled", compiled)):
            cold_inductor_cache()
            elapsed, losses[variant] = timed_training(job)
            seconds[variant].append(round(elapsed, 1))
            print(variant, seconds[variant][-1], flush=True)
    speed = {
        "training": name,
        "steps": eager.train.steps,
        "seconds (alternated)": seconds,
        "compiled / eager (median seconds)": statistics.median(seconds["compiled"]) / statistics.median(
            seconds["eager"]),
        "largest loss difference": float(np.max(np.abs(losses["compiled"] - losses["eager"]))),
    }
    result = {"machine": platform.machine(), "torch": torch.__version__, "threads": 1,
              "recompiles over the curriculum": recompiles, "rates": speeds, "whole training": speed}
    OUT.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
