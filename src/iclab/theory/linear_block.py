"""Closed-form risks for in-context linear regression with Gaussian data.

Setting of Zhang, Wu, Bartlett 2024 (arXiv 2402.14951), Assumption 3.1:
β ~ N(β*, Ψ); x, x_q ~ N(0, H); y = xᵀβ + ε, ε ~ N(0, σ²); n context
examples; the risk is E(f − y_q)² against the noisy query label
y_q = x_qᵀβ + ε_q. Matrices are (d, d) float64 arrays, β* a (d,) vector.
"""

from dataclasses import dataclass

import numpy as np

from iclab.numerics import (
    check_count,
    check_covariance,
    check_matrix,
    check_nonnegative,
    check_positive,
    check_vector,
    gaussian_cubature_degree5,
    map_chunks,
    prefix_gram,
)


@dataclass(frozen=True)
class GDBetaOptimum:
    """Risk-minimising GD-β parameters: β₀ (d,), Γ (d, d) and their risk."""

    beta0: np.ndarray
    gamma: np.ndarray
    risk: float


@dataclass(frozen=True)
class MCEstimate:
    """Monte-Carlo mean and its standard error (floats, or arrays of equal shape)."""

    mean: float | np.ndarray
    sem: float | np.ndarray


def expected_sample_cov_sandwich(A: np.ndarray, H: np.ndarray, n: int) -> np.ndarray:
    """E[Ŝ A Ŝ] for Ŝ = (1/n)Σ_{i≤n} x_i x_iᵀ, x_i ~ N(0, H) i.i.d.

    The Gaussian fourth moment used for the test error in Zhang, Frei, Bartlett
    2024 (proof of Theorem 5) and for the GD-β risk of Zhang, Wu, Bartlett 2024:
    E[x_i x_iᵀ A x_j x_jᵀ] = HAH for i ≠ j, and by Isserlis
    E[x xᵀ A x xᵀ] = HAH + HAᵀH + tr(AH)H; the n² − n and n terms give
    HAH + (HAᵀH + tr(AH)H)/n, i.e. (1 + 1/n)HAH + tr(AH)H/n for symmetric A.
    """
    d = _dimension("H", H)
    A = check_matrix("A", A, d)
    H = check_covariance("H", H, d, definite=False)
    n = check_count("n", n, minimum=1)
    return H @ A @ H + (H @ A.T @ H + np.trace(A @ H) * H) / n


def gd_beta_risk(
    beta0: np.ndarray,
    gamma: np.ndarray,
    *,
    beta_star: np.ndarray,
    psi: np.ndarray,
    h: np.ndarray,
    sigma: float,
    n: int,
) -> float:
    """Exact ICL risk E(f − y_q)² of one-step GD-β with any (β₀, Γ) (Zhang, Wu, Bartlett 2024).

    f = x_qᵀ(β₀ + ΓXᵀ(y − Xβ₀)/n). With v = β − β₀, Ψ̃ = E vvᵀ = Ψ + (β* − β₀)(β* − β₀)ᵀ
    and Ŝ = XᵀX/n: y_q − f = x_qᵀ(v − ΓŜv − ΓXᵀε/n) + ε_q, so
    risk = σ² + tr(HΨ̃) − 2tr(HΓHΨ̃) + tr(ΓᵀHΓ·[E(ŜΨ̃Ŝ) + σ²H/n]),
    with E(ŜΨ̃Ŝ) = (1 + 1/n)HΨ̃H + tr(HΨ̃)H/n (expected_sample_cov_sandwich).
    """
    d, beta_star, psi, h, sigma, n = _check_task(beta_star, psi, h, sigma, n)
    beta0, gamma = check_vector("beta0", beta0, d), check_matrix("gamma", gamma, d)
    offset = beta_star - beta0  # (d,)
    psi_tilde = psi + np.outer(offset, offset)  # (d, d)
    second_moment = expected_sample_cov_sandwich(psi_tilde, h, n) + sigma**2 * h / n  # (d, d)
    return float(
        sigma**2
        + np.trace(h @ psi_tilde)
        - 2 * np.trace(h @ gamma @ h @ psi_tilde)
        + np.trace(gamma.T @ h @ gamma @ second_moment)
    )


@dataclass(frozen=True)
class GDBetaFlow:
    """Gradient flow of the GD-β risk, sampled at ``times`` (T,): β₀ (T, d), Γ (T, d, d), the risk (T,)."""

    times: np.ndarray
    beta0: np.ndarray
    gamma: np.ndarray
    risk: np.ndarray


def gd_beta_risk_gradient(
    beta0: np.ndarray,
    gamma: np.ndarray,
    *,
    beta_star: np.ndarray,
    psi: np.ndarray,
    h: np.ndarray,
    sigma: float,
    n: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Gradient of gd_beta_risk in (β₀, Γ): (d,) and (d, d) (Zhang, Wu, Bartlett 2024, the flow of Theorem 6.3).

    With δ = β* − β₀, Ψ̃ = Ψ + δδᵀ and M = E(ŜΨ̃Ŝ) + σ²H/n = (1 + 1/n)HΨ̃H + (tr(HΨ̃) + σ²)H/n:
    ∇_Γ = 2HΓM − 2HΨ̃H. The risk depends on β₀ only through Ψ̃, dR = tr(G dΨ̃) with
    G = H − 2HΓH + (1 + 1/n)HΓᵀHΓH + tr(ΓᵀHΓH)H/n, and dΨ̃ = −(dβ₀δᵀ + δdβ₀ᵀ): ∇_β₀ = −(G + Gᵀ)δ.
    """
    d, beta_star, psi, h, sigma, n = _check_task(beta_star, psi, h, sigma, n)
    beta0, gamma = check_vector("beta0", beta0, d), check_matrix("gamma", gamma, d)
    offset = beta_star - beta0  # δ (d,)
    psi_tilde = psi + np.outer(offset, offset)  # (d, d)
    moment = (1 + 1 / n) * h @ psi_tilde @ h + (np.trace(h @ psi_tilde) + sigma**2) * h / n  # M (d, d)
    grad_gamma = 2 * h @ gamma @ moment - 2 * h @ psi_tilde @ h
    hgh = h @ gamma.T @ h @ gamma @ h  # HΓᵀHΓH
    g = h - 2 * h @ gamma @ h + (1 + 1 / n) * hgh + np.trace(gamma.T @ h @ gamma @ h) * h / n  # (d, d)
    return -(g + g.T) @ offset, grad_gamma


def gd_beta_flow(
    beta0: np.ndarray,
    gamma: np.ndarray,
    times: np.ndarray,
    *,
    beta_star: np.ndarray,
    psi: np.ndarray,
    h: np.ndarray,
    sigma: float,
    n: int,
) -> GDBetaFlow:
    """Gradient flow d(β₀, Γ)/dt = −∇R(β₀, Γ) on the GD-β risk from (β₀, Γ) at t = 0 (Zhang, Wu, Bartlett
    2024, Theorem 6.3: it reaches the global minimiser gd_beta_optimum), sampled at ``times`` (increasing,
    from 0). Integrated in float64 by scipy's LSODA (stiff-safe) at rtol 1e-10, atol 1e-13. Plain SGD on
    E(f − y)² at step size η follows it at t = η·step."""
    from scipy.integrate import solve_ivp  # here, not at the top: importing it costs every job ~0.7 s

    d = _dimension("h", h)
    times = np.asarray(times, dtype=np.float64)
    if times.ndim != 1 or times[0] != 0 or np.any(np.diff(times) <= 0):
        raise ValueError("times must be increasing and start at 0")
    task = dict(beta_star=beta_star, psi=psi, h=h, sigma=sigma, n=n)

    def velocity(_: float, state: np.ndarray) -> np.ndarray:
        grad_beta0, grad_gamma = gd_beta_risk_gradient(state[:d], state[d:].reshape(d, d), **task)
        return -np.concatenate([grad_beta0, grad_gamma.ravel()])

    start = np.concatenate([check_vector("beta0", beta0, d), check_matrix("gamma", gamma, d).ravel()])
    path = solve_ivp(velocity, (0.0, times[-1]), start, method="LSODA", t_eval=times, rtol=1e-10, atol=1e-13)
    if not path.success:
        raise RuntimeError(f"gradient flow of the GD-β risk failed: {path.message}")
    beta0s, gammas = path.y[:d].T, path.y[d:].T.reshape(len(times), d, d)  # (T, d), (T, d, d)
    risks = np.array([gd_beta_risk(b, g, **task) for b, g in zip(beta0s, gammas)])
    return GDBetaFlow(times=times, beta0=beta0s, gamma=gammas, risk=risks)


def gd_beta_optimum(*, beta_star: np.ndarray, psi: np.ndarray, h: np.ndarray, sigma: float, n: int) -> GDBetaOptimum:
    """Risk-minimising (β₀, Γ) of one-step GD-β and its risk (Zhang, Wu, Bartlett 2024).

    This is the limit of gradient flow over (β₀, Γ) in their Theorem 6.3.
    In gd_beta_risk, β₀ enters only through Ψ̃ = Ψ + (β* − β₀)(β* − β₀)ᵀ, with
    a PSD coefficient, so β₀ = β*. Setting the Γ-gradient to zero,
    HΓC = HΨH with C = H((1 + 1/n)ΨH + c·I), c = (tr(HΨ) + σ²)/n, gives
    Γ* = ((1 + 1/n)ΨH + c·I)⁻¹Ψ and risk σ² + tr(HΨ) − tr(Γ*HΨH).
    """
    d, beta_star, psi, h, sigma, n = _check_task(beta_star, psi, h, sigma, n)
    shrinkage = (np.trace(h @ psi) + sigma**2) / n
    gamma = np.linalg.solve((1 + 1 / n) * psi @ h + shrinkage * np.eye(d), psi)  # (d, d)
    risk = sigma**2 + np.trace(h @ psi) - np.trace(gamma @ h @ psi @ h)
    return GDBetaOptimum(beta0=beta_star.copy(), gamma=gamma, risk=float(risk))


def bayes_risk(*, psi: np.ndarray, h: np.ndarray, sigma: float, n: int, n_mc: int = 4000, seed: int = 0) -> MCEstimate:
    """Bayes risk σ² + E_X tr(H(XᵀX/σ² + Ψ⁻¹)⁻¹) with n examples (Zhang, Wu, Bartlett 2024).

    Given X, β | data is Gaussian with covariance Σ = (XᵀX/σ² + Ψ⁻¹)⁻¹, and the
    posterior mean predictor errs by x_qᵀ(β − E[β | data]) + ε_q, whose mean
    square is σ² + tr(HΣ): exact in β, ε and x_q, and independent of β*. The
    expectation over the design X (n rows from N(0, H)) is a Monte-Carlo
    average over n_mc draws, shared with bayes_risk_curve: for the same seed,
    bayes_risk(n) equals bayes_risk_curve(n_points=K) at position n for any K > n.
    """
    d = _dimension("h", h)
    psi_inv, h, sigma = _check_bayes_inputs(psi, h, sigma, d)
    n = check_count("n", n)
    xs = _design_draws(h, n_mc=n_mc, n_points=n, seed=seed)  # (n_mc, n, d)

    def excess(xs: np.ndarray) -> np.ndarray:
        gram = np.einsum("mni,mnj->mij", xs, xs)  # (m, d, d)
        return _posterior_trace(gram, psi_inv, h, sigma)  # (m,)

    return _mc_estimate(sigma**2 + map_chunks(excess, xs))


def bayes_risk_curve(
    *, psi: np.ndarray, h: np.ndarray, sigma: float, n_points: int, n_mc: int = 4000, seed: int = 0
) -> MCEstimate:
    """bayes_risk for every prefix length n = 0..n_points−1 at once (arrays of shape (n_points,)).

    The same n_mc designs of n_points rows serve all n (prefixes), as position n
    of a prompt does in the estimator contract; n = 0 gives σ² + tr(HΨ) (sem 0 up
    to round-off).
    """
    d = _dimension("h", h)
    psi_inv, h, sigma = _check_bayes_inputs(psi, h, sigma, d)
    n_points = check_count("n_points", n_points, minimum=1)
    xs = _design_draws(h, n_mc=n_mc, n_points=n_points, seed=seed)  # (n_mc, K, d)

    def excess(xs: np.ndarray) -> np.ndarray:
        return _posterior_trace(prefix_gram(xs), psi_inv, h, sigma)  # (m, K)

    return _mc_estimate(sigma**2 + map_chunks(excess, xs))


@dataclass(frozen=True)
class LSAOptimum:
    """Risk-minimising LSA parameters found by lsa_class_optimum: u = W^{PV}[d+1, :] (d+1,),
    W = W^{KQ}[:, :d] (d+1, d), their risk, and the final risk reached from each start (S,)."""

    u: np.ndarray
    w: np.ndarray
    risk: float
    start_risks: np.ndarray


def lsa_class_risk(
    u: np.ndarray,
    w: np.ndarray,
    *,
    beta_star: np.ndarray,
    psi: np.ndarray,
    h: np.ndarray,
    sigma: float,
    n: int,
) -> float:
    """Exact ICL risk of the LSA of eq. (3.4) of Zhang, Wu, Bartlett 2024 (mask M = diag(I_n, 0)) at any weights,
    under their Assumption 3.1, from Gaussian moments as in their Appendix B.

    Only u = W^{PV}[d+1, :] and W = W^{KQ}[:, :d] reach the prediction: f = uᵀĈWx_q with
    Ĉ = (1/n)Σ z_i z_iᵀ, z_i = (x_i, y_i). So risk = σ² + E(WᵀĈu − β)ᵀH(WᵀĈu − β). Given β,
    z ~ N(0, Σ_β), Σ_β = [[H, Hβ], [βᵀH, βᵀHβ + σ²]], and Isserlis gives
    E[ĈAĈ | β] = (1 + 1/n)Σ_βAΣ_β + tr(AΣ_β)Σ_β/n for A = WHWᵀ. The conditional risk is a polynomial
    of degree 4 in β ~ N(β*, Ψ); its mean is computed exactly by a degree-5 Gaussian cubature.
    """
    import torch  # here, not at the top: figure jobs import this module

    d, *checked = _check_task(beta_star, psi, h, sigma, n)
    u, w = _check_lsa_weights(u, w, d)
    task = _lsa_class_task(*checked)
    as_tensor = dict(dtype=torch.float64)
    return float(_lsa_class_risk_torch(torch.tensor(u, **as_tensor), torch.tensor(w, **as_tensor), **task))


def lsa_class_optimum(
    *,
    beta_star: np.ndarray,
    psi: np.ndarray,
    h: np.ndarray,
    sigma: float,
    n: int,
    random_starts: int = 2,
    seed: int = 0,
) -> LSAOptimum:
    """The LSA class's optimal risk min_{u, W} lsa_class_risk (Zhang, Wu, Bartlett 2024, Theorem 4.1 compares it
    with gd_beta_optimum), by BFGS in float64 on the exact risk and its autograd gradient.

    The risk is a non-convex quartic in (u, W); BFGS runs from the best one-step GD from zero written as an LSA
    (u = e_{d+1}, W = [Γ₀ᵀ; 0], Γ₀ = the GD-β optimum with β₀ fixed at 0) and from ``random_starts`` Gaussian
    starts (scale 0.5, seeded); the best end point is returned, with every start's final risk. Random starts
    do end in worse local minima (measured: 9.75 against 7.61 at d = 20, 3.84 against 3.17 at d = 5), the GD
    start has not so far.
    """
    import torch
    from scipy.optimize import minimize

    d, beta_star, psi, h, sigma, n = _check_task(beta_star, psi, h, sigma, n)
    task = _lsa_class_task(beta_star, psi, h, sigma, n)
    random_starts = check_count("random_starts", random_starts)

    def risk_and_gradient(flat: np.ndarray) -> tuple[float, np.ndarray]:
        params = torch.tensor(flat, dtype=torch.float64, requires_grad=True)
        risk = _lsa_class_risk_torch(params[: d + 1], params[d + 1 :].view(d + 1, d), **task)
        (gradient,) = torch.autograd.grad(risk, params)
        return risk.item(), gradient.numpy()

    second_moment = psi + np.outer(beta_star, beta_star)  # E ββᵀ (d, d)
    gd_from_zero = gd_beta_optimum(beta_star=np.zeros(d), psi=second_moment, h=h, sigma=sigma, n=n).gamma
    starts = [np.concatenate([np.eye(d + 1)[d], np.vstack([gd_from_zero.T, np.zeros((1, d))]).ravel()])]
    rng = np.random.default_rng(seed)
    starts += [0.5 * rng.standard_normal((d + 1) * (d + 1)) for _ in range(random_starts)]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tensors of ~10⁴ entries: a second thread only contends with BFGS's numpy (3× slower)
    try:
        ends = [
            minimize(risk_and_gradient, start, jac=True, method="BFGS", options={"gtol": 1e-9, "maxiter": 20_000})
            for start in starts
        ]
    finally:
        torch.set_num_threads(threads)
    best = min(ends, key=lambda end: end.fun)
    return LSAOptimum(
        u=best.x[: d + 1],
        w=best.x[d + 1 :].reshape(d + 1, d),
        risk=float(best.fun),
        start_risks=np.array([end.fun for end in ends]),
    )


# ---------------------------------------------------------------- helpers


def _posterior_trace(gram: np.ndarray, psi_inv: np.ndarray, h: np.ndarray, sigma: float) -> np.ndarray:
    """tr(H(gram/σ² + Ψ⁻¹)⁻¹): (..., d, d) → (...)."""
    precision = gram / sigma**2 + psi_inv  # (..., d, d)
    return np.trace(np.linalg.solve(precision, np.broadcast_to(h, precision.shape)), axis1=-2, axis2=-1)


def _design_draws(h: np.ndarray, *, n_mc: int, n_points: int, seed: int) -> np.ndarray:
    """n_mc designs of n_points rows from N(0, H): (n_mc, n_points, d).

    Drawn row index first, so the first n rows of every design do not depend on
    n_points: bayes_risk(n) and bayes_risk_curve share draws for the same seed.
    """
    n_mc = check_count("n_mc", n_mc, minimum=2)  # 2 for a standard error
    factor = _psd_root(h)  # factor @ factor.T = H, (d, d)
    normals = np.random.default_rng(seed).standard_normal((n_points, n_mc, len(h)))  # (K, n_mc, d)
    return normals.transpose(1, 0, 2) @ factor.T


def _mc_estimate(samples: np.ndarray) -> MCEstimate:
    """Mean and standard error over the leading (Monte-Carlo) axis."""
    mean = samples.mean(axis=0)
    sem = samples.std(axis=0, ddof=1) / np.sqrt(len(samples))
    if samples.ndim == 1:
        return MCEstimate(mean=float(mean), sem=float(sem))
    return MCEstimate(mean=mean, sem=sem)


def _check_bayes_inputs(psi: np.ndarray, h: np.ndarray, sigma: float, d: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Ψ⁻¹ (Ψ symmetric positive definite), H (symmetric PSD) and σ > 0."""
    psi_inv = np.linalg.inv(check_covariance("psi", psi, d, definite=True))
    h = check_covariance("h", h, d, definite=False)
    return psi_inv, h, check_positive("sigma", sigma)


def _dimension(name: str, matrix: np.ndarray) -> int:
    """d of a square (d, d) matrix argument."""
    shape = np.shape(matrix)
    if len(shape) != 2 or shape[0] != shape[1] or shape[0] == 0:
        raise ValueError(f"{name} must be a square (d, d) matrix with d >= 1, got shape {shape}")
    return shape[0]


def _check_lsa_weights(u: np.ndarray, w: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    """u (d+1,) and W (d+1, d) as float64."""
    u, w = np.asarray(u, dtype=np.float64), np.asarray(w, dtype=np.float64)
    if u.shape != (d + 1,) or w.shape != (d + 1, d):
        raise ValueError(f"u must have shape ({d + 1},) and w shape ({d + 1}, {d}), got {u.shape} and {w.shape}")
    return u, w


def _check_task(
    beta_star: np.ndarray, psi: np.ndarray, h: np.ndarray, sigma: float, n: int
) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, float, int]:
    """d and the checked task of Assumption 3.1: β* (d,), Ψ and H symmetric PSD (d, d), σ ≥ 0, n ≥ 1."""
    d = _dimension("h", h)
    return (
        d,
        check_vector("beta_star", beta_star, d),
        check_covariance("psi", psi, d, definite=False),
        check_covariance("h", h, d, definite=False),
        check_nonnegative("sigma", sigma),
        check_count("n", n, minimum=1),
    )


def _psd_root(matrix: np.ndarray) -> np.ndarray:
    """A factor F of a symmetric PSD matrix, F Fᵀ = matrix: (d, d)."""
    eigvals, eigvecs = np.linalg.eigh(matrix)
    return eigvecs * np.sqrt(np.clip(eigvals, 0, None))


def _lsa_class_task(beta_star: np.ndarray, psi: np.ndarray, h: np.ndarray, sigma: float, n: int) -> dict:
    """A checked task as lsa_class_risk's torch arguments: the cubature nodes of β ~ N(β*, Ψ) as float64 tensors."""
    import torch

    nodes, weights = gaussian_cubature_degree5(len(h))  # (J, d), (J,)
    as_tensor = dict(dtype=torch.float64)
    return dict(
        betas=torch.tensor(beta_star + nodes @ _psd_root(psi).T, **as_tensor),
        weights=torch.tensor(weights, **as_tensor),
        h=torch.tensor(h, **as_tensor),
        sigma=sigma,
        n=n,
    )


def _lsa_class_risk_torch(u, w, *, betas, weights, h, sigma, n):  # noqa: ANN001, ANN202
    """lsa_class_risk in torch: u (d+1,), w (d+1, d), cubature nodes betas (J, d) with weights (J,) → scalar."""
    import torch

    d = h.shape[0]
    u_x, u_y, w_x, w_y = u[:d], u[d], w[:d], w[d]
    a = (u_x + u_y * betas) @ h  # (J, d): H Bᵀu with B = [I; βᵀ]
    s = (betas * a).sum(-1) + sigma**2 * u_y  # (J,): v = Σ_β u = (a, s)
    t = a @ w_x + s[:, None] * w_y  # (J, d): Wᵀv
    h_betas = betas @ h  # (J, d)
    beta_h_beta = (h_betas * betas).sum(-1)  # (J,)
    # tr(WHWᵀΣ_β) = tr(HPHPᵀ) + σ²w_yᵀHw_y with P = WᵀB = W_xᵀ + w_yβᵀ: expanded in β, O(Jd) instead of O(Jd³).
    w_y_h_w_y = w_y @ h @ w_y
    trace = (
        torch.trace(h @ w_x.T @ h @ w_x)
        + 2 * betas @ (h @ w_x @ h @ w_y)
        + w_y_h_w_y * beta_h_beta
        + sigma**2 * w_y_h_w_y
    )  # (J,)
    quadratic = (u_x * a).sum(-1) + u_y * s  # (J,): uᵀΣ_βu
    sandwich = (1 + 1 / n) * ((t @ h) * t).sum(-1) + trace * quadratic / n  # (J,): E[uᵀĈWHWᵀĈu | β]
    conditional = sandwich - 2 * (h_betas * t).sum(-1) + beta_h_beta  # E[(WᵀĈu − β)ᵀH(·) | β]
    return sigma**2 + weights @ conditional
