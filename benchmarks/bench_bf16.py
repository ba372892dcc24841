"""Benchmark: bfloat16 autocast for the GPT-2 and LSTM training of the default config, on this CPU (issue 49).

    python benchmarks/bench_bf16.py               # writes benchmarks/results/bf16.json
    python benchmarks/bench_bf16.py --lstm-paths  # writes benchmarks/results/bf16_lstm_paths.json (issue 93)

Every distinct GPT-2 and LSTM training of ``config.yaml`` (model spec, prompt shape, batch) is timed as the
pipeline trains it — iclab's model, fused Adam, the loss of its config, one thread (``threads: 1``, jobs side by
side) — in float32 and under ``torch.autocast("cpu", dtype=torch.bfloat16)``, alternating, on the batch of the
job's last step (the curriculum's full size); the median of ``ROUNDS`` timings of ``STEPS`` steps each is kept.
Also: the loss after ``CHECK_STEPS`` steps both ways from the same initialisation and batches, and whether the
CPU reports avx512_bf16 (bfloat16 dot products) and amx_bf16.

``--lstm-paths``: the default's LSTM trainings only, each variant timed with oneDNN on and off (alternating, in one
run): off, torch runs the decomposed LSTM, its gates in bf16 and its states in float32, the path an AVX2 CPU
without oneDNN's bf16 takes for bf16 (``models.lstm.recurrent_precision``), while its float32 LSTM stays on oneDNN:
that CPU's bf16 / float32 is about "oneDNN off bf16 / oneDNN on float32" here (this CPU's kernels, not AVX2's).
"""

from __future__ import annotations

import argparse
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
LSTM_PATHS_OUT = ROOT / "benchmarks" / "results" / "bf16_lstm_paths.json"
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


def final_loss(job, bf16: bool, onednn: bool = True) -> float:
    """The mean loss of the last 20 of ``CHECK_STEPS`` steps on the job's own batches, from its initialisation."""
    torch.backends.mkldnn.enabled = onednn
    loop = Loop(job, bf16)
    losses = [loop.step(*loop.batch(step)) for step in range(CHECK_STEPS)]
    return statistics.fmean(losses[-20:])


def cpu_flags() -> dict[str, bool]:
    text = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    return {flag: f" {flag}" in text for flag in ("avx512_bf16", "amx_bf16")}


def lstm_paths() -> None:
    """The LSTM's float32 and bf16 steps with oneDNN on and off, alternating in one run."""
    torch.set_num_threads(1)
    rows = []
    variants = {(onednn, bf16) for onednn in (True, False) for bf16 in (False, True)}
    for name, job in distinct_trainings().items():
        if job.model["name"] != "lstm":
            continue
        loops = {variant: Loop(job, variant[1]) for variant in sorted(variants, reverse=True)}
        xs, ys = loops[True, False].batch(job.train.steps - 1)
        timings = {variant: [] for variant in loops}
        for _ in range(ROUNDS + 1):  # the first round warms up
            for (onednn, bf16), loop in loops.items():
                torch.backends.mkldnn.enabled = onednn
                timings[onednn, bf16].append(loop.steps_per_second(xs, ys))
        rate = {variant: statistics.median(values[1:]) for variant, values in timings.items()}
        row = {"training": name, "steps in the config": job.train.steps}
        for onednn in (True, False):
            path = f"oneDNN {'on' if onednn else 'off'}"
            row[f"{path}: float32 steps/s"] = rate[onednn, False]
            row[f"{path}: bf16 steps/s"] = rate[onednn, True]
            row[f"{path}: bf16 / float32"] = rate[onednn, True] / rate[onednn, False]
            row[f"{path}: bf16 loss after {CHECK_STEPS} steps"] = final_loss(job, True, onednn)
        # an AVX2 CPU runs float32 on oneDNN and bf16 decomposed: its choice, on this CPU's kernels
        row["oneDNN off bf16 / oneDNN on float32"] = rate[False, True] / rate[True, False]
        row[f"float32 loss after {CHECK_STEPS} steps"] = final_loss(job, False)
        rows.append(row)
        print(row, flush=True)
    torch.backends.mkldnn.enabled = True
    result = {"machine": platform.machine(), "torch": torch.__version__, "threads": 1, "steps": STEPS,
              "rounds": ROUNDS, "cpu": cpu_flags(), "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
              "onednn_bf16": bool(torch.ops.mkldnn._is_mkldnn_bf16_supported()), "rows": rows}
    LSTM_PATHS_OUT.write_text(json.dumps(result, indent=2) + "\n")


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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lstm-paths", action="store_true", help="the LSTM with oneDNN on and off only")
    lstm_paths() if parser.parse_args().lstm_paths else main()
