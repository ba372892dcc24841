"""Training: learns the optimum, resumes after a kill to the identical cube, is deterministic,
and stops with a clear error on divergence."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
import xarray as xr
from conftest import REPO, run_cli

from iclab import theory
from iclab.cubes import read_cube
from iclab.fit import TrainingDiverged
from iclab.fit.sgd import train
from iclab.hashing import canonical_json
from iclab.jobs import TrainJob
from iclab.models import build_model
from iclab.tasks import LinearTask
from iclab.trained import TrainedModel

TASK = LinearTask(d=3, n_points=9, beta_star=(1.0, 0.0, -1.0), psi=1.0, sigma=0.5)


def job(name="gd_beta", steps=300, lr=0.02, seed=0, **train_kw):
    return TrainJob.from_dict(
        {
            "model": {"name": name, "init_scale": 0.0 if name == "gd_beta" else 0.1},
            "task": TASK.to_dict(),
            "train": {"steps": steps, "batch_size": 256, "lr": lr, **train_kw},
            "seed": seed,
        }
    )


def test_gd_beta_training_reaches_the_closed_form_optimum():
    model, losses, _ = train(job(steps=1500))
    opt = theory.gd_beta_optimum(
        beta_star=np.asarray(TASK.beta_star), psi=TASK.psi_matrix, h=TASK.h_matrix, sigma=TASK.sigma, n=8
    )
    beta0, gamma = model.beta0.detach().numpy(), model.gamma.detach().numpy()
    risk = theory.gd_beta_risk(
        beta0, gamma, beta_star=np.asarray(TASK.beta_star), psi=TASK.psi_matrix, h=TASK.h_matrix, sigma=TASK.sigma, n=8
    )
    assert risk == pytest.approx(opt.risk, rel=0.01)
    np.testing.assert_allclose(beta0, opt.beta0, atol=0.1)
    assert losses[-200:].mean() == pytest.approx(opt.risk, rel=0.05)


def test_divergence_is_a_clear_error():
    with pytest.raises(TrainingDiverged, match=r"lower train\.lr"):
        train(job(name="lsa", steps=200, lr=50.0, optimizer="sgd", schedule="constant"))


def test_same_spec_twice_gives_identical_cubes(tmp_path: Path):
    spec = canonical_json(job(name="ltb", steps=60).to_dict())
    for name in ("a.nc", "b.nc"):
        run_cli("train", "--spec", spec, "--out", str(tmp_path / name))
    a, b = read_cube(tmp_path / "a.nc"), read_cube(tmp_path / "b.nc")
    xr.testing.assert_identical(a, b)


def test_checkpoint_of_another_job_is_ignored(tmp_path: Path):
    ckpt = tmp_path / "ckpt.pt"
    train(job(steps=40, seed=1), checkpoint=ckpt, checkpoint_every=20)
    assert ckpt.is_file()
    _, losses_fresh, _ = train(job(steps=40, seed=2))
    _, losses_ckpt, _ = train(job(steps=40, seed=2), checkpoint=ckpt, checkpoint_every=1000)
    np.testing.assert_array_equal(losses_ckpt, losses_fresh)


def test_killed_job_resumes_to_the_identical_cube(tmp_path: Path):
    spec = canonical_json(job(name="ltb", steps=1500, snapshot_every=100).to_dict())
    reference = tmp_path / "reference.nc"
    run_cli("train", "--spec", spec, "--out", str(reference))

    out, ckpt = tmp_path / "resumed.nc", tmp_path / "ckpt.pt"
    args = [
        sys.executable,
        "-m",
        "iclab",
        "train",
        "--spec",
        spec,
        "--out",
        str(out),
        "--checkpoint",
        str(ckpt),
        "--checkpoint-every",
        "50",
        "--log-every",
        "50",
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(args, cwd=REPO, env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not ckpt.is_file() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert ckpt.is_file() and not out.exists(), "the job must be killed mid-way, after a checkpoint"
    killed_at = torch.load(ckpt, weights_only=False)["step"]
    assert 0 < killed_at < 1500

    resumed = run_cli(
        "train", "--spec", spec, "--out", str(out), "--checkpoint", str(ckpt), "--checkpoint-every", "100"
    )
    assert f"resuming from checkpoint {ckpt} at step" in resumed.stderr
    assert not ckpt.exists(), "the checkpoint is removed once the cube is written"
    xr.testing.assert_identical(read_cube(out), read_cube(reference))


def test_trained_model_reloads_from_its_cube(tmp_path: Path):
    spec = job(name="lsa", steps=30)
    path = tmp_path / "m.nc"
    run_cli("train", "--spec", json.dumps(spec.to_dict()), "--out", str(path))
    trained = TrainedModel.open(path)
    assert trained.job == spec and trained.label == "lsa" and trained.seed == spec.seed
    model = trained.module
    ds = read_cube(path)
    assert ds.loss.dims == ("step",) and ds.sizes["step"] == 30
    np.testing.assert_array_equal(model.w_kq.detach().numpy(), ds["param__w_kq"].values)


def test_snapshots_hold_the_parameters_at_their_steps():
    short, _, _ = train(job(name="lsa", steps=40, schedule="constant"))
    model, _, snapshots = train(job(name="lsa", steps=100, snapshot_every=40, schedule="constant"))
    assert snapshots.steps == [0, 40, 80, 100]
    np.testing.assert_array_equal(snapshots.params["w_kq"][-1], model.w_kq.detach().numpy())
    # With a constant learning rate, step 40 of a longer run is the end of a 40-step run.
    np.testing.assert_array_equal(snapshots.params["w_kq"][1], short.w_kq.detach().numpy())
    torch.manual_seed(0)
    initial = build_model(job(name="lsa").model, TASK.d)
    np.testing.assert_array_equal(snapshots.params["w_pv"][0], initial.w_pv.detach().numpy())
