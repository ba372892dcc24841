"""From a validated config to the jobs of the workflow, each named by the hash of its spec.

Data sets are shared by every experiment setting with the same spec; trained models by every
setting with the same training spec; the LSA class optimum of a linear task by every setting of that task that
reads it. Training jobs train model groups (``model_groups``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from iclab.errors import ExperimentError
from iclab.experiments import registry
from iclab.experiments.base import Setting, SweepPoint, sweep_order
from iclab.fit.configs import BATCHABLE_MODELS
from iclab.hashing import canonical_json, spec_hash
from iclab.store.jobs import DataJob, OptimumJob, TrainJob, learner_label
from iclab.learners.tuning import TUNED


# Models that train in seconds, less than a job's start-up (~3 s of imports): every seed of every such model with
# one task and one training config trains in one job (ltb_gap's LSA, LTB and GD-β of a task: one job, not three).
# Other models (GPT-2, LSTM, the two-stage fits) train in a job each, so that adding a seed retrains none of the
# others; under the config's batched_training, GPT-2s train in batched groups (``group_key``), and a member that a
# group of an earlier plan trained is reused, not retrained (``iclab train --reuse-dir``).
GROUPED_MODELS = ("lsa", "ltb", "gd_beta", "mean_field", "feature_attention")


@dataclass
class Plan:
    data: dict[str, DataJob] = field(default_factory=dict)
    train: dict[str, TrainJob] = field(default_factory=dict)
    settings: dict[str, dict[str, Setting]] = field(default_factory=dict)
    order: dict[str, dict[str, list[Any]]] = field(default_factory=dict)  # experiment → its cube's sweep order
    groups: dict[str, tuple[str, ...]] = field(default_factory=dict)  # model group → its models' hashes, by seed
    group_of: dict[str, str] = field(default_factory=dict)  # model hash → its group
    optima: dict[str, OptimumJob] = field(default_factory=dict)  # the LSA class optima of the settings' tasks
    optimum_of: dict[str, str] = field(default_factory=dict)  # setting hash → its task's optimum (where it needs one)

    def add_setting(self, setting: Setting, reads_lsa_optimum: bool = False) -> None:
        """Add ``setting`` and, if its baselines or its experiment's theory read it, its task's LSA class optimum."""
        self.settings.setdefault(setting.experiment, {})[setting.hash] = setting
        if reads_lsa_optimum or "lsa_optimal" in setting.baselines:
            optimum = OptimumJob(task=setting.task)
            self.optima[optimum.hash] = optimum
            self.optimum_of[setting.hash] = optimum.hash


def data_jobs(point: SweepPoint, n_prompts: int, seed: int) -> dict[str, DataJob]:
    """The evaluation set and the extra data sets of a sweep point."""
    jobs = {"eval": DataJob(task=point.eval_task or point.task, n_prompts=n_prompts, seed=seed)}
    for name, request in point.extra_data.items():
        jobs[name] = DataJob(
            task=request.task, n_prompts=request.n_prompts or n_prompts, seed=seed, stream=request.stream
        )
    return jobs


def check_positions(experiment: str, job: TrainJob) -> None:
    """A model with position embeddings for ``n_points`` points (GPT-2) cannot train on longer prompts:
    refused when planning, not hours later inside the training job."""
    limit, length = job.model.get("n_points"), job.task["n_points"]
    if limit is not None and length > limit:
        raise ExperimentError(
            f"{experiment}: learner {job.label!r} has position embeddings for {limit} points but would train on "
            f"prompts of {length} points (task {job.task}); give it its own training task (SweepPoint.model_task)"
        )


def check_eval_prompts(experiment: str, point: SweepPoint, n_prompts: int) -> None:
    """An analysis that reads more prompts of the evaluation set than it holds is refused when planning."""
    for key, needed in point.eval_prompts_read.items():
        if needed > n_prompts:
            raise ExperimentError(
                f"{experiment}: {key} = {needed} needs that many evaluation prompts, but the evaluation set has "
                f"{n_prompts} (eval_prompts, or evaluation.n_prompts); allowed: {key} ≤ {n_prompts}"
            )


def model_groups(train: dict[str, TrainJob]) -> dict[str, tuple[str, ...]]:
    """The training jobs' groups, one job each: for ``GROUPED_MODELS``, every model and seed with one task and one
    training config; for batched GPT-2s (``train.batched``), every one of one architecture, training config and
    task shape; each model alone otherwise. A group is named by the hash of its members' hashes (ordered by model
    spec, then seed)."""
    by_key: dict[str, list[str]] = {}
    for model_hash, job in train.items():
        by_key.setdefault(group_key(job), []).append(model_hash)
    groups = {}
    for members in by_key.values():
        ordered = tuple(sorted(members, key=lambda h: (canonical_json(train[h].model), train[h].seed)))
        groups[spec_hash({"models": ordered})] = ordered
    return groups


def group_key(job: TrainJob) -> str:
    """What the models of one training job share: task and training config (``GROUPED_MODELS``); a batched GPT-2's
    architecture (its label aside), training config and task shape (d, points), not its seed or task distribution
    (``fit.batched.check_group``); else the whole spec."""
    spec = job.to_dict()
    if job.model["name"] in GROUPED_MODELS:
        return canonical_json({"task": spec["task"], "train": spec["train"]})
    if job.batched:
        task = job.training_task()
        architecture = {k: v for k, v in job.model.items() if k != "label"}
        return canonical_json({"model": architecture, "train": spec["train"], "d": task.d, "n_points": task.n_points})
    return canonical_json(spec)


def batched_train(config: dict[str, Any], experiment: str, model: dict[str, Any], train: dict[str, Any]
                  ) -> dict[str, Any]:
    """``train`` with ``batched: true`` for a GPT-2 under the config's ``batched_training`` (its name then says how
    it trained: batched kernels round otherwise than one model's); unchanged otherwise, and so every hash."""
    if not config.get("batched_training") or model["name"] not in BATCHABLE_MODELS:
        return train
    if train.get("compile"):
        raise ExperimentError(f"{experiment}: batched_training with train.compile: true (learner "
                              f"{learner_label(model)!r}); compiled batched groups are not built: set one false")
    return train | {"batched": True}


def with_holdout_prompts(analysis: dict[str, Any], baselines: list[str], evaluation: dict[str, Any]) -> dict[str, Any]:
    """``analysis`` with the config's ``evaluation.holdout_prompts``, where it is set, in the options of each tuned
    baseline (``tuning.TUNED``); unchanged (and so every hash) where it is not."""
    tuned = [name for name in baselines if name in TUNED]
    if "holdout_prompts" not in evaluation or not tuned:
        return analysis
    options = copy.deepcopy(analysis.get("baseline_options", {}))
    for name in tuned:
        options[name] = options.get(name, {}) | {"holdout_prompts": evaluation["holdout_prompts"]}
    return analysis | {"baseline_options": options}


def build_plan(config: dict[str, Any]) -> Plan:
    """Every job that the experiments of ``config`` need (``config`` already validated)."""
    plan = Plan()
    experiments = registry()
    evaluation = config["evaluation"]
    for name, exp_cfg in config["experiments"].items():
        experiment = experiments[name]
        points = experiment.points(exp_cfg)
        plan.order[name] = sweep_order(points)
        n_prompts = exp_cfg.get("eval_prompts", evaluation["n_prompts"])
        for point in points:
            check_eval_prompts(name, point, n_prompts)
            data = data_jobs(point, n_prompts, evaluation["seed"])
            plan.data |= {job.hash: job for job in data.values()}
            models = []
            for model_spec in point.models:
                for seed in exp_cfg.get("seeds", config["seeds"]):
                    spec = {"model": model_spec, "task": point.task_for(model_spec), "seed": seed}
                    train = batched_train(config, name, model_spec, point.train_for(model_spec))
                    job = TrainJob.from_dict(spec | {"train": train})
                    check_positions(name, job)
                    plan.train[job.hash] = job
                    models.append({"label": job.label, "seed": seed, "hash": job.hash, "job": job.to_dict()})
            plan.add_setting(
                Setting(
                    experiment=name,
                    coords=point.coords,
                    data={key: job.hash for key, job in data.items()},
                    task=data["eval"].task,
                    models=models,
                    baselines=list(exp_cfg.get("baselines", [])),
                    analysis=with_holdout_prompts(point.analysis, exp_cfg.get("baselines", []), evaluation),
                ),
                experiment.reads_lsa_optimum,
            )
    plan.groups = model_groups(plan.train)
    plan.group_of = {model_hash: group for group, members in plan.groups.items() for model_hash in members}
    return plan
