"""Batched GPT-2 trainings against the same models trained alone, over longer runs than the tests' (issue 98).

    PYTHONPATH=src python benchmarks/batched_equivalence.py   # writes benchmarks/results/batched_equivalence.json

For the three GPT-2s of tests/test_batched.py (the curriculum GPT-2, interleaved, and the token-matrix GPT-2 with and
without MLP; 2 layers, width 16, d = 3, 9 points, 32 prompts a batch, Adam at 3e-3), 3 seeds each, trained
alone, each as a batched group of one, and all three as one group, for each length in ``STEPS``. Per seed and
comparison (batched G = 1 against alone, G = 3 against G = 1): the largest relative difference of the training losses so
far, and the largest difference of the predictions on 64 fresh prompts, beside what a weight drift of 1.2e-5 moves
them (the tests' tolerance, measured on the reference model at that step). Round-off differences grow along a
training (Adam amplifies them where a gradient is near 0); this record says how far, at this size.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_batched import MODELS, drift_effect, fresh_prompts, group_job  # noqa: E402

from iclab.atomic import write_text  # noqa: E402
from iclab.fit.sgd import train, train_group  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "batched_equivalence.json"
STEPS, SEEDS = (20, 100, 400), (0, 1, 2)


def compare(reference, other, xs, ys) -> dict:
    """reference, other: (model, losses (steps,)) → the loss and prediction differences and the drift's effect."""
    (ref_model, ref_losses), (model, losses) = reference, other
    drift_predictions, drift_loss = drift_effect(ref_model, xs, ys)
    with torch.no_grad():
        prediction = (model(xs, ys) - ref_model(xs, ys)).abs().max().item()
    return {"loss_rel": float(np.max(np.abs(losses - ref_losses) / ref_losses)), "prediction": prediction,
            "drift_prediction": drift_predictions, "drift_loss_rel": drift_loss}


def rows(kind: str) -> list[dict]:
    xs, ys = fresh_prompts()
    out = []
    for steps in STEPS:
        jobs = [group_job(kind, seed, steps=steps) for seed in SEEDS]
        start = time.perf_counter()
        alone = [train(job)[:2] for job in jobs]
        alone_s = time.perf_counter() - start
        ones = [train_group([job]) for job in jobs]
        start = time.perf_counter()
        three_models, three_losses, _, _ = train_group(jobs)
        three_s = time.perf_counter() - start
        one_vs_alone = [compare(alone[g], (one[0][0], one[1][0]), xs, ys) for g, one in enumerate(ones)]
        three_vs_one = [compare((one[0][0], one[1][0]), (three_models[g], three_losses[g]), xs, ys)
                        for g, one in enumerate(ones)]
        out.append({"model": kind, "steps": steps, "batched_1_vs_alone": one_vs_alone,
                    "batched_3_vs_batched_1": three_vs_one, "alone_s": round(alone_s, 2),
                    "batched_3_s": round(three_s, 2)})
        worst = max(c["prediction"] / c["drift_prediction"] for c in one_vs_alone + three_vs_one)
        print(f"{kind:20} {steps:4} steps: predictions off by at most {worst:.2f}× the drift's effect; "
              f"3 alone {alone_s:.1f} s, one group of 3 {three_s:.1f} s")
    return out


def main() -> None:
    torch.set_num_threads(1)
    record = {"what": __doc__.split("\n\n")[0], "steps": list(STEPS), "seeds": list(SEEDS),
              "rows": [row for kind in MODELS for row in rows(kind)], "torch": torch.__version__,
              "cpu_capability": torch.backends.cpu.get_cpu_capability(), "machine": platform.machine(), "threads": 1}
    write_text(OUT, json.dumps(record, indent=1) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
