"""The specs of data and training jobs; each job is named by the hash of its spec.

Data sets are shared by every experiment point with the same spec, trained models by every point
with the same training spec (model, task, training config, seed).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from iclab.fit import train_config
from iclab.hashing import spec_hash
from iclab.tasks import DATA_STREAMS, Task, task_from_dict


def learner_label(spec: dict[str, Any]) -> str:
    """The name a trained model goes by in cubes and figures: ``label`` if given, else its ``name``."""
    return spec.get("label", spec["name"])


@dataclass(frozen=True)
class DataJob:
    """A data set of a task spec: the evaluation set (stream ``eval``) or an extra named set."""

    task: dict[str, Any]
    n_prompts: int
    seed: int
    stream: str = "eval"

    def __post_init__(self) -> None:
        if self.stream not in DATA_STREAMS:
            raise ValueError(f"data stream {self.stream!r} unknown; allowed: {', '.join(DATA_STREAMS)}")

    def to_dict(self) -> dict[str, Any]:
        spec = {"task": self.task, "n_prompts": self.n_prompts, "seed": self.seed}
        return spec if self.stream == "eval" else spec | {"stream": self.stream}  # evaluation sets keep their names

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> DataJob:
        return cls(**spec)

    @property
    def hash(self) -> str:
        return spec_hash(self.to_dict())


@dataclass(frozen=True)
class OptimumJob:
    """The LSA class's optimum of a linear task at its final query (Zhang, Wu, Bartlett 2024, Theorem 4.1): a BFGS of
    seconds to a minute at the papers' d, computed once per task and read by every evaluation (the ``lsa_optimal``
    baseline) and theory (``lsa_optimum``) of that task."""

    task: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"lsa_class_optimum": self.task}

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> OptimumJob:
        if set(spec) != {"lsa_class_optimum"}:
            raise ValueError(f"an LSA class optimum spec has the one key 'lsa_class_optimum', got {sorted(spec)}")
        return cls(task=spec["lsa_class_optimum"])

    @property
    def hash(self) -> str:
        return spec_hash(self.to_dict())


# Training fields added after the first models were trained are left out of specs at their default,
# so adding them renamed no existing job.
LATER_FIELDS = {
    "snapshot_every": None,
    "curriculum": None,
    "pretraining_prompts": None,
    "precision": "float32",
    "tf32": False,
    "compile": False,
    "cuda_graphs": False,
    "pad_points": None,
    "allow_nondeterministic": False,
    "max_chunks": None,
    "batched": False,
    "capture": False,
}


def train_fields(cfg: Any) -> dict[str, Any]:
    fields = asdict(cfg)
    return {k: v for k, v in fields.items() if not (k in LATER_FIELDS and v == LATER_FIELDS[k])}


@dataclass(frozen=True)
class TrainJob:
    """Everything that determines a trained model; its hash names the model.

    ``train`` is the typed config of the model's fitter (``iclab.fit.configs.CONFIGS``)."""

    model: dict[str, Any]
    task: dict[str, Any]
    train: Any
    seed: int

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "task": self.task, "train": train_fields(self.train), "seed": self.seed}

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> TrainJob:
        return cls(
            model=spec["model"],
            task=spec["task"],
            train=train_config(spec["model"]["name"], spec["train"]),
            seed=spec["seed"],
        )

    @property
    def hash(self) -> str:
        return spec_hash(self.to_dict())

    @property
    def batched(self) -> bool:
        """Whether the model trains in a batched group (``train.batched``: a key of gradient-step fitters only)."""
        return getattr(self.train, "batched", False)

    @property
    def label(self) -> str:
        """The name the model goes by in cubes and figures."""
        return learner_label(self.model)

    def training_task(self) -> Task:
        return task_from_dict(self.task)
