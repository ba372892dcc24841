"""Benchmark record (issue 100, item 1): one CUDA graph for a whole curriculum, or one a stage, decided on CPU grounds.

    python benchmarks/capture_curriculum.py   # writes benchmarks/results/capture_curriculum.json (~10 s)

A captured step needs one static shape. Garg et al.'s curriculum grows the prompts (11 → 41 points, +2 every 2,000
steps): either every step trains at the full length (``pad_points`` = K) with a loss masked by a length held on the
device (``sgd.masked_prompt_loss``: one graph for the run), or each stage is captured at its own length (16 graphs).
For each GPU training of ``config/gpu_node.yaml`` with a curriculum, from ``cluster.model_size`` at each stage's
length:

- the extra FLOPs of training every step at the full length, over the run (the 16 stages cover the first 30,000 of
  500,000 steps);
- the memory: the full length's activations, which the last stage holds anyway (no higher peak either way);
- equivalence: the masked loss against the sliced one (``sgd.prompt_loss``) on prompts padded to the full length, a
  2-layer GPT-2 at width 32 in float32 at each stage's length: the loss's and the gradients' largest difference,
  relative to the largest entry (round-off: the two reduce over other numbers of terms).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import torch

from iclab.atomic import write_text
from iclab.compute import cluster
from iclab.config import load
from iclab.fit.sgd import batch_at, curriculum_stage, masked_prompt_loss, prompt_loss
from iclab.models import build_model
from iclab.pipeline.plan import build_plan
from iclab.store.jobs import TrainJob
from iclab.tasks import task_from_dict

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "capture_curriculum.json"
CONFIG = ROOT / "config" / "gpu_node.yaml"


def flops_padded_over_sliced(spec: dict) -> dict:
    """A run's training FLOPs with every step at the full length over those with each stage at its own."""
    job = TrainJob.from_dict(spec)
    task, steps = task_from_dict(spec["task"]), spec["train"]["steps"]
    at = lambda points: cluster.model_size(spec | {"task": spec["task"] | {"n_points": points}}).flops_per_step  # noqa: E731
    every = spec["train"]["curriculum"]["every"]
    stages = {curriculum_stage(job.train, task, step)[1] for step in range(0, steps, every)}
    last = max(stages)
    sliced = sum(every * at(points) for points in stages if points < last)
    sliced += (steps - every * (len(stages) - 1)) * at(last)
    return {"stages": len(stages), "curriculum_steps": every * (len(stages) - 1), "extra_flops":
            steps * at(last) / sliced - 1}


def agreement(spec: dict) -> dict:
    """The masked loss against the sliced one at each stage's length, on prompts at the full length."""
    job = TrainJob.from_dict(spec)
    small = replace(job, model=job.model | {"n_embd": 32, "n_layer": 2, "n_head": 2},
                    train=replace(job.train, batch_size=8, pad_points=job.task["n_points"]))
    task = task_from_dict(small.task)
    torch.manual_seed(0)
    model = build_model(small.model, task.d)
    worst = {"loss": 0.0, "gradient": 0.0}
    for step in range(0, small.train.steps, small.train.curriculum["every"]):
        points = curriculum_stage(small.train, task, step)[1]
        batch = batch_at(small.train, task, 0, step, None)
        xs, ys = torch.from_numpy(batch.xs), torch.from_numpy(batch.ys)  # (B, K, d), (B, K): the full length
        found = []
        for loss in (lambda: prompt_loss(model, xs, ys, small.train.loss_positions, points),
                     lambda: masked_prompt_loss(model, xs, ys, small.train.loss_positions, torch.tensor(points))):
            model.zero_grad(set_to_none=True)
            value = loss()
            value.backward()
            found.append((value.detach(), torch.cat([p.grad.reshape(-1) for p in model.parameters()])))
        (sliced, grads), (masked, masked_grads) = found
        worst["loss"] = max(worst["loss"], float(abs(masked - sliced) / abs(sliced)))
        worst["gradient"] = max(worst["gradient"], float((masked_grads - grads).abs().max() / grads.abs().max()))
        if points == task.n_points:
            break
    return {"loss_rel": worst["loss"], "gradient_rel": worst["gradient"]}


def main() -> None:
    plan = build_plan(load(CONFIG))
    rows, seen = [], set()
    for spec in (job.to_dict() for job in plan.train.values()):
        if spec["model"]["name"] != "gpt2" or spec["train"].get("curriculum") is None:
            continue
        key = cluster.step_key(spec)
        if key in seen:
            continue
        seen.add(key)
        rows.append({"shape": f"{spec['model']['n_layer']} × {spec['model']['n_embd']}, d {spec['task']['d']}, "
                              f"{spec['task']['n_points']} points, {spec['train'].get('precision', 'float32')}",
                     "steps": spec["train"]["steps"],
                     **flops_padded_over_sliced(spec), **agreement(spec)})
    write_text(OUT, json.dumps({"config": str(CONFIG.relative_to(ROOT)), "shapes": rows}, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
