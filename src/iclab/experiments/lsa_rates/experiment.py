"""Zhang, Frei, Bartlett 2024, Theorem 5: the converged LSA's test error on prompts of length M,
trained on length N, is E_M,N = (1/M)·(M-term) + (1/N²)·(N-term) for noiseless linear tasks.

LSA models are trained per N; one evaluation set of long prompts (M up to ``m_max``) per spectrum
gives the error at every M at once (the learner contract). Theory: theory.lsa.expected_error with
A = Γ_N⁻¹ (the limit) and with the trained model's own A = u₋₁U₁₁ᵀ.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from iclab.experiments.base import Experiment, SweepPoint, TheoryInputs
from iclab.experiments.lsa_convergence.experiment import task_for
from iclab.theory import lsa as lsa_theory


def sweep(cfg: dict[str, Any]) -> list[SweepPoint]:
    model = {"name": "lsa", "init": "zfb", "init_scale": cfg["init_scale"]}
    eval_task = task_for(cfg | {"n": cfg["m_max"]}, cfg["spectrum"])
    return [
        SweepPoint(
            coords={"n": n},
            task=task_for(cfg | {"n": n}, cfg["spectrum"]).to_dict(),
            models=[model],
            train=cfg["train"],
            eval_task=eval_task.to_dict(),
            analysis=limit_options(cfg, np.diag(cfg["spectrum"]), n),
        )
        for n in cfg["n"]
    ]


def limit_options(cfg: dict[str, Any], lam: np.ndarray, n: int) -> dict[str, Any]:
    """The lsa_limit baseline's A = Γ_N⁻¹ of the training prompts (Theorem 4), where the config lists it."""
    if "lsa_limit" not in cfg.get("baselines", []):
        return {}
    gamma_inv = np.linalg.inv(lsa_theory.gamma_matrix(lam, n))  # (d, d)
    return {"baseline_options": {"lsa_limit": {"a": gamma_inv.tolist()}}}


def error_curve(a_matrix: np.ndarray, lam: np.ndarray, m_max: int) -> np.ndarray:
    """expected_error of ŷ = x_qᵀ A ĥ for M = 0..m_max (M = 0 predicts 0: error tr Λ): (m_max+1,)."""
    return np.array([np.trace(lam)] + [lsa_theory.expected_error(a_matrix, lam, m) for m in range(1, m_max + 1)])


def theory(inputs: TheoryInputs) -> xr.Dataset:
    """Theory at every test length M: the limit Γ_N⁻¹, and each trained model's own weights;
    and the M → ∞ floor (the 1/N² term) of both."""
    task = inputs.setting.eval_task
    lam, m_max, n = task.h_matrix, task.n_points - 1, inputs.setting.coords["n"]
    limit = np.linalg.inv(lsa_theory.gamma_matrix(lam, n))
    a_learned = [model.module.reduced_weights().a_matrix for model in inputs.trained("lsa")]
    floor = lambda a: lsa_theory.expected_error(a, lam, np.inf)
    return xr.Dataset(
        {
            "theory_error": (("position",), error_curve(limit, lam, m_max)),
            "trained_theory_error": (("seed", "position"), np.stack([error_curve(a, lam, m_max) for a in a_learned])),
            "theory_floor": floor(limit),
            "trained_theory_floor": (("seed",), [floor(a) for a in a_learned]),
        },
        coords={"position": np.arange(m_max + 1), "seed": inputs.setting.seeds},
    )


EXPERIMENT = Experiment(name="lsa_rates", sweep=sweep, theory=theory)
