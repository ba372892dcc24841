"""Benchmark: which headline effects one GPU-day can decide (issue 101): every effect's experiment at the papers'
shapes with its ``power.tier_design`` seeds and prompts and a captured step, costed on one card, and the day's set.

    python benchmarks/gpu_node_design.py   # writes benchmarks/results/gpu_node_design.json (a few seconds)

The experiments at the papers' shapes are those of ``tests/data/gpu_shapes.yaml`` (gpu_node before issue 101 narrowed
it), each GPU experiment's seeds set to the most its effects' tier designs need (``gpu_node_power.json``'s
``tier_design``: an effect whose design at the spread's bound passes ``power.MAX_SEEDS`` keeps its estimated-spread
design, and is unpowered), its prompts likewise, and ``train.capture`` on. Their GPU hours one job at a time come from
``cluster.group_seconds`` with the H100's rates (its shapes' step times and kernel counts), in each scenario
(``cluster.BATCHED_SCENARIOS``); packed as ``iclab cost`` packs them (the LSTMs at the H100's gain). No smoke run:
GPU time only. Then the day's set, ``power.DAY_EXPERIMENTS``, and each other experiment added to it, against a day's
20 packed hours (``packing.PACKED_DAY_S``). Estimates, not measurements: no GPU has run a captured or batched step.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml

from iclab.compute import cluster, cost, packing
from iclab.config import validate
from iclab.pipeline.plan import build_plan
from iclab.stats.power import DAY_EXPERIMENTS

ROOT = Path(__file__).resolve().parents[1]
ALL_EFFECTS = ROOT / "tests" / "data" / "gpu_shapes.yaml"
POWER = ROOT / "benchmarks" / "results" / "gpu_node_power.json"
H100 = ROOT / "benchmarks" / "results" / "gpu_h100_2026-11-28"
RATES = H100 / "gpu_rates_nvidia_h100_80gb_hbm3.csv"
PACKS = (H100 / "gpu_pack_longest_nvidia_h100_80gb_hbm3.json", H100 / "gpu_pack_lstm_nvidia_h100_80gb_hbm3.json")
OUT = ROOT / "benchmarks" / "results" / "gpu_node_design.json"
SHARED = {"probe_layers": ("probe_similarity", "probe_illconditioned")}  # sections that share one anchor of seeds


def designed_config(power: dict) -> dict:
    """``ALL_EFFECTS`` with each effect's experiment at the most seeds and prompts its effects' tier designs need
    (an unpowered effect's estimated-spread design instead) and every GPU training captured."""
    config = yaml.safe_load(ALL_EFFECTS.read_text())
    needs: dict[str, tuple[int, int]] = {}
    for row in power["effects"]:
        planned = row["tier_design"] if row["tier_design"]["reason"] == "" else row["design"]
        seeds, prompts = needs.get(row["experiment"], (0, 0))
        needs[row["experiment"]] = (max(seeds, planned["seeds"]), max(prompts, planned["prompts"]))
    for shared, readers in SHARED.items():  # the κ = 1 probe GPT-2s and the LSTMs serve all three
        seeds = max(needs.get(name, (0, 0))[0] for name in (shared, *readers))
        needs[shared] = (seeds, needs.get(shared, (0, 0))[1])
    for name, (seeds, prompts) in needs.items():
        section = config["experiments"][name]
        section["seeds"] = list(range(seeds))
        section["eval_prompts"] = max(section["eval_prompts"], prompts)
    for section in config["experiments"].values():
        for train in (section.get("train"), section.get("gpt2", {}).get("train"), section.get("lstm", {}).get("train")):
            if isinstance(train, dict) and train.get("steps") == 500_000:
                train["capture"] = True
    return config


def experiment_hours(table, experiments: set[str] | None, full, measured, rates) -> dict[str, float]:
    """Packed hours on one card in each scenario of the GPU jobs of ``experiments`` (all where None)."""
    kept = table if experiments is None else table[table["experiment"].isin(experiments) | table["gpu_seconds"].isna()]
    return cost.packed_range(kept, full, measured, rates)


def main() -> None:
    power = json.loads(POWER.read_text())
    config = validate(designed_config(power), source=f"{ALL_EFFECTS} at the tier design")
    full = build_plan(config)
    rates = cluster.GpuRates.read(RATES)
    measured = packing.gains([json.loads(path.read_text()) for path in PACKS])
    table = cost.cost_table(full, None, {name: [] for name in config["experiments"]}, rates)
    gpu = table[table["gpu_seconds"].notna()]
    by_experiment = (gpu.groupby("experiment")[list(cost.GPU_COLUMNS.values())].sum() / 3600).round(2)
    day = set(DAY_EXPERIMENTS)
    effects = {row["experiment"] for row in power["effects"]} | set(SHARED)
    added = {name: experiment_hours(table, day | {name}, full, measured, rates)
             for name in by_experiment.index if name not in day and name in effects}
    seeds = {name: len(section.get("seeds", config["seeds"])) for name, section in config["experiments"].items()
             if name in by_experiment.index}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    result = {
        "commit": commit, "experiments_from": str(ALL_EFFECTS.relative_to(ROOT)), "rates": str(RATES.relative_to(ROOT)),
        "packed_day_hours": packing.PACKED_DAY_S / 3600, "seeds": seeds,
        "gpu_hours_one_at_a_time": {name: dict(row) for name, row in by_experiment.iterrows()},
        "all_effects_packed_hours": experiment_hours(table, None, full, measured, rates),
        "day": sorted(day), "day_packed_hours": experiment_hours(table, day, full, measured, rates),
        "day_note": "the day's experiments at the papers' shapes only: the tier itself (iclab cost on "
                    "config/gpu_node.yaml) adds the short GPU jobs of its experiments at CPU size",
        "day_plus": added,
        "assumption": "estimates, not measurements: captured and batched steps from one member's kernels counted on "
                      "an H100 and peak shares (cluster.BATCHED_SCENARIOS); cuDNN's LSTM assumed to capture",
    }
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({key: result[key] for key in ("gpu_hours_one_at_a_time", "all_effects_packed_hours",
                                                   "day_packed_hours", "day_plus")}, indent=1))


if __name__ == "__main__":
    main()
