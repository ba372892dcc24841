"""Kim & Suzuki 2024 (ICML), "Transformers learn nonlinear features in context": the two-timescale
objective and what it says about feature maps, as functions of samples of the features.

In the limit n, T → ∞ the ICL risk of the mean-field transformer on tasks F_t = v_tᵀf°, v_t ~ N(0, I),
is (§2, the population loss; noise excluded)

    L(μ, Γ) = E_x‖f°(x) − E[f°hᵀ] Γ h(x)‖²,   h = h_μ,

and its two-timescale objective L(μ) = min_Γ L(μ, Γ) is attained at Γ = E[hhᵀ]⁻¹ (the L² projection
of f° on span(h)):

    L(μ) = E‖f°‖² − tr(E[f°hᵀ] E[hhᵀ]⁻¹ E[hf°ᵀ]),

zero iff span(h_μ) ⊇ span(f°) (their Proposition: μ is a global minimiser iff h_μ = R h_{μ°}, R invertible).
"""

from __future__ import annotations

import numpy as np


def two_timescale_objective(h: np.ndarray, f: np.ndarray) -> float:
    """L(μ) = E‖f‖² − tr(E[fhᵀ] E[hhᵀ]⁻¹ E[hfᵀ]) (Kim & Suzuki 2024, §2, the two-timescale limit
    min_Γ L(μ, Γ)) from samples h (N, k) of h_μ(x) and f (N, k_f) of the target features at the same x.

    With a scalar target g (f = g as (N, 1)) it is the risk floor of a model with features h on g."""
    n = len(h)
    second_moment = h.T @ h / n  # E[hhᵀ] (k, k)
    cross = f.T @ h / n  # E[fhᵀ] (k_f, k)
    explained = np.trace(cross @ np.linalg.solve(second_moment, cross.T))
    return float(np.sum(f**2) / n - explained)


def misaligned_floor(second_moment: np.ndarray, k: int) -> float:
    """The smallest L(μ) of any k-dimensional feature map h for targets with k_true > k features:
    the sum of the k_true − k smallest eigenvalues of E[f°f°ᵀ] (Eckart–Young on the L² best rank-k
    approximation of f°). For E[f°f°ᵀ] = I/k_true it is (k_true − k)/k_true."""
    eigenvalues = np.linalg.eigvalsh(second_moment)  # ascending
    return float(eigenvalues[: max(len(eigenvalues) - k, 0)].sum())


def largest_principal_angle(h: np.ndarray, f: np.ndarray) -> float:
    """The largest principal angle (radians) between span(f) and span(h) as subspaces of R^N (the
    columns of the samples h (N, k) and f (N, k_f), k_f ≤ k): 0 iff every feature of f is a linear
    combination of h's on the sample."""
    q_h, _ = np.linalg.qr(h)
    q_f, _ = np.linalg.qr(f)
    cosines = np.linalg.svd(q_f.T @ q_h, compute_uv=False)  # (k_f,): cosines of the principal angles
    return float(np.arccos(np.clip(cosines.min(), -1.0, 1.0)))
