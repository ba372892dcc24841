"""Nonparametric ICL (Kim, Nakamaki, Suzuki 2024): the task family against Monte Carlo, the known-basis posterior
mean against numpy.linalg, the theory against Monte Carlo and a hand-built orthonormal design, the finite
pretraining set as a pure function of (seed, T), and the feature-map attention under the learner contract."""

import numpy as np
import pytest
import torch
import yaml
from conftest import REPO

from iclab.learners.baselines import basis_bayes
from iclab.errors import ExperimentError
from iclab.experiments import experiment
from iclab.experiments.nonparametric_icl.rates import fitted_slope
from iclab.models import build_model
from iclab.models.prompts import bilinear_readout, context_means
from iclab.tasks import NonparametricTask
from iclab.tasks.samplers import batch_generator, eval_set, pretraining_batch, pretraining_set, sample
from iclab.tasks.samplers.nonparametric import features
from iclab.theory import nonparametric as theory

SMALL = dict(d=2, n_basis=8, max_frequency=1, s=1.0, sigma=0.5)  # all 8 products of {1, √2cos, √2sin}, but 1


def task(n_points=9, **changes):
    return NonparametricTask(n_points=n_points, **(SMALL | changes))


def test_the_basis_is_orthonormal_and_its_order_a_function_of_the_seed():
    t = task(max_frequency=2, n_basis=20)
    xs = torch.rand(400_000, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    f = features(t, xs).numpy()  # (S, J)
    np.testing.assert_allclose(f.T @ f / len(f), np.eye(20), atol=6 * np.sqrt(4 / len(f)))  # entries' sd ≤ 2/√S
    assert len({tuple(map(tuple, np.stack(t.basis, -1)[j])) for j in range(20)}) == 20  # distinct functions
    np.testing.assert_array_equal(task(max_frequency=2, n_basis=20).basis[0], t.basis[0])
    assert not np.array_equal(task(max_frequency=2, n_basis=20, basis_seed=1).basis[0], t.basis[0])


def test_too_many_basis_functions_is_an_error_naming_the_key():
    with pytest.raises(ValueError, match="n_basis 9 exceeds the 8 basis functions.*allowed: n_basis <= 8"):
        task(n_basis=9)


def test_coefficient_variances_and_noise_by_monte_carlo():
    """Two independent halves of a long prompt estimate β_j without bias, so E[β̂ⱼ⁽¹⁾β̂ⱼ⁽²⁾] = λⱼ; the least-squares
    residual on the true features estimates σ² without bias (RSS / (n − J))."""
    t = task(n_points=2000)
    batch = sample(t, 600, batch_generator(0, 1, 0))
    f = features(t, torch.as_tensor(batch.xs)).numpy()  # (B, n, J)
    half = t.n_points // 2
    first = np.einsum("bkj,bk->bj", f[:, :half], batch.ys[:, :half]) / half
    second = np.einsum("bkj,bk->bj", f[:, half:], batch.ys[:, half:]) / half
    products = first * second  # (B, J)
    se = products.std(axis=0, ddof=1) / np.sqrt(len(products))
    assert np.all(np.abs(products.mean(axis=0) - t.variances) < 4 * se + 1e-12)
    np.testing.assert_allclose(t.variances.sum(), 1.0)
    np.testing.assert_allclose(t.variances[1:] / t.variances[:-1], (np.arange(2, 9) / np.arange(1, 8)) ** -3.0)
    coef, rss, *_ = zip(*(np.linalg.lstsq(f[b], batch.ys[b], rcond=None) for b in range(len(f))))
    noise = np.array(rss)[:, 0] / (t.n_points - t.n_basis)  # (B,)
    assert abs(noise.mean() - t.sigma**2) < 4 * noise.std(ddof=1) / np.sqrt(len(noise))


def test_basis_bayes_is_the_posterior_mean_by_numpy_linalg():
    t = task(n_points=7)
    batch = eval_set(t, 3, 4)
    predictions = basis_bayes(t)(batch.xs, batch.ys)  # (B, K)
    lam = np.diag(t.variances)
    for b in range(4):
        f = features(t, torch.as_tensor(batch.xs[b])).numpy()  # (K, J)
        for k in range(7):
            precision = f[:k].T @ f[:k] / t.sigma**2 + np.linalg.inv(lam)
            mean = np.linalg.solve(precision, f[:k].T @ batch.ys[b, :k] / t.sigma**2)
            np.testing.assert_allclose(predictions[b, k], f[k] @ mean, rtol=1e-9, atol=1e-12)


def test_bayes_risk_curve_against_monte_carlo():
    t = task(n_points=9)
    designs = features(t, torch.rand(3000, 8, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64))
    risk, sem = theory.bayes_risk_curve(designs.numpy(), t.variances, t.sigma)
    batch = eval_set(t, 5, 20_000)
    errors = (basis_bayes(t)(batch.xs, batch.ys) - batch.ys) ** 2  # (B, K)
    mc, mc_se = errors.mean(axis=0), errors.std(axis=0, ddof=1) / np.sqrt(len(errors))
    assert np.all(np.abs(mc - risk) < 4 * np.hypot(mc_se, sem))
    assert risk[0] == pytest.approx(1 + t.sigma**2) and np.all(np.diff(risk) < 0)


def test_attention_risk_and_its_optimum_against_monte_carlo():
    """The closed form of E(y_q − z_nᵀΓf_q)² (A_n with M₄) against prompts of the task, at Γ_n and at the single Γ."""
    t, n = task(n_points=6), 5
    xs = torch.rand(400_000, 2, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    m4 = theory.fourth_moment(features(t, xs).numpy(), t.variances)
    args = (t.variances, t.sigma, m4)
    batch = eval_set(t, 6, 40_000)
    f = features(t, torch.as_tensor(batch.xs))  # (B, K, J)
    z = context_means(f, torch.as_tensor(batch.ys))  # (B, K, J)
    for gamma in (theory.attention_optimum(n, *args), theory.single_gamma(n, *args)):
        errors = ((bilinear_readout(z, torch.as_tensor(gamma), f).numpy() - batch.ys)[:, n]) ** 2  # (B,)
        se = errors.std(ddof=1) / np.sqrt(len(errors))
        assert abs(errors.mean() - theory.attention_risk(gamma, n, *args)) < 4 * se
    best = theory.attention_optimum(n, *args)
    bump = np.random.default_rng(0).standard_normal(best.shape) * 1e-3
    assert theory.attention_risk(best + bump, n, *args) > theory.attention_risk(best, n, *args)
    assert theory.attention_risk(best, n, *args) < theory.attention_risk(theory.single_gamma(n, *args), n, *args)


def mean_risk(gamma: np.ndarray, n_max: int, *args) -> float:
    """The risk averaged over context lengths 1..n_max (the loss at every position), from ``attention_risk``."""
    return float(np.mean([theory.attention_risk(gamma, n, *args) for n in range(1, n_max + 1)]))


def numerical_gradient(f, gamma: np.ndarray, step: float = 1e-5) -> np.ndarray:
    """Central differences of f at ``gamma``, entry by entry: (J, J)."""
    grad = np.zeros_like(gamma)
    for index in np.ndindex(gamma.shape):
        bump = np.zeros_like(gamma)
        bump[index] = step
        grad[index] = (f(gamma + bump) - f(gamma - bump)) / (2 * step)
    return grad


def test_the_single_gamma_minimises_the_risk_averaged_over_every_context_length():
    """Its defining property (the nonparametric claims' reference): at ``single_gamma(n_max)`` the averaged risk has
    zero gradient and rises along every perturbation; the Γ of one length too many (or too few) has a gradient there.
    The averaged closed form also matches Monte Carlo on the task's prompts, position by position."""
    t, n_max = task(n_points=6), 5
    xs = torch.rand(400_000, 2, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    args = (t.variances, t.sigma, theory.fourth_moment(features(t, xs).numpy(), t.variances))
    objective = lambda g: mean_risk(g, n_max, *args)  # noqa: E731
    best = theory.single_gamma(n_max, *args)
    scale = np.abs(numerical_gradient(objective, theory.single_gamma(n_max + 1, *args))).max()
    assert scale > 1e-4
    assert np.abs(numerical_gradient(objective, best)).max() < 1e-3 * scale
    assert np.abs(numerical_gradient(objective, theory.single_gamma(n_max - 1, *args))).max() > 0.1 * scale
    rng = np.random.default_rng(1)
    for _ in range(20):
        bump = 1e-2 * rng.standard_normal(best.shape)
        assert objective(best + bump) > objective(best) < objective(best - bump)
    batch = eval_set(t, 7, 40_000)
    f = features(t, torch.as_tensor(batch.xs))  # (B, K, J)
    z = context_means(f, torch.as_tensor(batch.ys))  # (B, K, J)
    errors = ((bilinear_readout(z, torch.as_tensor(best), f).numpy() - batch.ys)[:, 1 : n_max + 1]) ** 2  # (B, n_max)
    averaged = errors.mean(axis=1)  # (B,): each prompt's risk over positions 1..n_max
    se = averaged.std(ddof=1) / np.sqrt(len(averaged))
    assert abs(averaged.mean() - objective(best)) < 4 * se


def test_attention_on_the_true_features_is_the_posterior_mean_on_an_orthonormal_design():
    """Hand-built: on the 4×4 grid the basis (frequency 1) is exactly orthonormal, FᵀF = nI, so z = Fᵀy/n and the
    posterior mean (FᵀF + σ²Λ⁻¹)⁻¹Fᵀy = Λ(Λ + σ²/n)⁻¹z: φ = f° with Γ = Λ(Λ + σ²/n)⁻¹ is ridge on the true features."""
    t = task()
    grid = np.stack(np.meshgrid(np.arange(4) / 4, np.arange(4) / 4), -1).reshape(16, 2)
    f = features(t, torch.as_tensor(grid)).numpy()
    np.testing.assert_allclose(f.T @ f / 16, np.eye(8), atol=1e-12)
    rng = np.random.default_rng(3)
    query = rng.uniform(size=(1, 2))
    xs = np.concatenate([grid, query])[None]  # (1, 17, 2)
    ys = rng.standard_normal((1, 17))
    lam = np.diag(t.variances)
    gamma = lam @ np.linalg.inv(lam + t.sigma**2 / 16 * np.eye(8))
    phi = features(t, torch.as_tensor(xs))
    attention = bilinear_readout(context_means(phi, torch.as_tensor(ys)), torch.as_tensor(gamma), phi)[0, -1]
    assert float(attention) == pytest.approx(basis_bayes(t)(xs, ys)[0, -1], rel=1e-10)


def test_the_pretraining_set_is_a_pure_function_of_seed_and_size():
    t = task()
    small, large = pretraining_set(t, 4, 300), pretraining_set(t, 4, 700)
    np.testing.assert_array_equal(small.xs, large.xs[:300])  # a smaller set is the first prompts of a larger one
    np.testing.assert_array_equal(pretraining_set(t, 4, 300).ys, small.ys)
    assert not np.array_equal(pretraining_set(t, 5, 300).ys, small.ys)
    batch = pretraining_batch(small, 4, 17, 64)
    np.testing.assert_array_equal(batch.ys, pretraining_batch(small, 4, 17, 64).ys)
    rows = [int(np.flatnonzero((small.ys == row).all(axis=1))[0]) for row in batch.ys]  # every prompt from the set
    np.testing.assert_array_equal(small.xs[rows], batch.xs)
    assert not np.array_equal(pretraining_batch(small, 4, 18, 64).ys, batch.ys)


def test_feature_residual_and_angle_against_hand_computations():
    t = task(max_frequency=2, n_basis=20)
    xs = torch.rand(200_000, 2, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    basis = features(t, xs).numpy()
    mixed = basis[:, :6] @ np.random.default_rng(0).standard_normal((6, 6))  # span of the first six
    assert theory.feature_residual(mixed, basis, t.variances) == pytest.approx(t.variances[6:].sum(), abs=2e-3)
    assert theory.leading_angle(mixed, basis, 6) == pytest.approx(0.0, abs=1e-4)
    assert theory.leading_angle(basis[:, 6:12], basis, 1) == pytest.approx(90.0, abs=1.0)  # orthogonal functions


def test_fitted_slope_of_a_power_law():
    n = np.array([8.0, 16.0, 32.0, 64.0])
    assert fitted_slope(n, 3 * n ** (-2 / 3)) == pytest.approx(-2 / 3)
    np.testing.assert_allclose(fitted_slope(n, np.stack([n**-1.0, n**-0.5])), [-1.0, -0.5])
    assert np.isnan(fitted_slope(n, np.array([1.0, 0.5, -0.1, 0.2])))
    assert theory.rate_exponent(1.0) == pytest.approx(-2 / 3)


def test_feature_attention_follows_the_learner_contract():
    torch.manual_seed(0)
    model = build_model({"name": "feature_attention", "features": 4, "width": 8, "depth": 2}, 2)
    batch = eval_set(task(), 0, 5)
    xs, ys = torch.as_tensor(batch.xs, dtype=torch.float32), torch.as_tensor(batch.ys, dtype=torch.float32)
    full = model(xs, ys).detach()  # (B, K)
    assert full.shape == (5, 9) and torch.all(full[:, 0] == 0)
    torch.testing.assert_close(model(xs, ys, last_only=True)[:, 0].detach(), full[:, -1])
    changed = ys.clone()
    changed[:, 4:] += 100.0
    torch.testing.assert_close(model(xs, changed).detach()[:, :5], full[:, :5])  # no position sees its own label


@pytest.mark.parametrize(
    "change, message",
    [
        ({"n_basis": 99}, "nonparametric_icl: nonparametric task: n_basis 99 exceeds the 48 basis functions"),
        ({"angle_functions": 40}, r"angle_functions \(40\) must be at most features \(8\) and n_basis \(32\)"),
        ({"fit_from": 20}, r"fit_from \(20\) must be at most n/2 \(16\)"),
    ],
)
def test_inconsistent_keys_are_refused_when_planning_by_name(change, message):
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())["experiments"]["nonparametric_icl"] | change
    with pytest.raises(ExperimentError, match=message):
        experiment("nonparametric_icl").points(cfg)
