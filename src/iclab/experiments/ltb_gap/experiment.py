"""Zhang, Wu, Bartlett 2024 ("In-context learning of a linear transformer block"):
with a shared signal β* ≠ 0, LSA pays an excess risk that grows with ‖β*‖ (its Theorem 4.1),
while LTB reaches the optimal one-step GD with learnable initialisation (GD-β, Theorem 5.x/6.3).

Sweep: n × ‖β*‖. β* = ‖β*‖ · 1/√d (the all-ones direction), Ψ = psi·I, H = I.
Theory: the closed-form GD-β optimum and the Bayes risk at the final query.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from iclab import theory as closed_form
from iclab.experiments.base import Experiment, SweepPoint, TheoryInputs
from iclab.tasks import LinearTask

THEORY = ("gd_beta_optimum", "bayes")
TRAINED_INIT = {"lsa": True, "ltb": True, "gd_beta": False}  # GD-β starts at 0 (no symmetry to break)


def beta_star(norm: float, d: int) -> tuple[float, ...]:
    return tuple(float(v) for v in norm * np.ones(d) / np.sqrt(d))


def sweep(cfg: dict[str, Any]) -> list[SweepPoint]:
    points = []
    for n in cfg["n"]:
        for norm in cfg["beta_star_norm"]:
            task = LinearTask(
                d=cfg["d"], n_points=n + 1, beta_star=beta_star(norm, cfg["d"]), psi=cfg["psi"], sigma=cfg["sigma"]
            )
            models = [
                {"name": name, "init_scale": cfg["init_scale"] if TRAINED_INIT[name] else 0.0} for name in cfg["models"]
            ]
            points.append(
                SweepPoint(
                    coords={"n": n, "beta_star_norm": float(norm)},
                    task=task.to_dict(),
                    models=models,
                    train=cfg["train"],
                )
            )
    return points


def theory(inputs: TheoryInputs) -> xr.Dataset:
    """Closed-form GD-β optimum and Bayes risk at the final query (n = K − 1) of the evaluation task."""
    task = inputs.setting.eval_task
    common = dict(psi=task.psi_matrix, h=task.h_matrix, sigma=task.sigma, n=task.n_points - 1)
    optimum = closed_form.gd_beta_optimum(beta_star=np.asarray(task.beta_star), **common)
    bayes = closed_form.bayes_risk(**common)
    return xr.Dataset(
        {
            "theory_risk": (("theory",), [optimum.risk, bayes.mean]),
            "theory_risk_sem": (("theory",), [0.0, bayes.sem]),
        },
        coords={"theory": list(THEORY)},
    )


EXPERIMENT = Experiment(name="ltb_gap", sweep=sweep, theory=theory)
