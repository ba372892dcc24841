"""What every task family shares: the ``Batch`` of prompts and the streams of its draws (no torch: the plan reads
task specs without it).

A task family is a frozen dataclass with ``to_dict``/``from_dict`` (its JSON spec, with a ``family``
key), ``d`` and ``n_points``, registered in ``iclab.tasks.FAMILIES``; its sampler
(``sample(task, batch_size, gen, dtype, active_dims)``) is registered in ``iclab.tasks.samplers.SAMPLERS``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

# Streams keep the batches of different purposes independent for the same seed.
TRAIN_STREAM = 0
EVAL_STREAM = 1
INIT_STREAM = 2  # two-stage model: initial and re-drawn parameters
STAGE1_STREAM = 3  # two-stage model: prompts of the stage-1 gradient step
STAGE2_STREAM = 4  # two-stage model: prompts of the stage-2 ridge fit
HOLDOUT_STREAM = 5  # prompts on which test-prompt-only baselines tune their hyperparameters
PROBE_STREAM = 6  # extra data sets of a sweep point (e.g. prompts that fit per-layer probes)
QUERY_STREAM = 7  # a second extra data set (e.g. fresh queries for induced weights), independent of ``probe``
GAMMA_STREAM = 8  # mean-field transformer: prompts of the closed-form Γ at snapshots and at the end
BIRTH_DEATH_STREAM = 9  # mean-field transformer: the draws of the birth–death step and the perturbation
PRETRAINING_STREAM = 10  # a finite set of pretraining prompts (Kim, Nakamaki, Suzuki 2024's T tasks)

# Data sets a sweep point can ask for, by the stream their prompts come from.
DATA_STREAMS = {"eval": EVAL_STREAM, "probe": PROBE_STREAM, "queries": QUERY_STREAM}


@dataclass(frozen=True)
class Batch:
    xs: np.ndarray  # (B, K, d)
    ys: np.ndarray  # (B, K)
    betas: np.ndarray  # (B, d)
    covariances: np.ndarray  # (B, d): the diagonal of each prompt's covariate covariance


class Task(Protocol):
    d: int
    n_points: int

    def to_dict(self) -> dict[str, Any]: ...
