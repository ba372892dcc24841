"""Oko, Song, Suzuki, Wu 2024, stage 1: how well one gradient step on the MLP weights recovers the
task subspace V, against the number of pretraining prompts T₁ and the dimension d (r fixed).

Each (d, T₁) trains the two-stage model's stage 1 only (T₂ = 0) per seed; its cube holds the
principal cosines between V and W's top-r right singular subspace and the rows' energy in V.
The evaluation stage also scores these stage-1 models on a small evaluation set (their Γ is the
initial diag(±1)/m, so that risk is not a result; the figure does not use it).
"""

from __future__ import annotations

from typing import Any

from iclab.experiments.base import Experiment, SweepPoint
from iclab.experiments.single_index.experiment import pretrain_points, stage1_variables, task_for

STAGE1_KEYS = ("eta", "weight_decay", "stage1_queries", "max_chunks")


def sweep(cfg: dict[str, Any]) -> list[SweepPoint]:
    model = {"name": "two_stage", "width": cfg["width"]}
    points = []
    for d in cfg["d"]:
        task = task_for(cfg, d, cfg["r"], pretrain_points(cfg, d) + 1)
        for t1 in cfg["t1"]:
            train = {"t1": t1, "t2": 0, "ridge": 1.0} | {key: cfg[key] for key in STAGE1_KEYS if key in cfg}
            points.append(SweepPoint(coords={"d": d, "t1": t1}, task=task.to_dict(), models=[model], train=train))
    return points


EXPERIMENT = Experiment(name="single_index_subspace", sweep=sweep, theory=stage1_variables)
