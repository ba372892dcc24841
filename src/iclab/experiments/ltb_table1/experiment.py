"""Zhang, Wu, Bartlett 2024, Table 1: GPT-2 with and without MLP on linear regression with a
shared signal. Removing the MLP costs little when β* = 0 and much when β* ≠ 0: without an MLP
the block has no data-independent path for the x_qᵀβ* term.

Sweep: ‖β*‖ (rows). GPT-2 reads the LTB paper's token matrix (one token per (x, y), the query's y
zeroed) and is trained on the loss at the final query, as the LSA/LTB are. Theory: ``ltb_gap``'s GD-β
optimum and Bayes risk.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from iclab.experiments.base import Experiment, SweepPoint, gpt2_spec
from iclab.experiments.ltb_gap.experiment import beta_star, final_query_theory
from iclab.tasks import LinearTask

VARIANTS = {"gpt2": True, "gpt2_nomlp": False}  # label → keeps its MLP


def sweep(cfg: dict[str, Any]) -> list[SweepPoint]:
    n_points = cfg["n"] + 1
    models = [
        gpt2_spec(cfg["model"], n_points, "token_matrix", label=label, mlp=mlp) for label, mlp in VARIANTS.items()
    ]
    points = []
    for norm in cfg["beta_star_norm"]:
        task = LinearTask(
            d=cfg["d"], n_points=n_points, beta_star=beta_star(norm, cfg["d"]), psi=cfg["psi"], sigma=cfg["sigma"]
        )
        points.append(
            SweepPoint(coords={"beta_star_norm": float(norm)}, task=task.to_dict(), models=models, train=cfg["train"])
        )
    return points


theory = partial(final_query_theory, names=("gd_beta_optimum", "bayes", "zero"))
EXPERIMENT = Experiment(name="ltb_table1", sweep=sweep, theory=theory, products=("table",))
