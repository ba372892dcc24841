"""Benchmark: bfloat16 autocast for the GPT-2 and LSTM training of the default config, on this CPU (issue 49).

    python benchmarks/bench_bf16.py   # writes benchmarks/results/bf16.json

Every distinct GPT-2 and LSTM training of ``config.yaml`` (model spec, prompt shape, batch) is timed as the
pipeline trains it — iclab's model, fused Adam, the loss of its config, one thread (``threads: 1``, jobs side by
side) — in float32 and under ``torch.autocast("cpu", dtype=torch.bfloat16)``, alternating, on the batch of the
job's last step (the curriculum's full size); the median of ``ROUNDS`` timings of ``STEPS`` steps each is kept.
Also: the loss after ``CHECK_STEPS`` steps both ways from the same initialisation and batches, and whether the
CPU reports avx512_bf16 (bfloat16 dot products) and amx_bf16.
"""

from __future__ import annotations

import json
import platform
import statistics
import time
from pathlib import Path

import torch

from iclab.config import load
from iclab.fit.sgd import batch_at, make_optimizer, prompt_loss
from iclab.models import build_model
from iclab.pipeline.plan import build_plan
from iclab.tasks import task_from_dict

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "bf16.json"
STEPS, ROUNDS, CHECK_STEPS = 20, 5, 200
MODELS = ("gpt2", "lstm")


def distinct_trainings() -> dict[str, object]:
    """One job per distinct (model, prompt shape, batch, loss) of the default config's GPT-2 and LSTM models,
    named by its experiment-independent description."""
    jobs = {}
    for job in build_plan(load(ROOT / "config.yaml")).train.values():
        if job.model["name"] not in MODELS:
            continue
        task = task_from_dict(job.task)
        size = {k: job.model[k] for k in ("n_embd", "n_layer", "n_head", "hidden", "layers") if k in job.model}
        name = (f"{job.model['name']} {size} d={task.d} points={task.n_points} batch={job.train.batch_size} "
                f"loss={job.train.loss_positions} mlp={job.model.get('mlp', True)}")
        jobs.setdefault(name, job)
    return jobs


class Loop:
    """A training step of ``job``'s model on its last step's batch, in float32 or under bf16 autocast."""

    def __init__(self, job, bf16: bool):
        self.job, self.bf16 = job, bf16
        task = task_from_dict(job.task)
        torch.manual_seed(job.seed)
        self.model = build_model(job.model, task.d)
        self.optimizer = make_optimizer(job.train, self.model.parameters())
        self.task = task

    def batch(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        batch = batch_at(self.job.train, self.task, self.job.seed, step, None)
        return torch.from_numpy(batch.xs), torch.from_numpy(batch.ys)

    def step(self, xs: torch.Tensor, ys: torch.Tensor) -> float:
        self.optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
            loss = prompt_loss(self.model, xs, ys, self.job.train.loss_positions)
        loss.float().backward()
        self.optimizer.step()
        return float(loss.detach())

    def steps_per_second(self, xs: torch.Tensor, ys: torch.Tensor) -> float:
        start = time.perf_counter()
        for _ in range(STEPS):
            self.step(xs, ys)
        return STEPS / (time.perf_counter() - start)


def final_loss(job, bf16: bool) -> float:
    """The mean loss of the last 20 of ``CHECK_STEPS`` steps on the job's own batches, from its initialisation."""
    loop = Loop(job, bf16)
    losses = [loop.step(*loop.batch(step)) for step in range(CHECK_STEPS)]
    return statistics.fmean(losses[-20:])


def cpu_flags() -> dict[str, bool]:
    text = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    return {flag: f" {flag}" in text for flag in ("avx512_bf16", "amx_bf16")}


def main() -> None:
    torch.set_num_threads(1)
    rows = []
    for name, job in distinct_trainings().items():
        loops = {"float32": Loop(job, False), "bf16 autocast": Loop(job, True)}
        xs, ys = loops["float32"].batch(job.train.steps - 1)
        timings = {variant: [] for variant in loops}
        for loop in loops.values():
            loop.step(xs, ys)  # warm-up
        for _ in range(ROUNDS):
            for variant, loop in loops.items():
                timings[variant].append(loop.steps_per_second(xs, ys))
        rate = {variant: statistics.median(values) for variant, values in timings.items()}
        rows.append({
            "training": name,
            "steps in the config": job.train.steps,
            "float32 steps/s": rate["float32"],
            "bf16 steps/s": rate["bf16 autocast"],
            "bf16 / float32": rate["bf16 autocast"] / rate["float32"],
            f"float32 loss after {CHECK_STEPS} steps": final_loss(job, False),
            f"bf16 loss after {CHECK_STEPS} steps": final_loss(job, True),
        })
        print(rows[-1], flush=True)
    result = {"machine": platform.machine(), "torch": torch.__version__, "threads": 1, "steps": STEPS,
              "rounds": ROUNDS, "cpu": cpu_flags(), "rows": rows}
    OUT.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
