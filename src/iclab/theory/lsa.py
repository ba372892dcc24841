"""Gradient flow of linear self-attention and its test error (Zhang, Frei, Bartlett 2024).

Setting of "Trained transformers learn linear models in-context" (JMLR 25,
arXiv 2306.09927): training prompts with w ~ N(0, I_d), x ~ N(0, Λ),
y = ⟨w, x⟩ (noiseless), N context examples. From their initialisation
(Assumption 3) only U₁₁ = W^{KQ}[:d, :d] (d, d) and u₋₁ = W^{PV}[d, d] move, and
the LSA prediction is ŷ = x_qᵀ A ĥ with A = u₋₁U₁₁ᵀ, ĥ = (1/N)Σ yᵢxᵢ = Ŝw,
Ŝ = (1/N)Σ xᵢxᵢᵀ. Λ (argument ``lam``) is a symmetric positive definite (d, d)
float64 matrix; Γ = (1 + 1/N)Λ + (tr Λ/N)I is a polynomial in Λ, so Λ and Γ
always commute and nothing below assumes more.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from iclab.numerics import (
    check_count,
    check_covariance,
    check_finite,
    check_matrix,
    check_nonnegative,
    check_positive,
    check_vector,
)
from iclab.theory.linear_block import expected_sample_cov_sandwich


@dataclass(frozen=True)
class FlowPath:
    """Reduced gradient flow sampled at ``times`` (T,): U₁₁ (T, d, d), u₋₁ (T,), loss (T,), distance (T,).

    ``loss`` is population_loss (½E(ŷ − y)²) and ``distance`` is
    relative_distance_to_limit, ‖u₋₁U₁₁ − Γ⁻¹‖_F / ‖Γ⁻¹‖_F, at each time.
    """

    times: np.ndarray
    u11: np.ndarray
    u_pv: np.ndarray
    loss: np.ndarray
    distance: np.ndarray


def gamma_matrix(lam: np.ndarray, n: int) -> np.ndarray:
    """Γ = (1 + 1/N)Λ + (tr Λ/N)I of Zhang, Frei, Bartlett 2024, Theorem 4: (d, d).

    It is the factor in E[ŜŜ] = (1 + 1/N)Λ² + tr(Λ)Λ/N = ΛΓ (Isserlis, see
    expected_sample_cov_sandwich with A = I), so the global minimiser of the
    training loss is u₋₁U₁₁ = Γ⁻¹.
    """
    lam = _check_lam(lam)
    n = check_count("n", n, minimum=1)
    return (1 + 1 / n) * lam + np.trace(lam) / n * np.eye(len(lam))


def limit_weights(lam: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(W^{KQ}, W^{PV}), each (d+1, d+1), that gradient flow reaches (Zhang, Frei, Bartlett 2024, Theorem 4).

    W^{KQ} = c⁻¹[[Γ⁻¹, 0], [0, 0]], W^{PV} = c[[0, 0], [0, 1]], c = (tr Γ⁻²)^{1/4}.
    The product u₋₁U₁₁ = Γ⁻¹ minimises the loss; the split follows from the
    conserved ‖U₁₁‖_F² − u₋₁² = 0 of the balanced initialisation: u₋₁² = ‖Γ⁻¹‖_F.
    """
    gamma_inv = np.linalg.inv(gamma_matrix(lam, n))  # (d, d)
    d = len(gamma_inv)
    scale = np.trace(gamma_inv @ gamma_inv) ** 0.25
    w_kq = np.zeros((d + 1, d + 1))
    w_kq[:d, :d] = gamma_inv / scale
    w_pv = np.zeros((d + 1, d + 1))
    w_pv[d, d] = scale
    return w_kq, w_pv


def population_loss(u11: np.ndarray, u_pv: float, lam: np.ndarray, n: int) -> float:
    """Training loss L(U₁₁, u₋₁) = ½E(ŷ − y_q)² (Zhang, Frei, Bartlett 2024, proof of Lemma on the reduced flow).

    With A = u₋₁U₁₁ᵀ (any U₁₁, not necessarily symmetric) and ŷ − y_q = x_qᵀ(AŜ − I)w:
    E over w ~ N(0, I), x_q ~ N(0, Λ) gives tr((AŜ − I)ᵀΛ(AŜ − I)), and E Ŝ = Λ,
    E[ŜŜ] = ΛΓ give L = ½[tr Λ − 2tr(AΛ²) + tr(AᵀΛAΛΓ)]. No commuting assumption.
    """
    lam = _check_lam(lam)
    u11 = check_matrix("u11", u11, len(lam))
    u_pv = check_finite("u_pv", u_pv)
    a = u_pv * u11.T  # (d, d)
    second_moment = lam @ gamma_matrix(lam, n)  # E[ŜŜ], (d, d)
    return float(0.5 * (np.trace(lam) - 2 * np.trace(a @ lam @ lam) + np.trace(a.T @ lam @ a @ second_moment)))


def flow_rhs(u11: np.ndarray, u_pv: float, lam: np.ndarray, n: int) -> tuple[np.ndarray, float]:
    """(dU₁₁/dt (d, d), du₋₁/dt): the reduced gradient flow of Zhang, Frei, Bartlett 2024 (their Lemma).

    dU₁₁/dt = −u₋₁²ΓΛU₁₁Λ + u₋₁Λ², du₋₁/dt = −tr(u₋₁ΓΛU₁₁ΛU₁₁ᵀ − Λ²U₁₁ᵀ).
    This is −∇population_loss: ∇_A L = ΛAΛΓ − Λ² and A = u₋₁U₁₁ᵀ give
    ∇_U L = u₋₁(∇_A L)ᵀ and ∂_u L = tr(U₁₁∇_A L), using ΓΛ = ΛΓ.
    """
    lam = _check_lam(lam)
    u11 = check_matrix("u11", u11, len(lam))
    u_pv = check_finite("u_pv", u_pv)
    gamma = gamma_matrix(lam, n)  # (d, d)
    lam_sq = lam @ lam  # (d, d)
    d_u11 = -(u_pv**2) * gamma @ lam @ u11 @ lam + u_pv * lam_sq  # (d, d)
    d_u_pv = -np.trace(u_pv * gamma @ lam @ u11 @ lam @ u11.T - lam_sq @ u11.T)
    return d_u11, float(d_u_pv)


def balanced_init(
    lam: np.ndarray, n: int, sigma: float, theta_theta_t: np.ndarray | None = None
) -> tuple[np.ndarray, float]:
    """(U₁₁(0) = σΘΘᵀ (d, d), u₋₁(0) = σ): Assumption 3 of Zhang, Frei, Bartlett 2024.

    W^{PV}(0) = σ[[0, 0], [0, 1]], W^{KQ}(0) = σ[[ΘΘᵀ, 0], [0, 0]]. Checks their
    conditions: ΘΘᵀ symmetric PSD with ‖ΘΘᵀ‖_F = 1 (default I/√d), ΘΘᵀΛ = ΛΘΘᵀ,
    and σ²‖Γ‖_op√d < 2. Then ‖U₁₁‖_F² − u₋₁² = 0, which the flow conserves.
    """
    lam = _check_lam(lam)
    d = len(lam)
    gamma = gamma_matrix(lam, n)
    sigma = check_positive("sigma", sigma)
    if theta_theta_t is None:
        theta_theta_t = np.eye(d) / np.sqrt(d)
    theta_theta_t = check_covariance("theta_theta_t", theta_theta_t, d, definite=False)
    norm = np.linalg.norm(theta_theta_t)
    if abs(norm - 1) > 1e-8:
        raise ValueError(f"theta_theta_t must have Frobenius norm 1, got {norm:.6g}")
    commutator = np.linalg.norm(theta_theta_t @ lam - lam @ theta_theta_t)
    if commutator > 1e-10 * np.linalg.norm(lam):
        raise ValueError(f"theta_theta_t must commute with lam, ‖[ΘΘᵀ, Λ]‖_F = {commutator:.3g}")
    bound = sigma**2 * np.linalg.norm(gamma, 2) * np.sqrt(d)
    if bound >= 2:
        raise ValueError(f"sigma too large for Assumption 3: σ²‖Γ‖_op√d = {bound:.4g} must be < 2")
    return sigma * theta_theta_t, sigma


def integrate_flow(
    lam: np.ndarray,
    n: int,
    sigma: float,
    times: np.ndarray,
    theta_theta_t: np.ndarray | None = None,
    rtol: float = 1e-8,
) -> FlowPath:
    """Solve the reduced flow (flow_rhs) from balanced_init and sample it at ``times`` (Zhang, Frei, Bartlett 2024).

    The state (U₁₁, u₋₁) is flattened to (d² + 1,) and integrated from t = 0 with
    scipy's LSODA (rtol as given, atol = rtol·1e-3), which stays cheap when the
    flow becomes stiff near the limit u₋₁U₁₁ = Γ⁻¹ (Theorem 4).
    """
    lam = _check_lam(lam)
    d = len(lam)
    u11_0, u_pv_0 = balanced_init(lam, n, sigma, theta_theta_t)
    times = np.asarray(times, dtype=np.float64)
    if times.ndim != 1 or len(times) == 0 or not np.all(np.isfinite(times)) or times[0] < 0:
        raise ValueError(f"times must be a non-empty 1-d array of finite values >= 0, got {times!r}")
    if np.any(np.diff(times) <= 0):
        raise ValueError("times must be strictly increasing")
    rtol = check_positive("rtol", rtol)

    def rhs(_: float, state: np.ndarray) -> np.ndarray:
        d_u11, d_u_pv = flow_rhs(state[:-1].reshape(d, d), state[-1], lam, n)
        return np.append(d_u11.ravel(), d_u_pv)  # (d² + 1,)

    state0 = np.append(u11_0.ravel(), u_pv_0)  # (d² + 1,)
    if times[-1] == 0:
        states = state0[:, None]  # (d² + 1, 1)
    else:
        from scipy.integrate import solve_ivp  # here, not at the top: importing it costs every job ~0.6 s

        solution = solve_ivp(rhs, (0.0, times[-1]), state0, method="LSODA", t_eval=times, rtol=rtol, atol=rtol * 1e-3)
        if not solution.success:
            raise RuntimeError(f"integrate_flow: solve_ivp failed: {solution.message}")
        states = solution.y  # (d² + 1, T)
    u11 = states[:-1].T.reshape(len(times), d, d)  # (T, d, d)
    u_pv = states[-1].copy()  # (T,)
    loss = np.array([population_loss(u, v, lam, n) for u, v in zip(u11, u_pv)])  # (T,)
    distance = relative_distance_to_limit(u11, u_pv, lam, n)  # (T,)
    return FlowPath(times=times, u11=u11, u_pv=u_pv, loss=loss, distance=distance)


def relative_distance_to_limit(
    u11: np.ndarray, u_pv: float | np.ndarray, lam: np.ndarray, n: int
) -> float | np.ndarray:
    """‖u₋₁U₁₁ − Γ⁻¹‖_F / ‖Γ⁻¹‖_F, the distance to Theorem 4's limit (Zhang, Frei, Bartlett 2024).

    Takes one (d, d) U₁₁ and a scalar u₋₁ (returns a float), or a stack
    (..., d, d) and (...) (returns an array of shape (...)).
    """
    lam = _check_lam(lam)
    d = len(lam)
    u11 = np.asarray(u11, dtype=np.float64)
    u_pv = np.asarray(u_pv, dtype=np.float64)
    if u11.ndim < 2 or u11.shape[-2:] != (d, d):
        raise ValueError(f"u11 must have shape (..., d, d) with d = {d}, got {u11.shape}")
    if u_pv.shape != u11.shape[:-2]:
        raise ValueError(f"u_pv must have shape {u11.shape[:-2]} to match u11, got {u_pv.shape}")
    gamma_inv = np.linalg.inv(gamma_matrix(lam, n))  # (d, d)
    gap = u_pv[..., None, None] * u11 - gamma_inv  # (..., d, d)
    distance = np.linalg.norm(gap, axis=(-2, -1)) / np.linalg.norm(gamma_inv)
    return float(distance) if distance.ndim == 0 else distance


def expected_error(
    a_matrix: np.ndarray,
    lam: np.ndarray,
    m: int,
    *,
    sigma: float = 0.0,
    lam_query: np.ndarray | None = None,
    lam_task: np.ndarray | None = None,
) -> float:
    """Exact E(ŷ − y_q)² of ŷ = x_qᵀAĥ, ĥ = (1/M)Σ_{i≤M} yᵢxᵢ (Zhang, Frei, Bartlett 2024, proof of Theorem 5).

    Context xᵢ ~ N(0, Λ), query x_q ~ N(0, Λ_q) (lam_query, default Λ), task
    w ~ N(0, Ψ) (lam_task, default I; PSD, so Ψ = wwᵀ is a fixed w), labels
    y = ⟨w, x⟩ + ε, ε ~ N(0, σ²) on context and query. The error is
    x_qᵀ(AŜ − I)w + x_qᵀA(1/M)Σεᵢxᵢ − ε_q with uncorrelated terms; E over w, x_q
    and ε, then Ŝ (E Ŝ = Λ, E[ŜΨŜ] = (1 + 1/M)ΛΨΛ + tr(ΨΛ)Λ/M) gives
        σ² + tr(Λ_qΨ) − 2tr(Λ_qAΛΨ) + tr(AᵀΛ_qA[(1 + 1/M)ΛΨΛ + (tr(ΨΛ) + σ²)Λ/M]).
    A = Γ⁻¹ is the trained LSA; A = u₋₁U₁₁ᵀ any reduced LSA (then σ = 0, Ψ = I,
    Λ_q = Λ, M = N give 2·population_loss). ``m = np.inf`` gives the M → ∞ limit (E[ĥĥᵀ] = ΛΨΛ).
    """
    lam = _check_lam(lam)
    d = len(lam)
    a_matrix = check_matrix("a_matrix", a_matrix, d)
    m = m if m == np.inf else check_count("m", m, minimum=1)
    sigma = check_nonnegative("sigma", sigma)
    lam_query = lam if lam_query is None else check_covariance("lam_query", lam_query, d, definite=False)
    lam_task = np.eye(d) if lam_task is None else check_covariance("lam_task", lam_task, d, definite=False)
    if m == np.inf:
        second_moment = lam @ lam_task @ lam  # (d, d)
    else:
        second_moment = expected_sample_cov_sandwich(lam_task, lam, m) + sigma**2 * lam / m  # E[ĥĥᵀ], (d, d)
    return float(
        sigma**2
        + np.trace(lam_query @ lam_task)
        - 2 * np.trace(lam_query @ a_matrix @ lam @ lam_task)
        + np.trace(a_matrix.T @ lam_query @ a_matrix @ second_moment)
    )


def theorem5_error(lam: np.ndarray, n: int, m: int, *, a: np.ndarray, cov_xy: np.ndarray, min_risk: float) -> float:
    """Test error of the converged LSA on a length-M prompt, Theorem 5 of Zhang, Frei, Bartlett 2024, literally.

    For x ~ N(0, Λ), any joint law of (x, y), a = Λ⁻¹E[xy], Σ = Cov(xy):
    min_w E(⟨w, x⟩ − y)² + (1/M)tr(Γ⁻²ΛΣ)
        + (1/N²)[‖a‖²_{Γ⁻²Λ³} + 2tr(Λ)‖a‖²_{Γ⁻²Λ²} + tr(Λ)²‖a‖²_{Γ⁻²Λ}].
    The N-term is aᵀΛ(I − Γ⁻¹Λ)²a with Γ − Λ = (Λ + tr(Λ)I)/N.
    """
    lam = _check_lam(lam)
    d = len(lam)
    gamma_inv = np.linalg.inv(gamma_matrix(lam, n))  # (d, d)
    m = check_count("m", m, minimum=1)
    a = check_vector("a", a, d)
    cov_xy = check_covariance("cov_xy", cov_xy, d, definite=False)
    min_risk = check_nonnegative("min_risk", min_risk)
    gamma_inv_sq = gamma_inv @ gamma_inv  # (d, d)
    trace = np.trace(lam)
    bias = (
        a @ gamma_inv_sq @ lam @ lam @ lam @ a
        + 2 * trace * a @ gamma_inv_sq @ lam @ lam @ a
        + trace**2 * a @ gamma_inv_sq @ lam @ a
    )
    return float(min_risk + np.trace(gamma_inv_sq @ lam @ cov_xy) / m + bias / n**2)


def theorem5_error_linear(lam: np.ndarray, n: int, m: int, w: np.ndarray, sigma: float = 0.0) -> float:
    """theorem5_error for y = ⟨w, x⟩ + ε with a fixed w (d,) and ε ~ N(0, σ²) (Zhang, Frei, Bartlett 2024).

    a = Λ⁻¹E[xy] = w, min_risk = σ², and by Isserlis E[xxᵀwwᵀxxᵀ] = 2ΛwwᵀΛ + ‖w‖²_ΛΛ,
    so Σ = Cov(xy) = ΛwwᵀΛ + (‖w‖²_Λ + σ²)Λ. Equals expected_error(Γ⁻¹, Λ, M,
    sigma=σ, lam_task=wwᵀ).
    """
    lam = _check_lam(lam)
    w = check_vector("w", w, len(lam))
    sigma = check_nonnegative("sigma", sigma)
    lam_w = lam @ w  # (d,)
    cov_xy = np.outer(lam_w, lam_w) + (w @ lam_w + sigma**2) * lam  # (d, d)
    return theorem5_error(lam, n, m, a=w, cov_xy=cov_xy, min_risk=sigma**2)


def relu_label_moments(w: np.ndarray, lam: np.ndarray, sigma: float = 0.0) -> tuple[np.ndarray, np.ndarray, float]:
    """(a, Σ, min risk) of Theorem 5 for the nonlinear task y = max(⟨w, x⟩, 0) + ε, x ~ N(0, Λ).

    With z = ⟨w, x⟩ ~ N(0, s²), s² = ‖w‖²_Λ: Stein's lemma gives E[x max(z, 0)] = Λw P(z > 0),
    so a = w/2; the sign symmetry x → −x gives E[xxᵀ max(z, 0)²] = ½E[xxᵀz²] = ½(s²Λ + 2ΛwwᵀΛ),
    so Σ = ½s²Λ + ¾ΛwwᵀΛ + σ²Λ; the best linear predictor leaves E max(z,0)² − aᵀΛa + σ² = s²/4 + σ².
    """
    lam = _check_lam(lam)
    w = check_vector("w", w, len(lam))
    sigma = check_nonnegative("sigma", sigma)
    lam_w = lam @ w  # (d,)
    s2 = float(w @ lam_w)
    cov_xy = (s2 / 2 + sigma**2) * lam + 0.75 * np.outer(lam_w, lam_w)  # (d, d)
    return w / 2, cov_xy, s2 / 4 + sigma**2


def random_covariance_kq_limit(d: int, n: int, moments: tuple[float, float, float]) -> np.ndarray:
    """Diagonal (d,) of (E Γ_τΛ_τ²)⁻¹ E Λ_τ², Theorem 8 of Zhang, Frei, Bartlett 2024.

    Λ_τ = diag(λ₁..λ_d), λᵢ i.i.d. with moments (m1, m2, m3) = (Eλ, Eλ², Eλ³).
    (Γ_τΛ_τ²)ᵢᵢ = (1 + 1/N)λᵢ³ + (Σⱼλⱼ)λᵢ²/N has mean (1 + 1/N)m3 + (m3 + (d − 1)m1m2)/N,
    so every entry is m2 / that. W^{KQ}'s top-left block converges to a multiple.
    """
    d = check_count("d", d, minimum=1)
    n = check_count("n", n, minimum=1)
    if np.shape(moments) != (3,):
        raise ValueError(f"moments must be (m1, m2, m3), got {moments!r}")
    m1, m2, m3 = (check_positive(f"moments[{i}]", value) for i, value in enumerate(moments))
    denominator = (1 + 1 / n) * m3 + (m3 + (d - 1) * m1 * m2) / n
    return np.full(d, m2 / denominator)


def exponential_moments(scale: float) -> tuple[float, float, float]:
    """(Eλ, Eλ², Eλ³) = (c, 2c², 6c³) for λ ~ Exponential with mean c = scale (E λᵏ = k!cᵏ)."""
    scale = check_positive("scale", scale)
    return scale, 2 * scale**2, 6 * scale**3


def mean_over_tasks(error_for_w: Callable[[np.ndarray], float], d: int) -> float:
    """E_w f(w) for w ~ N(0, I_d) when f is affine in wwᵀ (as every error of Theorem 5 is):
    Σᵢ f(eᵢ) − (d − 1) f(0)."""
    basis = np.eye(d)
    return sum(error_for_w(e) for e in basis) - (d - 1) * error_for_w(np.zeros(d))


def relu_theorem5_error(lam: np.ndarray, n: int, m: int, sigma: float) -> float:
    """Theorem 5 of Zhang, Frei, Bartlett 2024 for labels y = max(⟨w, x⟩, 0) + ε (moments from
    relu_label_moments), averaged over tasks w ~ N(0, I)."""

    def for_task(w: np.ndarray) -> float:
        a, cov_xy, min_risk = relu_label_moments(w, lam, sigma)
        return theorem5_error(lam, n, m, a=a, cov_xy=cov_xy, min_risk=min_risk)

    return mean_over_tasks(for_task, len(lam))


def exponential_kq_limit(d: int, n: int, scale: float) -> np.ndarray:
    """K = E[Λ²]·(E[ΓΛ²])⁻¹ of Theorem 8 (Zhang, Frei, Bartlett 2024) for i.i.d. Exponential entries
    with mean ``scale``: (d, d), diagonal."""
    return np.diag(random_covariance_kq_limit(d, n, exponential_moments(scale)))


def limit_predictions(xs: np.ndarray, covariances: np.ndarray, betas: np.ndarray, k: np.ndarray) -> np.ndarray:
    """The M → ∞ prediction x_kᵀ K Λ_new w of Theorem 8 at every position: (B, K, d), (B, d), (B, d) → (B, K)."""
    return np.einsum("bkd,de,be->bk", xs, k, covariances * betas)


def limit_prediction_gap(k: np.ndarray, covariances: np.ndarray, m_max: int) -> np.ndarray:
    """E(ŷ − ŷ_lim)² / E ŷ_lim² for the limit model ŷ = x_qᵀKĥ at M = 1..m_max (index 0: NaN),
    averaged over the prompts' diagonal covariances Λ_new (P, d).

    ŷ − ŷ_lim = x_qᵀK(Ŝ − Λ)w; over w ~ N(0, I), x_q ~ N(0, Λ) and the design,
    E = tr(KΛK E[(Ŝ − Λ)²]) = tr(KΛK(Λ² + tr(Λ)Λ))/M, and E ŷ_lim² = tr(KΛKΛ²).
    """
    lam = covariances  # (P, d) diagonal covariances
    weight = np.diag(k) ** 2 * lam  # (P, d): diagonal of KΛK
    numerator = np.mean(np.sum(weight * (lam**2 + lam.sum(axis=1, keepdims=True) * lam), axis=1))
    denominator = np.mean(np.sum(weight * lam**2, axis=1))
    return np.concatenate([[np.nan], numerator / denominator / np.arange(1, m_max + 1)])


def limit_error_over_covariances(k: np.ndarray, covariances: np.ndarray, m_max: int) -> np.ndarray:
    """Error of ŷ = x_qᵀKĥ (K diagonal) averaged over the prompts' diagonal covariances (P, d), at M = 0..m_max.

    expected_error for diagonal A = K and Λ (w ~ N(0, I), noiseless), coordinate-wise:
    Σᵢ λᵢ − 2kᵢλᵢ² + kᵢ²λᵢ((1 + 1/M)λᵢ² + tr(Λ)λᵢ/M); M = 0 predicts 0, error E tr Λ.
    """
    lam, kk = covariances[:, None, :], np.diag(k)  # (P, 1, d), (d,)
    m = np.arange(1, m_max + 1)[None, :, None]  # (1, M, 1)
    trace = lam.sum(axis=-1, keepdims=True)  # (P, 1, 1)
    per_coordinate = lam - 2 * kk * lam**2 + kk**2 * lam * ((1 + 1 / m) * lam**2 + trace * lam / m)  # (P, M, d)
    return np.concatenate([[trace.mean()], per_coordinate.sum(axis=-1).mean(axis=0)])


# ---------------------------------------------------------------- helpers


def _check_lam(lam: np.ndarray) -> np.ndarray:
    """Λ: a symmetric positive definite (d, d) float64 matrix, d ≥ 1."""
    shape = np.shape(lam)
    if len(shape) != 2 or shape[0] != shape[1] or shape[0] == 0:
        raise ValueError(f"lam must be a square (d, d) matrix with d >= 1, got shape {shape}")
    return check_covariance("lam", lam, shape[0], definite=True)
