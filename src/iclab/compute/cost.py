"""The cost of a tier, projected job by job from what its smoke run (``iclab.pipeline.smoke``) measured.

Every job of the tier's plan is matched with its smoke run's counterpart (training models by ``smoke.shape_key``,
evaluations by experiment and sweep point, data sets by task and stream) and projected to the tier's full work:

- training: the smoke's seconds per step after the first (the ``Progress`` lines; the two-stage fit: seconds per
  prompt of each stage) × the tier's steps (prompts), plus the model's measured rest (model build, the ridge solve,
  writing) and one start-up per job: a group of seeds pays one start-up and each model's rest;
- evaluation: each learner's measured prediction seconds (``evaluate.PREDICTED_LINE``) × the tier's prompts over
  the smoke's, for every seed; the experiment's analyses × the prompts read; the baselines' construction
  (``evaluate.BUILT_LINE``) as measured (a BFGS) or × the held-out prompts over the smoke's (the tuning of
  ``tuning.TUNED``); the rest (start-up, loading) as measured;
- data: start-up as measured, sampling × the prompts;
- theory, aggregation, figures, tables and claims: as measured (their work does not grow with what a smoke run caps).

Peak host memory is each process's high-water mark (``__main__.PEAK_MEMORY_LINE``). Projected to the tier: a
training step's memory does not grow with the steps (a step at the full shape ran in the smoke run); an evaluation
or data job adds the arrays that grow with its prompts (the data sets' bytes per prompt as stored, each learner's
predictions and errors in float64). GPU seconds of GPT-2 and LSTM trainings are ``cluster.estimated_seconds`` on a
GPU: from a rates file of ``iclab gpu-check`` (``--rates``) where it measured the job's shape or its model family
and numerics, else estimated from anchors; column ``basis`` says which for each row ("measured on <card>", "fitted
on <card>" or "estimated (anchors)").

Without a smoke run's measurements (``--smoke-dir`` absent or another config's), training jobs are estimated by
``cluster.estimated_seconds`` and the rest is left unknown: the table says which (column ``basis``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from iclab.compute import cluster, packing
from iclab.atomic import write_text
from iclab.experiments.base import Setting
from iclab.hashing import canonical_json
from iclab.pipeline.plan import Plan
from iclab.learners.tuning import HOLDOUT_PROMPTS, TUNED
from iclab.pipeline.smoke import shape_key

PROGRESS = re.compile(
    r"\[(?P<name>\w+)\] (?:stage (?P<stage>\d): )?(?P<done>\d+)/(?P<total>\d+) (?P<unit>\w+) .* elapsed (?P<s>[\d.]+)s$"
)
PEAK = re.compile(r"peak memory: host (?P<host>[\d.]+) MB, device (?P<device>[\d.]+) MB")
PREDICTED = re.compile(r"predicted: (?P<learner>\S+) seed (?P<seed>\S+) on (?P<prompts>\d+) prompts in (?P<s>[\d.]+) s")
BUILT = re.compile(r"built: (?P<learner>\S+) in (?P<s>[\d.]+) s")
EVALUATED = re.compile(r"evaluated: (?P<prompts>\d+) prompts read in (?P<s>[\d.]+) s")
FLOAT64 = 8
HOST_LIMIT_MB = 16_000  # a job projected above this must stream (issue 57)
COLUMNS = (
    "experiment", "rule", "job", "what", "unit", "work", "smoke_work", "seconds_per_unit", "smoke_seconds",
    "cpu_seconds", "gpu_seconds", "gpu_seconds_central", "gpu_seconds_optimistic", "peak_host_mb_smoke",
    "peak_host_mb", "peak_device_mb", "basis",
)
# GPU seconds by scenario (``cluster.BATCHED_SCENARIOS``): a batched group's range; one number for the rest
GPU_COLUMNS = {"conservative": "gpu_seconds", "central": "gpu_seconds_central", "optimistic": "gpu_seconds_optimistic"}


@dataclass
class JobLog:
    """What a smoke job's log and benchmark say: wall seconds, peak memory, progress and prediction lines."""

    seconds: float
    host_mb: float
    device_mb: float = 0.0
    progress: dict[tuple[str, str], list[tuple[int, float]]] = field(default_factory=dict)  # (model, stage) → lines
    predicted: dict[str, float] = field(default_factory=dict)  # learner → seconds of its predictions (every seed)
    built: dict[str, float] = field(default_factory=dict)  # baseline → seconds constructing it
    evaluated_seconds: float = 0.0


def read_job(log: Path, benchmark: Path) -> JobLog:
    """A smoke job's measurements; the benchmark's sampled max_rss stands in where the log has no peak line."""
    bench = pd.read_csv(benchmark, sep="\t").iloc[0]
    job = JobLog(seconds=float(bench["s"]), host_mb=float(bench["max_rss"]))
    for line in log.read_text().splitlines():
        if m := PROGRESS.search(line):
            job.progress.setdefault((m["name"], m["stage"] or ""), []).append((int(m["done"]), float(m["s"])))
        elif m := PEAK.search(line):
            job.host_mb, job.device_mb = float(m["host"]), float(m["device"])
        elif m := PREDICTED.search(line):
            job.predicted[m["learner"]] = job.predicted.get(m["learner"], 0.0) + float(m["s"])
        elif m := BUILT.search(line):
            job.built[m["learner"]] = job.built.get(m["learner"], 0.0) + float(m["s"])
        elif m := EVALUATED.search(line):
            job.evaluated_seconds = float(m["s"])
    return job


def seconds_per_unit(lines: list[tuple[int, float]], stage: str) -> float:
    """From progress lines (units done, seconds elapsed): seconds per step after the first (its warm-up), or, for a
    stage of the two-stage fit (one line per stage), seconds per prompt."""
    (first, t_first), (last, t_last) = lines[0], lines[-1]
    if stage or last == first:
        return t_last / last
    return (t_last - t_first) / (last - first)


def model_work(spec: dict[str, Any]) -> list[tuple[str, int]]:
    """(stage, units) of a training spec: its steps, or the two-stage fit's prompts of each stage."""
    train = spec["train"]
    if spec["model"]["name"] == "two_stage":
        return [("1", train["t1"])] + ([("2", train["t2"])] if train["t2"] else [])
    return [("", train["steps"])]


@dataclass
class Smoke:
    """A smoke run's plan and the measurements of its jobs (by rule and job name)."""

    plan: Plan
    results: Path
    logs: dict[tuple[str, str], JobLog]
    startup: float  # seconds: the quickest data job's (imports, a few prompts, a write)

    @classmethod
    def read(cls, plan: Plan, results: Path) -> Smoke:
        logs = {}
        for benchmark in sorted((results / "benchmarks").rglob("*.tsv")):
            relative = benchmark.relative_to(results / "benchmarks").with_suffix("")
            rule, job = relative.parts[0], "/".join(relative.parts[1:])
            log = results / "logs" / relative.with_suffix(".log")
            if log.is_file():
                logs[rule, job] = read_job(log, benchmark)
        data = [job.seconds for (rule, _), job in logs.items() if rule == "data"]
        return cls(plan=plan, results=results, logs=logs, startup=min(data, default=0.0))

    def training(self, model_hash: str) -> JobLog | None:
        return self.logs.get(("train", self.plan.group_of[model_hash]))

    @cached_property
    def model_by_shape(self) -> dict[str, str]:
        """``smoke.shape_key`` → the smoke model of that shape."""
        return {shape_key(job.to_dict()): h for h, job in self.plan.train.items()}

    @cached_property
    def setting_by_point(self) -> dict[str, Setting]:
        """``point_key`` → the smoke setting of that sweep point."""
        return {point_key(s): s for settings in self.plan.settings.values() for s in settings.values()}

    @cached_property
    def data_by_key(self) -> dict[str, str]:
        """``data_key`` → the smoke data set of that task and stream."""
        return {data_key(job): h for h, job in self.plan.data.items()}


def row(experiment: str, rule: str, job: str, what: str, **values: Any) -> dict[str, Any]:
    return {column: math.nan for column in COLUMNS} | {
        "experiment": experiment, "rule": rule, "job": job, "what": what, "basis": "measured"
    } | values


def train_row(experiment: str, group: str, full: Plan, smoke: Smoke | None,
              rates: cluster.GpuRates | None = None) -> dict[str, Any]:
    """A training job of the tier, projected from the smoke jobs that trained its models' counterparts; its GPU
    seconds (a GPT-2 or an LSTM) from ``rates`` where they cover it, else estimated from anchors."""
    specs = [full.train[h].to_dict() for h in full.groups[group]]
    labels = "+".join(sorted({full.train[h].label for h in full.groups[group]}))
    on_gpu = bool(cluster.gpus(specs[0]))
    gpu = {column: cluster.group_seconds(specs, rates=rates, scenario=scenario) if on_gpu else math.nan
           for scenario, column in zip(cluster.BATCHED_SCENARIOS, GPU_COLUMNS.values(), strict=True)}
    gpu_basis = f"; GPU {cluster.group_gpu_basis(specs, rates)}" if on_gpu else ""
    unit = "prompts" if specs[0]["model"]["name"] == "two_stage" else "steps"
    work = sum(units for spec in specs for _, units in model_work(spec))
    what = f"{labels} ×{len(specs)}" + (" batched" if cluster.batched(specs) else "")
    base = row(experiment, "train", group, what, unit=unit, work=work, **gpu, basis="measured" + gpu_basis)
    twins = smoke_twins(specs, smoke)
    if twins is None:
        return base | {
            "cpu_seconds": cluster.group_seconds(specs, gpus_allowed=False),
            "peak_host_mb": max(cluster.host_bytes(spec, "cpu") for spec in specs) / 1e6,
            "basis": "cluster.py's estimate (no smoke measurement)" + gpu_basis,
        }
    if cluster.batched(specs):
        return base | batched_cpu(specs, twins[0], smoke)
    cpu, smoke_work, rates, logs = smoke.startup, 0, [], []
    for spec, (twin, log) in zip(specs, twins, strict=True):
        measured = 0.0
        for stage, units in model_work(spec):
            lines = log.progress[(twin, stage)]
            rate = seconds_per_unit(lines, stage)
            cpu += units * rate
            measured += lines[-1][1]
            smoke_work, rates = smoke_work + lines[-1][0], rates + [rate]
        members = len(smoke.plan.groups[smoke.plan.group_of[twin]])
        cpu += max((log.seconds - smoke.startup) / members - measured, 0.0)  # the model's rest: build, solve, write
        logs.append(log)
    host = max(log.host_mb for log in logs)
    return base | {
        "smoke_work": smoke_work, "seconds_per_unit": sum(rates) / len(rates), "cpu_seconds": cpu,
        "smoke_seconds": max(log.seconds for log in logs), "peak_host_mb_smoke": host, "peak_host_mb": host,
        "peak_device_mb": max(log.device_mb for log in logs) if cluster.gpus(specs[0]) else math.nan,
    }


def batched_cpu(specs: list[dict[str, Any]], twin: tuple[str, JobLog], smoke: Smoke) -> dict[str, Any]:
    """A batched group's CPU projection from its smoke twin's group (the smoke run keeps the first seed, so its group
    is smaller): the twin's step (one progress line serves every member) × the tier's steps, and the job's rest,
    each × the tier's trained members over the smoke's (on a CPU a batched step grows with its members' work); its
    peak host memory the same way (every member's weights and activations at once: an upper bound, the imports
    scaled too)."""
    name, log = twin
    twin_group = smoke.plan.groups[smoke.plan.group_of[name]]
    members = cluster.trained_members(specs)
    smoke_members = cluster.trained_members([smoke.plan.train[h].to_dict() for h in twin_group])
    lines = log.progress[(name, "")]
    rate = seconds_per_unit(lines, "")
    rest = max(log.seconds - smoke.startup - lines[-1][1], 0.0)  # build, write
    scale = members / smoke_members
    return {"smoke_work": lines[-1][0], "seconds_per_unit": rate, "smoke_seconds": log.seconds,
            "cpu_seconds": smoke.startup + (specs[0]["train"]["steps"] * rate + rest) * scale,
            "peak_host_mb_smoke": log.host_mb, "peak_host_mb": log.host_mb * max(scale, 1.0),
            "peak_device_mb": log.device_mb}


def smoke_twins(specs: list[dict[str, Any]], smoke: Smoke | None) -> list[tuple[str, JobLog]] | None:
    """Each model's smoke counterpart and the log of the job that trained it; None if any is missing."""
    if smoke is None:
        return None
    twins = []
    for spec in specs:
        twin = smoke.model_by_shape.get(shape_key(spec))
        log = None if twin is None else smoke.training(twin)
        if log is None or any((twin, stage) not in log.progress for stage, _ in model_work(spec)):
            return None
        twins.append((twin, log))
    return twins


def point_key(setting: Setting) -> str:
    return canonical_json([setting.experiment, setting.coords])


def data_key(job) -> str:
    return canonical_json([job.task, job.stream])


def prompts_read(setting: Setting, plan: Plan) -> int:
    return sum(plan.data[h].n_prompts for h in setting.data.values())


def evaluate_row(setting: Setting, full: Plan, smoke: Smoke | None) -> dict[str, Any]:
    """An evaluation job: each learner's predictions and the analyses scaled by the prompts, for every seed."""
    n_models = len(setting.models)
    base = row(setting.experiment, "evaluate", setting.hash, f"{n_models} models, {len(setting.baselines)} baselines",
               unit="prompts", work=prompts_read(setting, full))
    twin = None if smoke is None else smoke.setting_by_point.get(point_key(setting))
    log = None if twin is None else smoke.logs.get(("evaluate", f"{setting.experiment}/{twin.hash}"))
    if log is None:
        return base | {"basis": "not measured"}
    eval_ratio = full.data[setting.data["eval"]].n_prompts / smoke.plan.data[twin.data["eval"]].n_prompts
    read_ratio = prompts_read(setting, full) / prompts_read(twin, smoke.plan)
    seeds = {label: sum(m["label"] == label for m in setting.models) for label in setting.labels}
    predictions = sum(seconds * eval_ratio * seeds.get(learner, 1) for learner, seconds in log.predicted.items())
    analyses = max(log.evaluated_seconds - sum(log.predicted.values()) - sum(log.built.values()), 0.0) * read_ratio
    built = sum(seconds * holdout_prompts(setting, name) / holdout_prompts(twin, name)
                for name, seconds in log.built.items())
    rest = log.seconds - log.evaluated_seconds + built  # start-up, loading and the baselines' construction
    grown = (prompts_read(setting, full) - prompts_read(twin, smoke.plan)) * bytes_per_prompt(setting, twin, full, smoke)
    return base | {
        "smoke_work": prompts_read(twin, smoke.plan), "smoke_seconds": log.seconds,
        "seconds_per_unit": log.evaluated_seconds / prompts_read(twin, smoke.plan),
        "cpu_seconds": rest + predictions + analyses, "peak_host_mb_smoke": log.host_mb,
        "peak_host_mb": log.host_mb + grown / 1e6,
    }


def holdout_prompts(setting: Setting, baseline: str) -> int:
    """The held-out prompts that tune ``baseline`` in ``setting`` (1 for a baseline that is not tuned)."""
    if baseline not in TUNED:
        return 1
    return setting.analysis.get("baseline_options", {}).get(baseline, {}).get("holdout_prompts", HOLDOUT_PROMPTS)


def bytes_per_prompt(setting: Setting, twin: Setting, full: Plan, smoke: Smoke) -> float:
    """Host bytes an evaluation of ``setting`` holds per prompt read: its data sets as stored (the files of its smoke
    twin's, per prompt) and, per learner and seed, predictions and errors at every position in float64."""
    stored = sum((smoke.results / "data" / f"{h}.nc").stat().st_size / smoke.plan.data[h].n_prompts for h in twin.data.values())
    positions = full.data[setting.data["eval"]].task["n_points"]
    return stored + 2 * FLOAT64 * positions * (len(setting.models) + len(setting.baselines))


def data_row(job_hash: str, experiment: str, full: Plan, smoke: Smoke | None) -> dict[str, Any]:
    """A data job: sampling and writing scale with the prompts; the start-up does not."""
    job = full.data[job_hash]
    base = row(experiment, "data", job_hash, f"{job.stream} set, {job.task['family']}", unit="prompts",
               work=job.n_prompts)
    twin = None if smoke is None else smoke.data_by_key.get(data_key(job))
    log = None if twin is None else smoke.logs.get(("data", twin))
    if log is None:
        return base | {"basis": "not measured"}
    smoke_prompts = smoke.plan.data[twin].n_prompts
    ratio = job.n_prompts / smoke_prompts
    stored = (smoke.results / "data" / f"{twin}.nc").stat().st_size
    return base | {
        "smoke_work": smoke_prompts, "smoke_seconds": log.seconds,
        "seconds_per_unit": (log.seconds - smoke.startup) / smoke_prompts,
        "cpu_seconds": smoke.startup + (log.seconds - smoke.startup) * ratio, "peak_host_mb_smoke": log.host_mb,
        "peak_host_mb": log.host_mb + 2 * stored * (ratio - 1) / 1e6,  # the set in torch and in numpy
    }


def fixed_row(rule: str, experiment: str, smoke: Smoke | None, job: str | None = None) -> dict[str, Any]:
    """A job whose work a smoke run does not cut, as measured: an LSA class optimum (``job``: its hash; the same
    task, so the same BFGS, in the smoke run) and a theory, aggregation, figure, table or claims job."""
    job = experiment if job is None else job  # its benchmark's name under benchmarks/<rule>/ ("" for claims)
    log = None if smoke is None else smoke.logs.get((rule, job))
    base = row(experiment, rule, job or rule, rule)
    if log is None:
        return base | {"basis": "not measured"}
    return base | {"smoke_seconds": log.seconds, "cpu_seconds": log.seconds, "peak_host_mb_smoke": log.host_mb,
                   "peak_host_mb": log.host_mb, "basis": "measured (does not scale)"}


def cost_table(full: Plan, smoke: Smoke | None, products: dict[str, list[str]],
               rates: cluster.GpuRates | None = None) -> pd.DataFrame:
    """One row per job of the tier ``full`` (``products``: experiment → its rules after evaluation: theory if it has
    one, aggregate, figure, table), each job attributed to the first experiment (config order) that needs it; GPU
    seconds from ``rates`` where they cover a job."""
    rows, seen = [], set()
    for experiment, settings in full.settings.items():
        for setting in settings.values():
            for name, job_hash in setting.data.items():
                if ("data", job_hash) not in seen:
                    seen.add(("data", job_hash))
                    rows.append(data_row(job_hash, experiment, full, smoke))
            for group in dict.fromkeys(full.group_of[m["hash"]] for m in setting.models):
                if ("train", group) not in seen:
                    seen.add(("train", group))
                    rows.append(train_row(experiment, group, full, smoke, rates))
            optimum = full.optimum_of.get(setting.hash)
            if optimum is not None and ("lsa_optimum", optimum) not in seen:
                seen.add(("lsa_optimum", optimum))
                rows.append(fixed_row("lsa_optimum", experiment, smoke, optimum))
            rows.append(evaluate_row(setting, full, smoke))
        rows += [fixed_row(rule, experiment, smoke) for rule in products[experiment]]
    rows.append(fixed_row("claims", "", smoke))
    return pd.DataFrame(rows, columns=list(COLUMNS))


def totals(table: pd.DataFrame) -> pd.DataFrame:
    """Per experiment and for the tier: jobs, hours on this machine's CPU (every job one after another), GPU-hours of
    the jobs that ask for a GPU on a cluster (conservative; central and optimistic where batched groups make them a
    range) and CPU-hours of the rest there, the largest projected host memory."""
    on_gpu = table["gpu_seconds"].notna()
    table = table.assign(**{column: table["gpu_seconds"] for column in GPU_COLUMNS.values()
                            if column not in table})  # a table written before the range: one number
    grouped = table.assign(
        cpu_h=table["cpu_seconds"] / 3600,
        gpu_h=table["gpu_seconds"].where(on_gpu, 0.0) / 3600,
        gpu_h_central=table["gpu_seconds_central"].where(on_gpu, 0.0) / 3600,
        gpu_h_optimistic=table["gpu_seconds_optimistic"].where(on_gpu, 0.0) / 3600,
        cluster_cpu_h=table["cpu_seconds"].where(~on_gpu, 0.0) / 3600,
        unmeasured=table["cpu_seconds"].isna().astype(int),
        experiment=table["experiment"].replace("", "(claims)"),
    ).groupby("experiment", sort=False)
    out = grouped.agg(
        jobs=("rule", "size"), cpu_hours=("cpu_h", "sum"), gpu_hours=("gpu_h", "sum"),
        gpu_hours_central=("gpu_h_central", "sum"), gpu_hours_optimistic=("gpu_h_optimistic", "sum"),
        cluster_cpu_hours=("cluster_cpu_h", "sum"), peak_host_gb=("peak_host_mb", "max"), unknown=("unmeasured", "sum"),
    )
    out["peak_host_gb"] /= 1000
    tier = out.sum(numeric_only=True).to_frame("tier").T
    tier["peak_host_gb"] = out["peak_host_gb"].max()
    return pd.concat([out, tier])


def gpu_bases(table: pd.DataFrame) -> str:
    """Where the table's GPU seconds come from, with the jobs of each basis: "measured on <card>", "fitted on <card>" or
    "estimated (anchors)"."""
    bases = table.loc[table["gpu_seconds"].notna(), "basis"].str.extract(r"GPU (.*)$")[0].value_counts()
    return "; ".join(f"{basis}: {count} jobs" for basis, count in bases.items()) or "no GPU job"


def markdown(table: pd.DataFrame, config: str, smoke: str) -> str:
    """The totals, the jobs that dominate, and every job projected above ``HOST_LIMIT_MB``."""
    total = totals(table)
    tier = total.loc["tier"]
    top = table.sort_values("cpu_seconds", ascending=False).head(10)
    heavy = table[table["peak_host_mb"] > HOST_LIMIT_MB]
    lines = [
        f"# Cost of {config}",
        "",
        f"Projected from {smoke}. {len(table)} jobs: **{tier['cpu_hours']:,.0f} hours** one after another on this "
        f"machine's CPU (the smoke run's threads per job); on a cluster **{tier['gpu_hours']:,.0f} GPU-hours** "
        f"({gpu_bases(table)}) and **{tier['cluster_cpu_hours']:,.0f} CPU-hours**; the largest job "
        f"{tier['peak_host_gb']:.1f} GB of host memory. {int(tier['unknown'])} jobs not measured.",
        "",
        total.to_markdown(floatfmt=",.1f"),
        "",
        "## The ten longest jobs (CPU)",
        "",
        top[["experiment", "rule", "what", "work", "seconds_per_unit", "cpu_seconds", "gpu_seconds",
             "peak_host_mb", "basis"]].to_markdown(index=False, floatfmt=",.4g"),
        "",
        f"## Jobs projected above {HOST_LIMIT_MB / 1000:.0f} GB of host memory",
        "",
        heavy[["experiment", "rule", "what", "peak_host_mb_smoke", "peak_host_mb"]].to_markdown(index=False)
        if len(heavy) else "None.",
        "",
    ]
    return "\n".join(lines)


def gpu_jobs(full: Plan, table: pd.DataFrame, leave_out: str | None = None, column: str = "gpu_seconds"
             ) -> tuple[list[list[dict[str, Any]]], list[float]]:
    """The training jobs of ``full`` that ask for a GPU, each as its models' specs, and each one's GPU seconds in the
    cost ``table`` (``column``: a scenario's, ``GPU_COLUMNS``); without the jobs it attributes to experiment
    ``leave_out``."""
    jobs = table[(table["rule"] == "train") & table["gpu_seconds"].notna() & (table["experiment"] != leave_out)]
    return [[full.train[h].to_dict() for h in full.groups[group]] for group in jobs["job"]], list(jobs[column])


def packed_on_one_card(table: pd.DataFrame, full: Plan, measured: dict[str, packing.Gain],
                       rates: cluster.GpuRates | None, leave_out: str | None = None, column: str = "gpu_seconds"
                       ) -> tuple[list[packing.FamilyPacking], float]:
    """The tier's GPU jobs (without experiment ``leave_out``) by family, packed at the ``measured`` gains, and the
    floor of their FLOPs at the card's peak (seconds); their seconds from ``column``."""
    groups, seconds = gpu_jobs(full, table, leave_out, column)
    return packing.family_packing(groups, seconds, measured, rates=rates), packing.floor_seconds(groups)


def packed_range(table: pd.DataFrame, full: Plan, measured: dict[str, packing.Gain],
                 rates: cluster.GpuRates | None) -> dict[str, float]:
    """The tier's packed hours on one card in each scenario (``GPU_COLUMNS``: conservative, central, optimistic)."""
    return {name: packing.packed_seconds(packed_on_one_card(table, full, measured, rates, column=column)[0]) / 3600
            for name, column in GPU_COLUMNS.items()}


def without_each(table: pd.DataFrame, full: Plan, measured: dict[str, packing.Gain],
                 rates: cluster.GpuRates | None) -> pd.DataFrame:
    """For each experiment with GPU jobs: the tier's packed hours without it, against a day."""
    rows = []
    for experiment in table.loc[table["gpu_seconds"].notna(), "experiment"].unique():
        families, floor_s = packed_on_one_card(table, full, measured, rates, leave_out=experiment)
        packed_s = packing.packed_seconds(families)
        rows.append({"without": experiment, "GPU jobs": sum(family.jobs for family in families),
                     "packed hours": packed_s / 3600, "a day": packing.day_verdict(packed_s, floor_s)})
    return pd.DataFrame(rows)


def one_gpu(table: pd.DataFrame, full: Plan, cores: int, gpu_threads: int, threads: int,
            packs: list[dict[str, Any]], rates: cluster.GpuRates | None = None, producers: int = 0) -> str:
    """The tier on one GPU node of ``cores`` cores and one card (``packing``): its GPU jobs' hours one at a time,
    packed at the gains of the ``gpu-pack`` results ``packs`` (by family), against a day and against the floor of
    the card's peak; the CPU jobs' hours on the cores the packed trainings leave (a family's k jobs at once, each
    ``gpu_threads`` cores and a batched group's ``producers``: the most any family holds)."""
    measured = packing.gains(packs)
    families, floor_s = packed_on_one_card(table, full, measured, rates)
    alone_h = sum(family.alone_s for family in families) / 3600
    packed_s = packing.packed_seconds(families)
    held = max((family.k * (gpu_threads + producers * family.family.endswith(" batched")) for family in families),
               default=gpu_threads)
    slots = max(1, (cores - held) // threads)
    cpu_h = table.loc[table["gpu_seconds"].isna(), "cpu_seconds"].sum() / 3600
    rows = pd.DataFrame([{"family": f.family, "jobs": f.jobs, "GPU-hours alone": f.alone_s / 3600, "k": f.k,
                          "gain": f.gain, "packed hours": f.packed_s / 3600, "k by memory": f.by_memory,
                          "gain's basis": f.basis} for f in families])
    scenarios = packed_range(table, full, measured, rates)
    batched_line = ("" if not any(f.family.endswith(" batched") for f in families) else
                    " Batched groups' steps are a range (`cluster.BATCHED_SCENARIOS`; the hours above are its "
                    "conservative end): packed hours " + ", ".join(f"{name} **{hours:,.0f}**"
                                                                    for name, hours in scenarios.items()) + ".")
    return "\n".join([
        f"## One GPU node ({cores} cores, a {packing.DEVICE_MEMORY_MB / 1000:.0f} GB card)",
        "",
        f"{sum(f.jobs for f in families)} GPU jobs (their steps {gpu_bases(table)}): **{alone_h:,.0f} GPU-hours one "
        f"at a time ({alone_h / 24:,.1f} days)**; packed at the throughput gains `gpu-pack` measured (a family without "
        f"one runs one at a time): **{packed_s / 3600:,.0f} hours ({packed_s / 86400:,.1f} days)**.{batched_line} A day: "
        f"**{packing.day_verdict(packed_s, floor_s)}**. Their FLOPs at the card's dense peak take "
        f"{floor_s / 3600:,.2g} h (bf16 {cluster.CARD_PEAK_FLOPS['bfloat16']:.3g}, float32 "
        f"{cluster.CARD_PEAK_FLOPS['float32']:.3g} FLOP/s). The CPU jobs: {cpu_h:,.0f} hours of this machine's CPU, "
        f"on the {slots} job slot{'s' * (slots != 1)} of {threads} threads left beside the {held} cores of the GPU's "
        f"trainings "
        f"(~{cpu_h / slots:,.1f} hours if they spread evenly).",
        "",
        rows.to_markdown(index=False, floatfmt=",.3g"),
        "",
        "Without one experiment (the same packing):",
        "",
        without_each(table, full, measured, rates).to_markdown(index=False, floatfmt=",.3g"),
        "",
    ])


def effects_markdown(power: dict[str, Any], table: pd.DataFrame) -> str:
    """A row per effect of a ``benchmarks/gpu_node_power.py`` result that the tier runs at the papers' shapes: the
    seeds and prompts it runs, their power at the paper's size, at the least favourable plausible truth
    (``power.least_favourable``) and at the paper's size with the seed spread at its upper bound, and the
    experiment's GPU-hours (effects of one experiment share them; models shared between experiments count once, at
    the first that needs them)."""
    gpu_h = table.groupby("experiment")["gpu_seconds"].sum() / 3600
    rows = pd.DataFrame([{
        "effect": row["effect"], "experiment": row["experiment"], "paper's truth": row["design"]["truth"],
        "least favourable": row["least_favourable"]["design"]["truth"], "seeds": row["as_run"]["seeds"],
        "prompts": row["as_run"]["prompts"], "power": row["as_run"]["power"],
        "power (least favourable)": row["as_run"]["power_least_favourable"],
        "power at the spread's bound": row["as_run"]["power_upper"],
        "experiment GPU-hours": gpu_h.get(row["experiment"], 0.0),
    } for row in power["effects"] if row["as_run"] is not None])
    left_out = ", ".join(row["effect"] for row in power["effects"] if row["as_run"] is None)
    return "\n".join([
        "## The effects",
        "",
        f"Seeds and prompts as the tier runs them, each effect's power at look 1's level ({power['level']:.0%}) if the "
        f"paper's size holds and at the least favourable plausible truth (an ordering claim at its CPU "
        f"effect-to-spread ratio, an equivalence at its CPU estimate where that lies nearer the edge); "
        f"{power['assumption']} "
        f"(benchmarks/results/gpu_node_power.json). Not in the day (their experiments run at CPU size): "
        f"{left_out or 'none'}.",
        "",
        rows.to_markdown(index=False, floatfmt=",.3g"),
        "",
    ])


def write_cost(table: pd.DataFrame, stem: Path, config: str, smoke: str, extra: str = "") -> None:
    """``stem``.csv (every job, full precision) and ``stem``.md (totals, then ``extra``), each written atomically."""
    write_text(stem.with_suffix(".csv"), table.to_csv(index=False, float_format="%.6g"))
    write_text(stem.with_suffix(".md"), markdown(table, config, smoke) + extra)
