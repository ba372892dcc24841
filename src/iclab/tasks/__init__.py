"""Task specs, one module per family, registered here (no torch: the plan reads them); their samplers are in
``iclab.tasks.samplers``. A batch is a pure function of (seed, stream, step): no hidden RNG state.

- ``linear``: linear regression with a shared signal and fixed or random covariates (Zhang, Wu,
  Bartlett 2024; Zhang, Frei, Bartlett 2024).
- ``single_index``: single-index tasks in a low-dimensional subspace (Oko, Song, Suzuki, Wu 2024).
- ``mean_field``: linear tasks over a teacher network's nonlinear features, and nonlinear test tasks
  (Kim & Suzuki 2024).
- ``nonparametric``: random combinations of a fixed orthonormal basis with decaying coefficients (Kim,
  Nakamaki, Suzuki 2024).
"""

from __future__ import annotations

from typing import Any

from iclab.tasks.base import (
    BIRTH_DEATH_STREAM,
    DATA_STREAMS,
    EVAL_STREAM,
    GAMMA_STREAM,
    HOLDOUT_STREAM,
    INIT_STREAM,
    PRETRAINING_STREAM,
    PROBE_STREAM,
    STAGE1_STREAM,
    STAGE2_STREAM,
    TRAIN_STREAM,
    Batch,
    Task,
)
from iclab.tasks.linear import LinearTask
from iclab.tasks.mean_field import MeanFieldTask
from iclab.tasks.nonparametric import NonparametricTask
from iclab.tasks.single_index import SingleIndexTask

FAMILIES: dict[str, type] = {
    "linear": LinearTask, "single_index": SingleIndexTask, "mean_field": MeanFieldTask,
    "nonparametric": NonparametricTask,
}


def task_from_dict(spec: dict[str, Any]) -> Task:
    """The task of a spec, by its ``family`` (``linear`` when absent)."""
    family = spec.get("family", "linear")
    if family not in FAMILIES:
        raise ValueError(f"unknown task family {family!r}; allowed: {', '.join(FAMILIES)}")
    return FAMILIES[family].from_dict(spec)


__all__ = [
    "BIRTH_DEATH_STREAM",
    "DATA_STREAMS",
    "EVAL_STREAM",
    "GAMMA_STREAM",
    "FAMILIES",
    "HOLDOUT_STREAM",
    "INIT_STREAM",
    "PRETRAINING_STREAM",
    "PROBE_STREAM",
    "STAGE1_STREAM",
    "STAGE2_STREAM",
    "TRAIN_STREAM",
    "Batch",
    "LinearTask",
    "MeanFieldTask",
    "NonparametricTask",
    "SingleIndexTask",
    "Task",
    "task_from_dict",
]
