"""cluster.py's GPU memory model of a GPT-2 training step (``gpt2_device_activations``: SDPA stores no attention
scores) against one step's measured peak: on this CPU, and on the H200 of the second GPU run.

    python benchmarks/gpu_memory_model.py [--rates benchmarks/results/gpu_h200_2026-11-27_run2/gpu_rates_nvidia_h200.csv]

CPU: each shape in a fresh process (``--worker``): the model, optimizer and batch built, then one training step; the
rise of the process's peak resident memory (VmHWM) over its resident memory before the step. The step makes the
gradients (4 B a parameter) and Adam's moments (8 B), so the model's figure is its activations plus 12 B a
parameter. GPU: torch's peak allocation over a timed run (gpu-check's ``peak_memory_mb``), which holds the weights
too: the model's activations plus 16 B a parameter. Shapes: gpu_node's single_index GPT-2 (514 tokens, bf16) and
probe_layers' (82 tokens, float32), both with gelu_pytorch_tanh as gpu_node trains them. Writes
``benchmarks/results/gpu_memory_model.json``.
"""

from __future__ import annotations

import argparse
import csv
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "results" / "gpu_memory_model.json"
SHAPES = {"single_index": 0, "probe_layers": 2}  # index among gpu_node's tier shapes (gpu_check.tier_shapes)


def resident_mb() -> float:
    """VmRSS of this process, MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def worker(spec: str) -> None:
    """One training step of ``spec`` in this fresh process: prints the rise of peak resident memory over the step."""
    import torch

    from iclab.fit.sgd import batch_at, make_optimizer, train_step
    from iclab.store.jobs import TrainJob
    from iclab.models import build_model
    from iclab.tasks import task_from_dict

    torch.set_num_threads(2)
    job = TrainJob.from_dict(json.loads(spec))
    cfg, task = job.train, task_from_dict(job.task)
    model = build_model(job.model, task.d)
    optimizer = make_optimizer(cfg, model.parameters())
    batch = batch_at(cfg, task, 0, 0, None)
    prompts = torch.from_numpy(batch.xs), torch.from_numpy(batch.ys)
    before, started = resident_mb(), time.perf_counter()
    train_step(model, model, optimizer, cfg, prompts, task.n_points, cfg.lr)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"before_mb": before, "peak_mb": peak, "rise_mb": peak - before,
                      "seconds": time.perf_counter() - started}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", type=Path, help="a gpu-check rates file whose peak_memory_mb rows to compare")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.worker)
    from iclab.compute import cluster
    from iclab.compute.gpu_check import tier_shapes

    shapes = tier_shapes(REPO / "config" / "gpu_node.yaml")
    measured_gpu = {}
    if args.rates:
        with open(args.rates, newline="") as f:
            measured_gpu = {row["key"]: float(row["peak_memory_mb"]) for row in csv.DictReader(f)
                            if row["loop"] == "new" and row["compile"] == "false" and row["peak_memory_mb"]}
    rows = []
    for name, index in SHAPES.items():
        spec = shapes[index].spec
        size = cluster.model_size(spec)
        run = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)], capture_output=True,
                             text=True, check=True)
        cpu = json.loads(run.stdout.splitlines()[-1])
        model_cpu_mb = (size.on_device + 12 * size.parameters) / 2**20
        row = {"shape": name, "model": spec["model"], "precision": spec["train"].get("precision", "float32"),
               "tokens": 2 * spec["task"]["n_points"], "batch": spec["train"]["batch_size"],
               "model_activations_mb": size.on_device / 2**20, "cpu": cpu, "model_cpu_mb": model_cpu_mb,
               "cpu_ratio": model_cpu_mb / cpu["rise_mb"],
               "old_model_activations_mb": size.activation_bytes / 2**20}
        key = cluster.step_key(spec)
        if key in measured_gpu:
            model_gpu_mb = (size.on_device + 16 * size.parameters) / 2**20
            row |= {"gpu_peak_mb": measured_gpu[key], "model_gpu_mb": model_gpu_mb,
                    "gpu_ratio": model_gpu_mb / measured_gpu[key]}
        rows.append(row)
        print(json.dumps(row))
    OUT.write_text(json.dumps({"rates": str(args.rates), "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
