"""gpu_node's floor at the card's dense peak under each choice of precision (issue 97).

    PYTHONPATH=src python benchmarks/precision_floor.py   # writes benchmarks/results/precision_floor.json

The tier's GPT-2 and LSTM trainings (``config/gpu_node.yaml``'s plan), their FLOPs by the cost model
(``cluster.model_size``) over the card's dense peak for their arithmetic (``cluster.CARD_PEAK_FLOPS``:
``packing.floor_seconds``), as configured and with the float32 trainings moved to TF32 or bf16: Fu et al.'s probe
GPT-2s (probe_layers, probe_similarity, probe_illconditioned), every float32 training, or everything in bf16. No card
of that peak trains them faster, packed or not.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from iclab.atomic import write_text
from iclab.compute import cluster, packing
from iclab.compute.gpu_check import first_experiments
from iclab.config import load
from iclab.pipeline.plan import build_plan

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "precision_floor.json"
PROBES = ("probe_layers", "probe_similarity", "probe_illconditioned")


def tier_jobs() -> list[tuple[str, dict]]:
    """(the first experiment that trains it, its spec) of each GPU training of gpu_node."""
    plan = build_plan(load(ROOT / "config" / "gpu_node.yaml", check=False))
    first = first_experiments(plan)
    return [(first[h], job.to_dict()) for h, job in plan.train.items()
            if job.model["name"] in cluster.ACCELERATED_MODELS]


def moved(jobs: list[tuple[str, dict]], chosen, train: dict) -> list[dict]:
    out = []
    for experiment, spec in jobs:
        spec = copy.deepcopy(spec)
        if chosen(experiment, spec):
            spec["train"] |= train
        out.append(spec)
    return out


def main() -> None:
    jobs = tier_jobs()
    float32 = lambda e, s: s["train"].get("precision", "float32") == "float32"  # noqa: E731
    probe_gpt2 = lambda e, s: float32(e, s) and e in PROBES and s["model"]["name"] == "gpt2"  # noqa: E731
    scenarios = {
        "as configured": [spec for _, spec in jobs],
        "Fu et al.'s float32 probe GPT-2s in TF32": moved(jobs, probe_gpt2, {"tf32": True}),
        "every float32 training in TF32": moved(jobs, float32, {"tf32": True}),
        "everything in bf16": moved(jobs, lambda e, s: True, {"precision": "bfloat16", "tf32": False}),
    }
    result = {"peaks_flop_s": cluster.CARD_PEAK_FLOPS,
              "probe_gpt2_trainings": sum(probe_gpt2(e, s) for e, s in jobs),
              "floor_hours": {name: round(packing.floor_seconds([specs]) / 3600, 2)
                              for name, specs in scenarios.items()}}
    write_text(OUT, json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
