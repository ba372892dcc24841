"""Shared numerics for the closed-form code: argument checks that name the bad argument,
exclusive prefix sums over a prompt, and chunked evaluation over prompts (bounded memory)."""

from collections.abc import Callable

import numpy as np

CHUNK_SIZE = 512


def prefix_gram(xs: np.ndarray) -> np.ndarray:
    """Exclusive prefix sums S_k = Σ_{i<k} x_i x_iᵀ: (b, K, d) → (b, K, d, d)."""
    b, n_points, d = xs.shape
    gram = np.zeros((b, n_points, d, d))
    np.cumsum(xs[:, :-1, :, None] * xs[:, :-1, None, :], axis=1, out=gram[:, 1:])
    return gram


def prefix_moment(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Exclusive prefix sums b_k = Σ_{i<k} x_i y_i: (b, K, d), (b, K) → (b, K, d)."""
    moment = np.zeros(xs.shape)
    np.cumsum(xs[:, :-1] * ys[:, :-1, None], axis=1, out=moment[:, 1:])
    return moment


def map_chunks(fn: Callable[..., np.ndarray], *arrays: np.ndarray) -> np.ndarray:
    """fn applied to blocks of CHUNK_SIZE rows (leading axis) of the arrays, concatenated."""
    n_rows = len(arrays[0])
    return np.concatenate(
        [fn(*(a[start : start + CHUNK_SIZE] for a in arrays)) for start in range(0, n_rows, CHUNK_SIZE)]
    )


def check_prompts(xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float64 copies of xs (B, K, d) and ys (B, K), with B, K, d ≥ 1."""
    xs = np.asarray(xs, dtype=np.float64)
    ys = np.asarray(ys, dtype=np.float64)
    if xs.ndim != 3 or 0 in xs.shape:
        raise ValueError(f"xs must have shape (B, K, d) with B, K, d >= 1, got {xs.shape}")
    if ys.shape != xs.shape[:2]:
        raise ValueError(f"ys must have shape (B, K) = {xs.shape[:2]} to match xs, got {ys.shape}")
    return xs, ys


def check_vector(name: str, value: np.ndarray, d: int) -> np.ndarray:
    value = np.asarray(value, dtype=np.float64)
    if value.shape != (d,):
        raise ValueError(f"{name} must have shape (d,) = ({d},), got {value.shape}")
    return value


def check_matrix(name: str, value: np.ndarray, d: int) -> np.ndarray:
    value = np.asarray(value, dtype=np.float64)
    if value.shape != (d, d):
        raise ValueError(f"{name} must have shape (d, d) = ({d}, {d}), got {value.shape}")
    return value


def check_covariance(name: str, value: np.ndarray, d: int, *, definite: bool) -> np.ndarray:
    """A symmetric (d, d) matrix, positive definite or (definite=False) semi-definite."""
    value = check_matrix(name, value, d)
    if not np.allclose(value, value.T, rtol=1e-10, atol=1e-12):
        raise ValueError(f"{name} must be symmetric")
    smallest = np.linalg.eigvalsh(value)[0]
    tolerance = 1e-12 * max(np.abs(value).max(), 1e-300)
    if definite and smallest <= 0 or smallest < -tolerance:
        kind = "positive definite" if definite else "positive semi-definite"
        raise ValueError(f"{name} must be {kind}, its smallest eigenvalue is {smallest:.3g}")
    return value


def check_finite(name: str, value: float) -> float:
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def check_positive(name: str, value: float) -> float:
    value = check_finite(name, value)
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return value


def check_count(name: str, value: int, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or int(value) != value or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_nonnegative(name: str, value: float) -> float:
    value = check_finite(name, value)
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def gaussian_cubature_degree5(d: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes (J, d) and weights (J,), J = 2d² + 1, with Σ_j w_j p(g_j) = E p(g), g ~ N(0, I_d), exactly
    for every polynomial p of degree ≤ 5 (Stroud 1971, Gauss-weight rule of degree 5 on the fully
    symmetric set {0, ±λe_i, ±λe_i ± λe_j}).

    Odd monomials vanish by symmetry; matching E1 = 1, E g₁² = 1, E g₁⁴ = 3 and E g₁²g₂² = 1 gives
    λ² = 3, w(±λe_i ± λe_j) = 1/36, w(±λe_i) = (4 − d)/18 and w(0) = (d² − 7d + 18)/18.
    Weights turn negative for d > 4; in float64 the cancellation costs ~d² ulp.
    """
    d = check_count("d", d, minimum=1)
    scale = np.sqrt(3.0)
    axes = scale * np.eye(d)  # (d, d)
    rows, cols = np.triu_indices(d, k=1)
    pairs = [axes[rows] + sign * axes[cols] for sign in (1.0, -1.0)]  # 2 × (d(d−1)/2, d)
    nodes = np.concatenate([np.zeros((1, d)), axes, -axes, *pairs, *(-p for p in pairs)])
    weights = np.concatenate(
        [[(d * d - 7 * d + 18) / 18], np.full(2 * d, (4 - d) / 18), np.full(2 * d * (d - 1), 1 / 36)]
    )
    return nodes, weights
