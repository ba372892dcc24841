"""What an experiment module hands to the planner."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from iclab.cubes import cube_spec
from iclab.models import learner_label
from iclab.tasks import LinearTask


@dataclass(frozen=True)
class SweepPoint:
    coords: dict[str, Any]  # sweep values: the coordinates of this point in the experiment cube
    task: dict[str, Any]  # task spec (tasks.LinearTask.to_dict())
    models: list[dict[str, Any]]  # model specs, trained once per seed
    train: dict[str, Any]  # train.TrainConfig fields
    eval_task: dict[str, Any] | None = None  # task of the evaluation set, if not ``task`` (e.g. longer prompts)
    model_train: dict[str, dict[str, Any]] = field(default_factory=dict)  # learner label → its own ``train``

    def train_for(self, model: dict[str, Any]) -> dict[str, Any]:
        """The training config of one of ``models`` (its own, or the point's shared ``train``)."""
        return self.model_train.get(learner_label(model), self.train)


def training_spec(trained: dict) -> dict[str, Any]:
    """The training spec of one of a setting's trained models (all share the training task)."""
    return cube_spec(next(iter(trained.values())).cube)


def training_task(trained: dict) -> LinearTask:
    """The task the setting's models were trained on."""
    return LinearTask.from_dict(training_spec(trained)["task"])


def log_position_bins(first: int, last: int, per_octave: int) -> list[tuple[int, int]]:
    """Bins [lo, hi] of positions first..last, ``per_octave`` per doubling (the smallest hold one position)."""
    if not 1 <= first <= last:
        raise ValueError(f"position bins need 1 <= first <= last, got first={first}, last={last}")
    count = math.log2(last / first) * per_octave
    edges = np.unique(np.round(first * 2.0 ** (np.arange(math.ceil(count) + 1) / per_octave)).astype(int))
    edges = np.append(edges[(edges < last) | (edges == first)], last + 1)  # the last bin ends at ``last``
    return [(int(lo), int(hi) - 1) for lo, hi in zip(edges[:-1], edges[1:]) if hi > lo]
