"""Oko, Song, Suzuki, Wu 2024, §5: in-context learning of single-index tasks in an r-dimensional
subspace of R^d by the two-stage transformer, against learners that see only the test prompt.

Cases: (a) r fixed, d varied; (b) d fixed, r varied (one ``case`` coordinate, e.g. "d=16, r=2").
Per case, the two-stage model is pretrained per seed (T₁ = t1_scale·d^{Q+1} prompts for stage 1,
the theory's rate; T₂ for stage 2) on prompts with n = n_pretrain_scale·d^n_pretrain_power
examples (theory: n = Ω̃(d^Q)), and tested on prompts with up to n_test examples; kernel ridge
regression and a two-layer network (``iclab.learners.prompt_only``) see only the test prompt. The claim:
the two-stage risk at a given n* does not depend on d, the test-prompt-only learners' does, and
the risk grows with r. The evaluation pools n* in bins (``position_bins``) against the labels'
heavy tails.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from iclab.experiments.base import Experiment, SweepPoint, TheoryInputs, gpt2_spec, log_position_bins
from iclab.tasks import SingleIndexTask


def case_label(d: int, r: int) -> str:
    return f"d={d}, r={r}"


def cases(cfg: dict[str, Any]) -> list[tuple[int, int]]:
    """(d, r) of part (a), then those of part (b) not already in (a)."""
    vary_d = [(d, cfg["r_fixed"]) for d in cfg["d_values"]]
    vary_r = [(cfg["d_fixed"], r) for r in cfg["r_values"]]
    return list(dict.fromkeys(vary_d + vary_r))


def task_for(cfg: dict[str, Any], d: int, r: int, n_points: int) -> SingleIndexTask:
    return SingleIndexTask(d=d, r=r, n_points=n_points, q=cfg["q"], p=cfg["p"], sigma=cfg["sigma"])


def pretrain_points(cfg: dict[str, Any], d: int) -> int:
    """Context examples per pretraining prompt in dimension d: n_pretrain_scale·d^n_pretrain_power."""
    return max(1, int(round(cfg["n_pretrain_scale"] * d ** cfg["n_pretrain_power"])))


def two_stage_train(cfg: dict[str, Any], d: int) -> dict[str, Any]:
    """The TwoStageConfig of dimension d: T₁ = t1_scale·d^{Q+1}."""
    train = dict(cfg["train"])
    train["t1"] = int(round(train.pop("t1_scale") * d ** (cfg["q"] + 1)))
    return train


def learners(cfg: dict[str, Any], d: int) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The two-stage model, and GPT-2 (trained on the same prompts) when configured."""
    models = [{"name": "two_stage", "width": cfg["width"]}]
    model_train = {"two_stage": two_stage_train(cfg, d)}
    if "gpt2" in cfg:
        models.append(gpt2_spec(cfg["gpt2"]["model"], cfg["n_test"] + 1))
        model_train["gpt2"] = cfg["gpt2"]["train"]
    return models, model_train


MIN_LENGTH = 4  # shorter test prompts: the two-stage model's 1/n* average is far above the zero predictor
BINS_PER_OCTAVE = 3


def position_bins(n_points: int) -> list[tuple[int, int]]:
    """Test prompt lengths n* = 4..n_test pooled in bins, three per doubling (the evaluation's binned_risk):
    the labels' heavy tails make single positions noisy, and the queries of a bin are independent."""
    return log_position_bins(MIN_LENGTH, n_points - 1, BINS_PER_OCTAVE)


def sweep(cfg: dict[str, Any]) -> list[SweepPoint]:
    """One point per (d, r). GPT-2 trains on prompts of the test length n_test + 1 (its position
    embeddings cover them; the two-stage model's pretraining prompts, n = n_pretrain_scale·d^power, may be
    longer), with the same task family."""
    points = []
    for d, r in cases(cfg):
        models, model_train = learners(cfg, d)
        test_task = task_for(cfg, d, r, cfg["n_test"] + 1).to_dict()
        points.append(
            SweepPoint(
                coords={"case": case_label(d, r)},
                task=task_for(cfg, d, r, pretrain_points(cfg, d) + 1).to_dict(),
                models=models,
                train=model_train["two_stage"],
                eval_task=test_task,
                model_train=model_train,
                model_task={"gpt2": test_task} if "gpt2" in cfg else {},
            )
        )
    return points


def stage1_variables(inputs: TheoryInputs) -> xr.Dataset:
    """The two-stage models' stage-1 subspace diagnostics (from their fit), per seed."""
    records = [model.record for model in inputs.trained("two_stage")]
    return xr.Dataset(
        {
            "principal_cosines": (("seed", "principal_angle"), np.stack([r.principal_cosines.values for r in records])),
            "subspace_energy": (("seed",), [float(r.subspace_energy) for r in records]),
            "subspace_energy_chance": float(records[0].subspace_energy_chance),
        },
        coords={"seed": inputs.setting.seeds, "principal_angle": records[0].principal_angle.values},
    )


def theory(inputs: TheoryInputs) -> xr.Dataset:
    """No closed-form risk curve exists (the paper gives rates with unspecified constants): the
    stage-1 diagnostics of the trained models, and the case's d and r."""
    task = inputs.setting.eval_task
    return stage1_variables(inputs).assign(d=task.d, r=task.r)


EXPERIMENT = Experiment(name="single_index", sweep=sweep, theory=theory, position_bins=position_bins)
