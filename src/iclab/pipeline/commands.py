"""The workflow's stages as commands (``python -m iclab <stage>``, called from the Snakemake rules): data sets,
LSA class optima, training, evaluation, theory, aggregation, figures, tables and the claims table.

Each command: its arguments (``arguments_<name>``) and its body (``run_<name>``), registered in ``COMMANDS``,
which ``iclab.__main__`` turns into the parser. Heavy imports stay inside the bodies: ``--help`` answers at once.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import time
from pathlib import Path

from iclab.cli import from_spec, json_arg, non_negative_int, positive_int, set_threads

log = logging.getLogger("iclab")


def arguments_validate(s: argparse.ArgumentParser) -> None:
    s.add_argument("config", type=Path)


def run_validate(args: argparse.Namespace) -> None:
    from iclab.config import load
    from iclab.pipeline.plan import build_plan

    plan = build_plan(load(args.config))
    n_settings = sum(len(s) for s in plan.settings.values())
    print(f"{args.config}: valid; {len(plan.data)} data sets, {len(plan.train)} models, {n_settings} settings")


def arguments_data(s: argparse.ArgumentParser) -> None:
    s.add_argument("--spec", type=json_arg, required=True, help="DataJob spec as JSON")
    s.add_argument("--out", type=Path, required=True)


def run_data(args: argparse.Namespace) -> None:
    from iclab.store.cubes import DATA_KIND, write_cube
    from iclab.store.datasets import data_dataset
    from iclab.store.jobs import DataJob
    from iclab.tasks import DATA_STREAMS, task_from_dict
    from iclab.tasks.samplers import eval_set

    job = from_spec(DataJob, args.spec, "data set (DataJob)")
    batch = eval_set(task_from_dict(job.task), job.seed, job.n_prompts, DATA_STREAMS[job.stream])
    write_cube(data_dataset(batch), args.out, kind=DATA_KIND, spec=job.to_dict(), seed=job.seed)
    log.info("wrote %s: %d prompts × %d points", args.out, job.n_prompts, batch.xs.shape[1])


def arguments_lsa_optimum(s: argparse.ArgumentParser) -> None:
    s.add_argument("--spec", type=json_arg, required=True, help="OptimumJob spec as JSON")
    s.add_argument("--out", type=Path, required=True)


def run_lsa_optimum(args: argparse.Namespace) -> None:
    from iclab.store.jobs import OptimumJob
    from iclab.store.optima import compute_optimum, write_optimum

    job = from_spec(OptimumJob, args.spec, "LSA class optimum (OptimumJob)")
    started = time.perf_counter()
    optimum = compute_optimum(job)
    write_optimum(optimum, job, args.out)
    log.info("wrote %s: risk %.10g, from %d starts in %.1f s", args.out, optimum.risk, len(optimum.start_risks),
             time.perf_counter() - started)


def arguments_train(s: argparse.ArgumentParser) -> None:
    s.add_argument("--spec", type=json_arg, nargs="+", required=True, help="TrainJob specs as JSON, one a model")
    s.add_argument("--out-dir", type=Path, required=True, help="where each model's cube goes, as <hash>.nc")
    s.add_argument(
        "--checkpoint-dir", type=Path, default=None, help="checkpoints and finished models (removed on success)"
    )
    s.add_argument("--checkpoint-every", type=positive_int, default=1000)
    s.add_argument("--log-every", type=positive_int, default=500)
    s.add_argument("--prefetch", choices=("auto", "always", "never"), default="auto",
                   help="make gradient-step fits' batches ahead in a thread (auto: on CUDA)")
    s.add_argument("--producers", type=non_negative_int, default=0,
                   help="processes that make the batches made ahead, beside the loop (0: its thread makes them; "
                        "the same numbers either way)")
    s.add_argument("--threads", type=positive_int, default=1)
    s.add_argument("--reuse-dir", type=Path, default=None,
                   help="a batched group's member that a finished group holds here (<group>/<hash>.nc, its spec "
                        "checked) is reused, not retrained: results/models, where an earlier plan's groups are")


def run_train(args: argparse.Namespace) -> None:
    """Each model in turn, each resuming from ``<checkpoint-dir>/<hash>.pt``, or, where the specs say
    ``train.batched``, all as one group, resuming from ``<checkpoint-dir>/<group hash>.pt``. With a checkpoint
    directory a finished model waits there as ``<hash>.nc`` (kept if the job is stopped later, so a rerun trains only
    the rest) until every model is done; then all move into ``--out-dir`` (which Snakemake deletes before the job
    starts)."""
    from iclab.store.jobs import TrainJob

    set_threads(args.threads)
    jobs = [from_spec(TrainJob, spec, "training (TrainJob)") for spec in args.spec]  # every spec checked first
    batched = is_batched_group(jobs)
    staging = args.out_dir if args.checkpoint_dir is None else args.checkpoint_dir
    staging.mkdir(parents=True, exist_ok=True)
    if batched:
        train_batched(jobs, staging, args)
    else:
        for job in jobs:
            train_one(job, staging, args)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for job in jobs:
        os.replace(staging / f"{job.hash}.nc", args.out_dir / f"{job.hash}.nc")
    log.info("wrote %d model(s) to %s", len(jobs), args.out_dir)


def arguments_evaluate(s: argparse.ArgumentParser) -> None:
    s.add_argument("--spec", type=json_arg, required=True, help="Setting spec as JSON")
    s.add_argument("--data", nargs="+", required=True, help="the setting's data sets as name=path (eval=...)")
    s.add_argument("--models", type=Path, nargs="*", default=[])
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--chunk-size", type=positive_int, default=2048)
    s.add_argument("--threads", type=positive_int, default=1)
    s.add_argument("--lsa-optimum", type=Path, default=None, help="the task's LSA class optimum (lsa-optimum's file)")


def run_evaluate(args: argparse.Namespace) -> None:
    from iclab.store.cubes import EVAL_KIND, write_cube
    from iclab.store.datasets import load_data
    from iclab.errors import UsageError
    from iclab.pipeline.evaluate import evaluate_setting
    from iclab.experiments import experiment
    from iclab.experiments.base import Setting
    from iclab.store.optima import read_optimum
    from iclab.store.trained import TrainedModel

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


def arguments_theory(s: argparse.ArgumentParser) -> None:
    s.add_argument("--experiment", required=True)
    s.add_argument("--order", type=json_arg, required=True, help="sweep dimension -> values, in config order")
    s.add_argument("--evaluations", type=Path, nargs="+", required=True, help="evaluation cubes (their settings)")
    s.add_argument("--data", type=Path, nargs="*", default=[], help="the settings' data sets")
    s.add_argument("--models", type=Path, nargs="*", default=[], help="the settings' model cubes")
    s.add_argument("--lsa-optima", type=Path, nargs="*", default=[], help="the settings' LSA class optima")
    s.add_argument("--out", type=Path, required=True)


def run_theory(args: argparse.Namespace) -> None:
    from iclab.store.cubes import DATA_KIND, EVAL_KIND, OPTIMUM_KIND, THEORY_KIND, cube_spec, read_cube, write_cube
    from iclab.store.datasets import load_data
    from iclab.pipeline.evaluate import theory_dataset
    from iclab.experiments import experiment
    from iclab.experiments.base import Setting
    from iclab.store.jobs import OptimumJob
    from iclab.store.optima import read_optimum
    from iclab.store.trained import MODEL_KIND, TrainedModel

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


def arguments_aggregate(s: argparse.ArgumentParser) -> None:
    s.add_argument("--experiment", required=True)
    s.add_argument("--order", type=json_arg, required=True, help="sweep dimension -> values, in config order")
    s.add_argument("--inputs", type=Path, nargs="+", required=True)
    s.add_argument("--theory", type=Path, default=None, help="the theory cube (none without a theory hook)")
    s.add_argument("--out", type=Path, required=True)


def run_aggregate(args: argparse.Namespace) -> None:
    import xarray as xr

    from iclab.store.cubes import EVAL_KIND, EXPERIMENT_KIND, THEORY_KIND, experiment_cube, read_cube, write_cube
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


def arguments_figure(s: argparse.ArgumentParser) -> None:
    s.add_argument("name")
    s.add_argument("--cube", type=Path, required=True)
    s.add_argument("--out", type=Path, required=True, help="the .png path; the .pdf goes beside it")
    s.add_argument("--layout-problems", type=Path, help="draw the figure whatever its layout problems (a legend over "
                   "data, a flat panel, …) and list them in this file (empty when none) instead of failing: a workflow "
                   "run's figures")


def run_figure(args: argparse.Namespace) -> None:
    from iclab.store.cubes import EXPERIMENT_KIND, read_cube
    from iclab.experiments import product_function
    from iclab.report.plots import recording_layout_problems

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


def arguments_table(s: argparse.ArgumentParser) -> None:
    s.add_argument("name")
    s.add_argument("--cube", type=Path, required=True)
    s.add_argument("--out", type=Path, required=True, help="path without suffix; .csv, .md and .tex are written")


def run_table(args: argparse.Namespace) -> None:
    from iclab.store.cubes import EXPERIMENT_KIND, read_cube
    from iclab.experiments import product_function

    write = product_function(args.name, "table")
    frame = write(read_cube(args.cube, kind=EXPERIMENT_KIND, experiment=args.name), args.out)
    log.info("wrote %s.{csv,md,tex}:\n%s", args.out, frame.to_string(index=False))


def arguments_claims(s: argparse.ArgumentParser) -> None:
    s.add_argument("--cubes", type=Path, nargs="+", required=True, help="experiment cubes, in the table's order")
    s.add_argument("--out", type=Path, required=True, help="path without suffix; .csv, .md and .html are written")
    s.add_argument("--smoke", type=positive_int, metavar="K", help="the cubes are a smoke run's (K steps): judge none")
    s.add_argument("--seeds-raised", nargs="*", default=[], metavar="NAME=SEEDS",
                   help="an experiment whose seeds were raised from SEEDS after an inconclusive verdict (its rows say so)")
    s.add_argument("--first-look-cubes", type=Path, nargs="*", default=[],
                   help="--cubes are a second look's: look 1's cubes (in its table's order); the table holds both looks")


def run_claims(args: argparse.Namespace) -> None:
    from dataclasses import replace

    from iclab import experiments
    from iclab.report.claims_report import markdown, write_claims
    from iclab.stats.claims import claims_table
    from iclab.store.cubes import EXPERIMENT_KIND, cube_spec, read_cube
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


def is_batched_group(jobs: list) -> bool:
    """Whether ``jobs`` are a batched group (every spec's ``train.batched``; ``batched.check_group`` passed), or
    models to train one by one (none's); a mix is refused before any work."""
    from iclab.errors import UsageError
    from iclab.fit.batched import check_group

    flags = [job.batched for job in jobs]
    if any(flags) and not all(flags):
        raise UsageError(f"--spec: train.batched is true in specs {[g for g, f in enumerate(flags) if f]} only: a "
                         "job trains one batched group (every spec batched) or models one by one (none)")
    if all(flags):
        check_group(jobs)
    return all(flags)


def reuse(job, staging: Path, reuse_dir: Path | None) -> bool:
    """Whether a finished group under ``reuse_dir`` holds ``job``'s model (``<group>/<hash>.nc`` of its spec): then
    linked (or copied) into ``staging`` and logged, so that a renamed group trains only its new members."""
    from iclab.atomic import atomic_write

    if reuse_dir is None:
        return False
    for found in sorted(reuse_dir.glob(f"*/{job.hash}.nc")):
        if holds_model(found, job):
            atomic_write(staging / f"{job.hash}.nc", lambda temporary: link_or_copy(found, temporary))
            log.info("[%s] trained earlier in group %s: reused, not retrained", job.hash, found.parent.name)
            return True
    return False


def holds_model(path: Path, job) -> bool:
    """Whether ``path`` is a model cube of ``job``'s spec."""
    from iclab.store.cubes import cube_spec, read_cube
    from iclab.store.trained import MODEL_KIND

    return path.exists() and cube_spec(read_cube(path, kind=MODEL_KIND)) == job.to_dict()


def link_or_copy(source: Path, target: Path) -> None:
    """``target`` (an empty temporary file) replaced by a hard link to ``source``, or a copy across file systems."""
    target.unlink()
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def finished(job, staging: Path) -> bool:
    """Whether ``staging/<hash>.nc`` holds ``job``'s finished model (logged)."""
    out = staging / f"{job.hash}.nc"
    if holds_model(out, job):
        log.info("[%s] finished earlier: %s", job.hash, out)
        return True
    return False


def train_batched(jobs: list, staging: Path, args: argparse.Namespace) -> None:
    """Train ``jobs`` as one batched group (``sgd.fit_group``) and write each model into ``staging/<hash>.nc``. A
    checkpoint of the whole group (``<checkpoint-dir>/<group hash>.pt``) is resumed with every member, so that a
    kill while the members were being written retrains none in a smaller group; without one, only the unfinished
    members train. A member that diverged is not written: after the others are, the job stops with its message, and
    a rerun trains it again (a group of the unfinished members only)."""
    from iclab.errors import TrainingDiverged
    from iclab.fit.batched import group_hash
    from iclab.fit.sgd import fit_group
    from iclab.store.trained import save_model

    whole = None if args.checkpoint_dir is None else args.checkpoint_dir / f"{group_hash(jobs)}.pt"
    if whole is not None and whole.is_file():
        todo = jobs
    else:
        todo = [job for job in jobs if not finished(job, staging) and not reuse(job, staging, args.reuse_dir)]
    if not todo:
        return
    checkpoint = None if args.checkpoint_dir is None else args.checkpoint_dir / f"{group_hash(todo)}.pt"
    fitted, diverged = fit_group(todo, checkpoint=checkpoint, checkpoint_every=args.checkpoint_every,
                                 log_every=args.log_every, prefetch=args.prefetch, producers=args.producers)
    for g, (job, (model, record)) in enumerate(zip(todo, fitted)):
        if g not in diverged:
            save_model(staging / f"{job.hash}.nc", job, model, record)
            log.info("wrote %s", staging / f"{job.hash}.nc")
    discard_checkpoint(checkpoint)
    if diverged:
        raise TrainingDiverged("; ".join(f"[{todo[g].hash}] {message}" for g, message in diverged.items())
                               + f" ({len(todo) - len(diverged)} other model(s) of the batched group written)")


def train_one(job, staging: Path, args: argparse.Namespace) -> None:
    """Train ``job`` (a ``TrainJob``) into ``staging/<hash>.nc`` unless a finished cube of its spec is there."""
    from iclab.fit.fitters import fitter
    from iclab.store.trained import save_model

    if finished(job, staging):
        return
    out = staging / f"{job.hash}.nc"
    checkpoint = None if args.checkpoint_dir is None else args.checkpoint_dir / f"{job.hash}.pt"
    model_fitter = fitter(job.model["name"])
    loop = {option: getattr(args, option) for option in model_fitter.loop_options}
    model, record = model_fitter.fit(
        job, checkpoint=checkpoint, checkpoint_every=args.checkpoint_every, log_every=args.log_every, **loop
    )
    save_model(out, job, model, record)
    log.info("wrote %s", out)
    discard_checkpoint(checkpoint)


def discard_checkpoint(checkpoint: Path | None) -> None:
    """A finished job's checkpoint, and any write of it that a kill interrupted."""
    from iclab.atomic import remove_leftovers

    if checkpoint is not None:
        checkpoint.unlink(missing_ok=True)
        remove_leftovers(checkpoint)


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


EVALUATED_LINE = "evaluated: {prompts} prompts read in {seconds:.3f} s"  # read back by iclab.compute.cost


def by_spec_hash(paths: list[Path], kind: str, option: str):
    """The function spec hash → the file among ``paths`` made from that spec (read from their provenance);
    a hash none of them has is a ``UsageError`` naming ``option``."""
    from iclab.store.cubes import read_cube
    from iclab.errors import UsageError

    files = {read_cube(path, kind=kind).attrs["iclab_spec_hash"]: path for path in paths}

    def path_of(spec_hash: str) -> Path:
        if spec_hash not in files:
            raise UsageError(f"{option}: no {kind} cube of spec {spec_hash} among {sorted(map(str, paths))}")
        return files[spec_hash]

    return path_of


COMMANDS = {  # name → (help, its arguments, its body)
    "validate": ("validate a config file and count its jobs", arguments_validate, run_validate),
    "data": ("generate a data set of a task spec (an evaluation set, or an extra set)", arguments_data, run_data),
    "lsa-optimum": ("the LSA class optimum of a linear task (a BFGS)", arguments_lsa_optimum, run_lsa_optimum),
    "train": ("train models one after another (each resumes from its checkpoint)", arguments_train, run_train),
    "evaluate": ("evaluate the models and baselines of one setting", arguments_evaluate, run_evaluate),
    "theory": ("an experiment's theory and weight read-outs, every setting", arguments_theory, run_theory),
    "aggregate": ("combine the setting cubes and the theory of an experiment", arguments_aggregate, run_aggregate),
    "figure": ("draw an experiment's figure (.png and .pdf) from its cube", arguments_figure, run_figure),
    "table": ("write an experiment's table (.csv, .md, .tex) from its cube", arguments_table, run_table),
    "claims": ("check every experiment's claims against its theory, from the cubes", arguments_claims, run_claims),
}
