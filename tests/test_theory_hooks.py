"""The theory hooks that put curves into the cubes, called as the theory job calls them, against
Monte Carlo of the linear-attention predictor ŷ = x_qᵀAĥ, ĥ = (1/M)Σᵢ yᵢxᵢ, on prompts sampled
here by hand (numpy), with A from the paper's formulas written out in the test.
"""

from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from conftest import REPO, hand_gamma_inverse, hand_theorem8_limit

from iclab.config import load
from iclab.experiments import experiment
from iclab.experiments.base import Setting, TheoryInputs
from iclab.fit.fitters import fitter
from iclab.store.jobs import TrainJob
from iclab.models.linear import LinearSelfAttention
from iclab.pipeline.plan import build_plan
from iclab.tasks import Batch
from iclab.store.trained import TrainedModel, save_model

TINY = REPO / "tests" / "data" / "tiny.yaml"
N_MC = 200_000


def prompts(rng, lam, m, *, lam_query=None, sigma=0.0, label="linear", n_prompts=N_MC):
    """M context points x ~ N(0, diag(lam)), a query x_q ~ N(0, diag(lam_query)), w ~ N(0, I)."""
    d = len(lam)
    lam_query = lam if lam_query is None else lam_query
    xs = rng.standard_normal((n_prompts, m, d)) * np.sqrt(lam)  # (B, M, d)
    xq = rng.standard_normal((n_prompts, d)) * np.sqrt(lam_query)  # (B, d)
    w = rng.standard_normal((n_prompts, d))  # (B, d)
    link = (lambda z: np.maximum(z, 0.0)) if label == "relu" else (lambda z: z)
    ys = link(np.einsum("bmd,bd->bm", xs, w)) + sigma * rng.standard_normal((n_prompts, m))  # (B, M)
    yq = link(np.einsum("bd,bd->b", xq, w)) + sigma * rng.standard_normal(n_prompts)  # (B,)
    return xs, ys, xq, yq


def attention_prediction(a, xs, ys, xq):
    h = np.einsum("bm,bmd->bd", ys, xs) / xs.shape[1]  # ĥ: (B, d)
    return np.einsum("bd,de,be->b", xq, a, h)  # (B,)


def assert_mc(samples: np.ndarray, expected: float, what: str) -> None:
    """The mean of ``samples`` equals ``expected`` within 4 Monte-Carlo standard errors."""
    sem = samples.std(ddof=1) / np.sqrt(len(samples))
    assert abs(samples.mean() - expected) < 4 * sem, f"{what}: {expected} vs MC {samples.mean()} ± {sem}"


def tiny_settings(name: str, **changes) -> list[Setting]:
    """The settings of experiment ``name`` of the tiny config, with ``changes`` to its section."""
    config = load(TINY)
    config["experiments"] = {name: config["experiments"][name] | changes}
    return list(build_plan(config).settings[name].values())


def no_data(name):
    raise AssertionError(f"this theory needs no data set ({name})")


# lsa_shifts: the limit model's error for every condition, and its gain


def test_lsa_shifts_theory_error_of_every_condition_matches_monte_carlo():
    rng = np.random.default_rng(0)
    settings = tiny_settings("lsa_shifts")
    assert {s.coords["condition"] for s in settings} >= {"query covariance", "orthogonal query", "relu labels"}
    for setting in settings:
        task, train_task = setting.eval_task, setting.training_task("lsa")
        n, train_lam = train_task.n_points - 1, np.asarray(train_task.covariance_values)
        a = hand_gamma_inverse(train_lam, n)
        lam = np.diag(task.h_matrix)
        lam_query = None if task.query_covariance_values is None else np.asarray(task.query_covariance_values)
        ds = experiment("lsa_shifts").theory(TheoryInputs(setting, no_data, no_data))
        m = task.n_points - 1  # the final query, after every context point
        xs, ys, xq, yq = prompts(rng, lam, m, lam_query=lam_query, sigma=task.sigma, label=task.label)
        errors = (attention_prediction(a, xs, ys, xq) - yq) ** 2
        assert_mc(errors, float(ds.theory_error[-1]), str(setting.coords))
        if lam_query is None:  # the whole curve is drawn: check a short prefix too
            xs, ys, xq, yq = prompts(rng, lam, 2, sigma=task.sigma, label=task.label)
            errors = (attention_prediction(a, xs, ys, xq) - yq) ** 2
            assert_mc(errors, float(ds.theory_error[2]), f"{setting.coords} at M = 2")


def test_lsa_shifts_theory_gain_is_the_limit_models_regression_slope():
    rng = np.random.default_rng(1)
    settings = tiny_settings("lsa_shifts")
    assert sum(s.coords["condition"].startswith("covariate") for s in settings) == 2
    for setting in settings:
        task = setting.eval_task
        ds = experiment("lsa_shifts").theory(TheoryInputs(setting, no_data, no_data))
        if np.isnan(ds.covariate_scale):  # the gain law is drawn for covariate scaling only
            assert np.isnan(ds.theory_gain)
            continue
        train_task = setting.training_task("lsa")
        a = hand_gamma_inverse(np.asarray(train_task.covariance_values), train_task.n_points - 1)
        xs, ys, xq, yq = prompts(rng, np.diag(task.h_matrix), 3, sigma=task.sigma, label=task.label)
        y_hat = attention_prediction(a, xs, ys, xq)
        # E[ŷy] = g·E[y²]  ⇔  E[ŷy − g·y²] = 0
        assert_mc(y_hat * yq - float(ds.theory_gain) * yq**2, 0.0, str(setting.coords))


# lsa_rates: the error curve of the limit and of the trained product


def lsa_with_weights(u11: np.ndarray, u_pv: float) -> LinearSelfAttention:
    d = len(u11)
    model = LinearSelfAttention(d, init="zfb")
    with torch.no_grad():
        model.w_kq.zero_()
        model.w_pv.zero_()
        model.w_kq[:d, :d] = torch.as_tensor(u11)
        model.w_pv[d, d] = u_pv
    return model.double().eval()


def test_lsa_rates_theory_matches_the_predictions_of_the_limit_and_of_the_trained_module():
    """``trained_theory_error`` is the exact error of the module's own weights: check it against
    the module's predictions (a non-symmetric U₁₁ catches a transposed product)."""
    rng = np.random.default_rng(2)
    setting = tiny_settings("lsa_rates")[0]
    task = setting.eval_task
    lam, n = np.diag(task.h_matrix), setting.coords["n"]
    u11, u_pv = np.array([[0.8, 0.5], [-0.2, 1.1]]), 0.7
    module = lsa_with_weights(u11, u_pv)
    inputs = TheoryInputs(setting, no_data, lambda _hash: SimpleNamespace(module=module))
    ds = experiment("lsa_rates").theory(inputs)
    for m in (1, 5, task.n_points - 1):
        xs = rng.standard_normal((N_MC, m + 1, len(lam))) * np.sqrt(lam)  # the query is the last point
        w = rng.standard_normal((N_MC, len(lam)))
        ys = np.einsum("bkd,bd->bk", xs, w)
        with torch.no_grad():
            y_hat = module(torch.as_tensor(xs), torch.as_tensor(ys))[:, -1].numpy()
        assert_mc((y_hat - ys[:, -1]) ** 2, float(ds.trained_theory_error.isel(seed=0)[m]), f"trained, M = {m}")
        limit = attention_prediction(hand_gamma_inverse(lam, n), xs[:, :-1], ys[:, :-1], xs[:, -1])
        assert_mc((limit - ys[:, -1]) ** 2, float(ds.theory_error[m]), f"limit, M = {m}")
    assert float(ds.theory_error[0]) == pytest.approx(lam.sum())  # M = 0: ŷ = 0
    # M → ∞: ĥ = Λw exactly
    xq, w = rng.standard_normal((N_MC, len(lam))) * np.sqrt(lam), rng.standard_normal((N_MC, len(lam)))
    floor = np.einsum("bd,de,be->b", xq, hand_gamma_inverse(lam, n) @ np.diag(lam), w) - np.einsum("bd,bd->b", xq, w)
    assert_mc(floor**2, float(ds.theory_floor), "limit floor")


# lsa_convergence: SGD step s is gradient-flow time 2ηs


def test_lsa_convergence_puts_each_sgd_snapshot_at_its_gradient_flow_time(tmp_path):
    """With loss E(ŷ − y)² and SGD step η, step s is flow time t = 2ηs (Zhang, Frei, Bartlett 2024):
    the trained LSA's distance to Γ⁻¹ at each snapshot time follows the ODE's distance there."""
    setting = tiny_settings("lsa_convergence")[1]  # the anisotropic spectrum
    spec = copy.deepcopy(setting.models[0]["job"])
    spec["train"] |= {"steps": 600, "batch_size": 4096, "lr": 0.005, "snapshot_every": 100}
    job = TrainJob.from_dict(spec)
    module, record = fitter("lsa").fit(job)
    save_model(tmp_path / "lsa.nc", job, module, record)
    trained = TrainedModel.open(tmp_path / "lsa.nc")
    setting = Setting.from_dict(
        setting.to_dict() | {"models": [{"label": "lsa", "seed": 0, "hash": job.hash, "job": job.to_dict()}]}
    )
    ds = experiment("lsa_convergence").theory(TheoryInputs(setting, no_data, lambda _hash: trained))
    np.testing.assert_allclose(ds.snapshot_time, 2 * 0.005 * np.arange(0, 601, 100))
    flow_at_snapshots = np.interp(ds.snapshot_time, ds.flow_time, ds.flow_distance)
    assert flow_at_snapshots[-1] < 0.6 * flow_at_snapshots[1], "the comparison must cover real movement"
    np.testing.assert_allclose(ds.sgd_distance.isel(seed=0), flow_at_snapshots, atol=0.03)


# zfb_figure1: the limit model of the training distribution


def test_zfb_figure1_theory_uses_each_training_distributions_limit():
    """Fixed training covariance: A = Γ_N⁻¹ (Theorem 4). Random (i.i.d. Exponential(1) diagonal):
    A = E[Λ²](E[ΓΛ²])⁻¹ (Theorem 8) = 2/(6(1 + 1/N) + (6 + 2(d − 1))/N)·I, by E λᵏ = k!."""
    rng = np.random.default_rng(3)
    settings = tiny_settings("zfb_figure1", train_covariances=["fixed", "random"])
    for setting in settings:
        if setting.coords["test"] != "fixed":
            continue
        d, n = setting.eval_task.d, setting.coords["n"]
        m = setting.eval_task.n_points - 1
        lam = np.ones(d)
        xs, ys, xq, yq = prompts(rng, lam, m)
        batch = Batch(  # the theory reads the prompts' length and covariances
            xs=np.concatenate([xs, xq[:, None]], axis=1),
            ys=np.concatenate([ys, yq[:, None]], axis=1),
            betas=np.zeros((N_MC, d)),
            covariances=np.ones((N_MC, d)),
        )
        ds = experiment("zfb_figure1").theory(TheoryInputs(setting, lambda _name: batch, no_data))
        if setting.coords["train"] == "fixed":
            a = hand_gamma_inverse(lam, n)
        else:
            a = hand_theorem8_limit(d, n)
        errors = (attention_prediction(a, xs, ys, xq) - yq) ** 2
        assert_mc(errors / d, float(ds.lsa_limit_error[m]), str(setting.coords))
    assert {s.coords["train"] for s in settings} == {"fixed", "random"}
