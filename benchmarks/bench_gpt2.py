"""Benchmark: GPT-2 in-context training throughput on this machine (issue 31: faster GPT-2 training).

    python benchmarks/bench_gpt2.py   # writes benchmarks/results/gpt2.json

Garg et al.'s setting: d = 20, 41 points (82 interleaved tokens), batch 64, Adam, loss at every position.
Every variant is timed in the same run, alternating, so that their ratios are comparable (the machine is shared):
- stock: transformers' GPT2Model as a straightforward loop builds it (vocabulary table, gelu_new, sdpa attention),
  torch's default Adam; the read-in and read-out around it;
- iclab before: GPT2Learner with gelu_pytorch_tanh, torch's default Adam, transformers' forward pass over every
  token (the loop before issue 31);
- one change at a time on top of it: exact GELU (``gelu``), fused Adam, torch.compile (its first step, with the
  compilation, is reported apart), the last block at the x tokens only (``GPT2Learner.read_states``);
- iclab: what training uses now (``gelu``, fused Adam by ``iclab.fit.sgd.make_optimizer``, the last block at the
  x tokens).
The default size runs at 1 thread (as the pipeline runs it: ``threads: 1``, jobs side by side), the paper size at
2; each FLOP/s counts the FLOPs the variant performs (fewer in the last block when it runs at the x tokens only)
and is a share of the same thread count's dense float32 matmul FLOP/s measured in the same run.
"""

from __future__ import annotations

import json
import os
import platform
import tempfile
import time
from pathlib import Path

import torch
from torch import nn
from transformers import GPT2Config, GPT2Model

from iclab.fit.sgd import TrainConfig, make_optimizer
from iclab.models.gpt2 import GPT2Learner
from iclab.models.prompts import interleave

OUT = Path(__file__).parent / "results" / "gpt2.json"
D, POINTS, BATCH = 20, 41, 64
SIZES = {"default (64/3/2)": ((64, 3, 2), 1, 40), "paper (256/12/8)": ((256, 12, 8), 2, 3)}  # threads, steps
ROUNDS = 5  # each variant is timed this many times, interleaved with the others; the median is kept


class StockGPT2(nn.Module):
    """The straightforward build: stock config (vocabulary 50257, gelu_new), read-in and read-out."""

    def __init__(self, n_embd: int, n_layer: int, n_head: int):
        super().__init__()
        config = GPT2Config(n_positions=2 * POINTS, n_embd=n_embd, n_layer=n_layer, n_head=n_head,
                            resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, use_cache=False)
        self.backbone = GPT2Model(config)
        self.read_in, self.read_out = nn.Linear(D + 1, n_embd), nn.Linear(n_embd, 1)

    def forward(self, xs: torch.Tensor, ys: torch.Tensor) -> torch.Tensor:
        states = self.backbone(inputs_embeds=self.read_in(interleave(xs, ys))).last_hidden_state  # (B, 2K, E)
        return self.read_out(states[:, 0::2])[..., 0]  # (B, K)


def matmul_flops(seconds: float = 2.0) -> float:
    """Dense float32 matmul FLOP/s (1024 × 1024 products) with the current thread count."""
    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    a @ b
    count, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        a @ b
        count += 1
    return 2 * 1024**3 * count / (time.perf_counter() - t0)


def step_flops(n_embd: int, n_layer: int, read_tokens: int) -> float:
    """Training FLOPs a step performs (fwd + bwd): 6 · (block parameters) · tokens + attention's T² terms, with
    the last block's queries, projection and MLP at ``read_tokens`` tokens only (its keys and values at all)."""
    tokens = 2 * POINTS
    dense = (n_layer - 1) * 12 * tokens + 2 * tokens + 10 * read_tokens  # E² multiply-adds a sequence, fwd
    attention = (n_layer - 1) * tokens**2 + read_tokens * tokens  # query-key pairs a sequence
    return BATCH * (6 * dense * n_embd**2 + 12 * attention * n_embd)


class EveryToken(GPT2Learner):
    """GPT2Learner as it was before the last block ran at the x tokens only: transformers' whole forward pass."""

    def forward(self, xs: torch.Tensor, ys: torch.Tensor, last_only: bool = False) -> torch.Tensor:
        states = self.backbone(inputs_embeds=self.read_in(interleave(xs, ys))).last_hidden_state  # (B, 2K, E)
        return self.read_out(states[:, 0::2])[..., 0]  # (B, K)


class Loop:
    """One variant's training step on a fixed batch; ``time(steps)`` → steps/s."""

    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer, compiled: bool = False):
        self.model, self.optimizer = model, optimizer
        self.forward = torch.compile(model) if compiled else model
        self.xs, self.ys = torch.randn(BATCH, POINTS, D), torch.randn(BATCH, POINTS)
        t0 = time.perf_counter()
        self.step()  # warm-up (and the compilation)
        self.first_step_s = time.perf_counter() - t0

    def step(self) -> None:
        self.optimizer.zero_grad(set_to_none=True)
        ((self.forward(self.xs, self.ys)[:, 1:] - self.ys[:, 1:]) ** 2).mean().backward()
        self.optimizer.step()

    def time(self, steps: int) -> float:
        t0 = time.perf_counter()
        for _ in range(steps):
            self.step()
        return steps / (time.perf_counter() - t0)


def variants(n_embd: int, n_layer: int, n_head: int) -> dict[str, Loop]:
    def learner(activation: str, cls: type[GPT2Learner] = EveryToken) -> GPT2Learner:
        torch.manual_seed(0)
        return cls(D, POINTS, n_embd, n_layer, n_head, activation=activation)

    def default_adam(model: nn.Module) -> torch.optim.Optimizer:
        return torch.optim.Adam(model.parameters(), lr=1e-4)

    def fused_adam(model: nn.Module) -> torch.optim.Optimizer:
        return torch.optim.Adam(model.parameters(), lr=1e-4, fused=True)

    stock = StockGPT2(n_embd, n_layer, n_head)
    tanh, erf, fused, compiled = (learner(a) for a in ["gelu_pytorch_tanh", "gelu", "gelu_pytorch_tanh",
                                                        "gelu_pytorch_tanh"])
    read, now = learner("gelu_pytorch_tanh", GPT2Learner), learner("gelu", GPT2Learner)
    return {
        "stock": Loop(stock, default_adam(stock)),
        "iclab before (gelu_pytorch_tanh)": Loop(tanh, default_adam(tanh)),
        "+ exact GELU": Loop(erf, default_adam(erf)),
        "+ fused Adam": Loop(fused, fused_adam(fused)),
        "+ torch.compile": Loop(compiled, default_adam(compiled), compiled=True),
        "+ last block at the x tokens": Loop(read, default_adam(read)),
        "iclab (gelu, fused Adam, last block at the x tokens)": Loop(now, make_optimizer_for(now)),
    }


def last_block_tokens(model: nn.Module) -> int:
    """The tokens the model's last block computes: every one, or the x tokens (``GPT2Learner.read_states``)."""
    return 2 * POINTS if isinstance(model, (StockGPT2, EveryToken)) else POINTS


def make_optimizer_for(model: nn.Module) -> torch.optim.Optimizer:
    return make_optimizer(TrainConfig(steps=1, batch_size=BATCH, lr=1e-4, optimizer="adam"), model.parameters())


def median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def main() -> None:
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="bench_gpt2_inductor_"))
    rows = []
    for label, ((n_embd, n_layer, n_head), threads, steps) in SIZES.items():
        torch.set_num_threads(threads)
        peak = matmul_flops()
        loops = variants(n_embd, n_layer, n_head)
        rates: dict[str, list[float]] = {name: [] for name in loops}
        for _ in range(ROUNDS):
            for name, loop in loops.items():
                rates[name].append(loop.time(steps))
        stock = median(rates["stock"])
        for name, loop in loops.items():
            rate = median(rates[name])
            flops = step_flops(n_embd, n_layer, last_block_tokens(loop.model))
            rows.append({"size": label, "threads": threads, "variant": name, "steps/s": rate,
                         "vs stock": rate / stock, "FLOP/s": rate * flops, "matmul FLOP/s": peak,
                         "share of matmul FLOP/s": rate * flops / peak, "first step s": loop.first_step_s,
                         "parameters": sum(p.numel() for p in loop.model.parameters())})
            print({k: round(v, 3) if isinstance(v, float) else v for k, v in rows[-1].items()}, flush=True)
    result = {"machine": platform.machine(), "torch": torch.__version__, "batch": BATCH, "points": POINTS, "d": D,
              "rounds": ROUNDS, "rows": rows}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
