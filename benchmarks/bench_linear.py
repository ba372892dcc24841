"""Benchmark: the linear models' training step and the estimators, at the default and paper sizes.

    python benchmarks/bench_linear.py            # writes benchmarks/results/linear.json and prints a table

Ratios are measured in one run on one machine (this one is shared and noisy): compare ratios, not seconds.
Measured: (1) a training step of LSA/LTB computing only the final query column versus every position;
(2) sampling a batch; (3) estimator throughput over all prefixes.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

from iclab.learners import estimators
from iclab.models import build_model
from iclab.tasks import LinearTask, eval_set, train_batch

OUT = Path(__file__).parent / "results" / "linear.json"


def best_of(fn, repeats: int = 5, number: int = 20) -> float:
    """Best mean seconds per call over ``repeats`` rounds of ``number`` calls."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return min(times)


def train_step_seconds(name: str, d: int, n: int, batch: int, last_only: bool) -> float:
    torch.manual_seed(0)
    model = build_model({"name": name, "init_scale": 0.1}, d)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    task = LinearTask(d=d, n_points=n + 1, beta_star=(0.0,) * d, psi=1.0, sigma=0.5)
    b = train_batch(task, 0, 0, batch)
    xs, ys = torch.from_numpy(b.xs), torch.from_numpy(b.ys)

    def step():
        opt.zero_grad()
        pred = model(xs, ys, last_only=True)[:, 0] if last_only else model(xs, ys)[:, -1]
        ((pred - ys[:, -1]) ** 2).mean().backward()
        opt.step()

    return best_of(step)


def ols_rows() -> list[dict]:
    """All-prefix least squares, side by side on the same prompts: the factorisation updated one example at
    a time (estimators.ols_weights) against a pseudo-inverse per prefix (the previous implementation)."""
    rows = []
    for d, points in [(5, 21), (20, 41)]:
        rng = np.random.default_rng(0)
        xs, ys = rng.standard_normal((2000, points, d)), rng.standard_normal((2000, points))
        updates = best_of(lambda: estimators.ols_weights(xs, ys), repeats=3, number=1)
        pinv = best_of(lambda: estimators.map_chunks(estimators._pinv_prefix_weights, xs, ys), repeats=3, number=1)
        reference = estimators.map_chunks(estimators._pinv_prefix_weights, xs, ys)
        error = np.abs(estimators.ols_weights(xs, ys) - reference).max() / np.abs(reference).max()
        rows.append({"what": f"all-prefix OLS, d={d}, {points} points, 2000 prompts", "updates ms": 1e3 * updates,
                     "pinv per prefix ms": 1e3 * pinv, "speed-up": pinv / updates, "max relative difference": error})
    return rows


def main() -> None:
    torch.set_num_threads(1)
    rows = []
    for d, n, batch, label in [(5, 20, 512, "default"), (20, 80, 1024, "paper")]:
        for name in ("lsa", "ltb"):
            full = train_step_seconds(name, d, n, batch, last_only=False)
            last = train_step_seconds(name, d, n, batch, last_only=True)
            rows.append({"what": f"{name} train step, {label} (d={d}, n={n}, B={batch})",
                         "all positions ms": 1e3 * full, "final query ms": 1e3 * last, "speed-up": full / last})
        task = LinearTask(d=d, n_points=n + 1, beta_star=(0.0,) * d, psi=1.0, sigma=0.5)
        sample = best_of(lambda: train_batch(task, 0, 1, batch))
        rows.append({"what": f"sample a training batch, {label}", "ms": 1e3 * sample})
        ev = eval_set(task, 0, 2000)
        for est, kw in [("ols", {}), ("ridge", {"lam": 0.25}), ("gd_beta", {"beta0": np.zeros(d), "gamma": np.eye(d)})]:
            secs = best_of(lambda: getattr(estimators, est)(ev.xs, ev.ys, **kw), repeats=3, number=1)
            rows.append({"what": f"estimator {est}, {label}, 2000 prompts × {n + 1} prefixes", "ms": 1e3 * secs,
                         "prompts/s": 2000 / secs})
    rows += ols_rows()
    result = {"machine": platform.processor() or platform.machine(), "python": sys.version.split()[0],
              "torch": torch.__version__, "threads": 1, "rows": rows}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    for row in rows:
        print(" | ".join(f"{k}: {v:.3g}" if isinstance(v, float) else f"{v}" for k, v in row.items()))


if __name__ == "__main__":
    main()
