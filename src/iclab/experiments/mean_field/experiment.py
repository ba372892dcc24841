"""Kim & Suzuki 2024 (ICML) and Suzuki's 2024 talk: mean-field feature learning with linear attention.

The mean-field transformer (``models.mean_field``) is pretrained on tasks F_t = v_tᵀf°(x) over a
teacher network's features f° (``tasks.mean_field``) by three dynamics (``fit.mean_field``): attention
(μ and Γ jointly), static (the two-timescale objective L(μ) = min_Γ L(μ, Γ)) and modified (static with
birth–death and a Gaussian perturbation). Cases (coordinate ``case``):
- ``realisable``: the teacher has the model's k features (global convergence: L(μ) → 0);
- ``misaligned`` (if ``k_misaligned`` is set): the teacher has more features than the model (L(μ) ≥ the
  misaligned floor);
- one case per nonlinear test task (``max``, ``norm_sq``): the realisable models (same training spec,
  trained once) tested on g(x) = max_j f°_j(x) or ‖f°(x)‖².
Baselines on the same test prompts: the teacher's features with the closed-form Γ* (the class's global
minimum at this n), ridge on random features of the model's width and kernel ridge (test prompt only).

Theory, per case: every training snapshot's risk at the final query on the evaluation set, its
population risk min_Γ (the two-timescale objective L(μ) against the evaluated target, on
``theory_samples`` inputs), the final features' largest principal angle to span(f°), and the n → ∞
risk of a model at the pretraining objective's global minimum (0; the misaligned floor, below which no k
features go; or, for a nonlinear target, g's distance to span(f°), which other features may beat).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from iclab.errors import ExperimentError
from iclab.experiments.base import Experiment, SweepPoint, TheoryInputs
from iclab.stats.intervals import mean_and_sem
from iclab.tasks import MeanFieldTask
from iclab.theory import mean_field as mean_field_theory

THEORY_SEED = 12345  # the inputs x on which the theory's population quantities are averaged


def task_for(cfg: dict[str, Any], k: int, target: str = "linear") -> MeanFieldTask:
    return MeanFieldTask(
        d=cfg["d"], k=k, n_points=cfg["n"] + 1, teacher_width=cfg["teacher_width"], target=target, sigma=cfg["sigma"]
    )


def variant_train(cfg: dict[str, Any], variant: str) -> dict[str, Any]:
    """The fitter's fields of ``variant``: the shared ``train`` and, for modified, its own options."""
    return cfg["train"] | {"variant": variant} | (cfg["modified"] if variant == "modified" else {})


def point(cfg: dict[str, Any], case: str, k_teacher: int, target: str) -> SweepPoint:
    models = [{"name": "mean_field", "k": cfg["k"], "width": cfg["width"], "label": v} for v in cfg["variants"]]
    return SweepPoint(
        coords={"case": case},
        task=task_for(cfg, k_teacher).to_dict(),
        models=models,
        train=variant_train(cfg, cfg["variants"][0]),
        eval_task=task_for(cfg, k_teacher, target).to_dict(),
        model_train={v: variant_train(cfg, v) for v in cfg["variants"]},
        analysis={
            "baseline_options": {"random_features_ridge": {"width": cfg["width"]}},
            "samples": cfg["theory_samples"],
        },
    )


def check(cfg: dict[str, Any]) -> None:
    """Constraints between keys that the schema cannot state, named by key."""
    widest = max(cfg["k"], cfg.get("k_misaligned", 0))
    if cfg["teacher_width"] < widest:
        raise ExperimentError(
            f"mean_field: teacher_width ({cfg['teacher_width']}) must be at least k and k_misaligned ({widest}): "
            "a teacher with fewer neurons than features has rank-deficient features"
        )
    if cfg.get("k_misaligned", cfg["k"] + 1) <= cfg["k"]:
        raise ExperimentError(f"mean_field: k_misaligned ({cfg['k_misaligned']}) must exceed k ({cfg['k']})")


def sweep(cfg: dict[str, Any]) -> list[SweepPoint]:
    check(cfg)
    points = [point(cfg, "realisable", cfg["k"], "linear")]
    if "k_misaligned" in cfg:
        points.append(point(cfg, "misaligned", cfg["k_misaligned"], "linear"))
    return points + [point(cfg, target, cfg["k"], target) for target in cfg["nonlinear_targets"]]


def teacher_features(task: MeanFieldTask, xs) -> np.ndarray:
    """f°(x) of the task's teacher on xs (N, d): (N, k)."""
    from iclab.tasks.samplers import mean_field as sampler  # torch: the plan imports every experiment module

    return sampler.teacher(task).features(xs).numpy()


def target_features(task: MeanFieldTask, xs) -> np.ndarray:
    """What the features must span to predict the evaluated target: f°(x) (N, k), or g(x) as (N, 1)."""
    from iclab.tasks.samplers import mean_field as sampler

    if task.target == "linear":
        return teacher_features(task, xs)
    return sampler.labels(task, xs[:, None, :], None)[:, 0, None].numpy()


def global_minimum_risk(task: MeanFieldTask, k: int, xs) -> float:
    """The n → ∞ risk on the evaluated target of k features at a global minimum of the pretraining
    objective L(μ): 0 when realisable; the misaligned floor when the teacher has more features (a lower
    bound for any k features); g's residual off span(f°) for a nonlinear target (not a lower bound:
    features outside span(f°) may fit g better)."""
    teacher = teacher_features(task, xs)  # (N, k_teacher)
    if task.target == "linear":
        return mean_field_theory.misaligned_floor(teacher.T @ teacher / len(teacher), k)
    return mean_field_theory.two_timescale_objective(teacher, target_features(task, xs))


def snapshot_curves(inputs: TheoryInputs, label: str, xs) -> dict[str, np.ndarray]:
    """Per seed and snapshot of ``label``: the risk at the final query on the evaluation set (and its
    s.e.) and the population risk min_Γ on the evaluated target; (seeds, S) each."""
    import torch  # here, not at the top: the plan imports every experiment module

    batch, task = inputs.data(), inputs.setting.eval_task
    prompts = [torch.as_tensor(a, dtype=torch.float32) for a in (batch.xs, batch.ys)]  # (B, K, d), (B, K)
    target = target_features(task, xs)  # (N, k_f)
    curves: dict[str, list] = {"risk": [], "risk_sem": [], "population": []}
    for model in inputs.trained(label):
        rows = []
        for module in model.snapshot_modules():
            with torch.no_grad():
                predictions = module(*prompts, last_only=True)[:, 0].double().numpy()  # (B,)
                features = module.features(xs.float()).double().numpy()  # (N, k)
            mean, sem = mean_and_sem((predictions - batch.ys[:, -1]) ** 2)
            rows.append((mean, sem, mean_field_theory.two_timescale_objective(features, target)))
        for name, values in zip(curves, np.array(rows).T):
            curves[name].append(values)
    return {name: np.stack(values) for name, values in curves.items()}


def final_angles(inputs: TheoryInputs, label: str, xs) -> np.ndarray:
    """The largest principal angle (degrees) between the final span(h_μ) and span(f°) on ``xs``, per
    seed; with more teacher features (misaligned) the angle of span(h_μ) inside span(f°)."""
    import torch

    teacher = teacher_features(inputs.setting.eval_task, xs)
    angles = []
    for model in inputs.trained(label):
        with torch.no_grad():
            features = model.module.features(xs.float()).double().numpy()
        small, big = sorted((features, teacher), key=lambda a: a.shape[1])
        angles.append(np.degrees(mean_field_theory.largest_principal_angle(big, small)))
    return np.array(angles)


def theory(inputs: TheoryInputs) -> xr.Dataset:
    import torch

    setting, labels = inputs.setting, inputs.setting.labels
    gen = torch.Generator().manual_seed(THEORY_SEED)
    xs = torch.randn(setting.analysis["samples"], setting.eval_task.d, generator=gen, dtype=torch.float64)
    curves = {label: snapshot_curves(inputs, label, xs) for label in labels}
    steps = inputs.trained(labels[0])[0].snapshot_steps
    dims, k = ("trained", "seed", "step"), setting.training_job(labels[0]).model["k"]
    return xr.Dataset(
        {
            "training_risk": (dims, np.stack([curves[label]["risk"] for label in labels])),
            "training_risk_sem": (dims, np.stack([curves[label]["risk_sem"] for label in labels])),
            "population_risk": (dims, np.stack([curves[label]["population"] for label in labels])),
            "principal_angle": (("trained", "seed"), np.stack([final_angles(inputs, label, xs) for label in labels])),
            "global_minimum_risk": global_minimum_risk(setting.eval_task, k, xs),
        },
        coords={"trained": labels, "seed": setting.seeds, "step": steps},
    )


EXPERIMENT = Experiment(name="mean_field", sweep=sweep, theory=theory)
