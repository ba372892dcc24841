"""Benchmark: a token-matrix GPT-2's predictions at every position, one pass of 2K tokens against one pass per prefix.

    python benchmarks/bench_token_matrix.py   # writes benchmarks/results/token_matrix.json

Zhang, Wu, Bartlett's GPT-2 reads position k's prediction at the last token of the prefix of k + 1 points, its label
zeroed. Before issue 49 every position ran a pass of its own (K passes, (K + 1)/2 tokens on average: ltb_table1's
evaluation); ``GPT2Learner.query_predictions`` runs the K labelled tokens and the K queries in one pass with a mask.
ltb_table1's default models (embedding 64, 3 layers, 2 heads, with and without MLP; d = 5, 21 points), 1024 prompts
without gradients (as the evaluation runs them), 1 thread, alternating, median of 3; the largest difference between
the two ways is reported. Ratios are measured in one run on one machine (this one is shared and noisy).
"""

from __future__ import annotations

import json
import platform
import statistics
import time
from pathlib import Path

import torch

from iclab.models import build_model

OUT = Path(__file__).parent / "results" / "token_matrix.json"
D, POINTS, PROMPTS, ROUNDS = 5, 21, 1024, 3
MODEL = {"name": "gpt2", "n_points": POINTS, "n_embd": 64, "n_layer": 3, "n_head": 2, "prompt_format": "token_matrix"}


def one_pass_per_prefix(model: torch.nn.Module, xs: torch.Tensor, ys: torch.Tensor) -> torch.Tensor:
    """The evaluation before issue 49: the final query of each prefix, one pass each: (B, K)."""
    return torch.cat([model(xs[:, : k + 1], ys[:, : k + 1], last_only=True) for k in range(xs.shape[1])], dim=1)


def seconds(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    xs, ys = torch.randn(PROMPTS, POINTS, D), torch.randn(PROMPTS, POINTS)
    rows = []
    for mlp in (True, False):
        model = build_model(MODEL | {"activation": "gelu", "mlp": mlp, "residual_init": "per_branch"}, D).eval()
        times: dict[str, list[float]] = {"one pass": [], "one pass per prefix": []}
        with torch.no_grad():
            ours, theirs = model(xs, ys), one_pass_per_prefix(model, xs, ys)  # warm-up, and the comparison
            for _ in range(ROUNDS):
                times["one pass"].append(seconds(lambda: model(xs, ys)))
                times["one pass per prefix"].append(seconds(lambda: one_pass_per_prefix(model, xs, ys)))
        median = {name: statistics.median(t) for name, t in times.items()}
        rows.append(
            {
                "model": "GPT2" if mlp else "GPT2-noMLP",
                "seconds": median,
                "speed-up": median["one pass per prefix"] / median["one pass"],
                "max abs difference": float((ours - theirs).abs().max()),
            }
        )
        print(rows[-1])
    results = {"machine": platform.machine(), "torch": torch.__version__, "prompts": PROMPTS, "points": POINTS}
    OUT.write_text(json.dumps(results | {"rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
