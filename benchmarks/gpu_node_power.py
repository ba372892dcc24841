"""Benchmark: the seeds and prompts that config/gpu_node.yaml needs to decide each headline effect
(``iclab.stats.power``).

    python benchmarks/gpu_node_power.py --cubes results/cubes results/look2/cubes --config config.yaml
    python benchmarks/gpu_node_power.py --spreads benchmarks/results/gpu_node_power.json  # the spreads stored there
    # writes benchmarks/results/gpu_node_power.json (seconds)

For each effect of ``power.EFFECTS``, the claim's spread between seeds and its prompts' s.e. are read from the first
cube directory whose run of the experiment has at least two seeds (a default run has one seed for Fu et al.'s
hidden sizes and ill-conditioned model; its second look, three more), with the evaluation prompts behind them from
that run's config; or, with ``--spreads``, taken from an earlier result (its ``spread`` rows and sources). Two designs
side by side: ``design`` at the paper's effect size with the spreads measured at CPU size (the most favourable
reading), ``least_favourable`` at ``power.least_favourable``'s truth and spreads; each again with the seed spread at
its 80% upper confidence bound (``power.upper_spread``), and the tier's power under all four, with P(holds) and
P(fails) at the region's edge. The spreads were measured at CPU size: at the paper's shapes they are an assumption.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

from iclab import experiments
from iclab.config import load
from iclab.store.cubes import read_cube
from iclab.stats.power import (DAY_EXPERIMENTS, EFFECTS, LEVEL, MC_SHARE, SPREAD_CONFIDENCE, Spread, design,
                               edge_verdicts, favourable_truth, least_favourable, power_as_run, side, tier_design,
                               upper_spread)

OUT = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "gpu_node_power.json"
TIER = Path(__file__).resolve().parents[1] / "config" / "gpu_node.yaml"


def measured_spread(effect, cube_dirs: list[Path], config: dict) -> tuple[Spread, Path]:
    """The effect's claim as measured in the first of ``cube_dirs`` whose run has ≥ 2 seeds of it."""
    section = config["experiments"][effect.experiment]
    prompts = section.get("eval_prompts", config["evaluation"]["n_prompts"])
    for directory in cube_dirs:
        path = directory / f"{effect.experiment}.nc"
        if not path.is_file():
            continue
        found = [c for c in experiments.claims(effect.experiment, read_cube(path, kind="experiment"))
                 if c.claim.startswith(effect.claim)]
        if len(found) != 1:
            raise SystemExit(f"{path}: {len(found)} claims start with {effect.claim!r}; expected one")
        (claim,) = found
        d = claim.difference
        if d.seeds >= 2:
            spread = Spread(estimate=d.value, relation=claim.relation, margin=claim.margin, seeds=d.seeds,
                            sd=d.seed_se * d.seeds**0.5, mc_se=d.prompt_se, prompts=prompts)
            return spread, path
    raise SystemExit(f"no cube of {effect.experiment} with two seeds or more in {', '.join(map(str, cube_dirs))}")


def effect_row(effect, spread: Spread, measured_in: str, tier: dict) -> dict:
    """One effect's spreads, both designs, the same at the seed spread's 80% upper confidence bound
    (``upper_spread``) and the tier's (``tier_design``); for an effect of ``DAY_EXPERIMENTS``, the power of the seeds
    and prompts ``tier`` runs under each truth and spread, which side of the claim each truth lies on, and the
    verdicts' probabilities at the region's edge (``as_run``; None for the others, which run at CPU size there)."""
    favourable_at = favourable_truth(effect, spread)
    truth, scaled = least_favourable(effect, spread)
    upper, scaled_upper = upper_spread(spread), upper_spread(scaled)
    row = {"effect": effect.name, "experiment": effect.experiment, "claim": effect.claim,
           "truth_source": effect.truth_source if effect.truth is not None
           else effect.truth_source + "; the CPU estimate stands in",
           "measured_in": measured_in, "spread": spread.__dict__, "design": design(favourable_at, spread).to_dict(),
           "least_favourable": {"sd": scaled.sd, "mc_se": scaled.mc_se, "design": design(truth, scaled).to_dict()},
           "upper_bound": {"confidence": SPREAD_CONFIDENCE, "dof": spread.seeds - 1, "sd": upper.sd,
                           "design": design(favourable_at, upper).to_dict(),
                           "least_favourable": {"sd": scaled_upper.sd,
                                                "design": design(truth, scaled_upper).to_dict()}},
           "tier_design": tier_design(effect, spread).to_dict(), "in_day": effect.experiment in DAY_EXPERIMENTS}
    if not row["in_day"]:
        return row | {"as_run": None}
    section = tier["experiments"][effect.experiment]
    seeds, prompts = len(section["seeds"]), section["eval_prompts"]
    return row | {"as_run": {
        "seeds": seeds, "prompts": prompts, "side": side(favourable_at, spread),
        "side_least_favourable": side(truth, spread), "power": power_as_run(favourable_at, spread, seeds, prompts),
        "power_least_favourable": power_as_run(truth, scaled, seeds, prompts),
        "power_upper": power_as_run(favourable_at, upper, seeds, prompts),
        "power_least_favourable_upper": power_as_run(truth, scaled_upper, seeds, prompts),
        "edge": edge_verdicts(favourable_at, spread, seeds, prompts),
        "edge_upper": edge_verdicts(favourable_at, upper, seeds, prompts)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--cubes", type=Path, nargs="+", help="cube directories, in order of use")
    source.add_argument("--spreads", type=Path, help="an earlier result of this benchmark: its spreads, not cubes")
    parser.add_argument("--config", type=Path, help="with --cubes: the config of the run that made the cubes")
    parser.add_argument("--tier", type=Path, default=TIER, help="the tier whose seeds and prompts are scored "
                        "(default: %(default)s)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    tier = load(args.tier)
    if args.cubes is not None and args.config is None:
        parser.error("--cubes needs --config (the config of the run that made the cubes)")
    if args.spreads is not None:
        earlier = json.loads(args.spreads.read_text())
        by_name = {row["effect"]: row for row in earlier["effects"]}
        missing = [effect.name for effect in EFFECTS if effect.name not in by_name]
        if missing:
            parser.error(f"--spreads {args.spreads}: no spread of {', '.join(missing)}")
        rows = [effect_row(effect, Spread(**by_name[effect.name]["spread"]), by_name[effect.name]["measured_in"], tier)
                for effect in EFFECTS]
        config_name = earlier["config"]
    else:
        config = load(args.config)
        rows = []
        for effect in EFFECTS:
            spread, path = measured_spread(effect, args.cubes, config)
            rows.append(effect_row(effect, spread, str(path), tier))
        config_name = str(args.config)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    result = {"level": LEVEL, "mc_share": MC_SHARE, "config": config_name, "commit": commit,
              "assumption": "seed spread and prompt s.e. measured at CPU size, applied at the paper's shapes",
              "effects": rows}
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    for row in rows:
        print(f"{row['experiment']:22} {row['effect']:40} {row['tier_design']} | {row['as_run']}")


if __name__ == "__main__":
    main()
