"""Data sets on disk: a batch of prompts as a cube (kind ``eval_set``), and back.

Apart from the sampler's types, it imports only xarray: making or reading a data set does not pay
for the imports of the learners and baselines.
"""

from __future__ import annotations

import xarray as xr

from iclab.store.cubes import DATA_KIND, read_cube
from iclab.errors import CubeError
from iclab.tasks.base import Batch


def data_dataset(batch: Batch) -> xr.Dataset:
    return xr.Dataset(
        {
            "xs": (("prompt", "position", "dim"), batch.xs),
            "ys": (("prompt", "position"), batch.ys),
            "beta": (("prompt", "dim"), batch.betas),
            "covariance": (("prompt", "dim"), batch.covariances),
        }
    )


def load_data(path, expected_hash: str | None = None) -> Batch:
    """Read a data set (and check that it was made from the spec of ``expected_hash``)."""
    ds = read_cube(path, kind=DATA_KIND)
    if expected_hash is not None and ds.attrs["iclab_spec_hash"] != expected_hash:
        raise CubeError(
            f"{path}: the data set of spec {ds.attrs['iclab_spec_hash']}, not {expected_hash}: "
            f"pass results/data/{expected_hash}.nc"
        )
    return Batch(xs=ds.xs.values, ys=ds.ys.values, betas=ds.beta.values, covariances=ds.covariance.values)
