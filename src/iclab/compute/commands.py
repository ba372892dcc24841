"""Compute planning and the GPU as commands: a tier's cost, ``gpu-check``, ``gpu-pack`` and the second look's
plan (``decide``).

Each command: its arguments (``arguments_<name>``) and its body (``run_<name>``), registered in ``COMMANDS``,
which ``iclab.__main__`` turns into the parser. Heavy imports stay inside the bodies: ``--help`` answers at once.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from iclab.cli import json_arg, positive_int

log = logging.getLogger("iclab")


def arguments_cost(s: argparse.ArgumentParser) -> None:
    given = s.add_mutually_exclusive_group(required=True)
    given.add_argument("--config", type=Path, help="the tier's config file (e.g. config/paper.yaml)")
    given.add_argument("--config-json", type=json_arg, help="the tier's config as JSON (the workflow's cost rule)")
    s.add_argument("--smoke", type=positive_int, metavar="K", help="project from this config's smoke run of K steps")
    s.add_argument("--smoke-dir", type=Path, help="that smoke run's results (default results/smoke)")
    s.add_argument("--out", type=Path, help="path without suffix: .csv (every job) and .md (totals) are written")
    s.add_argument("--rates", type=Path, metavar="FILE",
                   help="GPU seconds from this rates file of `iclab gpu-check` (default: estimated from anchors, "
                        "labelled)")
    s.add_argument("--node-cores", type=positive_int, metavar="C",
                   help="add the tier on one GPU node of C cores and one card: its GPU jobs packed, against a day")
    s.add_argument("--pack", type=Path, metavar="FILE", action="append", default=[],
                   help="with --node-cores: a family's throughput gain from this `gpu-pack` result (repeatable; a "
                        "family without one runs one at a time)")
    s.add_argument("--power", type=Path, metavar="FILE",
                   help="add a row per effect from this result of benchmarks/gpu_node_power.py")


def run_cost(args: argparse.Namespace) -> None:
    """The tier's cost table, projected from its smoke run's measurements (or, without one, estimated)."""
    from iclab import experiments
    from iclab.config import load, validate
    from iclab.compute.cluster import GpuRates
    from iclab.compute.cost import Smoke, cost_table, effects_markdown, markdown, one_gpu, write_cost
    from iclab.errors import UsageError
    from iclab.pipeline.plan import build_plan
    from iclab.pipeline.smoke import results_dir, smoke_config

    config = load(args.config) if args.config_json is None else validate(args.config_json, source="--config-json")
    config.pop("smoke", None)  # the cost of the tier itself
    name = str(args.config or "the run's config")
    smoke, source = None, "no smoke run: training from cluster.estimated_seconds, other jobs unknown"
    if args.smoke is not None:
        smoked = smoke_config(config | {"smoke": args.smoke})
        results = args.smoke_dir or Path(results_dir(smoked))
        if not (results / "benchmarks").is_dir():
            raise UsageError(
                f"--smoke {args.smoke}: no smoke run's benchmarks in {results}/; run it first (snakemake --cores 2 "
                f"--configfile {name} --replace-workflow-config --config smoke={args.smoke}) or leave --smoke out"
            )
        smoke = Smoke.read(build_plan(smoked), results)
        source = f"the smoke run in {results}/ (K = {args.smoke} steps, measured on this machine)"
    registry = experiments.registry()
    products = {
        name: ["theory"] * (registry[name].theory is not None) + ["aggregate", *registry[name].products]
        for name in config["experiments"]
    }
    packs = []
    for pack in args.pack:
        if args.node_cores is None or not pack.is_file():
            raise UsageError(f"--pack {pack}: needs --node-cores, and an existing result of `python -m iclab gpu-pack`")
        packs.append(json.loads(pack.read_text()))
        if "throughput_gain" not in packs[-1]:
            raise UsageError(f"--pack {pack}: a gpu-pack result that measured nothing "
                             f"({packs[-1].get('not_run', 'no throughput_gain')})")
    rates = None if args.rates is None else GpuRates.read(args.rates)
    full = build_plan(config)
    table = cost_table(full, smoke, products, rates)
    extra = ""
    if args.node_cores is not None:
        gpu_threads = config.get("gpu_threads", config["threads"])
        extra += "\n" + one_gpu(table, full, args.node_cores, gpu_threads, config["threads"], packs, rates,
                                config["loop"]["producers"])
    if args.power is not None:
        extra += "\n" + effects_markdown(json.loads(args.power.read_text()), table)
    if args.out is not None:
        write_cost(table, args.out, name, source, extra)
    print(markdown(table, name, source) + extra)


def arguments_gpu_check(s: argparse.ArgumentParser) -> None:
    s.add_argument("--config", type=Path, default=Path("config/paper.yaml"), help="the tier (default: %(default)s)")
    s.add_argument("--out-dir", type=Path, default=Path("benchmarks/results"),
                   help="where gpu_rates_, gpu_agreement_ and gpu_env_<card> go (default: %(default)s)")
    s.add_argument("--budget-s", type=positive_int, default=420,
                   help="seconds after which no new timing starts (default: %(default)s)")
    s.add_argument("--tiny", action="store_true", help="on the CPU at tiny widths and batches (a check of the check)")


def run_gpu_check(args: argparse.Namespace) -> None:
    """The paper tier's training steps timed on a GPU (``iclab.compute.gpu_check``); runs without jsonschema and
    netCDF4."""
    from iclab.compute.gpu_check import check

    for path in check(args.config, args.out_dir, args.budget_s, args.tiny):
        print(path)


def arguments_gpu_backlog(s: argparse.ArgumentParser) -> None:
    s.add_argument("--config", type=Path, default=Path("config/paper.yaml"),
                   help="the tier (default: %(default)s, every shape at the papers' size, gpu_node's among them)")
    s.add_argument("--out-dir", type=Path, default=Path("benchmarks/results"),
                   help="where gpu_backlog_<card>.json goes (default: %(default)s)")
    s.add_argument("--tiny", action="store_true", help="on the CPU at tiny widths and batches (a check of the backlog)")
    s.add_argument("--rows", choices=("window", "capture"), default="window",
                   help="window: rows 1-6 (gpu_backlog_<card>.json); capture: row 9, each batched group's eager step "
                        "against its captured one (gpu_backlog_capture_<card>.json) (default: %(default)s)")


def run_gpu_backlog(args: argparse.Namespace) -> None:
    """The GPU backlog's rows in order (``iclab.compute.gpu_backlog``); runs without jsonschema and netCDF4."""
    from iclab.compute.gpu_backlog import backlog

    print(backlog(args.config, args.out_dir, args.tiny, args.rows))


def arguments_gpu_pack(s: argparse.ArgumentParser) -> None:
    s.add_argument("--config", type=Path, default=Path("config/paper.yaml"),
                   help="the tier (default: %(default)s, every shape at the papers' size, gpu_node's among them)")
    s.add_argument("--out-dir", type=Path, default=Path("benchmarks/results"),
                   help="where gpu_pack_<shape>_<card>.json goes (default: %(default)s)")
    s.add_argument("--k", type=positive_int, default=4, help="trainings packed at once (default: %(default)s)")
    s.add_argument("--steps", type=positive_int, default=100, help="steps each training runs (default: %(default)s)")
    s.add_argument("--shape", choices=("busiest", "longest", "lstm", "batched"), default="busiest",
                   help="the tier's shape with the most models, the longest prompts, its LSTM, or a batched group of "
                        "GPT-2s (the most members of those two of which fit an 80 GB card) (default: %(default)s)")
    s.add_argument("--mps", action="store_true",
                   help="the packed copies under NVIDIA's MPS daemon (started and stopped here; where the image has "
                        "none, the result says so)")
    s.add_argument("--tiny", action="store_true", help="on the CPU at tiny widths and batches (a check of the check)")
    s.add_argument("--worker", metavar="SPEC", help=argparse.SUPPRESS)  # one training, in its own process
    s.add_argument("--device", default="cuda", help=argparse.SUPPRESS)
    s.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    s.add_argument("--start-at", type=float, help=argparse.SUPPRESS)  # epoch seconds of the first step


def run_gpu_pack(args: argparse.Namespace) -> None:
    """k trainings packed on one GPU against one alone (``iclab.compute.gpu_pack``); runs without jsonschema and
    netCDF4."""
    from iclab.compute.gpu_pack import pack, worker

    if args.worker is not None:
        worker(args.worker, args.device, args.steps, args.out, args.start_at)
    else:
        print(pack(args.config, args.out_dir, args.k, args.steps, args.tiny, args.shape, args.mps))


def arguments_decide(s: argparse.ArgumentParser) -> None:
    s.add_argument("--config", type=Path, required=True, help="look 1's config file")
    s.add_argument("--claims", type=Path, default=Path("results/tables/claims.csv"), help="look 1's claims table")
    s.add_argument("--results", type=Path, default=Path("results"), help="look 1's results (its benchmarks price look 2)")
    s.add_argument("--budget-s", type=float, default=7200.0,
                   help="job-seconds look 2 may take (default %(default)s: 60 min on 2 cores)")
    s.add_argument("--out", type=Path, required=True, help="where look 2's config is written (YAML)")
    s.add_argument("--run", action="store_true", dest="run_look2",
                   help="then run look 2 (snakemake on that config): one command")
    s.add_argument("--cores", default="all", help="with --run: Snakemake's --cores (default %(default)s)")


def run_decide(args: argparse.Namespace) -> None:
    """The second look's plan from look 1's claims table and benchmarks (``iclab.compute.decide``): printed, and its
    config written to ``--out``."""
    import pandas as pd
    import yaml

    from iclab.atomic import write_text
    from iclab.config import load
    from iclab.compute.decide import look2, needs, overlay, refuse_a_third_look
    from iclab.errors import UsageError
    from iclab.pipeline.plan import build_plan

    if not args.claims.is_file():
        raise UsageError(f"--claims {args.claims}: no look-1 claims table there (snakemake results/tables/claims.md)")
    config, table = load(args.config), pd.read_csv(args.claims)
    refuse_a_third_look(config, table, args.config, args.claims)
    looks = look2(table, config, build_plan(config), args.results, args.budget_s)
    for look in looks:
        print(f"{look.experiment}: {len(look.rows)} rows, new seeds {list(look.new_seeds)}, "
              f"~{look.job_seconds:,.0f} job-s — {'planned' if look.affordable else 'over the budget'}")
    for need in needs(table):
        if need.kind != "seeds":
            print(f"{need.experiment}: {need.claim}: {need.kind} ({need.why})")
    write_text(args.out, yaml.safe_dump(overlay(looks, config, args.results), sort_keys=False, allow_unicode=True))
    print(args.out)
    if args.run_look2:  # the same workflow on look 2's config: new seeds only, into <results>/look2/
        import subprocess

        command = [sys.executable, "-m", "snakemake", "--cores", args.cores, "--configfile", str(args.out),
                   "--replace-workflow-config"]
        print(" ".join(command), flush=True)
        raise SystemExit(subprocess.run(command, check=False).returncode)


COMMANDS = {  # name → (help, its arguments, its body)
    "cost": ("the cost of a config's jobs (before submitting it), from its smoke run", arguments_cost, run_cost),
    "gpu-check": ("time the tier's GPT-2 and LSTM training steps on this machine's GPU", arguments_gpu_check,
                  run_gpu_check),
    "gpu-backlog": ("the GPU backlog, first on a lent GPU: kernel time, TF32 agreement and rounding", arguments_gpu_backlog,
                    run_gpu_backlog),
    "gpu-pack": ("k trainings packed on this machine's GPU against one alone: speed, equality", arguments_gpu_pack,
                 run_gpu_pack),
    "decide": ("plan the second look: the seeds each inconclusive claim needs, within a budget", arguments_decide,
               run_decide),
}
