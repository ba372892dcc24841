"""Resumable checkpoints of long jobs: written atomically, and ignored when they belong to another job."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import torch

from iclab.atomic import atomic_write

log = logging.getLogger("iclab.checkpoints")


def save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    """``torch.save`` of ``state`` (which names its job in ``job_hash``), atomically."""
    atomic_write(path, lambda tmp: torch.save(state, tmp))


def load_checkpoint(path: Path | None, job_hash: str) -> dict[str, Any] | None:
    """The state saved at ``path`` by job ``job_hash``; None if there is none or it is another job's."""
    if path is None or not path.is_file():
        return None
    state = torch.load(path, weights_only=False, map_location="cpu")  # load_state_dict moves to the device
    if state.get("job_hash") != job_hash:
        log.warning("ignoring checkpoint %s: it belongs to job %s, not %s", path, state.get("job_hash"), job_hash)
        return None
    return state
