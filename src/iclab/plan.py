"""From a validated config to the jobs of the workflow, each named by the hash of its spec.

Data sets are shared by every experiment setting with the same task and evaluation spec;
trained models by every setting with the same training spec.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from iclab.experiments import EXPERIMENTS
from iclab.hashing import spec_hash
from iclab.models import learner_label
from iclab.train import TrainJob


@dataclass(frozen=True)
class DataJob:
    """The one evaluation set of a task spec."""

    task: dict[str, Any]
    n_prompts: int
    seed: int

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task, "n_prompts": self.n_prompts, "seed": self.seed}

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> "DataJob":
        return cls(**spec)

    @property
    def hash(self) -> str:
        return spec_hash(self.to_dict())


@dataclass(frozen=True)
class Setting:
    """One point of an experiment's sweep: its evaluation set, trained models and baselines."""

    experiment: str
    coords: dict[str, Any]
    data: str  # DataJob hash
    task: dict[str, Any]
    models: list[dict[str, Any]]  # {"name", "seed", "hash"}
    baselines: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "experiment": self.experiment,
            "coords": self.coords,
            "data": self.data,
            "task": self.task,
            "models": self.models,
            "baselines": self.baselines,
        }

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> "Setting":
        return cls(**spec)

    @property
    def hash(self) -> str:
        return spec_hash(self.to_dict())


@dataclass
class Plan:
    data: dict[str, DataJob] = field(default_factory=dict)
    train: dict[str, TrainJob] = field(default_factory=dict)
    settings: dict[str, dict[str, Setting]] = field(default_factory=dict)

    def add_setting(self, setting: Setting) -> None:
        self.settings.setdefault(setting.experiment, {})[setting.hash] = setting


def build_plan(config: dict[str, Any]) -> Plan:
    """Every job that the experiments of ``config`` need (``config`` already validated)."""
    plan = Plan()
    evaluation = config["evaluation"]
    for name, exp_cfg in config["experiments"].items():
        experiment = EXPERIMENTS[name]
        for point in experiment.sweep(exp_cfg):
            eval_task = point.eval_task or point.task
            n_prompts = exp_cfg.get("eval_prompts", evaluation["n_prompts"])
            data = DataJob(task=eval_task, n_prompts=n_prompts, seed=evaluation["seed"])
            plan.data[data.hash] = data
            models = []
            for model_spec in point.models:
                for seed in exp_cfg.get("seeds", config["seeds"]):
                    job = TrainJob.from_dict(
                        {"model": model_spec, "task": point.task, "train": point.train_for(model_spec), "seed": seed}
                    )
                    plan.train[job.hash] = job
                    models.append({"name": learner_label(model_spec), "seed": seed, "hash": job.hash})
            plan.add_setting(
                Setting(
                    experiment=name,
                    coords=point.coords,
                    data=data.hash,
                    task=eval_task,
                    models=models,
                    baselines=list(exp_cfg.get("baselines", [])),
                )
            )
    return plan
