"""Fu, Chen, Jia, Sharan 2024: per-layer linear probes of a GPT-2 (and, optionally, an LSTM: their
Table 1 and §5) trained on noiseless linear regression (their Def. 3.3), against the number of
in-context examples, beside least squares, iterative Newton and gradient descent at each count of
their grids.

Sweep: one point (d). The models read Garg et al.'s interleaved prompts and are trained as they do
(loss at every position, curriculum); ``probe_similarity`` declares the same point, so both share
its models and data sets by hash. Data sets: ``probe`` (prompts that fit the probes) and, for
``probe_similarity``, ``queries`` (fresh queries of the induced weights). Derived, per probed model
(dimension ``probed``: every trained learner) and seed: each layer's probe risk at every position
(NaN past a model's last layer); per count, the risk of Newton and GD on the same prompts.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from iclab.learners import estimators
from iclab.errors import ExperimentError
from iclab.experiments.base import DataRequest, Evaluation, Experiment, SweepPoint, gpt2_spec
from iclab.stats.intervals import mean_and_sem
from iclab.learners.probing import probe_predictions
from iclab.tasks import LinearTask
from iclab.tasks.linear import ill_conditioned_spectrum

CHUNK = 256  # prompts per forward pass when reading the hidden states
PROBED = "probed"  # the cube dimension of the probed models (every trained learner of the point)


def task_for(cfg: dict[str, Any]) -> LinearTask:
    """Garg et al.'s task: w ~ N(0, I_d), x ~ N(0, I_d), y = wᵀx, no noise; with ``condition_number``
    κ, x ~ N(0, H) with Fu et al.'s ill-conditioned spectrum in a random eigenbasis per prompt."""
    d, kappa = cfg["d"], cfg.get("condition_number")
    covariance = {}
    if kappa is not None:
        covariance = {"covariance": "random_basis", "covariance_values": ill_conditioned_spectrum(d, kappa)}
    return LinearTask(d=d, n_points=cfg["n_points"], beta_star=(0.0,) * d, psi=1.0, sigma=0.0, **covariance)


def models_for(cfg: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The GPT-2 (trained with ``train``) and, if configured, the LSTM with its own training config."""
    models, own_train = [gpt2_spec(cfg["model"], cfg["n_points"])], {}
    if "lstm" in cfg:
        models.append({"name": "lstm", **cfg["lstm"]["model"]})
        own_train["lstm"] = cfg["lstm"]["train"]
    return models, own_train


def analysis(cfg: dict[str, Any]) -> dict[str, Any]:
    """The algorithms' grids and the induced weights' sizes (the options of ``derived``)."""
    options = {
        "newton_iterations": list(cfg["newton_iterations"]),
        "gd_steps": list(cfg["gd_steps"]),
        "gd_lr": cfg["gd_lr"],
    }
    return options | {key: cfg[key] for key in ("weights_prompts", "queries_per_prefix") if key in cfg}


def sweep(cfg: dict[str, Any]) -> list[SweepPoint]:
    if cfg.get("queries_per_prefix", cfg["d"]) < cfg["d"]:
        raise ExperimentError(
            f"queries_per_prefix = {cfg['queries_per_prefix']}: induced weights need at least d = {cfg['d']} "
            "fresh queries per prefix"
        )
    task = task_for(cfg).to_dict()
    models, own_train = models_for(cfg)
    extra = {"probe": DataRequest(task=task, stream="probe", n_prompts=cfg["probe_prompts"])}
    if "weights_prompts" in cfg:
        n_queries = cfg["weights_prompts"] * cfg["queries_per_prefix"]
        extra["queries"] = DataRequest(task=task, stream="queries", n_prompts=n_queries)
    return [
        SweepPoint(
            coords={key: cfg[key] for key in ("d", "condition_number") if key in cfg},
            task=task,
            models=models,
            train=cfg["train"],
            model_train=own_train,
            extra_data=extra,
            analysis=analysis(cfg),
            eval_prompts_read={"weights_prompts": cfg["weights_prompts"]} if "weights_prompts" in cfg else {},
        )
    ]


def layer_predictions(evaluation: Evaluation, label: str) -> np.ndarray:
    """Every layer's probe of learner ``label`` on the evaluation prompts, for every seed: (S, L+1, B, K)."""
    from iclab.models import numpy_layer_states  # torch: the plan imports every experiment module

    batch, fit = evaluation.batch, evaluation.data["probe"]
    return np.stack(
        [
            probe_predictions(numpy_layer_states(model.module, CHUNK), (fit.xs, fit.ys), (batch.xs, batch.ys))
            for model in evaluation.trained_models(label)
        ]
    )


def pad_layers(per_model: list[np.ndarray]) -> np.ndarray:
    """Arrays (S, L_p+1, …), one per probed model, stacked as (P, S, L_max+1, …), NaN past each model's
    last layer (models of different depths share the ``layer`` axis)."""
    depth = max(a.shape[1] for a in per_model)
    out = np.full((len(per_model), per_model[0].shape[0], depth, *per_model[0].shape[2:]), np.nan)
    for index, array in enumerate(per_model):
        out[index, :, : array.shape[1]] = array
    return out


def risk_per_count(xs: np.ndarray, ys: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Risk and its standard error at every count and position: weights (J, B, K, d) → (J, K) each."""
    errors = (estimators.predict_linear(xs, weights) - ys) ** 2  # (J, B, K)
    return mean_and_sem(np.moveaxis(errors, 1, 0))


def check_gd_lr(xs: np.ndarray, lr: float) -> None:
    """GD on ½‖Xw − y‖² is stable iff lr·λ_max(XᵀX) < 2; checked on the longest prefix of every prompt."""
    top = float(np.linalg.eigvalsh(np.einsum("bkd,bke->bde", xs[:, :-1], xs[:, :-1]))[:, -1].max())
    if lr * top >= 2:
        raise ExperimentError(
            f"gd_lr = {lr} is unstable on these prompts: lr·λ_max(XᵀX) = {lr * top:.3g} ≥ 2; "
            f"allowed: gd_lr < {2 / top:.3g}"
        )


def derived(evaluation: Evaluation) -> xr.Dataset:
    batch, options = evaluation.batch, evaluation.setting.analysis
    check_gd_lr(batch.xs, options["gd_lr"])
    labels = evaluation.setting.labels
    errors = [(layer_predictions(evaluation, label) - batch.ys) ** 2 for label in labels]  # each (S, L+1, B, K)
    risks = [mean_and_sem(np.moveaxis(e, 2, 0)) for e in errors]
    probe_risk, probe_sem = pad_layers([r for r, _ in risks]), pad_layers([e for _, e in risks])  # (P, S, L+1, K)
    newton = estimators.newton_weights(batch.xs, batch.ys, iterations=options["newton_iterations"])  # (J, B, K, d)
    gd = estimators.gd_weights(batch.xs, batch.ys, steps=options["gd_steps"], lr=options["gd_lr"])  # (J', B, K, d)
    newton_risk, newton_sem = risk_per_count(batch.xs, batch.ys, newton)
    gd_risk, gd_sem = risk_per_count(batch.xs, batch.ys, gd)
    return xr.Dataset(
        {
            "probe_risk": ((PROBED, "seed", "layer", "position"), probe_risk),
            "probe_risk_sem": ((PROBED, "seed", "layer", "position"), probe_sem),
            "newton_risk": (("newton_iterations", "position"), newton_risk),
            "newton_risk_sem": (("newton_iterations", "position"), newton_sem),
            "gd_risk": (("gd_steps", "position"), gd_risk),
            "gd_risk_sem": (("gd_steps", "position"), gd_sem),
            "gd_lr": options["gd_lr"],
        },
        coords={
            PROBED: labels,
            "seed": evaluation.setting.seeds,
            "layer": np.arange(probe_risk.shape[2]),
            "position": np.arange(batch.ys.shape[1]),
            "newton_iterations": options["newton_iterations"],
            "gd_steps": options["gd_steps"],
        },
    )


EXPERIMENT = Experiment(name="probe_layers", sweep=sweep, derived=derived)
