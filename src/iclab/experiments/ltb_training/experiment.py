"""Zhang, Wu, Bartlett 2024, Figure 1: the test risk along training of LTB and LSA (and GD-β).

Sweep: ‖β*‖ at one context length n, as ``ltb_gap`` (same task, models and training): with the same
``train`` the models are ``ltb_gap``'s, named by the hash of their spec, and train once for both.
Theory: every training snapshot of every model evaluated at the final query of the shared evaluation
set, and ``ltb_gap``'s horizontal lines (GD-β optimum, LSA class optimum, Bayes risk).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from iclab.experiments.base import Experiment, SweepPoint, TheoryInputs
from iclab.experiments.ltb_gap.experiment import final_query_theory, sweep_point
from iclab.stats.intervals import mean_and_sem


def sweep(cfg: dict[str, Any]) -> list[SweepPoint]:
    return [sweep_point(cfg, cfg["n"], norm, {"beta_star_norm": float(norm)}) for norm in cfg["beta_star_norm"]]


def snapshot_risks(inputs: TheoryInputs, label: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Risk at the final query of every snapshot of ``label``'s models, on the evaluation set:
    steps (S,), mean and standard error over prompts, (seeds, S) each."""
    import torch  # here, not at the top: the plan imports every experiment module

    batch = inputs.data()
    xs, ys = (torch.as_tensor(a, dtype=torch.get_default_dtype()) for a in (batch.xs, batch.ys))  # (B, K, d), (B, K)
    models = inputs.trained(label)
    means, sems = [], []
    for model in models:
        per_snapshot = []
        for module in model.snapshot_modules():
            with torch.no_grad():
                predictions = module(xs, ys, last_only=True)[:, 0].double().numpy()  # (B,): the final query only
            per_snapshot.append(mean_and_sem((predictions - batch.ys[:, -1]) ** 2))
        mean, sem = np.array(per_snapshot).T  # (S,), (S,)
        means.append(mean)
        sems.append(sem)
    return models[0].snapshot_steps, np.stack(means), np.stack(sems)


def theory(inputs: TheoryInputs) -> xr.Dataset:
    labels = inputs.setting.labels
    curves = {label: snapshot_risks(inputs, label) for label in labels}
    steps = curves[labels[0]][0]
    dims = ("trained", "seed", "step")
    return xr.merge(
        [
            final_query_theory(inputs),
            xr.Dataset(
                {
                    "training_risk": (dims, np.stack([curves[label][1] for label in labels])),
                    "training_risk_sem": (dims, np.stack([curves[label][2] for label in labels])),
                },
                coords={"trained": labels, "seed": inputs.setting.seeds, "step": steps},
            ),
        ]
    )


EXPERIMENT = Experiment(name="ltb_training", sweep=sweep, theory=theory, reads_lsa_optimum=True)
