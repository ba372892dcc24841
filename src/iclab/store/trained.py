"""Model cubes and the typed handle on a trained model.

A model cube holds the model's final parameters (``param__<name>``, one dimension per tensor axis),
the record of its fit (loss curve, parameter snapshots, diagnostics) and its training spec.
``TrainedModel`` gives experiments the module, the job and the weights by typed accessors
(e.g. ``LinearSelfAttention.reduced_weights``), never by variable names.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import torch
import xarray as xr
from torch import nn

from iclab.store.cubes import cube_spec, read_cube, write_cube
from iclab.fit.base import PARAM_PREFIX, SNAPSHOT_PREFIX, param_dims
from iclab.store.jobs import TrainJob
from iclab.models import build_model

MODEL_KIND = "trained_model"


def parameters_dataset(model: nn.Module) -> xr.Dataset:
    """Every parameter tensor of ``model`` with its own dimensions."""
    data = {}
    for name, tensor in model.state_dict().items():
        array = tensor.detach().cpu().numpy()
        data[PARAM_PREFIX + name] = (param_dims(name, array.ndim), array)
    return xr.Dataset(data)


def save_model(path: str | os.PathLike, job: TrainJob, model: nn.Module, record: xr.Dataset) -> None:
    """The model cube: final parameters and the fit's ``record``."""
    ds = xr.merge([parameters_dataset(model), record], join="exact", compat="no_conflicts")
    write_cube(ds, path, kind=MODEL_KIND, spec=job.to_dict(), seed=job.seed)


@dataclass(frozen=True)
class TrainedModel:
    """A trained model: its training job, its cube, and (built on first use) its module."""

    job: TrainJob
    cube: xr.Dataset

    @classmethod
    def open(cls, path: str | os.PathLike) -> TrainedModel:
        cube = read_cube(Path(path), kind=MODEL_KIND)
        return cls(job=TrainJob.from_dict(cube_spec(cube)), cube=cube)

    @property
    def label(self) -> str:
        return self.job.label

    @property
    def seed(self) -> int:
        return self.job.seed

    def state(self, prefix: str = PARAM_PREFIX, index: int | None = None) -> dict[str, torch.Tensor]:
        """Parameter tensors by module name: final (``param__``) or snapshot ``index`` (``snapshot__``)."""
        state = {}
        for name in self.cube.data_vars:
            if name.startswith(prefix):
                values = self.cube[name].values if index is None else self.cube[name].values[index]
                state[name[len(prefix) :]] = torch.as_tensor(values)
        return state

    def build(self) -> nn.Module:
        return build_model(self.job.model, self.job.training_task().d)

    @cached_property
    def module(self) -> nn.Module:
        """The trained module, in evaluation mode."""
        model = self.build()
        model.load_state_dict(self.state())
        return model.eval()

    @property
    def snapshot_steps(self) -> np.ndarray:
        """Training steps at which the parameters were kept: (S,) (empty without snapshots)."""
        return self.cube.snapshot.values if "snapshot" in self.cube.coords else np.zeros(0, dtype=int)

    def snapshot_modules(self) -> list[nn.Module]:
        """The module at every snapshot step."""
        modules = []
        for index in range(len(self.snapshot_steps)):
            model = self.build()
            model.load_state_dict(self.state(SNAPSHOT_PREFIX, index))
            modules.append(model.eval())
        return modules

    @property
    def record(self) -> xr.Dataset:
        """The fit's record: loss curve and diagnostics (no parameters)."""
        keep = [n for n in self.cube.data_vars if not n.startswith((PARAM_PREFIX, SNAPSHOT_PREFIX))]
        return self.cube[keep]
