"""NetCDF cubes: atomic writes, provenance attributes, clear errors on bad files, merging.

Every job writes one ``xarray.Dataset``. Attributes hold only strings and numbers
(netCDF4 rejects dicts, None and bools): the spec is stored as canonical JSON.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterable
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from iclab.atomic import atomic_write
from iclab.errors import CubeError
from iclab.hashing import canonical_json, spec_hash

ENGINE = "netcdf4"
KIND_ATTR = "iclab_kind"
SPEC_ATTR = "iclab_spec"
MACHINES_ATTR = "iclab_machines"  # the machines that computed the cube and its inputs (``machine()``)
DATA_KIND = "eval_set"  # the prompts of a data set
EVAL_KIND = "evaluation"  # one setting's risks and derived variables
THEORY_KIND = "theory"  # an experiment's theory, every setting
EXPERIMENT_KIND = "experiment"  # the experiment cube that figures and tables read
OPTIMUM_KIND = "lsa_optimum"  # the LSA class optimum of a linear task (iclab.store.optima)
PACKAGES = ("iclab", "numpy", "torch", "transformers", "xarray", "netCDF4")


@lru_cache(maxsize=1)
def git_commit() -> str:
    """The commit of the iclab source tree, or 'unknown' outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 else "unknown"


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


@lru_cache(maxsize=1)
def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo on Linux, else what ``platform`` knows)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def machine() -> str:
    """The machine this process computes on, as canonical JSON: the CPU model, torch's CPU kernel capability (its
    vectorised kernels, e.g. AVX2 or AVX512: trained weights differ by round-off between capabilities) and the GPU
    where this process used one. A process that has not imported torch (aggregation, figures) computed nothing that
    depends on it: its capability reads "torch not used"."""
    found = {"cpu": cpu_model(), "torch_cpu_capability": "torch not used", "gpu": "none"}
    torch = sys.modules.get("torch")
    if torch is not None:
        found["torch_cpu_capability"] = torch.backends.cpu.get_cpu_capability()
        if torch.cuda.is_initialized():
            found["gpu"] = torch.cuda.get_device_name()
    return canonical_json(found)


def machines_of(cubes: Iterable[xr.Dataset]) -> list[str]:
    """The machines (``machine()`` JSON) behind ``cubes``: each one's own and those it was computed from."""
    return sorted({m for cube in cubes for m in json.loads(cube.attrs.get(MACHINES_ATTR, "[]"))})


def provenance(kind: str, spec: dict[str, Any], seed: int | None = None, inputs: Iterable[xr.Dataset] = ()
               ) -> dict[str, Any]:
    """Attributes naming what produced a cube: no timestamps or hostnames, so equal inputs on one machine give
    equal files. ``iclab_machines``: this machine and those of the cubes it was computed from (``inputs``: a model's
    training, an evaluation's models, an experiment's evaluations)."""
    attrs: dict[str, Any] = {
        KIND_ATTR: kind,
        SPEC_ATTR: canonical_json(spec),
        "iclab_spec_hash": spec_hash(spec),
        "iclab_versions": json.dumps(package_versions(), sort_keys=True),
        "iclab_git_commit": git_commit(),
        MACHINES_ATTR: json.dumps(sorted({machine(), *machines_of(inputs)})),
    }
    if seed is not None:
        attrs["iclab_seed"] = int(seed)
    return attrs


def write_cube(
    ds: xr.Dataset, path: str | os.PathLike, *, kind: str, spec: dict[str, Any], seed: int | None = None,
    inputs: Iterable[xr.Dataset] = (),
) -> None:
    """Write ``ds`` with provenance to ``path`` atomically (temporary file in the same folder, then rename)."""
    ds = ds.drop_encoding()  # encodings read from input files (e.g. string widths) must not shape the output
    ds.attrs.update(provenance(kind, spec, seed, inputs))
    atomic_write(path, lambda tmp: ds.to_netcdf(tmp, engine=ENGINE))


def read_cube(path: str | os.PathLike, kind: str | None = None, experiment: str | None = None) -> xr.Dataset:
    """Load an iclab cube fully into memory; raise ``CubeError`` naming the file if it is unusable, not of
    ``kind``, or (evaluation and experiment cubes) not made for ``experiment``."""
    path = Path(path)
    if not path.is_file():
        raise CubeError(f"{path}: no such file")
    try:
        with xr.open_dataset(path, engine=ENGINE) as ds:
            ds = ds.load()
    except Exception as err:  # netCDF4/HDF5 raise OSError, ValueError, RuntimeError… for bad files
        raise CubeError(
            f"{path}: not a readable NetCDF file ({type(err).__name__}: {err}); it may have been truncated "
            "or not written by iclab: delete it and rerun the job that makes it"
        ) from err
    actual = ds.attrs.get(KIND_ATTR)
    if actual is None:
        raise CubeError(
            f"{path}: a NetCDF file without iclab provenance (attribute {KIND_ATTR!r} missing): not an iclab cube"
        )
    if kind is not None and actual != kind:
        raise CubeError(f"{path}: an iclab {actual!r} cube, expected a {kind!r} cube")
    made_by = cube_spec(ds).get("experiment") if experiment is not None else None
    if made_by != experiment:
        raise CubeError(
            f"{path}: a cube of experiment {made_by!r}, not {experiment!r}: pass the cube of {experiment!r}"
        )
    return ds


def cube_spec(ds: xr.Dataset) -> dict[str, Any]:
    """The spec a cube was made from."""
    return json.loads(ds.attrs[SPEC_ATTR])


def combine(cubes: Iterable[xr.Dataset], order: dict[str, list[Any]]) -> xr.Dataset:
    """Combine per-job cubes that carry their sweep values as length-1 dimensions, in config ``order``.

    Other dimensions (e.g. ``position``, whose length follows n) are first aligned to their union,
    NaN-filled, so that only the sweep dimensions are concatenated. ``combine_by_coords`` sorts
    coordinates; the result is reindexed to the order of the config.
    Provenance attributes that differ between jobs are dropped (each job keeps its own).
    """
    aligned = xr.align(*[c.drop_attrs() for c in cubes], join="outer", exclude=set(order))
    merged = xr.combine_by_coords(aligned, join="outer", compat="no_conflicts", combine_attrs="drop_conflicts")
    return merged.reindex({dim: np.asarray(values) for dim, values in order.items()})


def experiment_cube(evaluations: list[xr.Dataset], theory: xr.Dataset, order: dict) -> xr.Dataset:
    """Every setting's evaluation and the theory in one cube, sweep values as coordinates in ``order``."""
    return xr.merge([combine(evaluations, order), theory.drop_attrs()], join="outer", compat="no_conflicts")
