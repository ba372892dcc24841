"""The samplers of the task families (torch), registered by spec class: a batch is a pure function of
(task, seed, stream, step), drawn by ``sample(task, batch_size, gen, dtype, active_dims)`` into numpy arrays.

The specs (``iclab.tasks``) import no torch, so that the plan reads them without it; a new family registers its
spec in ``iclab.tasks.FAMILIES`` and its sampler here.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from iclab.tasks import LinearTask, MeanFieldTask, NonparametricTask, SingleIndexTask
from iclab.tasks.base import EVAL_STREAM, PRETRAINING_STREAM, TRAIN_STREAM, Batch, Task
from iclab.tasks.samplers import linear, mean_field, nonparametric, single_index

SAMPLERS: dict[type, Callable[..., Batch]] = {
    LinearTask: linear.sample,
    SingleIndexTask: single_index.sample,
    MeanFieldTask: mean_field.sample,
    NonparametricTask: nonparametric.sample,
}


def sample(
    task: Task, batch_size: int, gen: torch.Generator, dtype=torch.float64, active_dims: int | None = None
) -> Batch:
    """``batch_size`` prompts of ``task`` from ``gen`` (numpy arrays of ``dtype``); ``active_dims`` (a curriculum)
    zeroes the covariates' later coordinates (linear tasks only)."""
    return SAMPLERS[type(task)](task, batch_size, gen, dtype=dtype, active_dims=active_dims)


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
    batch = sample(task, batch_size, gen, dtype=torch.float32, active_dims=active_dims)
    k = task.n_points if n_points is None else n_points
    return Batch(xs=batch.xs[:, :k], ys=batch.ys[:, :k], betas=batch.betas, covariances=batch.covariances)


PRETRAINING_BLOCK = 256  # prompts per generator of a pretraining set


def pretraining_set(task: Task, seed: int, n_prompts: int) -> Batch:
    """The finite pretraining set of ``n_prompts`` prompts (float32), a pure function of (task, seed, n_prompts),
    drawn in blocks of ``PRETRAINING_BLOCK`` prompts: a smaller set is the first prompts of a larger one."""
    blocks = [
        sample(task, PRETRAINING_BLOCK, batch_generator(seed, PRETRAINING_STREAM, i), dtype=torch.float32)
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
    return sample(task, n_prompts, batch_generator(seed, stream, 0))
