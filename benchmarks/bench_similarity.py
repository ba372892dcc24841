"""Benchmark: the Newton / GD / online-GD similarity grid of Fu et al. (2024), vectorised against the
authors' way (a Python loop over prompts and prefixes, iterating each algorithm), at the paper's size.

    python benchmarks/bench_similarity.py      # writes benchmarks/results/similarity.json

Both compute, for 13 per-layer predictors (stand-ins: noisy OLS, as a probe would be) against Newton
after 0…23 iterations, GD after 1, 2, 4, …, 4096 steps (their step size 0.01) and online GD, the
Similarity of Errors and the Similarity of Induced Weights, on the same prompts (d = 20, 41 points);
the run checks that the two agree before it reports. Ratios are measured in one run on one machine
(this one is shared and noisy): compare ratios, not seconds.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

from iclab.learners import estimators
from iclab.learners.similarity import errors_similarity, weights_similarity

OUT = Path(__file__).parent / "results" / "similarity.json"
D, K, LAYERS = 20, 41, 13
NEWTON = np.arange(24)
GD = 2 ** np.arange(13)  # 1 … 4096
GD_LR = 0.01


def prompts(n_prompts: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Noiseless prompts and the weights of 13 stand-in layers, (B, K, d), (B, K), (13, B, K, d)."""
    rng = np.random.default_rng(seed)
    xs = rng.standard_normal((n_prompts, K, D))
    ys = np.einsum("bkd,bd->bk", xs, rng.standard_normal((n_prompts, D)))
    layers = estimators.ols_weights(xs, ys)[None] + rng.standard_normal((LAYERS, n_prompts, K, D)) / np.arange(
        1, LAYERS + 1
    )[:, None, None, None]
    return xs, ys, layers


def vectorised(xs, ys, layers) -> dict[str, np.ndarray]:
    algorithms = np.concatenate(
        [
            estimators.newton_weights(xs, ys, iterations=NEWTON),
            estimators.gd_weights(xs, ys, steps=GD, lr=GD_LR),
            estimators.online_gd_weights(xs, ys)[None],
        ]
    )  # (24 + 13 + 1, B, K, d)
    return {
        "errors": errors_similarity(
            estimators.predict_linear(xs, layers), estimators.predict_linear(xs, algorithms), ys
        ),
        "weights": weights_similarity(layers, algorithms),
    }


def looped(xs, ys, layers) -> dict[str, np.ndarray]:
    """Per prompt and prefix: iterate Newton and GD (recording at the grid), run online GD, then the cosines."""
    n_prompts, n_algorithms = len(xs), len(NEWTON) + len(GD) + 1
    weights = np.zeros((n_algorithms, n_prompts, K, D))
    for b in range(n_prompts):
        for k in range(1, K):
            X, y = xs[b, :k], ys[b, :k]
            S, moment = X.T @ X, X.T @ y
            M = S / np.linalg.norm(S @ S.T, "fro")
            for j in range(len(NEWTON)):
                weights[j, b, k] = M @ moment
                M = 2 * M - M @ S @ M
            w = np.zeros(D)
            for step in range(1, GD[-1] + 1):
                w = w - GD_LR * (S @ w - moment)
                if step in GD:
                    weights[len(NEWTON) + int(np.log2(step)), b, k] = w
            w = np.zeros(D)
            for x_i, y_i in zip(X, y):
                w = w + (y_i - x_i @ w) * x_i / (x_i @ x_i)
            weights[-1, b, k] = w
    errors, induced = np.zeros((LAYERS, n_algorithms)), np.zeros((LAYERS, n_algorithms))
    for m in range(LAYERS):
        for n in range(n_algorithms):
            cos_errors, cos_weights = [], []
            for b in range(n_prompts):
                ra = np.array([xs[b, k] @ layers[m, b, k] for k in range(K)]) - ys[b]
                rb = np.array([xs[b, k] @ weights[n, b, k] for k in range(K)]) - ys[b]
                cos_errors.append(ra @ rb / np.linalg.norm(ra) / np.linalg.norm(rb))
                for k in range(1, K):
                    wa, wb = layers[m, b, k], weights[n, b, k]
                    cos_weights.append(wa @ wb / np.linalg.norm(wa) / np.linalg.norm(wb))
            errors[m, n], induced[m, n] = np.mean(cos_errors), np.mean(cos_weights)
    return {"errors": errors, "weights": induced}


def seconds(fn, repeats: int) -> float:
    """Best of ``repeats`` timed calls."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    n_prompts = 16  # the loop's cost is linear in it; both run on the same prompts
    xs, ys, layers = prompts(n_prompts)
    fast, slow = vectorised(xs, ys, layers), looped(xs, ys, layers)
    for name in fast:
        np.testing.assert_allclose(fast[name], slow[name], rtol=1e-6, atol=1e-8)
    t_fast = seconds(lambda: vectorised(xs, ys, layers), repeats=3)
    t_slow = seconds(lambda: looped(xs, ys, layers), repeats=1)
    result = {
        "machine": platform.machine(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "size": {"d": D, "points": K, "layers": LAYERS, "prompts": n_prompts},
        "grid": {"newton_iterations": NEWTON.tolist(), "gd_steps": GD.tolist(), "gd_lr": GD_LR, "online_gd": 1},
        "vectorised_seconds": t_fast,
        "loop_seconds": t_slow,
        "speedup": t_slow / t_fast,
        "agree": "max |difference| < 1e-6 relative (checked in the run)",
    }
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
