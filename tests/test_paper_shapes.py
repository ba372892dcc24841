"""A paper-shape slice: for every model family of the paper tier, its largest training shape (d, n, widths, depths,
heads, tokens: the most work a prompt) trained for one step and saved, then read back the way an evaluation reads
it and run on three prompts at the full length.

Only the work is cut, as in the smoke run (``iclab.pipeline.smoke``), and more: two prompts a batch (the batch is an
axis no code path branches on; the smoke run measures every shape at its full batch), the two-stage fit's stage 1 on one
chunk of two prompts. Its stage 2 at the paper's width (a 16,384² Gram matrix, a minute's solve) is left to the
smoke run."""

from pathlib import Path

import numpy as np
import pytest

from iclab.compute import cluster
from iclab.config import load
from iclab.pipeline.evaluate import predict
from iclab.fit.fitters import FITTERS, fitter
from iclab.store.jobs import TrainJob
from iclab.models import numpy_predictor
from iclab.pipeline.plan import build_plan
from iclab.pipeline.smoke import full_shape_from_step_one
from iclab.tasks import task_from_dict
from iclab.tasks.samplers import eval_set
from iclab.store.trained import TrainedModel, save_model

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = tuple(FITTERS)  # every model family that trains
BATCH, STEPS, PROMPTS = 2, 1, 3


def work_per_prompt(spec: dict) -> float:
    """FLOPs a training prompt costs (the two-stage fit: stage 1's points × neurons × dimensions)."""
    if spec["model"]["name"] == "two_stage":
        return spec["model"]["width"] * spec["task"]["n_points"] * spec["task"]["d"]
    return cluster.model_size(spec).flops_per_step / spec["train"]["batch_size"]


@pytest.fixture(scope="module")
def largest() -> dict[str, dict]:
    """Each family's training spec of the most work a prompt in the paper tier."""
    plan = build_plan(load(ROOT / "config/paper.yaml"))
    best: dict[str, dict] = {}
    for job in plan.train.values():
        spec = job.to_dict()
        name = spec["model"]["name"]
        if name not in best or work_per_prompt(spec) > work_per_prompt(best[name]):
            best[name] = spec
    return best


def sliced(spec: dict) -> dict:
    """The spec with its shapes kept and its work cut to ``STEPS`` steps of ``BATCH`` prompts."""
    train = dict(spec["train"])
    if spec["model"]["name"] == "two_stage":
        train |= {"t1": BATCH, "t2": 0, "chunk": BATCH, "max_chunks": 1}
    else:
        train |= {"steps": STEPS, "batch_size": BATCH}
    if train.get("curriculum"):
        train["curriculum"] = full_shape_from_step_one(train["curriculum"])
    if "gamma_prompts" in train:
        train |= {"gamma_prompts": BATCH, "snapshot_every": None}
    return spec | {"train": train}


def test_the_slice_covers_every_family_of_the_paper_tier(largest):
    assert set(largest) == set(FAMILIES)


@pytest.mark.parametrize("family", FAMILIES)
def test_the_largest_paper_shape_trains_and_predicts(largest, family: str, tmp_path: Path):
    job = TrainJob.from_dict(sliced(largest[family]))
    if job.batched:  # the paper tier's GPT-2s train in batched groups: this one as a group of one
        from iclab.fit.sgd import fit_group

        [(model, record)], _ = fit_group([job], log_every=STEPS)
    else:
        model, record = fitter(family).fit(job, checkpoint=None, log_every=STEPS)
    path = tmp_path / f"{job.hash}.nc"
    save_model(path, job, model, record)
    trained = TrainedModel.open(path)
    task = task_from_dict(job.task)
    batch = eval_set(task, seed=0, n_prompts=PROMPTS)
    limit = getattr(trained.module, "max_points", None)
    ys_hat = predict(numpy_predictor(trained.module, PROMPTS), batch, limit)  # (B, K)
    k = task.n_points if limit is None else min(limit, task.n_points)
    assert ys_hat.shape == (PROMPTS, task.n_points)
    assert np.isfinite(ys_hat[:, :k]).all()
