"""The LSA class optimum of a linear task (jobs.OptimumJob) as a file: the ``lsa-optimum`` stage computes it once,
and the evaluation (the ``lsa_optimal`` baseline) and theory (``lsa_optimum``) stages of every setting of that task
read it. At the papers' d = 20 one optimum is a BFGS of 25–80 s (measured in the paper tier's smoke run of 750b8bc)."""

from __future__ import annotations

import os

import numpy as np
import xarray as xr

from iclab import theory
from iclab.store.cubes import OPTIMUM_KIND, read_cube, write_cube
from iclab.errors import CubeError
from iclab.store.jobs import OptimumJob
from iclab.tasks import LinearTask, task_from_dict
from iclab.tasks.linear import final_query_setting


def compute_optimum(job: OptimumJob) -> theory.LSAOptimum:
    """theory.lsa_class_optimum of the job's task at its final query n = K − 1."""
    task = task_from_dict(job.task)
    if not isinstance(task, LinearTask):
        raise ValueError(f"the LSA class optimum needs a linear task, got family {job.task.get('family')!r}")
    return theory.lsa_class_optimum(**final_query_setting(task))


def write_optimum(optimum: theory.LSAOptimum, job: OptimumJob, path: str | os.PathLike) -> None:
    ds = xr.Dataset(
        {
            "u": (("row",), optimum.u),  # (d+1,)
            "w": (("row", "column"), optimum.w),  # (d+1, d)
            "risk": optimum.risk,
            "start_risks": (("start",), optimum.start_risks),  # (S,)
        }
    )
    write_cube(ds, path, kind=OPTIMUM_KIND, spec=job.to_dict())


def read_optimum(path: str | os.PathLike, task: dict) -> theory.LSAOptimum:
    """The optimum in ``path``, refused (``CubeError`` naming the file) unless it is the one of ``task``."""
    ds = read_cube(path, kind=OPTIMUM_KIND)
    if ds.attrs["iclab_spec_hash"] != OptimumJob(task=task).hash:
        raise CubeError(f"{path}: the LSA class optimum of another task than {task}")
    return theory.LSAOptimum(
        u=ds.u.values, w=ds.w.values, risk=float(ds.risk), start_risks=np.atleast_1d(ds.start_risks.values)
    )
