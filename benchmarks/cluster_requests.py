"""Benchmark record: what the paper tier's training jobs ask a SLURM cluster for (``iclab.compute.cluster``), issue 82.

    python benchmarks/cluster_requests.py   # writes benchmarks/results/cluster_requests.json (~3 s)

For each training job of ``config/paper.yaml`` (a model group, ``iclab.pipeline.plan.model_groups``), on a cluster with
GPUs and on one without (``ICLAB_SLURM_GPUS=0``): its first attempt's runtime request under the default cap
(``cluster.MAX_RUNTIME_MIN``), its request before any cap (the estimate × ``cluster.SAFETY``), its host memory request
and, where it trains on a GPU, the GPU memory it asks for. Stored by family (the models' kinds the docs name
together) as the smallest and largest over the family's jobs, with the longest job's models; the retries the
training rule takes under a 12 h partition limit; and what ``iclab gpu-check`` times on the tier (its distinct
training steps, and its timings of them: eager, compiled, the old loop, TF32). Then, for gpu_node and the paper tier
(issue 99), each batched group of GPT-2s: its experiments, label, members (and the members it trains: a group of one
trains two), its first attempt's requests on a cluster with GPUs, and its step by scenario
(``cluster.BATCHED_SCENARIOS``, no rates file: from the anchors). These are requests: estimates ×
SAFETY from the model's shape, not the cost table's projections from the smoke run
(``benchmarks/results/paper_cost.csv``).
"""

from __future__ import annotations

import json
from pathlib import Path

from iclab.compute import cluster
from iclab.atomic import write_text
from iclab.config import load
from iclab.compute.gpu_check import planned_timings, tier_shapes
from iclab.pipeline.plan import build_plan

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "cluster_requests.json"
CONFIG = Path("config/paper.yaml")
BATCHED_TIERS = (Path("config/gpu_node.yaml"), Path("config/paper.yaml"))
FAMILIES = {"linear": ("gd_beta", "lsa", "feature_attention"), "mean_field": ("mean_field",),
            "two_stage": ("two_stage",), "gpt2": ("gpt2",), "lstm": ("lstm",), "sequence": ("gpt2", "lstm")}
PARTITION_LIMIT_MIN = 12 * 60  # a common GPU partition's limit, which the retries are tested under (test_cluster.py)


def request(specs: list[dict], gpus_allowed: bool) -> dict:
    """One training job's requests: minutes and hours (first attempt, capped at the default cap), hours before any
    cap, host GB, GPU GB (0 on a CPU); its estimate in hours (before SAFETY) and the device it trains on."""
    seconds = cluster.group_seconds(specs, gpus_allowed)
    on_gpu = cluster.gpus(specs[0], gpus_allowed) > 0
    minutes = cluster.group_runtime_minutes(specs, 1, gpus_allowed)
    return {"minutes": minutes, "hours": minutes / 60, "estimate_hours": seconds / 3600,
            "uncapped_hours": cluster.SAFETY * seconds / 3600,
            "memory_gb": cluster.group_memory_mb(specs, gpus_allowed) / 1000,
            "gpu_memory_gb": cluster.group_device_memory_mb(specs, gpus_allowed) / 1000 if on_gpu else 0.0,
            "device": "gpu" if on_gpu else "cpu", "models": len(specs), "model": specs[0]["model"]["name"]}


def spans(jobs: list[dict]) -> dict:
    """The smallest and largest of each request over ``jobs``, their count, and the longest job's model and size."""
    longest = max(jobs, key=lambda job: job["uncapped_hours"])
    found = {"jobs": len(jobs), "longest_model": longest["model"], "longest_models": longest["models"]}
    for field in ("minutes", "hours", "uncapped_hours", "estimate_hours", "memory_gb", "gpu_memory_gb"):
        found[f"{field}_min"] = min(job[field] for job in jobs)
        found[f"{field}_max"] = max(job[field] for job in jobs)
    return found


def cluster_requests(root: Path = ROOT) -> dict:
    plan = build_plan(load(root / CONFIG))
    groups = [[plan.train[model_hash].to_dict() for model_hash in members] for members in plan.groups.values()]
    record = {"config": str(CONFIG), "safety": cluster.SAFETY, "default_cap_hours": cluster.MAX_RUNTIME_MIN / 60,
              "partition_limit_hours": PARTITION_LIMIT_MIN / 60}
    for name, gpus_allowed in (("with_gpus", True), ("without_gpus", False)):
        jobs = [request(specs, gpus_allowed) for specs in groups]
        record[name] = {family: spans([job for job in jobs if job["model"] in models])
                        for family, models in FAMILIES.items()}
        record[name]["cpu_jobs"] = spans([job for job in jobs if job["device"] == "cpu"])
        record[name]["retries_under_partition_limit"] = max(
            cluster.retries_needed(cluster.group_seconds(specs, gpus_allowed), PARTITION_LIMIT_MIN) for specs in groups)
    shapes = tier_shapes(root / CONFIG)
    record["gpu_check"] = {"steps": len(shapes), "timings": len(planned_timings(shapes))}
    record["batched_groups"] = {str(config): batched_groups(root / config) for config in BATCHED_TIERS}
    return record


def batched_groups(config: Path) -> list[dict]:
    """Each batched group of ``config``'s plan: who is in it and what its job asks for (module docstring)."""
    plan = build_plan(load(config))
    experiments = {m["hash"]: name for name, settings in reversed(plan.settings.items())
                   for setting in settings.values() for m in setting.models}
    found = []
    for group, members in plan.groups.items():
        specs = [plan.train[h].to_dict() for h in members]
        if not cluster.batched(specs):
            continue
        in_group = sorted({name for name, settings in plan.settings.items() for setting in settings.values()
                           for m in setting.models if m["hash"] in members})
        found.append({"group": group, "experiment": experiments[members[0]], "experiments": in_group,
                      "label": plan.train[members[0]].label, "members": len(members),
                      "trained_members": cluster.trained_members(specs), "steps": specs[0]["train"]["steps"],
                      "step_seconds": {scenario.name: cluster.group_step_seconds(specs, scenario=scenario)
                                       for scenario in cluster.BATCHED_SCENARIOS},
                      "runtime_minutes": cluster.group_runtime_minutes(specs),
                      "uncapped_hours": cluster.SAFETY * cluster.group_seconds(specs) / 3600,
                      "memory_mb": cluster.group_memory_mb(specs), "gpus": cluster.gpus(specs[0]),
                      "gpu_memory_mb": cluster.group_device_memory_mb(specs)})
    return sorted(found, key=lambda row: (row["experiment"], row["label"], -row["members"]))


if __name__ == "__main__":
    write_text(OUT, json.dumps(cluster_requests(), indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")
