"""Zhang, Wu, Bartlett 2024 ("In-context learning of a linear transformer block"):
with a shared signal β* ≠ 0, LSA pays an excess risk that grows with ‖β*‖ (its Theorem 4.1),
while LTB reaches the optimal one-step GD with learnable initialisation (GD-β, Theorem 5.x/6.3).

Sweep: n × ‖β*‖. β* = ‖β*‖ · 1/√d (the all-ones direction), Ψ = psi·I, H = I.
Theory at the final query: the closed-form GD-β optimum, the LSA class's optimum (its exact risk minimised
numerically; Theorem 4.1 is about the gap between the two) and the Bayes risk.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from iclab import theory as closed_form
from iclab.experiments.base import Experiment, SweepPoint, TheoryInputs
from iclab.tasks import LinearTask
from iclab.tasks.linear import final_query_setting

THEORY = ("gd_beta_optimum", "lsa_optimum", "bayes")
TRAINED_INIT = {"lsa": True, "ltb": True, "gd_beta": False}  # GD-β starts at 0 (no symmetry to break)


def beta_star(norm: float, d: int) -> tuple[float, ...]:
    return tuple(float(v) for v in norm * np.ones(d) / np.sqrt(d))


def training(cfg: dict[str, Any]) -> dict[str, Any]:
    """The fitter's config: ``train``, with ``snapshot_every`` when the experiment sets it."""
    return cfg["train"] | ({"snapshot_every": cfg["snapshot_every"]} if "snapshot_every" in cfg else {})


def sweep_point(cfg: dict[str, Any], n: int, norm: float, coords: dict[str, Any]) -> SweepPoint:
    """The LSA, LTB and GD-β of ``cfg`` trained on n context examples at ‖β*‖ = norm (``ltb_training`` shares it)."""
    d = cfg["d"]
    task = LinearTask(d=d, n_points=n + 1, beta_star=beta_star(norm, d), psi=cfg["psi"], sigma=cfg["sigma"])
    models = [{"name": name, "init_scale": cfg["init_scale"] if TRAINED_INIT[name] else 0.0} for name in cfg["models"]]
    return SweepPoint(coords=coords, task=task.to_dict(), models=models, train=training(cfg))


def sweep(cfg: dict[str, Any]) -> list[SweepPoint]:
    return [
        sweep_point(cfg, n, norm, {"n": n, "beta_star_norm": float(norm)})
        for n in cfg["n"]
        for norm in cfg["beta_star_norm"]
    ]


def final_query_theory(inputs: TheoryInputs, names: tuple[str, ...] = THEORY) -> xr.Dataset:
    """The named references at the final query (n = K − 1) of the evaluation task, among the GD-β optimum
    (closed form), the LSA class's optimum (exact risk minimised numerically, by its own job: jobs.OptimumJob),
    the Bayes risk (Monte Carlo) and the zero predictor's (GD-β's closed form at β₀ = 0, Γ = 0: E y_q²)."""
    setting = final_query_setting(inputs.setting.eval_task)

    def bayes() -> tuple[float, float]:
        estimate = closed_form.bayes_risk(**{k: v for k, v in setting.items() if k != "beta_star"})  # free of β*
        return estimate.mean, estimate.sem

    d = len(setting["beta_star"])
    compute = {  # name → (risk, its Monte-Carlo standard error)
        "gd_beta_optimum": lambda: (closed_form.gd_beta_optimum(**setting).risk, 0.0),
        "zero": lambda: (closed_form.gd_beta_risk(np.zeros(d), np.zeros((d, d)), **setting), 0.0),  # β₀ = 0, Γ = 0
        "lsa_optimum": lambda: (inputs.lsa_optimum().risk, 0.0),  # computed once per task, by its own job
        "bayes": bayes,
    }
    risks, sems = zip(*(compute[name]() for name in names))
    return xr.Dataset(
        {"theory_risk": (("theory",), list(risks)), "theory_risk_sem": (("theory",), list(sems))},
        coords={"theory": list(names)},
    )


EXPERIMENT = Experiment(name="ltb_gap", sweep=sweep, theory=final_query_theory, reads_lsa_optimum=True)
