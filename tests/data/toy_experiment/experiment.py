"""Toy: the risk of an LSA and of baselines against label noise σ (x ~ N(0, I_d), w ~ N(0, I_d)).

Extra data set ``probe`` (its own prompts); derived: the LSA's gain at the final query; theory: the
label power E y² = d + σ², closed form beside its Monte-Carlo estimate on the probe prompts.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from iclab.experiments.base import DataRequest, Evaluation, Experiment, SweepPoint, TheoryInputs
from iclab.tasks import LinearTask


def sweep(cfg: dict[str, Any]) -> list[SweepPoint]:
    points = []
    for sigma in cfg["sigma"]:
        task = LinearTask(d=cfg["d"], n_points=cfg["n"] + 1, beta_star=(0.0,) * cfg["d"], psi=1.0, sigma=sigma)
        points.append(
            SweepPoint(
                coords={"sigma": float(sigma)},
                task=task.to_dict(),
                models=[{"name": "lsa", "init_scale": 0.1}],
                train=cfg["train"],
                extra_data={"probe": DataRequest(task=task.to_dict(), stream="probe", n_prompts=cfg["probe_prompts"])},
            )
        )
    return points


def derived(evaluation: Evaluation) -> xr.Dataset:
    y = evaluation.batch.ys[:, -1]  # (B,)
    gains = [float(np.mean(y_hat[:, -1] * y) / np.mean(y * y)) for y_hat in evaluation.trained("lsa")]
    return xr.Dataset({"lsa_gain": (("seed",), gains)}, coords={"seed": evaluation.setting.seeds})


def theory(inputs: TheoryInputs) -> xr.Dataset:
    task = inputs.setting.eval_task
    probe = inputs.data("probe")
    weights = [float(np.linalg.norm(m.module.reduced_weights().product)) for m in inputs.trained("lsa")]
    return xr.Dataset(
        {
            "label_power": float(np.mean(probe.ys**2)),
            "label_power_sem": float(np.std(probe.ys**2, ddof=1) / np.sqrt(probe.ys.size)),
            "theory_label_power": task.d + task.sigma**2,
            "lsa_product_norm": (("seed",), weights),
        },
        coords={"seed": inputs.setting.seeds},
    )


EXPERIMENT = Experiment(name="toy_noise", sweep=sweep, derived=derived, theory=theory)
