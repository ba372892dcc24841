"""What every fitter shares: how parameters are named in model cubes, and the divergence error."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from iclab.errors import TrainingDiverged

PARAM_PREFIX = "param__"  # final parameters in a model cube
SNAPSHOT_PREFIX = "snapshot__"  # parameters at chosen training steps, along a ``snapshot`` dimension


def param_dims(name: str, ndim: int) -> tuple[str, ...]:
    """The dimensions of parameter ``name`` in a model cube: one per tensor axis."""
    return tuple(f"{name}_dim{i}" for i in range(ndim))


@dataclass(frozen=True)
class Fitter:
    """How models of some names are fitted.

    ``config``: the dataclass of the ``train`` section of their training spec (its fields are JSON);
    ``fit(job, checkpoint=, checkpoint_every=, log_every=)``: the fitted ``nn.Module`` and an
    ``xarray.Dataset`` of the fit's record (loss curve, snapshots, diagnostics) for the model cube;
    ``loop_options``: the config's ``loop`` settings that ``fit`` also takes (as keywords).
    """

    config: type
    fit: Callable[..., tuple[Any, Any]]
    loop_options: tuple[str, ...] = ()
