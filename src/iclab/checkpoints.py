"""Resumable checkpoints of long jobs: written atomically, read without running code.

A checkpoint holds only tensors, numpy arrays, numbers, strings and lists or dicts of them, and is
read with ``torch.load(weights_only=True)``: a planted or corrupted ``.pt`` file cannot run code, and
one that is unreadable or another job's is refused with an error naming the file and what to do.
"""

from __future__ import annotations

import logging
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import torch

from iclab.atomic import atomic_write
from iclab.errors import CheckpointError

log = logging.getLogger("iclab.checkpoints")

NDARRAY_KEY = "__ndarray__"  # numpy arrays travel as tensors in a one-key dict


def encode(value: Any) -> Any:
    """``value`` with every numpy array replaced by ``{NDARRAY_KEY: tensor}``; anything but tensors,
    arrays, numbers, strings, None, lists, tuples and str-keyed dicts is a TypeError."""
    if isinstance(value, np.ndarray):
        return {NDARRAY_KEY: torch.from_numpy(np.ascontiguousarray(value))}
    if isinstance(value, dict):
        return {key: encode(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(encode(item) for item in value)
    if value is None or isinstance(value, (torch.Tensor, bool, int, float, str)):
        return value
    raise TypeError(f"a checkpoint cannot hold a {type(value).__name__}: convert it to arrays, numbers or dicts")


def decode(value: Any) -> Any:
    """The inverse of ``encode``."""
    if isinstance(value, dict):
        if set(value) == {NDARRAY_KEY}:
            return value[NDARRAY_KEY].numpy()
        return {key: decode(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(decode(item) for item in value)
    return value


def first_line(err: Exception) -> str:
    """The first line of an error's message (torch's weights-only refusal runs to a page)."""
    return next(iter(str(err).splitlines()), "")


def save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    """``torch.save`` of ``state`` (which names its job in ``job_hash``), atomically."""
    encoded = encode(state)
    atomic_write(path, lambda tmp: torch.save(encoded, tmp))


def load_checkpoint(path: Path | None, job_hash: str) -> dict[str, Any] | None:
    """The state saved at ``path`` by job ``job_hash``; None if there is none.

    Raises ``CheckpointError`` if the file is unreadable, holds anything but data (a pickle that would
    run code), or belongs to another job.
    """
    if path is None or not path.is_file():
        return None
    try:
        state = decode(torch.load(path, weights_only=True, map_location="cpu"))  # load_state_dict moves it
    except pickle.UnpicklingError as err:  # torch's weights-only unpickler met a global it does not allow
        raise CheckpointError(
            f"checkpoint {path} is not a data-only torch file (a pickle that could run code, or another format): "
            "it was not written by iclab; delete it to restart the job from step 0"
        ) from err
    except Exception as err:  # a truncated or foreign zip: torch raises RuntimeError, EOFError, ...
        raise CheckpointError(
            f"checkpoint {path} cannot be read ({type(err).__name__}: {first_line(err)[:200]}); it is truncated "
            "or not a torch file: delete it to restart the job from step 0"
        ) from err
    if not isinstance(state, dict) or "job_hash" not in state:
        raise CheckpointError(
            f"checkpoint {path} is not an iclab checkpoint (no job_hash): delete it to restart the job from step 0"
        )
    if state["job_hash"] != job_hash:
        raise CheckpointError(
            f"checkpoint {path} belongs to job {state['job_hash']}, not {job_hash}: "
            "move it beside that job's model, or delete it to restart this job from step 0"
        )
    return state
