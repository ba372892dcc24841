"""Benchmark: the tuned prompt-only baselines on an evaluation set, every grid entry against the chosen ones only.

    python benchmarks/bench_tuned_baselines.py   # writes benchmarks/results/tuned_baselines.json

Kernel ridge and the two-layer network (Oko et al.'s baselines, ``iclab.learners.prompt_only``) pick one grid entry per
position on held-out prompts. Before issue 49 the evaluation set was run through the whole grid (25 kernel ridge
entries; 2 learning rates × 200 GD steps of the network at every position) and the chosen entries kept; now only
the chosen ones are computed (the network's GD runs to the chosen step, at the chosen learning rate). Both ways on
the default single-index tasks (129 points), 1 thread, alternating, fastest of 2; the predictions compared bit for
bit. Ratios are measured in one run on one machine (this one is shared and noisy): compare ratios, not seconds.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

from iclab.learners import prompt_only
from iclab.tasks import batch_generator
from iclab.tasks.single_index import SingleIndexTask

OUT = Path(__file__).parent / "results" / "tuned_baselines.json"
PROMPTS = 256  # the default evaluates 1000 prompts: the time scales with them
ROUNDS = 2


def every_entry(grid, best: np.ndarray):
    """The evaluation before issue 49: the whole grid, then the chosen entry at each position: (B, K)."""
    return lambda xs, ys: np.take_along_axis(grid(xs, ys), best[None, None, :], axis=0)[0]


def main() -> None:
    torch.set_num_threads(1)
    results: dict[str, object] = {"python": sys.version.split()[0], "torch": torch.__version__,
                                  "machine": platform.machine(), "prompts": PROMPTS, "rows": []}
    for d in (8, 32):
        task = SingleIndexTask(d=d, r=2, n_points=129, q=2, p=3)
        batch = task.sample(PROMPTS, batch_generator(1, 1, 0))
        positions = prompt_only.net_positions(task.n_points)
        grids = {
            "krr": lambda xs, ys, chosen=None: prompt_only.krr_grid(xs, ys, chosen=chosen),
            "two_layer_net": lambda xs, ys, chosen=None: prompt_only.two_layer_net_grid(
                xs, ys, positions, chosen=chosen
            ),
        }
        for name, grid in grids.items():
            holdout = task.sample(prompt_only.HOLDOUT_PROMPTS, batch_generator(0, 3, 0))
            risks = np.mean((grid(holdout.xs, holdout.ys) - holdout.ys) ** 2, axis=1)  # (G, K)
            best = np.argmin(np.where(np.isnan(risks), np.inf, risks), axis=0)  # (K,)
            ways = {"every entry": every_entry(grid, best),
                    "chosen only": lambda xs, ys: np.take_along_axis(grid(xs, ys, chosen=best), best[None, None, :],
                                                                    axis=0)[0]}
            times = {way: [] for way in ways}
            outputs = {}
            for _ in range(ROUNDS):
                for way, predict in ways.items():
                    t0 = time.perf_counter()
                    outputs[way] = predict(batch.xs, batch.ys)
                    times[way].append(time.perf_counter() - t0)
            row = {"baseline": name, "d": d, "points": 129, "distinct entries chosen": int(len(np.unique(best)))}
            row |= {f"{way} s": min(t) for way, t in times.items()}
            row["speedup"] = row["every entry s"] / row["chosen only s"]
            row["bit-identical"] = bool(np.array_equal(outputs["every entry"], outputs["chosen only"], equal_nan=True))
            print(row, flush=True)
            results["rows"].append(row)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
