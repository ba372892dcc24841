"""Zhang, Frei, Bartlett 2024, Theorem 4: gradient flow on LSA from the balanced initialisation
(Assumption 3) converges to u₋₁U₁₁ = Γ⁻¹, Γ = (1 + 1/N)Λ + (tr Λ/N)I.

Per covariance spectrum Λ = diag(λ): the paper's reduced ODE (theory.lsa.integrate_flow) next to
the LSA module trained by SGD on sampled prompts from the same initialisation. With the training
loss E(ŷ − y)² (no ½) and plain SGD at step size η, step s is gradient-flow time t = 2ηs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from iclab.experiments.base import Experiment, SweepPoint, TheoryInputs
from iclab.tasks import LinearTask
from iclab.theory import lsa as lsa_theory


def task_for(cfg: dict[str, Any], spectrum: list[float]) -> LinearTask:
    d = len(spectrum)
    return LinearTask(
        d=d,
        n_points=cfg["n"] + 1,
        beta_star=(0.0,) * d,
        psi=1.0,
        sigma=0.0,
        covariance="diagonal",
        covariance_values=tuple(float(v) for v in spectrum),
    )


def sweep(cfg: dict[str, Any]) -> list[SweepPoint]:
    model = {"name": "lsa", "init": "zfb", "init_scale": cfg["init_scale"]}
    train = {
        **cfg["train"],
        "optimizer": "sgd",
        "schedule": "constant",
        "snapshot_every": cfg["snapshot_every"],
    }  # t = 2·lr·s
    return [
        SweepPoint(coords={"spectrum": name}, task=task_for(cfg, spectrum).to_dict(), models=[model], train=train)
        for name, spectrum in cfg["spectra"].items()
    ]


def theory(inputs: TheoryInputs) -> xr.Dataset:
    """ODE path, SGD path (distance to Γ⁻¹ per snapshot) and the final W^{KQ} block against the limit."""
    setting = inputs.setting
    task = setting.eval_task
    lam, n, d = task.h_matrix, task.n_points - 1, task.d
    job = setting.training_job("lsa")  # every seed shares the schedule
    models = inputs.trained("lsa")
    times = 2 * job.train.lr * models[0].snapshot_steps  # gradient-flow time of each snapshot
    flow = lsa_theory.integrate_flow(lam, n, job.model["init_scale"], np.linspace(0, times[-1], 400))
    paths = [[m.reduced_weights() for m in model.snapshot_modules()] for model in models]  # (seeds, S)
    distance = np.stack(
        [
            lsa_theory.relative_distance_to_limit(
                np.stack([w.u11 for w in path]), np.array([w.u_pv for w in path]), lam, n
            )
            for path in paths
        ]
    )  # (seeds, S)
    limit_kq, _ = lsa_theory.limit_weights(lam, n)
    return xr.Dataset(
        {
            "flow_distance": (("flow_time",), flow.distance),
            "flow_loss": (("flow_time",), flow.loss),
            "sgd_distance": (("seed", "snapshot_time"), distance),
            "kq_learned": (("seed", "row", "col"), np.stack([path[-1].u11 for path in paths])),
            "kq_limit": (("row", "col"), limit_kq[:d, :d]),
            "product_learned": (("seed", "row", "col"), np.stack([path[-1].product for path in paths])),
            "gamma_inverse": (("row", "col"), np.linalg.inv(lsa_theory.gamma_matrix(lam, n))),
            "covariance": (("row",), np.diag(lam)),
            "n_train": n,
        },
        coords={
            "flow_time": flow.times,
            "snapshot_time": times,
            "seed": setting.seeds,
            "row": np.arange(d),
            "col": np.arange(d),
        },
    )


EXPERIMENT = Experiment(name="lsa_convergence", sweep=sweep, theory=theory)
