"""Fu, Chen, Jia, Sharan 2024, §5 (hidden size): 1-head GPT-2s of one depth at hidden sizes in a
fixed ratio to d (theirs: 8, 16, 32, 64 at d = 20, 12 layers) trained on noiseless linear
regression; only the wider ones (32, 64) reach least squares, so the hidden size must grow with d.

Sweep: one point (d) with one model per hidden size (``hidden_<n>``), sharing the training config;
least squares as a baseline. Derived, from the evaluation's predictions: each hidden size's risk at
every position (dimension ``hidden``), and its ``tail_risk``: per prompt the mean error over the
positions past d examples (where least squares is exact), then mean and standard error over prompts.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from iclab.experiments.base import Evaluation, Experiment, SweepPoint, gpt2_spec
from iclab.experiments.probe_layers.experiment import task_for
from iclab.stats.intervals import mean_and_sem


def label(hidden: int) -> str:
    return f"hidden_{hidden}"


def sweep(cfg: dict[str, Any]) -> list[SweepPoint]:
    activation = {"activation": cfg["activation"]} if "activation" in cfg else {}
    size = lambda hidden: {"n_embd": hidden, "n_layer": cfg["n_layer"], "n_head": 1} | activation  # noqa: E731
    models = [gpt2_spec(size(hidden), cfg["n_points"], label=label(hidden)) for hidden in cfg["hidden_sizes"]]
    return [
        SweepPoint(
            coords={"d": cfg["d"]},
            task=task_for(cfg).to_dict(),
            models=models,
            train=cfg["train"],
            analysis={"hidden_sizes": list(cfg["hidden_sizes"])},
        )
    ]


def derived(evaluation: Evaluation) -> xr.Dataset:
    sizes = evaluation.setting.analysis["hidden_sizes"]
    ys = evaluation.batch.ys  # (B, K)
    errors = np.stack([(evaluation.trained(label(h)) - ys) ** 2 for h in sizes])  # (H, S, B, K)
    risk, sem = mean_and_sem(np.moveaxis(errors, 2, 0))  # (H, S, K) each
    d = evaluation.batch.xs.shape[-1]
    tail, tail_sem = mean_and_sem(np.moveaxis(errors[..., d + 1 :].mean(axis=-1), 2, 0))  # (H, S) each
    dims = ("hidden", "seed", "position")
    return xr.Dataset(
        {
            "hidden_risk": (dims, risk),
            "hidden_risk_sem": (dims, sem),
            "tail_risk": (dims[:2], tail),
            "tail_risk_sem": (dims[:2], tail_sem),
        },
        coords={"hidden": sizes, "seed": evaluation.setting.seeds, "position": np.arange(ys.shape[1])},
    )


EXPERIMENT = Experiment(name="probe_hidden_size", sweep=sweep, derived=derived)
