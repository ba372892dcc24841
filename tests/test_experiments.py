"""Experiment logic against theory (the theory hooks themselves: test_theory_hooks.py)."""

import numpy as np
import pytest

from iclab.experiments.lsa_shifts.experiment import covariate_scale
from iclab.stats.intervals import bootstrap_band
from iclab.tasks import LinearTask
from iclab.theory import lsa as lsa_theory


def test_mean_over_tasks_is_the_average_over_gaussian_tasks():
    lam, n, m, sigma = np.diag([1.5, 1.0, 0.5]), 6, 9, 0.2
    exact = lsa_theory.relu_theorem5_error(lam, n, m, sigma)
    rng = np.random.default_rng(0)
    draws = []
    for w in rng.standard_normal((20_000, 3)):
        a, cov_xy, min_risk = lsa_theory.relu_label_moments(w, lam, sigma)
        draws.append(lsa_theory.theorem5_error(lam, n, m, a=a, cov_xy=cov_xy, min_risk=min_risk))
    assert abs(np.mean(draws) - exact) < 4 * np.std(draws) / np.sqrt(len(draws))
    assert lsa_theory.mean_over_tasks(lambda w: float(w @ w), 4) == 4.0


def test_random_covariance_theory_gap_matches_monte_carlo():
    rng = np.random.default_rng(1)
    d, n, m, prompts = 3, 10, 7, 100_000
    k = lsa_theory.exponential_kq_limit(d, n, 1.0)
    lam = rng.exponential(1.0, size=(prompts, d))  # (P, d): one covariance per prompt
    xs = rng.standard_normal((prompts, m + 1, d)) * np.sqrt(lam)[:, None, :]
    w = rng.standard_normal((prompts, d))
    ys = np.einsum("bkd,bd->bk", xs, w)
    h = np.einsum("bmd,bm->bd", xs[:, :m], ys[:, :m]) / m
    y_hat = np.einsum("bd,de,be->b", xs[:, m], k, h)  # the limit model at M = m
    target = lsa_theory.limit_predictions(xs, lam, w, k)[:, m]
    measured = np.mean((y_hat - target) ** 2) / np.mean(target**2)
    assert measured == pytest.approx(lsa_theory.limit_prediction_gap(k, lam, m)[m], rel=0.05)


def test_covariate_scale_is_read_off_the_tasks():
    base = dict(d=2, n_points=3, beta_star=(0.0, 0.0), psi=1.0, sigma=0.0, covariance="diagonal")
    train_task = LinearTask(**base, covariance_values=(1.0, 2.0))
    assert covariate_scale(LinearTask(**base, covariance_values=(9.0, 18.0)), train_task) == pytest.approx(3.0)
    assert np.isnan(covariate_scale(LinearTask(**base, covariance_values=(9.0, 2.0)), train_task))
    assert np.isnan(covariate_scale(LinearTask(**base, covariance_values=(1.0, 2.0), label="relu"), train_task))


def test_random_covariance_theory_error_is_expected_error_averaged_over_covariances():
    rng = np.random.default_rng(2)
    k = lsa_theory.exponential_kq_limit(3, 10, 1.0)
    covariances = rng.exponential(1.0, size=(4, 3))
    curve = lsa_theory.limit_error_over_covariances(k, covariances, 6)
    for m in (1, 6):
        reference = np.mean([lsa_theory.expected_error(k, np.diag(lam), m) for lam in covariances])
        assert curve[m] == pytest.approx(reference, rel=1e-12)
    assert curve[0] == pytest.approx(covariances.sum(axis=1).mean())


def test_bootstrap_band_matches_the_normal_interval_for_many_prompts():
    rng = np.random.default_rng(3)
    errors = rng.exponential(2.0, size=(4000, 3))  # (B, K)
    low, high = bootstrap_band(errors)
    sem = errors.std(axis=0, ddof=1) / np.sqrt(len(errors))
    np.testing.assert_allclose(high - low, 2 * 1.6449 * sem, rtol=0.12)
    assert np.all(low < errors.mean(axis=0)) and np.all(errors.mean(axis=0) < high)


def test_hidden_size_risks_are_the_squared_errors_of_each_models_predictions():
    """probe_hidden_size's derived risks, against a per-prompt loop over hand-made predictions."""
    from iclab.experiments.base import Evaluation, Setting
    from iclab.experiments.probe_hidden_size.experiment import derived
    from iclab.tasks import Batch

    rng = np.random.default_rng(0)
    b, k, d, sizes, seeds = 50, 7, 2, [2, 8], [0, 3]
    xs, ys = rng.normal(size=(b, k, d)), rng.normal(size=(b, k))
    batch = Batch(xs=xs, ys=ys, betas=np.zeros((b, d)), covariances=np.ones((b, d)))
    models = [{"label": f"hidden_{h}", "seed": s, "hash": "", "job": {}} for h in sizes for s in seeds]
    setting = Setting("probe_hidden_size", {"d": d}, {}, {}, models, ["ols"], {"hidden_sizes": sizes})
    predictions = {(m["label"], m["seed"]): rng.normal(size=(b, k)) for m in models}
    cube = derived(Evaluation(setting=setting, data={"eval": batch}, predictions=predictions))
    for h in sizes:
        for s in seeds:
            errors = (predictions[f"hidden_{h}", s] - batch.ys) ** 2
            point = cube.sel(hidden=h, seed=s)
            np.testing.assert_allclose(point.hidden_risk, errors.mean(axis=0), rtol=1e-12)
            tail = [np.mean(errors[p, d + 1 :]) for p in range(b)]  # positions with more than d examples
            np.testing.assert_allclose(point.tail_risk, np.mean(tail), rtol=1e-12)
            np.testing.assert_allclose(point.tail_risk_sem, np.std(tail, ddof=1) / np.sqrt(b), rtol=1e-12)
