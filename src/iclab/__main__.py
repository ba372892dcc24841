"""Command-line stages called by the Snakemake rules: ``python -m iclab <stage> --help``.

Each stage is a thin wrapper: parse arguments, call library functions, write one cube.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never download weights or data

log = logging.getLogger("iclab")


def json_arg(text: str) -> dict:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"not valid JSON: {err}") from err


def set_threads(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)


def cmd_validate(args: argparse.Namespace) -> None:
    from iclab.config import load
    from iclab.plan import build_plan

    plan = build_plan(load(args.config))
    n_settings = sum(len(s) for s in plan.settings.values())
    print(f"{args.config}: valid; {len(plan.data)} evaluation sets, {len(plan.train)} models, {n_settings} settings")


def cmd_data(args: argparse.Namespace) -> None:
    from iclab.cubes import write_cube
    from iclab.evaluate import DATA_KIND, eval_set_dataset
    from iclab.plan import DataJob
    from iclab.tasks import eval_set, task_from_dict

    job = DataJob.from_dict(args.spec)
    batch = eval_set(task_from_dict(job.task), job.seed, job.n_prompts)
    write_cube(eval_set_dataset(batch), args.out, kind=DATA_KIND, spec=job.to_dict(), seed=job.seed)
    log.info("wrote %s: %d prompts × %d points", args.out, job.n_prompts, batch.xs.shape[1])


def cmd_train(args: argparse.Namespace) -> None:
    from iclab.train import TrainJob, save_fitted, save_trained, train

    set_threads(args.threads)
    job = TrainJob.from_dict(args.spec)
    if job.fitted_in_closed_form:
        from iclab.tasks import task_from_dict
        from iclab.two_stage import fit

        # checkpoints and progress lines every few chunks of prompts (fit's defaults), not steps
        model, diagnostics = fit(
            job.model, task_from_dict(job.task), job.train, job.seed, job.hash, checkpoint=args.checkpoint
        )
        save_fitted(args.out, job, model, diagnostics)
        log.info("wrote %s", args.out)
    else:
        model, losses, snapshots = train(
            job, checkpoint=args.checkpoint, checkpoint_every=args.checkpoint_every, log_every=args.log_every
        )
        save_trained(args.out, job, model, losses, snapshots)
        log.info("wrote %s: final loss %.4g", args.out, losses[-1])
    if args.checkpoint is not None:
        args.checkpoint.unlink(missing_ok=True)


def cmd_evaluate(args: argparse.Namespace) -> None:
    from iclab.cubes import write_cube
    from iclab.evaluate import EVAL_KIND, TrainedModel, evaluate_setting, load_eval_set
    from iclab.models import learner_label
    from iclab.plan import DataJob, Setting
    from iclab.train import load_trained

    set_threads(args.threads)
    setting = Setting.from_dict(args.spec)
    batch = load_eval_set(args.data, DataJob.from_dict(args.data_spec))
    trained = {}
    for path in args.models:
        model, job, cube = load_trained(path)
        trained[(learner_label(job.model), job.seed)] = TrainedModel(model, cube)
    expected = {(m["name"], m["seed"]) for m in setting.models}
    if set(trained) != expected:
        raise SystemExit(f"models given {sorted(trained)} do not match the setting's {sorted(expected)}")
    ds = evaluate_setting(setting, batch, trained, chunk_size=args.chunk_size)
    write_cube(ds, args.out, kind=EVAL_KIND, spec=setting.to_dict())
    log.info("wrote %s", args.out)


def cmd_aggregate(args: argparse.Namespace) -> None:
    from iclab.cubes import combine, read_cube, write_cube
    from iclab.evaluate import EVAL_KIND

    cubes = [read_cube(path, kind=EVAL_KIND) for path in args.inputs]
    ds = combine(cubes, args.order)
    spec = {
        "experiment": args.experiment,
        "order": args.order,
        "settings": sorted(c.attrs["iclab_spec_hash"] for c in cubes),
    }
    write_cube(ds, args.out, kind="experiment", spec=spec)
    log.info("wrote %s from %d settings", args.out, len(cubes))


def cmd_figure(args: argparse.Namespace) -> None:
    from iclab.cubes import read_cube
    from iclab.plots import FIGURES

    cube = read_cube(args.cube, kind="experiment")
    FIGURES[args.name](cube, args.out)
    log.info("wrote %s and its .pdf", args.out)


def cmd_table(args: argparse.Namespace) -> None:
    from iclab.cubes import read_cube
    from iclab.tables import TABLES

    frame = TABLES[args.name](read_cube(args.cube, kind="experiment"), args.out)
    log.info("wrote %s.{csv,md,tex}:\n%s", args.out, frame.to_string(index=False))


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m iclab", description=__doc__)
    sub = p.add_subparsers(dest="stage", required=True)

    s = sub.add_parser("validate", help="validate a config file and count its jobs")
    s.add_argument("config", type=Path)
    s.set_defaults(run=cmd_validate)

    s = sub.add_parser("data", help="generate the evaluation set of a task spec")
    s.add_argument("--spec", type=json_arg, required=True, help="DataJob spec as JSON")
    s.add_argument("--out", type=Path, required=True)
    s.set_defaults(run=cmd_data)

    s = sub.add_parser("train", help="train one model (resumes from --checkpoint)")
    s.add_argument("--spec", type=json_arg, required=True, help="TrainJob spec as JSON")
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--checkpoint", type=Path, default=None, help="resumable checkpoint (deleted on success)")
    s.add_argument("--checkpoint-every", type=int, default=1000)
    s.add_argument("--log-every", type=int, default=500)
    s.add_argument("--threads", type=int, default=1)
    s.set_defaults(run=cmd_train)

    s = sub.add_parser("evaluate", help="evaluate the models and baselines of one setting")
    s.add_argument("--spec", type=json_arg, required=True, help="Setting spec as JSON")
    s.add_argument("--data-spec", type=json_arg, required=True, help="DataJob spec of --data as JSON")
    s.add_argument("--data", type=Path, required=True)
    s.add_argument("--models", type=Path, nargs="*", default=[])
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--chunk-size", type=int, default=2048)
    s.add_argument("--threads", type=int, default=1)
    s.set_defaults(run=cmd_evaluate)

    s = sub.add_parser("aggregate", help="combine the setting cubes of an experiment")
    s.add_argument("--experiment", required=True)
    s.add_argument("--order", type=json_arg, required=True, help="sweep dimension -> values, in config order")
    s.add_argument("--inputs", type=Path, nargs="+", required=True)
    s.add_argument("--out", type=Path, required=True)
    s.set_defaults(run=cmd_aggregate)

    s = sub.add_parser("figure", help="draw an experiment's figure (.png and .pdf) from its cube")
    s.add_argument("name")
    s.add_argument("--cube", type=Path, required=True)
    s.add_argument("--out", type=Path, required=True, help="the .png path; the .pdf goes beside it")
    s.set_defaults(run=cmd_figure)

    s = sub.add_parser("table", help="write an experiment's table (.csv, .md, .tex) from its cube")
    s.add_argument("name")
    s.add_argument("--cube", type=Path, required=True)
    s.add_argument("--out", type=Path, required=True, help="path without suffix; .csv, .md and .tex are written")
    s.set_defaults(run=cmd_table)
    return p


def main(argv: list[str] | None = None) -> None:
    from iclab.config import ConfigError
    from iclab.cubes import CubeError
    from iclab.train import TrainingDiverged

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    args = parser().parse_args(argv)
    try:
        args.run(args)
    except (ConfigError, CubeError, TrainingDiverged) as err:
        log.error("%s", err)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
