"""Dispatcher ops and host time of one training step, G GPT-2s of one shape batched (``iclab.fit.batched``) against G
trained one after another (issue 98).

    PYTHONPATH=src python benchmarks/batched_ops.py   # writes benchmarks/results/batched_ops.json (~2 min, alone)

The shape is gpu_node's probe_hidden_size GPT-2 at width 8 (12 layers, 1 head, d = 20, 41 points interleaved, 64
prompts): the smallest 12-layer GPT-2 a tier trains, whose step is all launches. A step is the loop's: the loss at
every position, its backward, and fused Adam. At 1 prompt a batch the step computes next to nothing, so its time is
the host's overhead (dispatch, vmap's batching rules, Python). Ops are the aten calls a ``TorchDispatchMode`` sees
below autograd and vmap (the kernels a device would launch, on the CPU), for SDPA attention (the models' default)
and eager attention; the time is the median of ``TIMED`` steps on one thread, after ``WARM`` steps. On a GPU the op
count is the launch count that sets a host-bound step's time; the CPU's time is not that (its kernels are compute,
not launches), and SDPA's CPU kernel has no vmap batching rule (CUDA's flash, memory-efficient and cuDNN ones have).
"""

from __future__ import annotations

import json
import platform
import statistics
import time
from collections import Counter
from pathlib import Path

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from iclab.atomic import write_text
from iclab.fit.batched import ModelGroup, member_losses
from iclab.fit.sgd import prompt_loss
from iclab.models import build_model

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "batched_ops.json"
SPEC = {"name": "gpt2", "n_embd": 8, "n_layer": 12, "n_head": 1, "n_points": 41, "activation": "gelu_pytorch_tanh"}
D, BATCHES, SIZES, WARM, TIMED = 20, (64, 1), (1, 4, 16), 3, 10


class OpCounter(TorchDispatchMode):
    """The aten calls of a step: all, and those that compute (not a view: a view launches no kernel on a GPU)."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: Counter[str] = Counter()
        self.view_ops: set[str] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops[str(func.overloadpacket)] += 1
        if func.is_view:
            self.view_ops.add(str(func.overloadpacket))
        return func(*args, **(kwargs or {}))


def models(size: int, attention: str) -> list[torch.nn.Module]:
    out = []
    for seed in range(size):
        torch.manual_seed(seed)
        model = build_model(SPEC, D)
        model.backbone.config._attn_implementation = attention
        out.append(model)
    return out


def loss(model, xs, ys):
    return prompt_loss(model, xs, ys, "all")


def batched_step(group: ModelGroup, optimizer, xs, ys) -> None:
    optimizer.zero_grad(set_to_none=True)
    member_losses(group, xs, ys, loss).sum().backward()
    optimizer.step()


def separate_steps(members, optimizers, xs, ys) -> None:
    for g, (model, optimizer) in enumerate(zip(members, optimizers)):
        optimizer.zero_grad(set_to_none=True)
        loss(model, xs[g], ys[g]).backward()
        optimizer.step()


def measure(step) -> tuple[int, int, dict[str, int], float]:
    """(ops of one step, its ops that are not views, its most frequent non-view ops, median host ms of a step)."""
    for _ in range(WARM):
        step()
    with OpCounter() as counter:
        step()
    times = []
    for _ in range(TIMED):
        start = time.perf_counter()
        step()
        times.append(1e3 * (time.perf_counter() - start))
    computing = Counter({op: n for op, n in counter.ops.items() if op not in counter.view_ops})
    return sum(counter.ops.values()), sum(computing.values()), dict(computing.most_common(6)), statistics.median(times)


def row(size: int, attention: str, batch: int) -> dict:
    generator = torch.Generator().manual_seed(0)
    xs = torch.randn(size, batch, SPEC["n_points"], D, generator=generator)  # (G, B, K, d)
    ys = torch.randn(size, batch, SPEC["n_points"], generator=generator)  # (G, B, K)
    members = models(size, attention)
    group = ModelGroup(members)
    group_adam = torch.optim.Adam(group.parameters(), lr=1e-4, fused=True)
    adams = [torch.optim.Adam(m.parameters(), lr=1e-4, fused=True) for m in members]
    ops, kernels, top, ms = measure(lambda: batched_step(group, group_adam, xs, ys))
    ops_alone, kernels_alone, _, ms_alone = measure(lambda: separate_steps(members, adams, xs, ys))
    return {"attention": attention, "group_size": size, "batch_size": batch, "batched_ops": ops,
            "separate_ops": ops_alone,
            "batched_non_view_ops": kernels, "separate_non_view_ops": kernels_alone,
            "batched_ms": round(ms, 2), "separate_ms": round(ms_alone, 2), "batched_top_non_view_ops": top}


def main() -> None:
    torch.set_num_threads(1)
    rows = [row(size, attention, batch) for batch in BATCHES for attention in ("sdpa", "eager") for size in SIZES]
    for r in rows:
        print(f"{r['attention']:5} B={r['batch_size']:2} G={r['group_size']:2}: ops {r['batched_ops']:5} batched, "
              f"{r['separate_ops']:6} separate; not views {r['batched_non_view_ops']:5} batched, "
              f"{r['separate_non_view_ops']:6} separate; "
              f"{r['batched_ms']:7.1f} ms batched, {r['separate_ms']:7.1f} ms separate")
    record = {"what": __doc__.split("\n\n")[0], "shape": SPEC | {"d": D}, "rows": rows,
              "torch": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability(),
              "machine": platform.machine(), "threads": 1}
    write_text(OUT, json.dumps(record, indent=1) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
