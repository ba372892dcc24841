"""Benchmark: the single-index experiment's costly pieces, at the default size.

    python benchmarks/bench_single_index.py      # writes benchmarks/results/single_index.json

Ratios are measured in one run on one machine (this one is shared and noisy): compare ratios, not seconds.
Measured: (1) kernel ridge predictions at every prefix of a prompt from one Cholesky factorisation
(iclab.learners.prompt_only) versus one solve per prefix, and its tuning grid with the kernel computed once per
bandwidth versus once per (bandwidth, penalty); (2) stage 1 of the two-stage fit with the paper's
last-point query against every point as the query (``stage1_queries``), at the default config's
largest case (d = 32, n = 256): seconds and the subspace energy reached with the same T₁, and with
the paper's loss at 8 times that T₁;
(3) stage-2 prompts per second, AᵀA accumulated in full and on its block-upper triangle; (4) the
two-layer-network baseline, prompts per second; (5) at the default's largest case (d = 32, 129 points,
512 prompts), side by side with outputs compared bit for bit: kernel ridge's grid in chunks of 256 prompts
(before issue 31) and of ``KERNEL_CHUNK``.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

from iclab.learners import prompt_only
from iclab.fit import two_stage
from iclab.tasks import batch_generator
from iclab.tasks.single_index import SingleIndexTask

OUT = Path(__file__).parent / "results" / "single_index.json"


def seconds(fn) -> float:
    """Best of three timed calls (after one warm-up)."""
    fn()
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def krr_per_prefix(xs: torch.Tensor, ys: torch.Tensor, bandwidth: float, penalty: float) -> torch.Tensor:
    """The straightforward loop: a fresh kernel solve for every prefix length k: (B, K)."""
    d, out = xs.shape[-1], torch.zeros_like(ys)
    gram = torch.exp(-(torch.cdist(xs, xs) ** 2) / (2 * bandwidth * d))  # (B, K, K)
    for k in range(1, xs.shape[1]):
        system = gram[:, :k, :k] + penalty * torch.eye(k, dtype=xs.dtype)
        out[:, k] = (gram[:, k, None, :k] @ torch.linalg.solve(system, ys[:, :k, None]))[:, 0, 0]
    return out


def krr_grid_kernel_per_combo(xs: torch.Tensor, ys: torch.Tensor) -> torch.Tensor:
    """The tuning grid with the distances and kernel recomputed for every (bandwidth, penalty)."""
    combos = itertools.product(prompt_only.KRR_BANDWIDTHS, prompt_only.KRR_PENALTIES)
    return torch.stack([prompt_only.krr_prefix_predictions(xs, ys, h, lam) for h, lam in combos])


@contextlib.contextmanager
def kernel_chunk(size: int):
    """Run kernel ridge's grid in chunks of ``size`` prompts."""
    saved, prompt_only.KERNEL_CHUNK = prompt_only.KERNEL_CHUNK, size
    try:
        yield
    finally:
        prompt_only.KERNEL_CHUNK = saved


def side_by_side(label_a: str, run_a, label_b: str, run_b) -> dict[str, object]:
    """Seconds of each (one call each, this run), the speed-up of b over a, and whether they agree bit for bit."""
    timed, values = {}, {}
    for label, run in ((label_a, run_a), (label_b, run_b)):
        t0 = time.perf_counter()
        values[label] = run()
        timed[label] = time.perf_counter() - t0
    same = np.array_equal(values[label_a], values[label_b], equal_nan=True)
    return {"seconds": timed, "speedup": timed[label_a] / timed[label_b], "bit_identical": bool(same)}


def largest_case() -> dict[str, object]:
    """Kernel ridge's grid in chunks of 256 and of KERNEL_CHUNK (d = 32, 129 points)."""
    task = SingleIndexTask(d=32, r=2, n_points=129)
    batch = task.sample(512, batch_generator(0, 1, 0))

    def krr_in_chunks_of(size: int):
        with kernel_chunk(size):
            return prompt_only.krr_grid(batch.xs, batch.ys)

    krr = side_by_side(
        "chunk_256", lambda: krr_in_chunks_of(256), f"chunk_{prompt_only.KERNEL_CHUNK}",
        lambda: krr_in_chunks_of(prompt_only.KERNEL_CHUNK),
    )
    return {"krr_grid": {"d": 32, "points": 129, "prompts": 512} | krr}


def ridge_sums(model, xs: torch.Tensor, ys: torch.Tensor, gram: torch.Tensor, block_upper: bool) -> None:
    """One chunk of stage 2: the ridge features and their normal-equation sums, AᵀA in full (before issue 31) or
    on its block-upper triangle (``two_stage.add_block_upper_gram``, as the fit does now)."""
    features = two_stage.ridge_features(model, xs, ys)  # (b, m²)
    if block_upper:
        two_stage.add_block_upper_gram(gram, features)
    else:
        gram += features.T @ features
    features.T @ ys[:, -1]


def main() -> None:
    torch.set_num_threads(1)
    results: dict[str, object] = {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "machine": platform.machine(),
    }
    task = SingleIndexTask(d=16, r=2, n_points=129)
    batch = task.sample(256, batch_generator(0, 1, 0))
    xs, ys = torch.as_tensor(batch.xs), torch.as_tensor(batch.ys)
    fast = seconds(lambda: prompt_only.krr_prefix_predictions(xs, ys, 1.0, 0.1))
    slow = seconds(lambda: krr_per_prefix(xs, ys, 1.0, 0.1))
    gap = float((prompt_only.krr_prefix_predictions(xs, ys, 1.0, 0.1) - krr_per_prefix(xs, ys, 1.0, 0.1)).abs().max())
    grid = seconds(lambda: prompt_only.krr_grid(batch.xs, batch.ys))
    per_combo = seconds(lambda: krr_grid_kernel_per_combo(xs, ys))
    results["krr_grid"] = {"prompts": 256, "points": 129, "shared_kernel_s": grid, "kernel_per_combo_s": per_combo}
    results["krr_grid"]["speedup"] = per_combo / grid
    results["krr_prefixes"] = {
        "prompts": 256,
        "points": 129,
        "cholesky_s": fast,
        "per_prefix_s": slow,
        "speedup": slow / fast,
        "max_abs_difference": gap,
    }
    train_task = SingleIndexTask(d=32, r=2, n_points=257)
    for name, queries, t1 in (("last", "last", 4096), ("all", "all", 4096), ("last_8x", "last", 32768)):
        cfg = two_stage.TwoStageConfig(t1=t1, t2=0, ridge=1.0, stage1_queries=queries)
        t0 = time.perf_counter()
        _, diagnostics = two_stage.fit({"width": 64}, train_task, cfg, seed=0, job_hash="bench")
        results[f"stage1_{name}"] = {
            "d": 32,
            "n_pretrain": 256,
            "t1": cfg.t1,
            "width": 64,
            "seconds": time.perf_counter() - t0,
            "subspace_energy": float(diagnostics.subspace_energy),
            "subspace_energy_chance": float(diagnostics.subspace_energy_chance),
        }
    results["stage1_all_over_last_seconds"] = results["stage1_all"]["seconds"] / results["stage1_last"]["seconds"]
    model = two_stage.initial_model(train_task, 64, seed=0)
    xs2, ys2 = two_stage.prompts(train_task, 0, 4, 0, 512)
    gram = torch.zeros(64**2, 64**2, dtype=torch.float64)
    full = seconds(lambda: ridge_sums(model, xs2, ys2, gram, block_upper=False))
    upper = seconds(lambda: ridge_sums(model, xs2, ys2, gram, block_upper=True))
    results["stage2"] = {"d": 32, "n_pretrain": 256, "width": 64, "prompts_per_s": 512 / upper}
    results["stage2"] |= {"full_product_prompts_per_s": 512 / full, "speedup": full / upper}
    small = task.sample(64, batch_generator(0, 1, 0))
    positions = prompt_only.net_positions(task.n_points)
    net = seconds(lambda: prompt_only.two_layer_net_grid(small.xs, small.ys, positions))
    results["two_layer_net"] = {"prompts": 64, "positions": positions, "seconds": net, "prompts_per_s": 64 / net}
    results["largest_case"] = largest_case()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
