"""Closed-form risks against Monte Carlo and hand-derived special cases."""

import numpy as np
import pytest

from iclab import theory
from iclab.learners import estimators

D = 3
H = np.array([[1.5, 0.4, 0.0], [0.4, 1.0, -0.3], [0.0, -0.3, 0.6]])  # non-identity covariate covariance
PSI = np.array([[0.8, -0.2, 0.1], [-0.2, 1.2, 0.3], [0.1, 0.3, 0.5]])  # non-identity task covariance
BETA_STAR = np.array([1.0, -0.5, 0.7])
SIGMA = 0.5


def sample_prompts(rng, batch, n_points, *, beta_star=BETA_STAR, psi=PSI, h=H, sigma=SIGMA):
    """Assumption 3.1 of Zhang, Wu, Bartlett: xs (B, K, d), noisy ys (B, K); the last point is a query."""
    beta = beta_star + rng.standard_normal((batch, D)) @ np.linalg.cholesky(psi).T  # (B, d)
    xs = rng.standard_normal((batch, n_points, D)) @ np.linalg.cholesky(h).T  # (B, K, d)
    ys = np.einsum("bkd,bd->bk", xs, beta) + sigma * rng.standard_normal((batch, n_points))  # (B, K)
    return xs, ys


def assert_within_se(estimate, sem, expected, n_se=4.0):
    estimate, sem, expected = np.broadcast_arrays(estimate, sem, expected)
    assert np.all(np.abs(estimate - expected) <= n_se * sem), (estimate, expected, sem)


@pytest.mark.parametrize("symmetric", [True, False])
def test_sandwich_matches_monte_carlo(symmetric):
    rng = np.random.default_rng(0)
    n, n_mc = 4, 400_000
    A = rng.standard_normal((D, D))
    A = A + A.T if symmetric else A
    xs = rng.standard_normal((n_mc, n, D)) @ np.linalg.cholesky(H).T  # (m, n, d)
    S = np.einsum("mni,mnj->mij", xs, xs) / n  # (m, d, d)
    samples = S @ A @ S  # (m, d, d)
    assert_within_se(
        samples.mean(axis=0),
        samples.std(axis=0, ddof=1) / np.sqrt(n_mc),
        theory.expected_sample_cov_sandwich(A, H, n),
    )


def test_sandwich_isotropic_is_wishart_second_moment():
    # W ~ Wishart(n, I_d): E[W²] = n(n + d + 1)I, and Ŝ = W/n
    n = 7
    np.testing.assert_allclose(
        theory.expected_sample_cov_sandwich(np.eye(D), np.eye(D), n), (1 + (D + 1) / n) * np.eye(D), rtol=1e-14
    )


def test_gd_beta_risk_matches_monte_carlo():
    rng = np.random.default_rng(1)
    beta0 = np.array([0.3, 0.2, -0.4])  # ≠ β*
    gamma = np.array([[0.5, 0.2, -0.1], [0.0, 0.6, 0.3], [0.25, -0.2, 0.4]])  # not symmetric
    xs, ys = sample_prompts(rng, 200_000, 8)
    sq_err = (estimators.gd_beta(xs, ys, beta0=beta0, gamma=gamma) - ys) ** 2  # (B, K): column n has n examples
    for n in (1, 3, 7):
        risk = theory.gd_beta_risk(beta0, gamma, beta_star=BETA_STAR, psi=PSI, h=H, sigma=SIGMA, n=n)
        assert_within_se(sq_err[:, n].mean(), sq_err[:, n].std(ddof=1) / np.sqrt(len(sq_err)), risk)


def test_gd_beta_optimum_is_consistent_optimal_and_matches_monte_carlo():
    n = 5
    opt = theory.gd_beta_optimum(beta_star=BETA_STAR, psi=PSI, h=H, sigma=SIGMA, n=n)
    np.testing.assert_array_equal(opt.beta0, BETA_STAR)
    risk_at = lambda beta0, gamma: theory.gd_beta_risk(  # noqa: E731
        beta0, gamma, beta_star=BETA_STAR, psi=PSI, h=H, sigma=SIGMA, n=n
    )
    assert risk_at(opt.beta0, opt.gamma) == pytest.approx(opt.risk, rel=1e-12)
    rng = np.random.default_rng(2)
    for scale in (1e-4, 1e-2, 1.0):
        for _ in range(20):
            assert risk_at(opt.beta0, opt.gamma + scale * rng.standard_normal((D, D))) > opt.risk
            assert risk_at(opt.beta0 + scale * rng.standard_normal(D), opt.gamma) > opt.risk
    xs, ys = sample_prompts(rng, 200_000, n + 1)
    sq_err = (estimators.gd_beta(xs, ys, beta0=opt.beta0, gamma=opt.gamma)[:, n] - ys[:, n]) ** 2
    assert_within_se(sq_err.mean(), sq_err.std(ddof=1) / np.sqrt(len(sq_err)), opt.risk)


def test_gd_beta_risk_gradient_matches_finite_differences_and_monte_carlo():
    n = 4
    task = dict(beta_star=BETA_STAR, psi=PSI, h=H, sigma=SIGMA, n=n)
    beta0 = np.array([0.3, 0.2, -0.4])
    gamma = np.array([[0.5, 0.2, -0.1], [0.0, 0.6, 0.3], [0.25, -0.2, 0.4]])  # not symmetric
    grad_beta0, grad_gamma = theory.gd_beta_risk_gradient(beta0, gamma, **task)
    risk = lambda b, g: theory.gd_beta_risk(b, g, **task)  # noqa: E731
    step = 1e-5
    for i in range(D):  # central differences of the (Monte-Carlo-tested) risk
        e = np.eye(D)[i] * step
        assert grad_beta0[i] == pytest.approx((risk(beta0 + e, gamma) - risk(beta0 - e, gamma)) / (2 * step), rel=1e-7)
        for j in range(D):
            e = np.zeros((D, D))
            e[i, j] = step
            fd = (risk(beta0, gamma + e) - risk(beta0, gamma - e)) / (2 * step)
            assert grad_gamma[i, j] == pytest.approx(fd, rel=1e-7, abs=1e-9)
    # Monte Carlo: the mean over prompts of each prompt's gradient of (f − y_q)², derived by hand:
    # ∂f/∂Γ = x_q mᵀ/n with m = Σ x_i(y_i − x_iᵀβ₀), ∂f/∂β₀ = x_q − ŜΓᵀx_q with Ŝ = Σ x_i x_iᵀ/n
    xs, ys = sample_prompts(np.random.default_rng(5), 200_000, n + 1)
    context, labels, query = xs[:, :n], ys[:, :n], xs[:, n]  # (B, n, d), (B, n), (B, d)
    m = np.einsum("bnd,bn->bd", context, labels - context @ beta0)  # (B, d)
    residual = query @ beta0 + np.einsum("bd,de,be->b", query, gamma, m) / n - ys[:, n]  # f − y_q (B,)
    per_beta0 = 2 * residual[:, None] * (query - np.einsum("bnd,bne,bf,fe->bd", context, context, query, gamma) / n)
    per_gamma = 2 * residual[:, None, None] * query[:, :, None] * m[:, None, :] / n  # (B, d, d)
    for per_prompt, closed in ((per_beta0, grad_beta0), (per_gamma, grad_gamma)):
        assert_within_se(per_prompt.mean(axis=0), per_prompt.std(axis=0, ddof=1) / np.sqrt(len(xs)), closed)


@pytest.mark.parametrize("case", ["isotropic", "anisotropic"])
def test_gd_beta_flow_descends_to_the_global_minimiser(case):
    """Theorem 6.3: from a random start, gradient flow on the (non-convex) GD-β risk reaches its minimiser."""
    n = 5
    psi, h = (np.eye(D), np.eye(D)) if case == "isotropic" else (PSI, H)
    task = dict(beta_star=BETA_STAR, psi=psi, h=h, sigma=SIGMA, n=n)
    rng = np.random.default_rng(6)
    flow = theory.gd_beta_flow(rng.standard_normal(D), rng.standard_normal((D, D)), np.linspace(0, 60, 121), **task)
    opt = theory.gd_beta_optimum(**task)
    assert np.all(np.diff(flow.risk) <= 1e-12)  # a gradient flow never raises the risk
    distance = np.sqrt(np.sum((flow.beta0[-1] - opt.beta0) ** 2) + np.sum((flow.gamma[-1] - opt.gamma) ** 2))
    assert distance < 1e-6
    assert flow.risk[-1] == pytest.approx(opt.risk, rel=1e-10)


def test_gd_beta_flow_with_a_rank_deficient_h_keeps_the_kernel_part_at_its_start():
    """Theorem 6.3: H = diag(2, 1, 0): the flow reaches the minimiser on the image of H (β₀, Γ projected there)
    and the rest of (β₀, Γ) (β₀'s third entry, Γ's third row and column) never moves."""
    h, n = np.diag([2.0, 1.0, 0.0]), 5
    task = dict(beta_star=BETA_STAR, psi=PSI, h=h, sigma=SIGMA, n=n)
    rng = np.random.default_rng(7)
    beta0, gamma = rng.standard_normal(D), rng.standard_normal((D, D))
    flow = theory.gd_beta_flow(beta0, gamma, np.linspace(0, 80, 5), **task)
    opt = theory.gd_beta_optimum(**task)
    np.testing.assert_array_equal(flow.beta0[:, 2], beta0[2])
    np.testing.assert_array_equal(flow.gamma[:, 2, :], np.broadcast_to(gamma[2], (5, D)))
    np.testing.assert_array_equal(flow.gamma[:, :, 2], np.broadcast_to(gamma[:, 2], (5, D)))
    np.testing.assert_allclose(flow.beta0[-1, :2], opt.beta0[:2], atol=1e-7)
    np.testing.assert_allclose(flow.gamma[-1, :2, :2], opt.gamma[:2, :2], atol=1e-7)
    assert flow.risk[-1] == pytest.approx(opt.risk, rel=1e-10)


def test_gd_beta_optimum_isotropic_noiseless_closed_form():
    # H = Ψ = I, σ = 0: Γ* = n/(n + d + 1)·I (Zhang, Frei, Bartlett's Γ⁻¹), risk d(d + 1)/(n + d + 1)
    n = 6
    opt = theory.gd_beta_optimum(beta_star=np.zeros(D), psi=np.eye(D), h=np.eye(D), sigma=0.0, n=n)
    np.testing.assert_allclose(opt.gamma, n / (n + D + 1) * np.eye(D), rtol=1e-14)
    assert opt.risk == pytest.approx(D * (D + 1) / (n + D + 1), rel=1e-14)


def test_bayes_risk_matches_full_monte_carlo_and_beats_gd_beta():
    rng = np.random.default_rng(3)
    n_points = 7
    xs, ys = sample_prompts(rng, 100_000, n_points)
    predictions = estimators.bayes(xs, ys, beta_star=BETA_STAR, psi=PSI, sigma=SIGMA)  # (B, K)
    sq_err = (predictions - ys) ** 2  # (B, K): column n has n examples
    curve = theory.bayes_risk_curve(psi=PSI, h=H, sigma=SIGMA, n_points=n_points, n_mc=20_000, seed=4)
    assert curve.mean.shape == curve.sem.shape == (n_points,)
    full_sem = sq_err.std(axis=0, ddof=1) / np.sqrt(len(sq_err))
    assert_within_se(sq_err.mean(axis=0), np.hypot(full_sem, curve.sem), curve.mean)
    assert curve.mean[0] == pytest.approx(SIGMA**2 + np.trace(H @ PSI), rel=1e-12) and curve.sem[0] < 1e-12
    for n in (1, 3, 6):
        single = theory.bayes_risk(psi=PSI, h=H, sigma=SIGMA, n=n, n_mc=20_000, seed=4)
        assert single.mean == pytest.approx(curve.mean[n], rel=1e-12)
        assert single.sem == pytest.approx(curve.sem[n], rel=1e-9)
        gd_beta = theory.gd_beta_optimum(beta_star=BETA_STAR, psi=PSI, h=H, sigma=SIGMA, n=n).risk
        assert single.mean + 4 * single.sem < gd_beta


def test_bayes_risk_is_deterministic_given_seed():
    kwargs = dict(psi=PSI, h=H, sigma=SIGMA, n=4, n_mc=500)
    assert theory.bayes_risk(**kwargs, seed=7) == theory.bayes_risk(**kwargs, seed=7)
    assert theory.bayes_risk(**kwargs, seed=7) != theory.bayes_risk(**kwargs, seed=8)


@pytest.mark.parametrize("d", [1, 2, 3, 6])
def test_gaussian_cubature_is_exact_to_degree_5_and_not_beyond(d):
    from itertools import combinations_with_replacement

    from iclab.numerics import gaussian_cubature_degree5

    nodes, weights = gaussian_cubature_degree5(d)
    assert nodes.shape == (2 * d * d + 1, d)
    double_factorial = {0: 1, 2: 1, 4: 3}  # E g^k for g ~ N(0, 1), k even
    for degree in range(6):
        for indices in combinations_with_replacement(range(d), degree):
            powers = np.bincount(indices, minlength=d)
            expected = np.prod([double_factorial.get(p, 0) for p in powers])  # odd powers: 0
            np.testing.assert_allclose(weights @ np.prod(nodes**powers, axis=1), expected, atol=1e-12)
    assert abs(weights @ nodes[:, 0] ** 6 - 15) > 1  # E g⁶ = 15: degree 6 is out of reach


def lsa_weights(rng, d, scale=0.5):
    """A LinearSelfAttention at Gaussian weights and its (u, W) = (W^{PV}[d, :], W^{KQ}[:, :d])."""
    import torch

    from iclab.models.linear import LinearSelfAttention

    torch.manual_seed(int(rng.integers(1 << 30)))
    module = LinearSelfAttention(d, init_scale=scale).double()
    return module, module.w_pv.detach()[d].numpy().copy(), module.w_kq.detach()[:, :d].numpy().copy()


def test_lsa_class_risk_matches_monte_carlo_of_the_module():
    import torch

    rng = np.random.default_rng(11)
    module, u, w = lsa_weights(rng, D)
    xs, ys = sample_prompts(rng, 200_000, 8)
    with torch.no_grad():
        predictions = module(torch.from_numpy(xs), torch.from_numpy(ys)).numpy()  # (B, K): position n has n examples
    np.testing.assert_allclose(estimators.lsa(xs[:64], ys[:64], u=u, w=w), predictions[:64], rtol=1e-10, atol=1e-12)
    sq_err = (predictions - ys) ** 2
    for n in (1, 3, 7):
        risk = theory.lsa_class_risk(u, w, beta_star=BETA_STAR, psi=PSI, h=H, sigma=SIGMA, n=n)
        assert_within_se(sq_err[:, n].mean(), sq_err[:, n].std(ddof=1) / np.sqrt(len(sq_err)), risk)


def test_lsa_class_risk_of_gd_from_zero_is_the_gd_beta_risk():
    # u = e_{d+1}, W = [Γᵀ; 0]: f = x_qᵀΓXᵀy/n, GD-β with β₀ = 0
    gamma = np.array([[0.5, 0.2, -0.1], [0.0, 0.6, 0.3], [0.25, -0.2, 0.4]])
    u, w = np.eye(D + 1)[D], np.vstack([gamma.T, np.zeros((1, D))])
    task = dict(beta_star=BETA_STAR, psi=PSI, h=H, sigma=SIGMA, n=5)
    np.testing.assert_allclose(
        theory.lsa_class_risk(u, w, **task), theory.gd_beta_risk(np.zeros(D), gamma, **task), rtol=1e-12
    )


def test_lsa_class_optimum_meets_gd_beta_at_zero_mean_and_falls_behind_as_the_mean_grows():
    # Theorem 4.1 of Zhang, Wu, Bartlett 2024: the LSA's optimal risk exceeds GD-β's by a gap that grows with ‖β*‖
    direction = BETA_STAR / np.linalg.norm(BETA_STAR)
    task = dict(psi=PSI, h=H, sigma=SIGMA, n=6)
    gaps = []
    for norm in (0.0, 1.0, 2.0):
        lsa = theory.lsa_class_optimum(beta_star=norm * direction, **task)
        gd_beta = theory.gd_beta_optimum(beta_star=norm * direction, **task)
        assert lsa.risk == pytest.approx(theory.lsa_class_risk(lsa.u, lsa.w, beta_star=norm * direction, **task))
        gaps.append(lsa.risk - gd_beta.risk)
    assert gaps[0] == pytest.approx(0, abs=1e-9)
    assert 1e-3 < gaps[1] < gaps[2]


def test_lsa_class_optimum_matches_monte_carlo_and_beats_perturbed_weights():
    rng = np.random.default_rng(5)
    task = dict(beta_star=BETA_STAR, psi=PSI, h=H, sigma=SIGMA, n=6)
    lsa = theory.lsa_class_optimum(**task)
    xs, ys = sample_prompts(rng, 100_000, 7)
    sq_err = (estimators.lsa(xs, ys, u=lsa.u, w=lsa.w)[:, 6] - ys[:, 6]) ** 2
    assert_within_se(sq_err.mean(), sq_err.std(ddof=1) / np.sqrt(len(sq_err)), lsa.risk)
    for _ in range(3):
        w = lsa.w + 0.05 * rng.standard_normal(lsa.w.shape)
        assert theory.lsa_class_risk(lsa.u, w, **task) > lsa.risk


def isserlis_lsa_class_risk(u, w, *, beta_star, psi, h, sigma, n) -> float:
    """An oracle for lsa_class_risk built another way, exact to round-off: risk = σ² + E_β E[(WᵀĈu − β)ᵀH(WᵀĈu − β) | β]
    with Ĉ = (1/n)Σᵢ zᵢzᵢᵀ, zᵢ | β ~ N(0, Σ_β), Σ_β = BHBᵀ + σ²eeᵀ (B = [I; βᵀ], e the label's axis):
    - E[uᵀĈAĈu | β] = (n − 1)/n · uᵀΣAΣu + 1/n · Σ u_a A_bc u_e E[z_a z_b z_c z_e], A = WHWᵀ, the fourth moment taken
      entry by entry from Isserlis' theorem (Σ_ab Σ_ce + Σ_ac Σ_be + Σ_ae Σ_bc), not from the Wishart sandwich;
    - E[βᵀHWᵀĈu | β] = βᵀHWᵀΣu;
    - the mean over β = β* + Lξ (LLᵀ = Ψ, ξ ~ N(0, I)) by tensor-product Gauss–Hermite quadrature, 3 nodes an axis:
      exact to degree 5 in each ξ_i, and the conditional risk has degree 4 (not the code's Stroud cubature)."""
    d = len(h)
    nodes, weights = np.polynomial.hermite_e.hermegauss(3)  # probabilists': weight exp(−x²/2)
    weights = weights / weights.sum()
    grid = np.stack(np.meshgrid(*[nodes] * d, indexing="ij"), -1).reshape(-1, d)  # (3^d, d)
    grid_weights = np.prod(np.stack(np.meshgrid(*[weights] * d, indexing="ij"), -1).reshape(-1, d), axis=1)
    betas = beta_star + grid @ np.linalg.cholesky(psi).T  # (J, d)
    a = w @ h @ w.T  # (d+1, d+1)
    label = np.eye(d + 1)[d]
    total = 0.0
    for beta, weight in zip(betas, grid_weights):
        b = np.vstack([np.eye(d), beta])  # (d+1, d)
        cov = b @ h @ b.T + sigma**2 * np.outer(label, label)  # Σ_β (d+1, d+1)
        fourth = (np.einsum("ab,ce->abce", cov, cov) + np.einsum("ac,be->abce", cov, cov)
                  + np.einsum("ae,bc->abce", cov, cov))  # E z_a z_b z_c z_e
        quadratic = (n - 1) / n * u @ cov @ a @ cov @ u + np.einsum("a,bc,e,abce->", u, a, u, fourth) / n
        cross = beta @ h @ w.T @ cov @ u
        total += weight * (quadratic - 2 * cross + beta @ h @ beta)
    return sigma**2 + total


def random_spd(rng, d: int) -> np.ndarray:
    """A non-isotropic, non-diagonal covariance: (d, d)."""
    factor = rng.standard_normal((d, d))
    return factor @ factor.T / d + 0.3 * np.diag(rng.uniform(0.5, 2.0, d))


@pytest.mark.parametrize("d", [3, 5])  # d = 5: the Stroud cubature's weights on the axes are negative
def test_lsa_class_risk_equals_an_isserlis_oracle_to_round_off(d):
    """At random (u, W) with every block non-zero (u_x, u_y, W_x, w_y), β* ≠ 0, non-isotropic H and Ψ, several n:
    the closed form equals the oracle to 1e-11 relative (a cross term halved moves it by ~0.3%: Monte Carlo could not
    tell, this can)."""
    rng = np.random.default_rng(17 + d)
    task = dict(beta_star=rng.standard_normal(d), psi=random_spd(rng, d), h=random_spd(rng, d), sigma=0.7)
    for n in (1, 2, 5, 17):
        u, w = rng.standard_normal(d + 1), 0.5 * rng.standard_normal((d + 1, d))
        exact = isserlis_lsa_class_risk(u, w, **task, n=n)
        assert theory.lsa_class_risk(u, w, **task, n=n) == pytest.approx(exact, rel=1e-11), n


def test_lsa_class_optimum_is_a_stationary_minimum_of_the_oracles_risk():
    """At the returned weights the oracle's risk is the returned risk, its gradient (central differences, step 1e-5)
    vanishes to 1e-6 against an O(1) gradient at a start, and random perturbations of size 0.01 and 0.05 raise it."""
    task = dict(beta_star=BETA_STAR, psi=PSI, h=H, sigma=SIGMA, n=6)
    lsa = theory.lsa_class_optimum(**task)
    theta = np.concatenate([lsa.u, lsa.w.ravel()])

    def oracle(flat: np.ndarray) -> float:
        return isserlis_lsa_class_risk(flat[: D + 1], flat[D + 1 :].reshape(D + 1, D), **task)

    def gradient(flat: np.ndarray, step: float = 1e-5) -> np.ndarray:
        basis = np.eye(len(flat))
        return np.array([(oracle(flat + step * e) - oracle(flat - step * e)) / (2 * step) for e in basis])

    assert oracle(theta) == pytest.approx(lsa.risk, rel=1e-11)
    assert np.abs(gradient(theta)).max() < 1e-6
    assert np.abs(gradient(theta + 0.1)).max() > 1e-2  # the check can see a gradient
    rng = np.random.default_rng(8)
    for size in (0.01, 0.05):
        for _ in range(4):
            assert oracle(theta + size * rng.standard_normal(theta.shape)) > lsa.risk


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: theory.expected_sample_cov_sandwich(np.eye(2), H, 3), r"A.*\(3, 3\)"),
        (lambda: theory.expected_sample_cov_sandwich(np.eye(D), H[:2], 3), r"H.*square"),
        (lambda: theory.expected_sample_cov_sandwich(np.eye(D), H, 0), "n must"),
        (lambda: theory.gd_beta_risk(np.zeros(2), np.eye(D), beta_star=BETA_STAR, psi=PSI, h=H, sigma=1, n=2), "beta0"),
        (lambda: theory.gd_beta_risk(np.zeros(D), np.eye(D), beta_star=BETA_STAR, psi=-PSI, h=H, sigma=1, n=2), "psi"),
        (lambda: theory.gd_beta_optimum(beta_star=BETA_STAR, psi=PSI, h=H, sigma=-1.0, n=2), "sigma"),
        (lambda: theory.bayes_risk(psi=PSI, h=H, sigma=0.0, n=2), "sigma"),
        (lambda: theory.bayes_risk(psi=np.zeros((D, D)), h=H, sigma=1.0, n=2), "psi.*positive definite"),
        (lambda: theory.bayes_risk(psi=PSI, h=H, sigma=1.0, n=2, n_mc=1), "n_mc"),
        (lambda: theory.bayes_risk_curve(psi=PSI, h=H + np.triu(H, 1), sigma=1.0, n_points=3), "h.*symmetric"),
        (lambda: theory.bayes_risk_curve(psi=PSI, h=H, sigma=1.0, n_points=0), "n_points"),
        (lambda: theory.lsa_class_risk(np.ones(D + 1), H, beta_star=BETA_STAR, psi=PSI, h=H, sigma=1, n=2), "w shape"),
        (lambda: theory.lsa_class_optimum(beta_star=BETA_STAR[:2], psi=PSI, h=H, sigma=1.0, n=2), "beta_star"),
    ],
)
def test_bad_inputs_raise(call, match):
    with pytest.raises(ValueError, match=match):
        call()
