"""LSA gradient flow, limit and test error (Zhang, Frei, Bartlett 2024) against Monte Carlo and finite differences."""

import numpy as np
import pytest
import torch

from iclab import theory
from iclab.learners import estimators
from iclab.models.linear import LinearSelfAttention

D = 3
_Q = np.linalg.qr(np.random.default_rng(100).standard_normal((D, D)))[0]  # random rotation
LAM = _Q @ np.diag([2.0, 1.0, 0.4]) @ _Q.T  # anisotropic, not diagonal
N = 5


def assert_within_se(samples, expected, n_se=4.0):
    mean, sem = samples.mean(), samples.std(ddof=1) / np.sqrt(len(samples))
    assert abs(mean - expected) <= n_se * sem, (mean, expected, sem)


def gaussian(rng, cov, shape):
    """Draws from N(0, cov) with leading shape `shape`: shape + (d,)."""
    eigvals, eigvecs = np.linalg.eigh(cov)
    factor = eigvecs * np.sqrt(np.clip(eigvals, 0, None))  # factor @ factor.T = cov
    return rng.standard_normal((*shape, len(cov))) @ factor.T


def mc_squared_errors(rng, a, lam, m, *, n_mc, sigma=0.0, lam_query=None, lam_task=None, w=None, chunk=25_000):
    """Samples of (x_qᵀA(1/M)Σyᵢxᵢ − y_q)², drawing w (unless fixed), x, x_q and ε; written independently."""
    lam_query = lam if lam_query is None else lam_query
    lam_task = np.eye(len(lam)) if lam_task is None else lam_task
    out = []
    for start in range(0, n_mc, chunk):
        b = min(chunk, n_mc - start)
        task = np.broadcast_to(w, (b, len(lam))) if w is not None else gaussian(rng, lam_task, (b,))  # (b, d)
        xs = gaussian(rng, lam, (b, m))  # (b, M, d)
        ys = np.einsum("bmd,bd->bm", xs, task) + sigma * rng.standard_normal((b, m))  # (b, M)
        x_q = gaussian(rng, lam_query, (b,))  # (b, d)
        y_q = np.einsum("bd,bd->b", x_q, task) + sigma * rng.standard_normal(b)  # (b,)
        h_hat = np.einsum("bmd,bm->bd", xs, ys) / m  # (b, d)
        out.append((np.einsum("bd,de,be->b", x_q, a, h_hat) - y_q) ** 2)
    return np.concatenate(out)


# ---------------------------------------------------------------- loss and flow


def test_gamma_matrix_closed_form():
    expected = 1.2 * LAM + 3.4 / 5 * np.eye(D)  # tr Λ = 3.4
    np.testing.assert_allclose(theory.gamma_matrix(LAM, N), expected, rtol=1e-14)


def test_flow_rhs_is_minus_finite_difference_gradient_of_loss():
    rng = np.random.default_rng(0)
    u11, u_pv = rng.standard_normal((D, D)), 0.7  # non-symmetric U, u ≠ 1
    d_u11, d_u_pv = theory.flow_rhs(u11, u_pv, LAM, N)
    loss = lambda u, v: theory.population_loss(u, v, LAM, N)  # noqa: E731
    step = 1e-5
    grad_u11 = np.zeros((D, D))
    for i in range(D):
        for j in range(D):
            e = np.zeros((D, D))
            e[i, j] = step
            grad_u11[i, j] = (loss(u11 + e, u_pv) - loss(u11 - e, u_pv)) / (2 * step)
    grad_u_pv = (loss(u11, u_pv + step) - loss(u11, u_pv - step)) / (2 * step)
    np.testing.assert_allclose(d_u11, -grad_u11, rtol=1e-6, atol=1e-8 * np.abs(grad_u11).max())
    assert d_u_pv == pytest.approx(-grad_u_pv, rel=1e-6)


def test_population_loss_matches_monte_carlo_of_the_lsa_module():
    rng = np.random.default_rng(1)
    u11, u_pv = 0.4 * rng.standard_normal((D, D)), 0.8
    model = LinearSelfAttention(D).double()
    with torch.no_grad():
        model.w_kq.zero_()
        model.w_pv.zero_()
        model.w_kq[:D, :D] = torch.from_numpy(u11)
        model.w_pv[D, D] = u_pv
    n_mc = 200_000
    w = rng.standard_normal((n_mc, D))  # (B, d), w ~ N(0, I)
    xs = gaussian(rng, LAM, (n_mc, N + 1))  # (B, N+1, d): N context points and the query
    ys = np.einsum("bkd,bd->bk", xs, w)  # (B, N+1), noiseless
    with torch.no_grad():
        y_hat = model(torch.from_numpy(xs), torch.from_numpy(ys), last_only=True)[:, 0].numpy()
    assert_within_se(0.5 * (y_hat - ys[:, -1]) ** 2, theory.population_loss(u11, u_pv, LAM, N))


@pytest.mark.parametrize("lam", [np.eye(D), LAM], ids=["isotropic", "anisotropic"])
def test_flow_from_balanced_init_converges_to_theorem4_limit(lam):
    times = np.array([0.0, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0])
    path = theory.integrate_flow(lam, N, 0.3, times)
    T = len(times)
    assert path.u11.shape == (T, D, D) and path.u_pv.shape == path.loss.shape == path.distance.shape == (T,)
    assert path.distance[0] > 0.5 and path.distance[-1] < 1e-3
    assert np.all(np.diff(path.loss) <= 1e-12 * path.loss[0])  # gradient flow: loss non-increasing
    np.testing.assert_allclose(  # ‖U‖_F² − u² is conserved, 0 from the balanced init
        np.sum(path.u11**2, axis=(1, 2)) - path.u_pv**2, 0.0, atol=1e-6
    )
    gamma_inv = np.linalg.inv(theory.gamma_matrix(lam, N))
    u11, u_pv = path.u11[-1], path.u_pv[-1]
    np.testing.assert_allclose(u_pv * u11, gamma_inv, atol=1e-6)
    w_kq, w_pv = theory.limit_weights(lam, N)
    ratio = np.sum(u11 * w_kq[:D, :D]) / np.sum(w_kq[:D, :D] ** 2)  # U₁₁ ∝ Γ⁻¹ up to the rescaling symmetry
    np.testing.assert_allclose(u11, ratio * w_kq[:D, :D], atol=1e-6)
    np.testing.assert_allclose(u_pv * ratio, w_pv[D, D], rtol=1e-6)
    assert ratio == pytest.approx(1.0, rel=1e-5)  # balanced init: exactly Theorem 4's split
    assert theory.relative_distance_to_limit(u11, u_pv, lam, N) == pytest.approx(path.distance[-1], rel=1e-9)


def test_flow_with_non_isotropic_commuting_theta():
    lam = np.diag([2.0, 1.0, 0.5])
    theta = np.diag([1.0, 2.0, 2.0]) / 3.0  # Frobenius norm 1, commutes with diagonal Λ
    path = theory.integrate_flow(lam, 10, 0.2, np.array([0.0, 1000.0]), theta_theta_t=theta)
    np.testing.assert_allclose(path.u11[0], 0.2 * theta, rtol=1e-14)
    assert path.distance[-1] < 1e-3


def test_limit_weights_product_is_gamma_inverse_and_optimal():
    w_kq, w_pv = theory.limit_weights(LAM, N)
    assert w_kq.shape == w_pv.shape == (D + 1, D + 1)
    gamma_inv = np.linalg.inv(theory.gamma_matrix(LAM, N))
    np.testing.assert_allclose(w_pv[D, D] * w_kq[:D, :D], gamma_inv, rtol=1e-12, atol=1e-14)
    assert np.count_nonzero(w_pv) == 1 and not w_kq[D].any() and not w_kq[:, D].any()
    u11, u_pv = w_kq[:D, :D], w_pv[D, D]
    best = theory.population_loss(u11, u_pv, LAM, N)
    assert best == pytest.approx(0.5 * (np.trace(LAM) - np.trace(gamma_inv @ LAM @ LAM)), rel=1e-12)
    rng = np.random.default_rng(2)
    for scale in (1e-4, 1e-2, 1.0):
        for _ in range(10):
            assert theory.population_loss(u11 + scale * rng.standard_normal((D, D)), u_pv, LAM, N) > best
            assert theory.population_loss(u11, u_pv + scale * rng.standard_normal(), LAM, N) > best


def test_relative_distance_scalar_and_stack():
    u11 = np.linalg.inv(theory.gamma_matrix(LAM, N))
    assert theory.relative_distance_to_limit(u11, 1.0, LAM, N) == pytest.approx(0.0, abs=1e-14)
    assert theory.relative_distance_to_limit(u11, 0.0, LAM, N) == pytest.approx(1.0, rel=1e-14)
    stack = theory.relative_distance_to_limit(np.stack([u11, u11]), np.array([1.0, 1.5]), LAM, N)
    np.testing.assert_allclose(stack, [0.0, 0.5], atol=1e-14)


# ---------------------------------------------------------------- test error


@pytest.mark.parametrize("m", [2, 5, 20])  # includes M < d
def test_expected_error_of_trained_lsa_matches_gd_beta_monte_carlo(m):
    rng = np.random.default_rng(10 + m)
    a = np.linalg.inv(theory.gamma_matrix(LAM, N))
    n_mc = 100_000
    w = rng.standard_normal((n_mc, D))
    xs = gaussian(rng, LAM, (n_mc, m + 1))  # (B, M+1, d)
    ys = np.einsum("bkd,bd->bk", xs, w)
    # the estimator contract: GD-β with β₀ = 0 and Γ = A predicts x_qᵀA(1/M)Σyᵢxᵢ at position M
    y_hat = estimators.gd_beta(xs, ys, beta0=np.zeros(D), gamma=a)[:, m]
    assert_within_se((y_hat - ys[:, m]) ** 2, theory.expected_error(a, LAM, m))


@pytest.mark.parametrize(
    "case",
    [
        dict(sigma=0.5),  # noisy labels
        dict(scale=2.0),  # covariate scaling: test Λ = 2Λ_train
        dict(lam_query=np.diag([0.5, 1.5, 3.0])),  # query covariance ≠ context covariance
        dict(lam_task=np.array([[0.8, -0.2, 0.1], [-0.2, 1.2, 0.3], [0.1, 0.3, 0.5]])),  # task covariance
        dict(sigma=0.3, lam_query=np.diag([1.0, 0.2, 2.0]), lam_task=np.diag([2.0, 0.5, 1.0]), asym=True),
    ],
    ids=["noise", "covariate-scaling", "query-shift", "task-covariance", "all-with-asymmetric-A"],
)
def test_expected_error_matches_monte_carlo(case):
    rng = np.random.default_rng(20)
    m = 4
    a = np.linalg.inv(theory.gamma_matrix(LAM, N))
    if case.get("asym"):
        a = a + 0.3 * rng.standard_normal((D, D))
    lam = case.get("scale", 1.0) * LAM
    kwargs = {key: case[key] for key in ("sigma", "lam_query", "lam_task") if key in case}
    samples = mc_squared_errors(rng, a, lam, m, n_mc=150_000, **kwargs)
    assert_within_se(samples, theory.expected_error(a, lam, m, **kwargs))


def test_expected_error_special_cases():
    a_u11, a_u = np.random.default_rng(3).standard_normal((D, D)), 0.6
    assert theory.expected_error(a_u * a_u11.T, LAM, N) == pytest.approx(
        2 * theory.population_loss(a_u11, a_u, LAM, N), rel=1e-12
    )
    assert theory.expected_error(np.zeros((D, D)), LAM, 3, sigma=0.5) == pytest.approx(np.trace(LAM) + 0.25)
    # covariate scaling c with N, M → ∞: A·(cΛ) → cI, ŷ → c·y_q, error → (c − 1)²tr(cΛ)
    c, big = 2.0, 10**9
    a = np.linalg.inv(theory.gamma_matrix(LAM, big))
    assert theory.expected_error(a, c * LAM, big) == pytest.approx((c - 1) ** 2 * c * np.trace(LAM), rel=1e-6)


@pytest.mark.parametrize("m", [5, 50])
def test_theorem5_linear_matches_fixed_w_monte_carlo(m):
    rng = np.random.default_rng(30 + m)
    w, sigma = np.array([1.0, -0.5, 0.8]), 0.3
    a = np.linalg.inv(theory.gamma_matrix(LAM, N))
    samples = mc_squared_errors(rng, a, LAM, m, n_mc=100_000 if m == 5 else 40_000, sigma=sigma, w=w)
    assert_within_se(samples, theory.theorem5_error_linear(LAM, N, m, w, sigma))


def test_theorem5_agrees_with_expected_error():
    w, sigma, gamma_inv = np.array([1.0, -0.5, 0.8]), 0.3, np.linalg.inv(theory.gamma_matrix(LAM, N))
    for m in (1, 5, 50):
        fixed = theory.expected_error(gamma_inv, LAM, m, sigma=sigma, lam_task=np.outer(w, w))
        assert theory.theorem5_error_linear(LAM, N, m, w, sigma) == pytest.approx(fixed, rel=1e-12)
        # noiseless and quadratic in w: E over w ~ N(0, I) is the sum over basis vectors
        basis_sum = sum(theory.theorem5_error_linear(LAM, N, m, e) for e in np.eye(D))
        assert basis_sum == pytest.approx(theory.expected_error(gamma_inv, LAM, m), rel=1e-12)


def test_theorem5_terms_scale_as_one_over_m_and_one_over_n_squared():
    w, sigma = np.array([1.0, -0.5, 0.8]), 0.3
    err = lambda n, m: theory.theorem5_error_linear(LAM, n, m, w, sigma)  # noqa: E731
    lam_w = LAM @ w
    cov_xy = np.outer(lam_w, lam_w) + (w @ lam_w + sigma**2) * LAM
    rng = np.random.default_rng(11)
    for n in (5, 50, 10**6):
        m_term = 2 * (err(n, 10) - err(n, 20))  # T_M/10, from err = σ² + T_M/M + T_N/N²
        # the error really falls by T_M(1/10 − 1/40) from M = 10 to 40: Monte Carlo of the predictor
        gamma_inv = np.linalg.inv(theory.gamma_matrix(LAM, n))
        at_10, at_40 = (mc_squared_errors(rng, gamma_inv, LAM, m, n_mc=100_000, sigma=sigma, w=w) for m in (10, 40))
        sem = np.hypot(at_10.std(), at_40.std()) / np.sqrt(100_000)
        assert abs(at_10.mean() - at_40.mean() - 0.75 * m_term) < 4 * sem
        n_term = err(n, 10) - sigma**2 - m_term
        assert n_term > 0
        if n == 10**6:  # Γ → Λ: the terms tend to tr(Λ⁻¹Σ)/M and wᵀΛ⁻¹(Λ + tr(Λ)I)²w/N²
            lam_inv = np.linalg.inv(LAM)
            assert 10 * m_term == pytest.approx(np.trace(lam_inv @ cov_xy), rel=1e-4)  # O(tr Λ/(λ_min N))
            shifted = LAM + np.trace(LAM) * np.eye(D)
            assert n_term * n**2 == pytest.approx(w @ lam_inv @ shifted @ shifted @ w, rel=1e-4)
    assert err(10**6, 10**9) == pytest.approx(sigma**2, rel=1e-6)  # both terms vanish


def test_random_covariance_kq_limit_matches_monte_carlo():
    rng = np.random.default_rng(40)
    d, n, scale, n_mc = 5, 10, 1.5, 200_000
    lams = rng.exponential(scale, size=(n_mc, d))  # diagonals of Λ_τ
    gamma_lam_sq = (1 + 1 / n) * lams**3 + lams.sum(axis=1, keepdims=True) * lams**2 / n  # diag Γ_τΛ_τ², (m, d)
    numerator, denominator = (lams**2).mean(axis=0), gamma_lam_sq.mean(axis=0)  # (d,)
    ratio = numerator / denominator
    # delta method: SE of a ratio of means
    sem = (lams**2 - ratio * gamma_lam_sq).std(axis=0, ddof=1) / (np.sqrt(n_mc) * denominator)
    limit = theory.random_covariance_kq_limit(d, n, theory.exponential_moments(scale))
    assert limit.shape == (d,)
    assert np.all(np.abs(ratio - limit) <= 4 * sem), (ratio, limit, sem)
    assert theory.exponential_moments(2.0) == (2.0, 8.0, 48.0)


# ---------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: theory.gamma_matrix(-LAM, N), "lam.*positive definite"),
        (lambda: theory.gamma_matrix(LAM + np.triu(LAM, 1), N), "lam.*symmetric"),
        (lambda: theory.gamma_matrix(LAM[:2], N), "lam.*square"),
        (lambda: theory.gamma_matrix(LAM, 0), "n must"),
        (lambda: theory.limit_weights(LAM, 0.5), "n must"),
        (lambda: theory.population_loss(np.eye(2), 1.0, LAM, N), r"u11.*\(3, 3\)"),
        (lambda: theory.population_loss(np.eye(D), np.nan, LAM, N), "u_pv"),
        (lambda: theory.flow_rhs(np.eye(D, 2), 1.0, LAM, N), "u11"),
        (lambda: theory.balanced_init(LAM, N, 5.0), "sigma too large"),
        (lambda: theory.balanced_init(LAM, N, 0.0), "sigma"),
        (lambda: theory.balanced_init(LAM, N, 0.1, np.eye(D)), "theta_theta_t.*norm 1"),
        (lambda: theory.balanced_init(LAM, N, 0.1, np.diag([1.0, 0.0, 0.0])), "theta_theta_t.*commute"),
        (lambda: theory.integrate_flow(LAM, N, 0.1, np.array([0.0, 2.0, 1.0])), "times"),
        (lambda: theory.integrate_flow(LAM, N, 0.1, np.array([-1.0, 2.0])), "times"),
        (lambda: theory.relative_distance_to_limit(np.eye(D), np.ones(2), LAM, N), "u_pv"),
        (lambda: theory.expected_error(np.eye(2), LAM, 3), "a_matrix"),
        (lambda: theory.expected_error(np.eye(D), LAM, 0), "m must"),
        (lambda: theory.expected_error(np.eye(D), LAM, 3, sigma=-1.0), "sigma"),
        (lambda: theory.expected_error(np.eye(D), LAM, 3, lam_query=-LAM), "lam_query"),
        (lambda: theory.expected_error(np.eye(D), LAM, 3, lam_task=np.eye(2)), "lam_task"),
        (lambda: theory.theorem5_error(LAM, N, 3, a=np.ones(2), cov_xy=LAM, min_risk=0.0), "a must"),
        (lambda: theory.theorem5_error(LAM, N, 3, a=np.ones(D), cov_xy=-LAM, min_risk=0.0), "cov_xy"),
        (lambda: theory.theorem5_error_linear(LAM, N, 3, np.ones(D), sigma=-0.1), "sigma"),
        (lambda: theory.random_covariance_kq_limit(0, N, (1.0, 2.0, 6.0)), "d must"),
        (lambda: theory.random_covariance_kq_limit(D, N, (1.0, -2.0, 6.0)), r"moments\[1\]"),
        (lambda: theory.random_covariance_kq_limit(D, N, (1.0, 2.0)), "moments"),
        (lambda: theory.exponential_moments(0.0), "scale"),
    ],
)
def test_bad_inputs_raise(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_expected_error_at_infinite_m_is_the_large_m_limit():
    lam = np.diag([2.0, 1.0, 0.5])
    a = np.linalg.inv(theory.gamma_matrix(lam, 7))
    limit = theory.expected_error(a, lam, np.inf, sigma=0.3)
    assert limit == pytest.approx(theory.expected_error(a, lam, 10**9, sigma=0.3), rel=1e-6)
    assert limit < theory.expected_error(a, lam, 1000, sigma=0.3)


def test_relu_label_moments_match_monte_carlo():
    rng = np.random.default_rng(11)
    lam = np.diag([2.0, 1.0, 0.5])
    w, sigma = np.array([0.7, -1.2, 0.4]), 0.3
    a, cov_xy, min_risk = theory.relu_label_moments(w, lam, sigma)
    x = rng.standard_normal((400_000, 3)) * np.sqrt(np.diag(lam))
    y = np.maximum(x @ w, 0) + sigma * rng.standard_normal(len(x))
    xy = x * y[:, None]
    np.testing.assert_allclose(np.linalg.solve(lam, xy.mean(axis=0)), a, atol=0.01)
    np.testing.assert_allclose(np.cov(xy.T), cov_xy, atol=0.03 * np.abs(cov_xy).max())
    best = np.linalg.lstsq(x, y, rcond=None)[0]
    assert np.mean((x @ best - y) ** 2) == pytest.approx(min_risk, rel=0.01)


def test_relu_label_theorem5_matches_monte_carlo_of_the_converged_lsa():
    """Theorem 5 with relu_label_moments against the LSA limit ŷ = x_qᵀΓ⁻¹ĥ on relu labels."""
    rng = np.random.default_rng(12)
    lam, n, m, w = np.diag([1.5, 1.0, 0.5]), 6, 8, np.array([1.0, -0.5, 0.8])
    a, cov_xy, min_risk = theory.relu_label_moments(w, lam)
    predicted = theory.theorem5_error(lam, n, m, a=a, cov_xy=cov_xy, min_risk=min_risk)
    b = 200_000
    x = rng.standard_normal((b, m + 1, 3)) * np.sqrt(np.diag(lam))
    y = np.maximum(x @ w, 0)
    h = np.einsum("bmd,bm->bd", x[:, :m], y[:, :m]) / m
    y_hat = np.einsum("bd,de,be->b", x[:, m], np.linalg.inv(theory.gamma_matrix(lam, n)), h)
    errors = (y_hat - y[:, m]) ** 2
    assert abs(errors.mean() - predicted) < 4 * errors.std() / np.sqrt(b)


def test_lsa_limit_baseline_is_x_a_h_at_every_prefix_and_has_the_expected_error():
    """The lsa_limit baseline (iclab.learners.baselines) predicts x_kᵀA(1/k)Σ_{i<k} y_i x_i at every position (a hand
    loop, position 0: 0), and its Monte-Carlo error at M examples is expected_error(A, Λ, M) (A = Γ⁻¹, asymmetric
    too)."""
    from iclab.learners.baselines import lsa_limit
    from iclab.tasks import LinearTask
    from iclab.tasks.samplers import batch_generator, sample

    rng = np.random.default_rng(41)
    for a in (np.linalg.inv(theory.gamma_matrix(LAM, N)), rng.standard_normal((D, D))):
        task = LinearTask(d=D, n_points=6, beta_star=(0.0,) * D, psi=1.0, sigma=0.0, covariance="matrix",
                          covariance_values=tuple(LAM.ravel()))
        xs, ys = rng.standard_normal((4, 6, D)), rng.standard_normal((4, 6))
        by_hand = np.zeros((4, 6))
        for b in range(4):
            for k in range(1, 6):
                h = (ys[b, :k, None] * xs[b, :k]).mean(axis=0)  # (d,)
                by_hand[b, k] = xs[b, k] @ a @ h
        np.testing.assert_allclose(lsa_limit(task, a.tolist())(xs, ys), by_hand, rtol=1e-12, atol=1e-12)
    batch = sample(task, 40_000, batch_generator(3, 0, 0))
    a = np.linalg.inv(theory.gamma_matrix(LAM, N))
    errors = (lsa_limit(task, a.tolist())(batch.xs, batch.ys) - batch.ys)[:, 5] ** 2  # M = 5
    assert_within_se(errors, theory.expected_error(a, LAM, 5))
    with pytest.raises(ValueError, match=r"lsa_limit baseline's a must be \(d, d\)"):
        lsa_limit(task, np.eye(D + 1).tolist())
