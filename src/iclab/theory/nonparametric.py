"""Kim, Nakamaki, Suzuki 2024 (NeurIPS; the first part of Suzuki's 2024 talk): tasks y = βᵀf°(x) + ε over a fixed
orthonormal basis f° (E[f°f°ᵀ] = I) with β ~ N(0, Λ), Λ = diag λ, and the linear-attention estimator
ŷ = z_nᵀΓφ(x_q), z_n = (1/n) Σᵢ yᵢ φ(xᵢ) (their eq. for the transformer's output, §2).

- ``bayes_risk_curve``: the Bayes risk with the known basis, E_X tr Σ_post(X) + σ² (the posterior mean's risk,
  below every learner's), averaged over sampled designs X.
- ``attention_risk``: the risk of the estimator with the true features φ = f° and a given Γ at context length n,
  in closed form given the feature moments (iclab's derivation, below); ``attention_optimum`` its minimiser
  Γ_n = A_n⁻¹Λ and ``single_gamma`` the one Γ that minimises the risk averaged over n = 1..n_max.
- ``rate_exponent``: the rate n^(−2s/(2s+1)) of the risk bound when T is large (their B-spline corollary:
  N^(−2s) + N log N / n + N² log N / T with N ≍ n^(1/(2s+1))).
- ``leading_angle``: the largest principal angle between span φ and the leading basis functions.
- ``feature_residual``: the prior-weighted share of f° outside span φ, Σⱼ λⱼ‖P⊥fⱼ‖² / Σⱼ λⱼ (the feature
  approximation term of their risk bound, read on samples).

Attention risk (iclab's derivation; x_q independent of the context, E f f ᵀ = I):
E(y_q − z_nᵀΓf_q)² = tr Λ + σ² − 2 tr(ΓΛ) + tr(ΓᵀA_nΓ), with A_n = E[z_n z_nᵀ] = (1 − 1/n)Λ + (M₄ + σ²I)/n and
M₄ = E_x[(f(x)ᵀΛf(x)) f(x)f(x)ᵀ].
"""

from __future__ import annotations

import numpy as np

from iclab.theory.mean_field import largest_principal_angle


def bayes_risk_curve(features: np.ndarray, variances: np.ndarray, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """The Bayes risk E(y_q − f_qᵀE[β | context])² after k = 0..n context examples, and its Monte-Carlo s.e. over
    designs: features f°(X) of D sampled designs (D, n, J), prior variances λ (J,), noise σ > 0 → (n+1,), (n+1,).

    Given the design, the posterior covariance is Σ_post = (FᵀF/σ² + Λ⁻¹)⁻¹ and, with E[f_q f_qᵀ] = I, the risk
    is tr Σ_post + σ² (Bayesian linear regression on the known features)."""
    if sigma <= 0:
        raise ValueError(f"bayes_risk_curve needs sigma > 0, got {sigma}")
    n_designs, n = features.shape[:2]
    precision = np.broadcast_to(np.diag(1.0 / variances), (n_designs, *variances.shape * 2)).copy()  # (D, J, J)
    traces = []
    for k in range(n + 1):  # precision of the first k points: Λ⁻¹ + Σ_{i<k} fᵢfᵢᵀ/σ²
        traces.append(np.trace(np.linalg.inv(precision), axis1=-2, axis2=-1) + sigma**2)  # (D,)
        if k < n:
            precision += np.einsum("di,dj->dij", features[:, k], features[:, k]) / sigma**2
    traces = np.stack(traces, axis=1)  # (D, n+1)
    return traces.mean(axis=0), traces.std(axis=0, ddof=1) / np.sqrt(n_designs)


def fourth_moment(samples: np.ndarray, variances: np.ndarray) -> np.ndarray:
    """M₄ = E_x[(f(x)ᵀΛf(x)) f(x)f(x)ᵀ] on samples f°(x) (S, J) → (J, J)."""
    weights = samples**2 @ variances  # (S,): f(x)ᵀΛf(x)
    return (samples * weights[:, None]).T @ samples / len(samples)


def context_moment(n: int, variances: np.ndarray, sigma: float, m4: np.ndarray) -> np.ndarray:
    """A_n = E[z_n z_nᵀ] = (1 − 1/n)Λ + (M₄ + σ²I)/n for z_n = (1/n) Σᵢ yᵢ f(xᵢ) (n ≥ 1): (J, J)."""
    lam = np.diag(variances)
    return (1 - 1 / n) * lam + (m4 + sigma**2 * np.eye(len(variances))) / n


def attention_risk(gamma: np.ndarray, n: int, variances: np.ndarray, sigma: float, m4: np.ndarray) -> float:
    """E(y_q − z_nᵀΓf_q)² with the true features at context length n (module docstring); n = 0: tr Λ + σ²."""
    total = float(variances.sum() + sigma**2)
    if n == 0:
        return total
    a = context_moment(n, variances, sigma, m4)
    return total - 2 * float(np.trace(gamma @ np.diag(variances))) + float(np.trace(gamma.T @ a @ gamma))


def attention_optimum(n: int, variances: np.ndarray, sigma: float, m4: np.ndarray) -> np.ndarray:
    """Γ_n = A_n⁻¹Λ, the minimiser of ``attention_risk`` at context length n ≥ 1: (J, J)."""
    return np.linalg.solve(context_moment(n, variances, sigma, m4), np.diag(variances))


def single_gamma(n_max: int, variances: np.ndarray, sigma: float, m4: np.ndarray) -> np.ndarray:
    """The one Γ that minimises the risk averaged over context lengths 1..n_max (a model trained with the loss at
    every position): (mean_n A_n)⁻¹Λ."""
    mean_a = np.mean([context_moment(n, variances, sigma, m4) for n in range(1, n_max + 1)], axis=0)
    return np.linalg.solve(mean_a, np.diag(variances))


def rate_exponent(s: float) -> float:
    """−2s/(2s+1): the risk's rate in n when T is large (Kim, Nakamaki, Suzuki 2024, B-spline corollary)."""
    return -2 * s / (2 * s + 1)


def feature_residual(phi: np.ndarray, basis: np.ndarray, variances: np.ndarray) -> float:
    """Σⱼ λⱼ‖P⊥fⱼ‖² / Σⱼ λⱼ on samples: the features φ (S, N) and the basis f° (S, J) at the same inputs; P⊥
    projects off span φ. 0 iff span φ holds every fⱼ."""
    q, _ = np.linalg.qr(phi)
    residual = basis - q @ (q.T @ basis)  # (S, J)
    energy = (residual**2).mean(axis=0) / (basis**2).mean(axis=0)  # (J,): share of fⱼ outside span φ
    return float(energy @ variances / variances.sum())


def leading_angle(phi: np.ndarray, basis: np.ndarray, m: int) -> float:
    """The largest principal angle (degrees) between span{f_1°, …, f_m°} (the m largest coefficients) and span φ,
    on samples φ (S, N), f° (S, J) (as ``mean_field`` measures its features)."""
    return float(np.degrees(largest_principal_angle(phi, basis[:, :m])))
