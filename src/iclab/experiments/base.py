"""The experiment contract: what an experiment package declares, and what the pipeline hands it.

An experiment is a package ``iclab/experiments/<name>/`` with
- ``experiment.py``: ``EXPERIMENT = Experiment(...)``: the sweep, and the optional hooks below;
- ``schema.yaml``: its config section (validated before any job runs);
- ``figure.py`` with ``figure(cube, png)`` and ``caption.rst``, and/or ``table.py`` with
  ``table(cube, stem)``: torch-free, reading the experiment cube only.

Per sweep point the pipeline makes the data sets the point asks for, trains its models (shared
across experiments by the hash of their training spec), and evaluates every learner once on the
evaluation set. Hooks:
- ``derived(evaluation)``: variables computed from the predictions that evaluation made (once per
  learner and seed), or from the trained models themselves (per-layer probes), in the evaluate job;
- ``theory(inputs)``: theory curves and read-outs of the trained weights, from the point's specs,
  data sets and model cubes, in a separate cheap job whose inputs include the experiment's code
  (editing a theory function reruns it, never the training or the evaluation); an experiment
  without one has no theory job;
- ``position_bins(n_points)``: bins of positions over which the evaluation also pools the risk.
A sweep point's ``analysis`` (JSON) carries config options of these hooks (e.g. an algorithm's
iteration grid) into its setting, so that changing them reruns its evaluation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from iclab.experiments import ExperimentError
from iclab.hashing import spec_hash
from iclab.store.jobs import TrainJob, learner_label
from iclab.tasks import Batch, Task, task_from_dict

if TYPE_CHECKING:  # the plan imports this module: no torch at run time
    from iclab.store.trained import TrainedModel


@dataclass(frozen=True)
class DataRequest:
    """An extra data set of a sweep point (beside the evaluation set): prompts of ``task`` from
    ``stream`` (``iclab.tasks.DATA_STREAMS``); ``n_prompts`` defaults to the evaluation set's."""

    task: dict[str, Any]
    stream: str
    n_prompts: int | None = None


@dataclass(frozen=True)
class SweepPoint:
    coords: dict[str, Any]  # sweep values: the coordinates of this point in the experiment cube
    task: dict[str, Any]  # training task spec
    models: list[dict[str, Any]]  # model specs, trained once per seed
    train: dict[str, Any]  # training config (the fitter's fields) shared by the models
    eval_task: dict[str, Any] | None = None  # task of the evaluation set, if not ``task`` (e.g. longer prompts)
    model_train: dict[str, dict[str, Any]] = field(default_factory=dict)  # learner label → its own ``train``
    model_task: dict[str, dict[str, Any]] = field(default_factory=dict)  # learner label → its own training task
    extra_data: dict[str, DataRequest] = field(default_factory=dict)  # name → an extra data set
    analysis: dict[str, Any] = field(default_factory=dict)  # JSON options of ``derived`` and ``theory``
    # config key → how many of the evaluation set's prompts ``derived`` reads by it (checked when planning)
    eval_prompts_read: dict[str, int] = field(default_factory=dict)

    def train_for(self, model: dict[str, Any]) -> dict[str, Any]:
        """The training config of one of ``models`` (its own, or the point's shared ``train``)."""
        return self.model_train.get(learner_label(model), self.train)

    def task_for(self, model: dict[str, Any]) -> dict[str, Any]:
        """The training task of one of ``models`` (its own, or the point's shared ``task``)."""
        return self.model_task.get(learner_label(model), self.task)


@dataclass(frozen=True)
class Setting:
    """One planned sweep point: its data sets, trained models and baselines (a JSON-able spec).

    ``data``: data set name (``eval`` and any extra set) → data job hash; ``models``: one entry per
    trained model, {"label", "seed", "hash", "job"} with the full training spec."""

    experiment: str
    coords: dict[str, Any]
    data: dict[str, str]
    task: dict[str, Any]  # task of the evaluation set
    models: list[dict[str, Any]]
    baselines: list[str]
    analysis: dict[str, Any] = field(default_factory=dict)  # the sweep point's options of derived and theory

    def to_dict(self) -> dict[str, Any]:
        spec = {
            "experiment": self.experiment,
            "coords": self.coords,
            "data": self.data,
            "task": self.task,
            "models": self.models,
            "baselines": self.baselines,
        }
        return spec | ({"analysis": self.analysis} if self.analysis else {})  # without: the hashes of before

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> Setting:
        return cls(**spec)

    @property
    def hash(self) -> str:
        return spec_hash(self.to_dict())

    @property
    def eval_task(self) -> Task:
        return task_from_dict(self.task)

    @property
    def seeds(self) -> list[int]:
        return sorted({m["seed"] for m in self.models})

    @property
    def labels(self) -> list[str]:
        """Trained learners, in the order the sweep point lists them."""
        return list(dict.fromkeys(m["label"] for m in self.models))

    def training_job(self, label: str, seed: int | None = None) -> TrainJob:
        """The training job of learner ``label`` (of its first seed when ``seed`` is None)."""
        for model in self.models:
            if model["label"] == label and seed in (None, model["seed"]):
                return TrainJob.from_dict(model["job"])
        raise ExperimentError(f"{self.experiment}: no trained model {label!r} (seed {seed}) at {self.coords}")

    def training_task(self, label: str) -> Task:
        return self.training_job(label).training_task()


@dataclass
class Evaluation:
    """What the evaluate job hands to ``derived``: the setting, its data sets, the predictions of
    every learner (B, K) by (learner, seed) (baselines are keyed with seed None), and the trained
    models by (learner, seed), for variables that need more than predictions (per-layer probes)."""

    setting: Setting
    data: dict[str, Batch]
    predictions: dict[tuple[str, int | None], np.ndarray]
    models: dict[tuple[str, int], TrainedModel] = field(default_factory=dict)

    @property
    def batch(self) -> Batch:
        return self.data["eval"]

    def trained(self, label: str) -> np.ndarray:
        """Predictions of trained learner ``label`` for every seed of the setting: (S, B, K)."""
        return np.stack([self.predictions[label, seed] for seed in self.setting.seeds])

    def trained_models(self, label: str) -> list[TrainedModel]:
        """The trained models of learner ``label``, one per seed of the setting (seed order)."""
        return [self.models[label, seed] for seed in self.setting.seeds]


def no_lsa_optimum(task: dict[str, Any]) -> Any:
    raise ExperimentError(
        "this theory reads the LSA class optimum of its task, computed by its own job: set the experiment's "
        "reads_lsa_optimum, and give the theory stage the job's file (--lsa-optima)"
    )


@dataclass
class TheoryInputs:
    """What the theory job hands to ``theory``: the setting, its data sets, trained models and, for an experiment
    that ``reads_lsa_optimum``, its task's LSA class optimum (each loaded on first use)."""

    setting: Setting
    load_data: Callable[[str], Batch]  # data set name → its prompts
    load_model: Callable[[str], TrainedModel]  # model hash → its handle
    load_lsa_optimum: Callable[[dict[str, Any]], Any] = no_lsa_optimum  # task spec → theory.LSAOptimum

    def lsa_optimum(self) -> Any:
        """The LSA class optimum (theory.LSAOptimum) of the setting's evaluation task, from its own job
        (jobs.OptimumJob)."""
        return self.load_lsa_optimum(self.setting.task)

    def data(self, name: str = "eval") -> Batch:
        return self.load_data(self.setting.data[name])

    @cached_property
    def models(self) -> dict[tuple[str, int], TrainedModel]:
        return {(m["label"], m["seed"]): self.load_model(m["hash"]) for m in self.setting.models}

    def trained(self, label: str) -> list[TrainedModel]:
        """The trained models of learner ``label``, one per seed of the setting (seed order)."""
        return [self.models[label, seed] for seed in self.setting.seeds]


@dataclass(frozen=True)
class Experiment:
    name: str
    sweep: Callable[[dict[str, Any]], list[SweepPoint]]
    derived: Callable[[Evaluation], xr.Dataset] | None = None
    theory: Callable[[TheoryInputs], xr.Dataset] | None = None
    position_bins: Callable[[int], list[tuple[int, int]]] | None = None
    products: tuple[str, ...] = ("figure",)  # "figure" (figure.py) and/or "table" (table.py)
    reads_lsa_optimum: bool = False  # theory calls TheoryInputs.lsa_optimum: the plan adds its tasks' OptimumJobs

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ExperimentError(f"experiment name {self.name!r} must be a Python identifier")
        unknown = set(self.products) - {"figure", "table"}
        if not self.products or unknown:
            raise ExperimentError(f"{self.name}: products {self.products!r}; allowed: figure, table (at least one)")
        for hook in ("sweep", "derived", "theory", "position_bins"):
            value = getattr(self, hook)
            if value is not None and not callable(value):
                raise ExperimentError(f"{self.name}: {hook} must be callable, got {type(value).__name__}")

    def points(self, cfg: dict[str, Any]) -> list[SweepPoint]:
        """The sweep points, checked: every point has the same coordinates, and no two the same values."""
        points = self.sweep(cfg)
        if not points:
            raise ExperimentError(f"{self.name}: the sweep has no point")
        names = list(points[0].coords)
        seen = set()
        for point in points:
            if list(point.coords) != names:
                raise ExperimentError(f"{self.name}: sweep point {point.coords} has coordinates other than {names}")
            key = tuple(point.coords.values())
            if key in seen:
                raise ExperimentError(f"{self.name}: two sweep points at {point.coords}")
            seen.add(key)
        return points

    def order(self, cfg: dict[str, Any]) -> dict[str, list[Any]]:
        """Sweep dimension → its values in the order the sweep first meets them (the cube's order)."""
        return sweep_order(self.points(cfg))


def sweep_order(points: Iterable[SweepPoint]) -> dict[str, list[Any]]:
    order: dict[str, dict[Any, None]] = {}
    for point in points:
        for dim, value in point.coords.items():
            order.setdefault(dim, {})[value] = None
    return {dim: list(values) for dim, values in order.items()}


def gpt2_spec(
    model: dict[str, Any], n_points: int, prompt_format: str = "interleaved", **options: Any
) -> dict[str, Any]:
    """The spec of a GPT-2 learner: the config's size options (``model``: n_embd, n_layer, n_head,
    activation) for prompts of ``n_points`` points; ``options`` such as ``label`` and ``mlp``."""
    return {"name": "gpt2", "n_points": n_points, "prompt_format": prompt_format, **options, **model}


def log_position_bins(first: int, last: int, per_octave: int) -> list[tuple[int, int]]:
    """Bins [lo, hi] of positions first..last, ``per_octave`` per doubling (the smallest hold one position)."""
    if not 1 <= first <= last:
        raise ValueError(f"position bins need 1 <= first <= last, got first={first}, last={last}")
    count = math.log2(last / first) * per_octave
    edges = np.unique(np.round(first * 2.0 ** (np.arange(math.ceil(count) + 1) / per_octave)).astype(int))
    edges = np.append(edges[(edges < last) | (edges == first)], last + 1)  # the last bin ends at ``last``
    return [(int(lo), int(hi) - 1) for lo, hi in zip(edges[:-1], edges[1:]) if hi > lo]
