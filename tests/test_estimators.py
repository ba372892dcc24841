"""Estimators against straightforward per-prompt, per-prefix numpy.linalg references."""

import numpy as np
import pytest

from iclab import numerics
from iclab.learners import estimators

B, K, D = 3, 9, 5  # prefixes k = 0..8 cover k < d, k = d and k > d


def make_prompts(seed: int, batch: int = B, n_points: int = K, d: int = D):
    """Gaussian prompts with a non-identity covariance and noisy linear labels."""
    rng = np.random.default_rng(seed)
    factor = rng.standard_normal((d, d)) / np.sqrt(d) + np.eye(d)  # (d, d)
    xs = rng.standard_normal((batch, n_points, d)) @ factor.T  # (B, K, d)
    beta = rng.standard_normal((batch, d))  # (B, d)
    ys = np.einsum("bkd,bd->bk", xs, beta) + 0.3 * rng.standard_normal((batch, n_points))
    return xs, ys


def random_spd(rng: np.random.Generator, d: int) -> np.ndarray:
    a = rng.standard_normal((d, d))
    return a @ a.T / d + 0.5 * np.eye(d)


def per_prefix(weights, xs, ys):
    """Loop reference: prediction xs[b, k] · weights(X, y) with X, y the first k examples."""
    out = np.empty(ys.shape)
    for b in range(xs.shape[0]):
        for k in range(xs.shape[1]):
            out[b, k] = xs[b, k] @ weights(xs[b, :k], ys[b, :k])
    return out


def assert_close(actual, expected, rtol=1e-8):
    assert actual.dtype == np.float64 and actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * np.abs(expected).max())


def ols_weights(X, y):
    return np.linalg.lstsq(X, y, rcond=None)[0] if len(X) else np.zeros(X.shape[1])


def gd_weights(X, y, steps, lr, normalize):
    w = np.zeros(X.shape[1])
    for _ in range(steps):
        gradient = X.T @ (X @ w - y)
        w = w - lr * (gradient / len(X) if normalize and len(X) else gradient)
    return w


def newton_weights(X, y, iterations):
    S = X.T @ X
    if not S.any():
        return np.zeros(X.shape[1])
    M = S / np.linalg.norm(S @ S.T, "fro")
    for _ in range(iterations):
        M = 2 * M - M @ S @ M
    return M @ X.T @ y


def test_zero():
    xs, ys = make_prompts(0)
    out = estimators.zero(xs, ys)
    assert out.dtype == np.float64 and out.shape == (B, K) and not out.any()


def test_ols_matches_lstsq():
    xs, ys = make_prompts(1)
    assert_close(estimators.ols(xs, ys), per_prefix(ols_weights, xs, ys))


def test_ols_by_updates_is_the_pseudo_inverse_of_every_prefix_to_round_off():
    """The factorisation updated one example at a time against a pseudo-inverse per prefix, at the paper's
    d = 20 and 41 points, and where K − 1 ≤ d."""
    rng = np.random.default_rng(11)
    for batch, n_points, d in [(300, 41, 20), (50, 8, 20), (50, 21, 20)]:
        xs, ys = rng.standard_normal((batch, n_points, d)), rng.standard_normal((batch, n_points))
        expected = estimators._pinv_prefix_weights(xs, ys)
        atol = 1e-10 * np.abs(expected).max()
        np.testing.assert_allclose(estimators.ols_weights(xs, ys), expected, rtol=0, atol=atol)


def test_ols_with_dependent_examples_is_minimum_norm_least_squares():
    """Covariates with zero coordinates (a rank-deficient H) and a repeated example, in one batch with generic
    prompts: each prompt matches lstsq (minimum norm) on every prefix."""
    xs, ys = make_prompts(12, batch=6, n_points=3 * D)
    xs[0, :, D - 2 :] = 0.0  # rank d − 2 throughout
    xs[1, 2] = xs[1, 1]  # a repeated example before d
    xs[2, 1] = 2.0 * xs[2, 0]  # collinear
    assert_close(estimators.ols(xs, ys), per_prefix(ols_weights, xs, ys))


def test_ols_exact_at_k_equal_d_with_ill_conditioned_prefix():
    xs, ys = make_prompts(2, batch=1, n_points=D + 1)
    xs[0, D - 1] = xs[0, D - 2] + 1e-6 * np.random.default_rng(2).standard_normal(D)  # κ(X[:d]) ~ 1e6
    out = estimators.ols(xs, ys)
    assert_close(out, per_prefix(ols_weights, xs, ys), rtol=1e-7)
    w = np.linalg.solve(xs[0, :D], ys[0, :D])  # square system: interpolates
    assert out[0, D] == pytest.approx(xs[0, D] @ w, rel=1e-6)


@pytest.mark.parametrize("lam", [1e-3, 0.7, 50.0])
def test_ridge_matches_solve(lam):
    xs, ys = make_prompts(3)

    def weights(X, y):
        return np.linalg.solve(X.T @ X + lam * np.eye(D), X.T @ y)

    assert_close(estimators.ridge(xs, ys, lam=lam), per_prefix(weights, xs, ys))


def test_bayes_matches_solve():
    rng = np.random.default_rng(4)
    xs, ys = make_prompts(4)
    beta_star, psi, sigma = rng.standard_normal(D), random_spd(rng, D), 0.4
    psi_inv = np.linalg.inv(psi)

    def weights(X, y):
        return np.linalg.solve(X.T @ X / sigma**2 + psi_inv, X.T @ y / sigma**2 + psi_inv @ beta_star)

    out = estimators.bayes(xs, ys, beta_star=beta_star, psi=psi, sigma=sigma)
    assert_close(out, per_prefix(weights, xs, ys))
    np.testing.assert_allclose(out[:, 0], xs[:, 0] @ beta_star, rtol=1e-12)


def test_bayes_with_isotropic_prior_at_zero_is_ridge():
    xs, ys = make_prompts(5)
    sigma, lam = 0.5, 0.3
    out = estimators.bayes(xs, ys, beta_star=np.zeros(D), psi=sigma**2 / lam * np.eye(D), sigma=sigma)
    assert_close(out, estimators.ridge(xs, ys, lam=lam), rtol=1e-10)


@pytest.mark.parametrize(
    ("steps", "lr", "normalize"),
    [(0, 0.05, False), (1, 0.05, False), (7, 0.01, False), (25, 0.05, False), (9, 0.06, False), (12, 0.3, True)],
)
def test_gd_matches_loop(steps, lr, normalize):
    # lr·λ_max(S) spans < 0.5, 0.5..1 and 1..2 (oscillating) across these cases
    xs, ys = make_prompts(6)
    out = estimators.gd(xs, ys, steps=steps, lr=lr, normalize=normalize)
    assert_close(out, per_prefix(lambda X, y: gd_weights(X, y, steps, lr, normalize), xs, ys))


def test_gd_divergent_step_matches_loop():
    xs, ys = make_prompts(7)
    out = estimators.gd(xs, ys, steps=15, lr=0.5)
    assert np.abs(out[:, -1]).max() > 1e6  # lr·λ_max ≫ 2: the iteration blows up, and so does gd
    assert_close(out, per_prefix(lambda X, y: gd_weights(X, y, 15, 0.5, False), xs, ys))


@pytest.mark.parametrize("iterations", [0, 1, 3, 8])
def test_newton_matches_loop(iterations):
    xs, ys = make_prompts(8)
    out = estimators.newton(xs, ys, iterations=iterations)
    assert_close(out, per_prefix(lambda X, y: newton_weights(X, y, iterations), xs, ys))


def test_newton_and_gd_converge_to_ols():
    xs, ys = make_prompts(9, n_points=4 * D)
    expected = estimators.ols(xs, ys)
    # both stay in the row space of X, so they reach the minimum-norm solution also for k < d
    assert_close(estimators.newton(xs, ys, iterations=60), expected, rtol=1e-10)
    assert_close(estimators.gd(xs, ys, steps=10**6, lr=0.01)[:, :D], expected[:, :D], rtol=1e-9)
    # λ_min(S) ~ 4e-5 at k = d here, hence the huge number of steps (free in closed form)
    assert_close(estimators.gd(xs, ys, steps=10**10, lr=0.01)[:, D:], expected[:, D:], rtol=1e-9)


def per_prefix_weights(weights, xs, ys):
    """Loop reference: weights(X, y) of the first k examples, for every prompt and prefix: (B, K, d)."""
    return np.array([[weights(xs[b, :k], ys[b, :k]) for k in range(xs.shape[1])] for b in range(xs.shape[0])])


def test_weight_grids_match_loops_at_every_count():
    xs, ys = make_prompts(12)
    steps, iterations = [0, 1, 7, 25], [0, 1, 3, 8]
    grid = estimators.gd_weights(xs, ys, steps=steps, lr=0.05)
    assert grid.shape == (len(steps), B, K, D)
    for j, s in enumerate(steps):
        assert_close(grid[j], per_prefix_weights(lambda X, y: gd_weights(X, y, s, 0.05, False), xs, ys))
    grid = estimators.newton_weights(xs, ys, iterations=iterations)
    for j, i in enumerate(iterations):
        assert_close(grid[j], per_prefix_weights(lambda X, y: newton_weights(X, y, i), xs, ys))
    assert_close(estimators.ols_weights(xs, ys), per_prefix_weights(ols_weights, xs, ys))


def test_newton_converges_to_ols_quadratically():
    """Newton's relative error to OLS obeys e_{j+1} ≤ C·e_j² at every iteration count, with
    C = (Σ_i ‖w‖²/w_i²)^½ over the coordinates w_i of w_OLS in the eigenbasis of S = XᵀX (from
    I − M_{j+1}S = (I − M_jS)²: each coordinate's error squares). Linear convergence (GD) breaks the
    bound as soon as e_j < rate/C."""
    xs, ys = make_prompts(13, batch=20, n_points=4 * D)
    path = estimators.newton_weights(xs, ys, iterations=range(40))[:, :, -1]  # last prefix, (J, B, d)
    for b in range(xs.shape[0]):
        X, y = xs[b, :-1], ys[b, :-1]
        w_ols = ols_weights(X, y)
        coords = np.linalg.eigh(X.T @ X)[1].T @ w_ols  # (d,)
        bound = np.sqrt(np.sum(w_ols @ w_ols / coords**2))
        errors = np.linalg.norm(path[:, b] - w_ols, axis=-1) / np.linalg.norm(w_ols)  # (J,)
        above_round_off = errors[1:] > 1e-11
        assert (errors[1:] <= bound * errors[:-1] ** 2 * (1 + 1e-6))[above_round_off].all(), errors
        assert errors[-1] < 1e-10


def test_online_gd_matches_loop_and_fits_each_example_it_takes():
    xs, ys = make_prompts(14)

    def loop(X, y):
        w = np.zeros(X.shape[1])
        for x_i, y_i in zip(X, y):
            w = w + (y_i - x_i @ w) * x_i / (x_i @ x_i)
        return w

    weights = estimators.online_gd_weights(xs, ys)
    assert_close(weights, per_prefix_weights(loop, xs, ys))
    assert_close(estimators.online_gd(xs, ys), per_prefix(loop, xs, ys))
    fitted = np.einsum("bkd,bkd->bk", xs[:, :-1], weights[:, 1:])  # x_iᵀw_{i+1}
    np.testing.assert_allclose(fitted, ys[:, :-1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("lr", [0.07, 1e-9])  # a tiny lr·λ must not cancel in the closed form
def test_one_gd_step_is_gd_beta_from_zero(lr):
    xs, ys = make_prompts(10)
    one_step = estimators.gd(xs, ys, steps=1, lr=lr)
    for k in range(1, K):
        out = estimators.gd_beta(xs, ys, beta0=np.zeros(D), gamma=lr * k * np.eye(D))
        np.testing.assert_allclose(out[:, k], one_step[:, k], rtol=1e-12)


def test_gd_beta_matches_loop():
    rng = np.random.default_rng(11)
    xs, ys = make_prompts(11)
    beta0, gamma = rng.standard_normal(D), rng.standard_normal((D, D))  # Γ not symmetric

    def weights(X, y):
        return beta0 + gamma @ X.T @ (y - X @ beta0) / len(X) if len(X) else beta0

    out = estimators.gd_beta(xs, ys, beta0=beta0, gamma=gamma)
    assert_close(out, per_prefix(weights, xs, ys))


def test_gd_beta_with_one_gamma_per_position_is_the_fixed_gamma_step_at_that_position():
    rng = np.random.default_rng(12)
    xs, ys = make_prompts(12)
    beta0, gammas = rng.standard_normal(D), rng.standard_normal((K, D, D))
    out = estimators.gd_beta(xs, ys, beta0=beta0, gamma=gammas)
    for k in range(K):
        fixed = estimators.gd_beta(xs, ys, beta0=beta0, gamma=gammas[k])
        np.testing.assert_allclose(out[:, k], fixed[:, k], rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match=r"\(K, d, d\)"):
        estimators.gd_beta(xs, ys, beta0=beta0, gamma=gammas[:-1])


ALL_ESTIMATORS = {
    "zero": (estimators.zero, {}),
    "ols": (estimators.ols, {}),
    "ridge": (estimators.ridge, {"lam": 0.5}),
    "bayes": (estimators.bayes, {"beta_star": np.ones(3), "psi": np.diag([1.0, 2.0, 0.5]), "sigma": 0.3}),
    "gd": (estimators.gd, {"steps": 5, "lr": 0.05, "normalize": True}),
    "newton": (estimators.newton, {"iterations": 4}),
    "online_gd": (estimators.online_gd, {}),
    "gd_beta": (estimators.gd_beta, {"beta0": np.ones(3), "gamma": np.arange(9.0).reshape(3, 3) / 9}),
}


@pytest.mark.parametrize("name", ALL_ESTIMATORS)
def test_chunking_does_not_change_results(name, monkeypatch):
    fn, kwargs = ALL_ESTIMATORS[name]
    xs, ys = make_prompts(12, batch=1100, n_points=6, d=3)
    full = fn(xs, ys, **kwargs)  # three chunks of the default size
    pieces = np.concatenate([fn(xs[i : i + 100], ys[i : i + 100], **kwargs) for i in range(0, 1100, 100)])
    np.testing.assert_allclose(full, pieces, rtol=1e-13, atol=1e-13)
    monkeypatch.setattr(numerics, "CHUNK_SIZE", 4)
    small = fn(xs[:11], ys[:11], **kwargs)
    one_by_one = np.concatenate([fn(xs[i : i + 1], ys[i : i + 1], **kwargs) for i in range(11)])
    np.testing.assert_allclose(small, one_by_one, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(small, full[:11], rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("name", ALL_ESTIMATORS)
def test_float32_and_list_inputs_give_float64(name):
    fn, kwargs = ALL_ESTIMATORS[name]
    xs, ys = make_prompts(13, n_points=6, d=3)
    xs32, ys32 = xs.astype(np.float32), ys.astype(np.float32)
    out = fn(xs32, ys32, **kwargs)
    assert out.dtype == np.float64 and out.shape == ys.shape
    np.testing.assert_array_equal(out, fn(xs32.astype(np.float64), ys32.tolist(), **kwargs))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda xs, ys: estimators.ols(xs[0], ys), r"xs must have shape \(B, K, d\)"),
        (lambda xs, ys: estimators.zero(xs, ys[:, :-1]), r"ys must have shape \(B, K\) = \(3, 9\)"),
        (lambda xs, ys: estimators.ridge(xs, ys, lam=0.0), "lam"),
        (lambda xs, ys: estimators.bayes(xs, ys, beta_star=np.zeros(D), psi=np.eye(D), sigma=0.0), "sigma"),
        (
            lambda xs, ys: estimators.bayes(xs, ys, beta_star=np.zeros(4), psi=np.eye(D), sigma=1.0),
            r"beta_star.*\(5,\)",
        ),
        (lambda xs, ys: estimators.bayes(xs, ys, beta_star=np.zeros(D), psi=np.eye(4), sigma=1.0), r"psi.*\(5, 5\)"),
        (lambda xs, ys: estimators.bayes(xs, ys, beta_star=np.zeros(D), psi=-np.eye(D), sigma=1.0), "psi.*positive"),
        (lambda xs, ys: estimators.gd(xs, ys, steps=-1, lr=0.1), "steps"),
        (lambda xs, ys: estimators.gd(xs, ys, steps=2.5, lr=0.1), "steps"),
        (lambda xs, ys: estimators.gd(xs, ys, steps=2, lr=np.nan), "lr"),
        (lambda xs, ys: estimators.newton(xs, ys, iterations=-2), "iterations"),
        (lambda xs, ys: estimators.gd_beta(xs, ys, beta0=np.zeros(D), gamma=np.eye(D)[:2]), r"gamma.*\(5, 5\)"),
        (lambda xs, ys: estimators.gd_beta(xs, ys, beta0=np.zeros((D, 1)), gamma=np.eye(D)), "beta0"),
    ],
)
def test_bad_inputs_raise(call, match):
    xs, ys = make_prompts(14)
    with pytest.raises(ValueError, match=match):
        call(xs, ys)
