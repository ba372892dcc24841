"""What every task family shares: the ``Batch`` of prompts, and batches as pure functions of
(seed, stream, step).

A task family is a frozen dataclass with ``to_dict``/``from_dict`` (its JSON spec, with a ``family``
key), ``d`` and ``n_points``, and ``sample(batch_size, gen, dtype, active_dims)``; it is registered
in ``iclab.tasks.FAMILIES``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch

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

    def sample(
        self, batch_size: int, gen: torch.Generator, dtype=torch.float64, active_dims: int | None = None
    ) -> Batch: ...


def batch_generator(seed: int, stream: int, step: int) -> torch.Generator:
    """The torch generator of batch ``step`` in ``stream``: a pure function of its arguments."""
    state = np.random.SeedSequence([seed, stream, step]).generate_state(1, dtype=np.uint64)[0]
    return torch.Generator().manual_seed(int(state))


def train_batch(
    task: Task, seed: int, step: int, batch_size: int, active_dims: int | None = None, n_points: int | None = None
) -> Batch:
    """Training batch number ``step`` (float32): depends only on its arguments.

    ``active_dims`` and ``n_points`` (the curriculum) keep the first coordinates and points.
    """
    gen = batch_generator(seed, TRAIN_STREAM, step)
    batch = task.sample(batch_size, gen, dtype=torch.float32, active_dims=active_dims)
    k = task.n_points if n_points is None else n_points
    return Batch(xs=batch.xs[:, :k], ys=batch.ys[:, :k], betas=batch.betas, covariances=batch.covariances)


PRETRAINING_BLOCK = 256  # prompts per generator of a pretraining set


def pretraining_set(task: Task, seed: int, n_prompts: int) -> Batch:
    """The finite pretraining set of ``n_prompts`` prompts (float32), a pure function of (task, seed, n_prompts),
    drawn in blocks of ``PRETRAINING_BLOCK`` prompts: a smaller set is the first prompts of a larger one."""
    blocks = [
        task.sample(PRETRAINING_BLOCK, batch_generator(seed, PRETRAINING_STREAM, i), dtype=torch.float32)
        for i in range(-(-n_prompts // PRETRAINING_BLOCK))
    ]
    return Batch(
        xs=np.concatenate([b.xs for b in blocks])[:n_prompts],
        ys=np.concatenate([b.ys for b in blocks])[:n_prompts],
        betas=np.concatenate([b.betas for b in blocks])[:n_prompts],
        covariances=np.concatenate([b.covariances for b in blocks])[:n_prompts],
    )


def pretraining_batch(pool: Batch, seed: int, step: int, batch_size: int) -> Batch:
    """Training batch number ``step`` drawn from a finite pretraining set (with replacement): depends only on its
    arguments."""
    rows = torch.randint(len(pool.ys), (batch_size,), generator=batch_generator(seed, TRAIN_STREAM, step)).numpy()
    return Batch(xs=pool.xs[rows], ys=pool.ys[rows], betas=pool.betas[rows], covariances=pool.covariances[rows])


def eval_set(task: Task, seed: int, n_prompts: int, stream: int = EVAL_STREAM) -> Batch:
    """A data set of a task spec (float64); the evaluation set is shared by every model and baseline."""
    return task.sample(n_prompts, batch_generator(seed, stream, 0))
