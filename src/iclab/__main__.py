"""Command-line stages called by the Snakemake rules: ``python -m iclab <stage> --help``.

Each stage is a thin wrapper: parse arguments, call library functions, write one cube.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never download weights or data
# cuBLAS's deterministic workspace, read when cuBLAS makes its handle: set before any CUDA call of every stage
# (fit.sgd.deterministic_kernels refuses to train on CUDA without it)
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

log = logging.getLogger("iclab")


def json_arg(text: str) -> dict:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"not valid JSON: {err}") from err


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def from_spec(cls, spec: dict, what: str):
    """``cls.from_dict(spec)``, or a ``UsageError`` saying that ``--spec`` is not a ``what`` spec."""
    from iclab.errors import UsageError

    try:
        return cls.from_dict(spec)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise UsageError(
            f"--spec is not a valid {what} spec ({type(err).__name__}: {err}); the workflow's plan writes it: "
            "run this stage through Snakemake, or copy the iclab_spec attribute of a cube it made"
        ) from None


def set_threads(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)


def cmd_validate(args: argparse.Namespace) -> None:
    from iclab.config import load
    from iclab.plan import build_plan

    plan = build_plan(load(args.config))
    n_settings = sum(len(s) for s in plan.settings.values())
    print(f"{args.config}: valid; {len(plan.data)} data sets, {len(plan.train)} models, {n_settings} settings")


def cmd_cost(args: argparse.Namespace) -> None:
    """The tier's cost table, projected from its smoke run's measurements (or, without one, estimated)."""
    from iclab import experiments
    from iclab.config import load, validate
    from iclab.cluster import GpuRates
    from iclab.cost import Smoke, cost_table, effects_markdown, markdown, one_gpu, write_cost
    from iclab.errors import UsageError
    from iclab.plan import build_plan
    from iclab.smoke import results_dir, smoke_config

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
    for pack in args.pack:
        if args.node_cores is None or not pack.is_file():
            raise UsageError(f"--pack {pack}: needs --node-cores, and an existing result of `python -m iclab gpu-pack`")
    rates = None if args.rates is None else GpuRates.read(args.rates)
    full = build_plan(config)
    table = cost_table(full, smoke, products, rates)
    extra = ""
    if args.node_cores is not None:
        gpu_threads = config.get("gpu_threads", config["threads"])
        packs = [json.loads(pack.read_text()) for pack in args.pack]
        extra += "\n" + one_gpu(table, full, args.node_cores, gpu_threads, config["threads"], packs, rates)
    if args.power is not None:
        extra += "\n" + effects_markdown(json.loads(args.power.read_text()), table)
    if args.out is not None:
        write_cost(table, args.out, name, source, extra)
    print(markdown(table, name, source) + extra)


def cmd_gpu_check(args: argparse.Namespace) -> None:
    """The paper tier's training steps timed on a GPU (``iclab.gpu_check``); runs without jsonschema and netCDF4."""
    from iclab.gpu_check import check

    for path in check(args.config, args.out_dir, args.budget_s, args.tiny):
        print(path)


def cmd_gpu_pack(args: argparse.Namespace) -> None:
    """k trainings packed on one GPU against one alone (``iclab.gpu_pack``); runs without jsonschema and netCDF4."""
    from iclab.gpu_pack import pack, worker

    if args.worker is not None:
        worker(args.worker, args.device, args.steps, args.out, args.start_at)
    else:
        print(pack(args.config, args.out_dir, args.k, args.steps, args.tiny, args.shape))


def cmd_decide(args: argparse.Namespace) -> None:
    """The second look's plan from look 1's claims table and benchmarks (``iclab.decide``): printed, and its config
    written to ``--out``."""
    import pandas as pd
    import yaml

    from iclab.atomic import write_text
    from iclab.config import load
    from iclab.decide import look2, needs, overlay, refuse_a_third_look
    from iclab.errors import UsageError
    from iclab.plan import build_plan

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


def cmd_data(args: argparse.Namespace) -> None:
    from iclab.cubes import DATA_KIND, write_cube
    from iclab.datasets import data_dataset
    from iclab.jobs import DataJob
    from iclab.tasks import DATA_STREAMS, task_from_dict
    from iclab.tasks.samplers import eval_set

    job = from_spec(DataJob, args.spec, "data set (DataJob)")
    batch = eval_set(task_from_dict(job.task), job.seed, job.n_prompts, DATA_STREAMS[job.stream])
    write_cube(data_dataset(batch), args.out, kind=DATA_KIND, spec=job.to_dict(), seed=job.seed)
    log.info("wrote %s: %d prompts × %d points", args.out, job.n_prompts, batch.xs.shape[1])


def cmd_lsa_optimum(args: argparse.Namespace) -> None:
    from iclab.jobs import OptimumJob
    from iclab.optima import compute_optimum, write_optimum

    job = from_spec(OptimumJob, args.spec, "LSA class optimum (OptimumJob)")
    started = time.perf_counter()
    optimum = compute_optimum(job)
    write_optimum(optimum, job, args.out)
    log.info("wrote %s: risk %.10g, from %d starts in %.1f s", args.out, optimum.risk, len(optimum.start_risks),
             time.perf_counter() - started)


def cmd_train(args: argparse.Namespace) -> None:
    """Each model in turn, each resuming from ``<checkpoint-dir>/<hash>.pt``. With a checkpoint directory a finished
    model waits there as ``<hash>.nc`` (kept if the job is stopped later, so a rerun trains only the rest) until
    every model is done; then all move into ``--out-dir`` (which Snakemake deletes before the job starts)."""
    from iclab.jobs import TrainJob

    set_threads(args.threads)
    jobs = [from_spec(TrainJob, spec, "training (TrainJob)") for spec in args.spec]  # every spec checked first
    staging = args.out_dir if args.checkpoint_dir is None else args.checkpoint_dir
    staging.mkdir(parents=True, exist_ok=True)
    for job in jobs:
        train_one(job, staging, args)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for job in jobs:
        os.replace(staging / f"{job.hash}.nc", args.out_dir / f"{job.hash}.nc")
    log.info("wrote %d model(s) to %s", len(jobs), args.out_dir)


def train_one(job, staging: Path, args: argparse.Namespace) -> None:
    """Train ``job`` (a ``TrainJob``) into ``staging/<hash>.nc`` unless a finished cube of its spec is there."""
    from iclab.atomic import remove_leftovers
    from iclab.cubes import cube_spec, read_cube
    from iclab.fit.fitters import fitter
    from iclab.trained import MODEL_KIND, save_model

    out = staging / f"{job.hash}.nc"
    if out.exists() and cube_spec(read_cube(out, kind=MODEL_KIND)) == job.to_dict():
        log.info("[%s] finished earlier: %s", job.hash, out)
        return
    checkpoint = None if args.checkpoint_dir is None else args.checkpoint_dir / f"{job.hash}.pt"
    model_fitter = fitter(job.model["name"])
    loop = {option: getattr(args, option) for option in model_fitter.loop_options}
    model, record = model_fitter.fit(
        job, checkpoint=checkpoint, checkpoint_every=args.checkpoint_every, log_every=args.log_every, **loop
    )
    save_model(out, job, model, record)
    log.info("wrote %s", out)
    if checkpoint is not None:
        checkpoint.unlink(missing_ok=True)
        remove_leftovers(checkpoint)  # a checkpoint write that a kill interrupted


def named_values(items: list[str], option: str, what: str) -> dict[str, str]:
    """``name=value`` arguments of ``option`` as a mapping."""
    from iclab.errors import UsageError

    pairs = [item.split("=", 1) for item in items]
    bad = [item for item, pair in zip(items, pairs) if len(pair) != 2]
    if bad:
        raise UsageError(f"{option} takes name={what}, got {bad[0]!r}")
    return dict(pairs)


def named_paths(items: list[str]) -> dict[str, Path]:
    """``--data name=path`` arguments as a mapping."""
    return {name: Path(path) for name, path in named_values(items, "--data", "path").items()}


def seeds_raised(items: list[str]) -> dict[str, int]:
    """``--seeds-raised name=seeds`` arguments as a mapping; seeds a positive integer."""
    from iclab.errors import UsageError

    raised = named_values(items, "--seeds-raised", "seeds")
    bad = [f"{name}={seeds}" for name, seeds in raised.items() if not seeds.isdigit() or int(seeds) < 1]
    if bad:
        raise UsageError(f"--seeds-raised {bad[0]}: the seeds must be a positive integer")
    return {name: int(seeds) for name, seeds in raised.items()}


def cmd_evaluate(args: argparse.Namespace) -> None:
    from iclab.cubes import EVAL_KIND, write_cube
    from iclab.datasets import load_data
    from iclab.errors import UsageError
    from iclab.evaluate import evaluate_setting
    from iclab.experiments import experiment
    from iclab.experiments.base import Setting
    from iclab.optima import read_optimum
    from iclab.trained import TrainedModel

    set_threads(args.threads)
    setting = from_spec(Setting, args.spec, "setting")
    paths = named_paths(args.data)
    if set(paths) != set(setting.data):
        raise UsageError(f"--data: data sets given {sorted(paths)} do not match the setting's {sorted(setting.data)}")
    data = {name: load_data(path, setting.data[name]) for name, path in paths.items()}
    by_hash = {}
    for path in args.models:
        model = TrainedModel.open(path)
        by_hash[model.job.hash] = model
    expected = {m["hash"] for m in setting.models}
    if set(by_hash) != expected:
        raise UsageError(
            f"--models: the models given are of specs {sorted(by_hash)}, the setting's are {sorted(expected)}: "
            "pass results/models/<group>/<hash>.nc for each of the setting's"
        )
    models = {(model.label, model.seed): model for model in by_hash.values()}
    precomputed = {}
    if args.lsa_optimum is not None:
        if "lsa_optimal" not in setting.baselines:
            raise UsageError(f"--lsa-optimum: the setting has no lsa_optimal baseline (its: {setting.baselines})")
        precomputed["lsa_optimal"] = {"optimum": read_optimum(args.lsa_optimum, setting.task)}
    started = time.perf_counter()
    ds = evaluate_setting(experiment(setting.experiment), setting, data, models, args.chunk_size, precomputed)
    prompts = sum(len(batch.ys) for batch in data.values())
    log.info(EVALUATED_LINE.format(prompts=prompts, seconds=time.perf_counter() - started))
    write_cube(ds, args.out, kind=EVAL_KIND, spec=setting.to_dict(), inputs=[m.cube for m in by_hash.values()])
    log.info("wrote %s", args.out)


EVALUATED_LINE = "evaluated: {prompts} prompts read in {seconds:.3f} s"  # read back by iclab.cost


def by_spec_hash(paths: list[Path], kind: str, option: str):
    """The function spec hash → the file among ``paths`` made from that spec (read from their provenance);
    a hash none of them has is a ``UsageError`` naming ``option``."""
    from iclab.cubes import read_cube
    from iclab.errors import UsageError

    files = {read_cube(path, kind=kind).attrs["iclab_spec_hash"]: path for path in paths}

    def path_of(spec_hash: str) -> Path:
        if spec_hash not in files:
            raise UsageError(f"{option}: no {kind} cube of spec {spec_hash} among {sorted(map(str, paths))}")
        return files[spec_hash]

    return path_of


def cmd_theory(args: argparse.Namespace) -> None:
    from iclab.cubes import DATA_KIND, EVAL_KIND, OPTIMUM_KIND, THEORY_KIND, cube_spec, read_cube, write_cube
    from iclab.datasets import load_data
    from iclab.evaluate import theory_dataset
    from iclab.experiments import experiment
    from iclab.experiments.base import Setting
    from iclab.jobs import OptimumJob
    from iclab.optima import read_optimum
    from iclab.trained import MODEL_KIND, TrainedModel

    declared = experiment(args.experiment)  # an unknown name fails before any file is read
    evaluations = [read_cube(path, kind=EVAL_KIND, experiment=args.experiment) for path in args.evaluations]
    settings = [Setting.from_dict(cube_spec(ds)) for ds in evaluations]
    data_path = by_spec_hash(args.data, DATA_KIND, "--data")
    model_path = by_spec_hash(args.models, MODEL_KIND, "--models")
    optimum_path = by_spec_hash(args.lsa_optima, OPTIMUM_KIND, "--lsa-optima")
    ds = theory_dataset(
        declared,
        settings,
        args.order,
        lambda data_hash: load_data(data_path(data_hash)),
        lambda model_hash: TrainedModel.open(model_path(model_hash)),
        lambda task: read_optimum(optimum_path(OptimumJob(task=task).hash), task),
    )
    spec = {"experiment": args.experiment, "order": args.order, "settings": sorted(s.hash for s in settings)}
    write_cube(ds, args.out, kind=THEORY_KIND, spec=spec)
    log.info("wrote %s for %d settings", args.out, len(settings))


def cmd_aggregate(args: argparse.Namespace) -> None:
    import xarray as xr

    from iclab.cubes import EVAL_KIND, EXPERIMENT_KIND, THEORY_KIND, experiment_cube, read_cube, write_cube
    from iclab.experiments import check_name

    check_name(args.experiment)  # before any file is read; the experiment's module (and torch) is not imported
    cubes = [read_cube(path, kind=EVAL_KIND, experiment=args.experiment) for path in args.inputs]
    theory = xr.Dataset() if args.theory is None else read_cube(args.theory, kind=THEORY_KIND)
    ds = experiment_cube(cubes, theory, args.order)
    spec = {
        "experiment": args.experiment,
        "order": args.order,
        "settings": sorted(c.attrs["iclab_spec_hash"] for c in cubes),
    }
    write_cube(ds, args.out, kind=EXPERIMENT_KIND, spec=spec, inputs=cubes)
    log.info("wrote %s from %d settings", args.out, len(cubes))


def cmd_figure(args: argparse.Namespace) -> None:
    from iclab.cubes import EXPERIMENT_KIND, read_cube
    from iclab.experiments import product_function
    from iclab.plots import recording_layout_problems

    draw = product_function(args.name, "figure")
    cube = read_cube(args.cube, kind=EXPERIMENT_KIND, experiment=args.name)
    if args.layout_problems is None:
        draw(cube, args.out)
        log.info("wrote %s and its .pdf", args.out)
        return
    with recording_layout_problems(args.layout_problems):
        draw(cube, args.out)
    problems = args.layout_problems.read_text()
    if problems:
        log.warning("wrote %s and its .pdf, with layout problems (listed in %s):\n%s", args.out,
                    args.layout_problems, problems.rstrip())
    else:
        log.info("wrote %s and its .pdf (no layout problem)", args.out)


def cmd_table(args: argparse.Namespace) -> None:
    from iclab.cubes import EXPERIMENT_KIND, read_cube
    from iclab.experiments import product_function

    write = product_function(args.name, "table")
    frame = write(read_cube(args.cube, kind=EXPERIMENT_KIND, experiment=args.name), args.out)
    log.info("wrote %s.{csv,md,tex}:\n%s", args.out, frame.to_string(index=False))


def cmd_gallery(args: argparse.Namespace) -> None:
    from iclab.gallery import make_gallery

    manifest = make_gallery(args.figures, args.cubes, args.out_dir, args.config, args.config_files, args.claims)
    log.info("wrote %d images (%.2f MB) and %s/manifest.json", len(manifest["images"]), manifest["total_bytes"] / 1e6,
             args.out_dir)


def cmd_docs(args: argparse.Namespace) -> None:
    from iclab.docblocks import stale, write

    if args.check:
        found = stale(args.root)
        if found:
            log.error("stale generated blocks in %s: run `python -m iclab docs`", ", ".join(found))
            raise SystemExit(1)
        log.info("every generated block is current")
        return
    log.info("rewrote the generated blocks of %s", ", ".join(write(args.root)) or "no page (all current)")


def cmd_claims(args: argparse.Namespace) -> None:
    from dataclasses import replace

    from iclab import experiments
    from iclab.claims import claims_table, markdown, write_claims
    from iclab.cubes import EXPERIMENT_KIND, cube_spec, read_cube
    from iclab.errors import UsageError

    raised = seeds_raised(args.seeds_raised)
    cubes = {}
    for path in args.cubes:
        cube = read_cube(path, kind=EXPERIMENT_KIND)
        cubes[cube_spec(cube)["experiment"]] = cube
    if unknown := set(raised) - set(cubes):
        raise UsageError(f"--seeds-raised {sorted(unknown)[0]}: no such experiment among the cubes ({', '.join(cubes)})")
    found = {name: experiments.claims(name, cube) for name, cube in cubes.items()}
    first_look = None
    if args.first_look_cubes:  # these cubes are a second look's: its claims are look 2's
        first_look = {}
        for path in args.first_look_cubes:
            cube = read_cube(path, kind=EXPERIMENT_KIND)
            name = cube_spec(cube)["experiment"]
            first_look[name] = experiments.claims(name, cube)
        found = {name: [replace(claim, look=2) for claim in rows] for name, rows in found.items()}
    table = claims_table(found, smoke=args.smoke is not None, raised=raised, first_look=first_look)
    write_claims(table, args.out)
    log.info("wrote %s.{csv,md,html}:\n%s", args.out, markdown(table))


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m iclab", description=__doc__)
    sub = p.add_subparsers(dest="stage", required=True)

    s = sub.add_parser("validate", help="validate a config file and count its jobs")
    s.add_argument("config", type=Path)
    s.set_defaults(run=cmd_validate)

    s = sub.add_parser("data", help="generate a data set of a task spec (an evaluation set, or an extra set)")
    s.add_argument("--spec", type=json_arg, required=True, help="DataJob spec as JSON")
    s.add_argument("--out", type=Path, required=True)
    s.set_defaults(run=cmd_data)

    s = sub.add_parser("lsa-optimum", help="the LSA class optimum of a linear task (a BFGS)")
    s.add_argument("--spec", type=json_arg, required=True, help="OptimumJob spec as JSON")
    s.add_argument("--out", type=Path, required=True)
    s.set_defaults(run=cmd_lsa_optimum)

    s = sub.add_parser("train", help="train models one after another (each resumes from its checkpoint)")
    s.add_argument("--spec", type=json_arg, nargs="+", required=True, help="TrainJob specs as JSON, one a model")
    s.add_argument("--out-dir", type=Path, required=True, help="where each model's cube goes, as <hash>.nc")
    s.add_argument(
        "--checkpoint-dir", type=Path, default=None, help="checkpoints and finished models (removed on success)"
    )
    s.add_argument("--checkpoint-every", type=positive_int, default=1000)
    s.add_argument("--log-every", type=positive_int, default=500)
    s.add_argument("--prefetch", choices=("auto", "always", "never"), default="auto",
                   help="make gradient-step fits' batches ahead in a thread (auto: on CUDA)")
    s.add_argument("--threads", type=positive_int, default=1)
    s.set_defaults(run=cmd_train)

    s = sub.add_parser("evaluate", help="evaluate the models and baselines of one setting")
    s.add_argument("--spec", type=json_arg, required=True, help="Setting spec as JSON")
    s.add_argument("--data", nargs="+", required=True, help="the setting's data sets as name=path (eval=...)")
    s.add_argument("--models", type=Path, nargs="*", default=[])
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--chunk-size", type=positive_int, default=2048)
    s.add_argument("--threads", type=positive_int, default=1)
    s.add_argument("--lsa-optimum", type=Path, default=None, help="the task's LSA class optimum (lsa-optimum's file)")
    s.set_defaults(run=cmd_evaluate)

    s = sub.add_parser("theory", help="an experiment's theory and weight read-outs, every setting")
    s.add_argument("--experiment", required=True)
    s.add_argument("--order", type=json_arg, required=True, help="sweep dimension -> values, in config order")
    s.add_argument("--evaluations", type=Path, nargs="+", required=True, help="evaluation cubes (their settings)")
    s.add_argument("--data", type=Path, nargs="*", default=[], help="the settings' data sets")
    s.add_argument("--models", type=Path, nargs="*", default=[], help="the settings' model cubes")
    s.add_argument("--lsa-optima", type=Path, nargs="*", default=[], help="the settings' LSA class optima")
    s.add_argument("--out", type=Path, required=True)
    s.set_defaults(run=cmd_theory)

    s = sub.add_parser("aggregate", help="combine the setting cubes and the theory of an experiment")
    s.add_argument("--experiment", required=True)
    s.add_argument("--order", type=json_arg, required=True, help="sweep dimension -> values, in config order")
    s.add_argument("--inputs", type=Path, nargs="+", required=True)
    s.add_argument("--theory", type=Path, default=None, help="the theory cube (none without a theory hook)")
    s.add_argument("--out", type=Path, required=True)
    s.set_defaults(run=cmd_aggregate)

    s = sub.add_parser("figure", help="draw an experiment's figure (.png and .pdf) from its cube")
    s.add_argument("name")
    s.add_argument("--cube", type=Path, required=True)
    s.add_argument("--out", type=Path, required=True, help="the .png path; the .pdf goes beside it")
    s.add_argument("--layout-problems", type=Path, help="draw the figure whatever its layout problems (a legend over "
                   "data, a flat panel, …) and list them in this file (empty when none) instead of failing: a workflow "
                   "run's figures")
    s.set_defaults(run=cmd_figure)

    s = sub.add_parser("table", help="write an experiment's table (.csv, .md, .tex) from its cube")
    s.add_argument("name")
    s.add_argument("--cube", type=Path, required=True)
    s.add_argument("--out", type=Path, required=True, help="path without suffix; .csv, .md and .tex are written")
    s.set_defaults(run=cmd_table)

    s = sub.add_parser("gallery", help="the front page's images: figures downscaled and stamped with their provenance")
    s.add_argument("--figures", type=Path, nargs="+", required=True, help="results/figures/<name>.png")
    s.add_argument("--cubes", type=Path, nargs="+", required=True, help="results/cubes/<name>.nc of each figure")
    s.add_argument("--config", type=json_arg, required=True, help="the run's resolved config, as JSON")
    s.add_argument("--config-files", nargs="+", required=True, help="the config files the run was given")
    s.add_argument("--claims", type=Path, help="the run's results/tables/claims.md, copied beside the images")
    s.add_argument("--out-dir", type=Path, required=True)
    s.set_defaults(run=cmd_gallery)

    s = sub.add_parser("docs", help="rewrite the docs' generated blocks from their committed records")
    s.add_argument("--check", action="store_true", help="only name the stale blocks (exit 1 if any)")
    s.add_argument("--root", type=Path, default=Path("."), help="the repository (default: here)")
    s.set_defaults(run=cmd_docs)

    s = sub.add_parser("cost", help="the cost of a config's jobs (before submitting it), from its smoke run")
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
    s.set_defaults(run=cmd_cost)

    s = sub.add_parser("gpu-check", help="time the tier's GPT-2 and LSTM training steps on this machine's GPU")
    s.add_argument("--config", type=Path, default=Path("config/paper.yaml"), help="the tier (default: %(default)s)")
    s.add_argument("--out-dir", type=Path, default=Path("benchmarks/results"),
                   help="where gpu_rates_, gpu_agreement_ and gpu_env_<card> go (default: %(default)s)")
    s.add_argument("--budget-s", type=positive_int, default=420,
                   help="seconds after which no new timing starts (default: %(default)s)")
    s.add_argument("--tiny", action="store_true", help="on the CPU at tiny widths and batches (a check of the check)")
    s.set_defaults(run=cmd_gpu_check)

    s = sub.add_parser("gpu-pack", help="k trainings packed on this machine's GPU against one alone: speed, equality")
    s.add_argument("--config", type=Path, default=Path("config/gpu_node.yaml"), help="the tier (default: %(default)s)")
    s.add_argument("--out-dir", type=Path, default=Path("benchmarks/results"),
                   help="where gpu_pack_<shape>_<card>.json goes (default: %(default)s)")
    s.add_argument("--k", type=positive_int, default=4, help="trainings packed at once (default: %(default)s)")
    s.add_argument("--steps", type=positive_int, default=100, help="steps each training runs (default: %(default)s)")
    s.add_argument("--shape", choices=("busiest", "longest", "lstm"), default="busiest",
                   help="the tier's shape with the most models, the longest prompts, or its LSTM (default: %(default)s)")
    s.add_argument("--tiny", action="store_true", help="on the CPU at tiny widths and batches (a check of the check)")
    s.add_argument("--worker", metavar="SPEC", help=argparse.SUPPRESS)  # one training, in its own process
    s.add_argument("--device", default="cuda", help=argparse.SUPPRESS)
    s.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    s.add_argument("--start-at", type=float, help=argparse.SUPPRESS)  # epoch seconds of the first step
    s.set_defaults(run=cmd_gpu_pack)

    s = sub.add_parser("decide", help="plan the second look: the seeds each inconclusive claim needs, within a budget")
    s.add_argument("--config", type=Path, required=True, help="look 1's config file")
    s.add_argument("--claims", type=Path, default=Path("results/tables/claims.csv"), help="look 1's claims table")
    s.add_argument("--results", type=Path, default=Path("results"), help="look 1's results (its benchmarks price look 2)")
    s.add_argument("--budget-s", type=float, default=7200.0,
                   help="job-seconds look 2 may take (default %(default)s: 60 min on 2 cores)")
    s.add_argument("--out", type=Path, required=True, help="where look 2's config is written (YAML)")
    s.add_argument("--run", action="store_true", dest="run_look2",
                   help="then run look 2 (snakemake on that config): one command")
    s.add_argument("--cores", default="all", help="with --run: Snakemake's --cores (default %(default)s)")
    s.set_defaults(run=cmd_decide)

    s = sub.add_parser("claims", help="check every experiment's claims against its theory, from the cubes")
    s.add_argument("--cubes", type=Path, nargs="+", required=True, help="experiment cubes, in the table's order")
    s.add_argument("--out", type=Path, required=True, help="path without suffix; .csv, .md and .html are written")
    s.add_argument("--smoke", type=positive_int, metavar="K", help="the cubes are a smoke run's (K steps): judge none")
    s.add_argument("--seeds-raised", nargs="*", default=[], metavar="NAME=SEEDS",
                   help="an experiment whose seeds were raised from SEEDS after an inconclusive verdict (its rows say so)")
    s.add_argument("--first-look-cubes", type=Path, nargs="*", default=[],
                   help="--cubes are a second look's: look 1's cubes (in its table's order); the table holds both looks")
    s.set_defaults(run=cmd_claims)
    return p


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    args = parser().parse_args(argv)  # before the heavy imports: --help and usage errors answer at once
    from iclab.errors import IclabError

    try:
        args.run(args)
    except IclabError as err:
        log.error("%s", err)
        raise SystemExit(1) from None
    log_peak_memory()


PEAK_MEMORY_LINE = "peak memory: host {host:.0f} MB, device {device:.0f} MB"  # read back by iclab.cost


def log_peak_memory() -> None:
    """The process's peak resident memory (the kernel's exact high-water mark, which a sampling benchmark can miss)
    and, where CUDA ran, the peak of torch's device allocations."""
    import resource

    host_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    torch = sys.modules.get("torch")
    cuda = torch is not None and torch.cuda.is_initialized()
    device_mb = torch.cuda.max_memory_allocated() / 2**20 if cuda else 0.0
    log.info(PEAK_MEMORY_LINE.format(host=host_mb, device=device_mb))


if __name__ == "__main__":
    main()
