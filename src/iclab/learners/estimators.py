"""Closed-form in-context estimators for linear regression prompts.

Contract shared by every learner and baseline: prompts ``xs`` (B, K, d) and
``ys`` (B, K) in, predictions ``ys_hat`` (B, K) out, where ``ys_hat[:, k]`` is
the prediction for the query ``xs[:, k]`` from the first k examples only
(``xs[:, :k]``, ``ys[:, :k]``); position 0 sees no example. Everything is
computed in float64, vectorised over prompts and prefix lengths, and processed
in blocks of ``CHUNK_SIZE`` prompts to bound memory.

Notation: S_k = Σ_{i<k} x_i x_iᵀ and b_k = Σ_{i<k} x_i y_i (unnormalised
prefix sums), so that for a prefix X (k, d), y (k,): S_k = XᵀX, b_k = Xᵀy.
"""

from collections.abc import Sequence

import numpy as np

from iclab.numerics import (
    check_count,
    check_covariance,
    check_finite,
    check_matrix,
    check_positive,
    check_prompts,
    check_vector,
    map_chunks,
    prefix_gram,
    prefix_moment,
)


def zero(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """The zero estimator: predicts 0 everywhere."""
    xs, ys = check_prompts(xs, ys)
    return np.zeros(ys.shape)


def ols(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Minimum-norm least squares ŵ = X⁺y on each prefix (the OLS baseline of Fu et al. 2024)."""
    return predict_linear(xs, ols_weights(xs, ys))


def ols_weights(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """The weights ŵ_k = X_k⁺y_k of ``ols`` on each prefix: (B, K, d). Position 0 has ŵ = 0.

    One factorisation per prompt, updated one example at a time (not a pseudo-inverse per prefix):
    - k ≤ d: Gram–Schmidt (twice) on the examples gives X_kᵀ = Q_k R_k and the minimum-norm interpolant
      ŵ_k = Q_k R_k⁻ᵀ y_k, one new term per example: ŵ_k = ŵ_{k−1} + q_k α_k;
    - k > d: Givens rotations add each example to the QR factor R of the prefix (and to Qᵀy), and ŵ_k solves
      R ŵ = Qᵀy by back-substitution.
    A prompt whose examples are (nearly) dependent, e.g. covariates with a zero coordinate, takes the
    pseudo-inverse of each prefix instead (``_pinv_prefix_weights``, lstsq's cut-off).
    """
    xs, ys = check_prompts(xs, ys)

    def weights(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        w, dependent = _min_norm_prefixes(xs, ys)  # (b, K, d), (b,): prefixes of up to d examples
        d, n_points = xs.shape[2], xs.shape[1]
        if n_points - 1 > d:
            independent = ~dependent
            w[independent, d + 1 :] = _least_squares_prefixes(xs[independent], ys[independent])
        if dependent.any():
            w[dependent] = _pinv_prefix_weights(xs[dependent], ys[dependent])
        return w

    return map_chunks(weights, xs, ys)


DEPENDENT = 1e-8  # an example whose part outside the span of the earlier ones is below this fraction of its norm


def _min_norm_prefixes(xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Minimum-norm interpolants of the prefixes of k ≤ d examples (later positions left 0), and which
    prompts have an example (nearly) in the span of the earlier ones: (b, K, d), (b,)."""
    b, n_points, d = xs.shape
    w = np.zeros(xs.shape)
    q = np.zeros((b, d, d))  # orthonormal columns q_1 … q_k spanning the first k examples
    alpha = np.zeros((b, d))  # R_k⁻ᵀ y_k, one entry per example
    dependent = np.zeros(b, dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):  # dependent prompts are recomputed
        for j in range(min(d, n_points - 1)):
            x = xs[:, j]  # (b, d)
            basis = q[:, :, :j]  # (b, d, j)
            r = np.einsum("bdj,bd->bj", basis, x)
            p = x - np.einsum("bdj,bj->bd", basis, r)
            again = np.einsum("bdj,bd->bj", basis, p)  # re-orthogonalise (classical Gram–Schmidt twice)
            p -= np.einsum("bdj,bj->bd", basis, again)
            r += again
            rho = np.linalg.norm(p, axis=-1)  # (b,)
            dependent |= ~(rho > DEPENDENT * np.linalg.norm(x, axis=-1))
            q[:, :, j] = p / rho[:, None]
            alpha[:, j] = (ys[:, j] - np.einsum("bj,bj->b", r, alpha[:, :j])) / rho
            w[:, j + 1] = w[:, j] + q[:, :, j] * alpha[:, j, None]
    return w, dependent


def _least_squares_prefixes(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Least squares on the prefixes of k = d+1 … K−1 examples, the first d of full rank: (b, K−d−1, d).
    The prompt axis is last in the loops (contiguous rows for the rotations)."""
    b, n_points, d = xs.shape
    q, r = np.linalg.qr(xs[:, :d])  # (b, d, d) each
    qty = np.einsum("bdk,bd->bk", q, ys[:, :d])  # Qᵀy, (b, d)
    factor = np.ascontiguousarray(np.concatenate([r, qty[..., None]], axis=-1).transpose(1, 2, 0))  # (d, d+1, b)
    examples = np.concatenate([xs, ys[..., None]], axis=-1).transpose(1, 2, 0).copy()  # (K, d+1, b): [x | y]
    factors = np.empty((n_points - 1 - d, d, d + 1, b))
    for i, k in enumerate(range(d, n_points - 1)):
        _givens_add_row(factor, examples[k])
        factors[i] = factor
    return _back_substitute(factors[:, :, :d], factors[:, :, d]).transpose(2, 0, 1)  # (b, K−d−1, d)


def _givens_add_row(factor: np.ndarray, example: np.ndarray) -> None:
    """Add the example [x | y] (d+1, b) to [R | Qᵀy] (d, d+1, b), R upper-triangular, in place: d rotations."""
    row = example.copy()
    for j in range(factor.shape[0]):
        hyp = np.hypot(factor[j, j], row[j])
        cos, sin = factor[j, j] / hyp, row[j] / hyp  # (b,)
        top, rest = factor[j, j:], row[j:]  # views, (d+1−j, b)
        old_top = top.copy()
        top *= cos
        top += sin * rest
        rest *= cos
        rest -= sin * old_top


def _back_substitute(r: np.ndarray, z: np.ndarray) -> np.ndarray:
    """R⁻¹z for upper-triangular R, the batch axes first and last: (P, d, d, b), (P, d, b) → (P, d, b)."""
    w = np.zeros(z.shape)
    for i in range(r.shape[1] - 1, -1, -1):
        w[:, i] = (z[:, i] - (r[:, i, i + 1 :] * w[:, i + 1 :]).sum(1)) / r[:, i, i]
    return w


def _pinv_prefix_weights(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """X_k⁺y_k by the pseudo-inverse of each prefix X itself (not of XᵀX), with lstsq's cut-off max(k, d)·eps
    on singular values: exact also for dependent examples. (b, K, d)."""
    w = np.zeros(xs.shape)  # w[:, 0] = 0
    for k in range(1, xs.shape[1]):
        pinv = np.linalg.pinv(xs[:, :k], rtol=None)  # (b, d, k)
        w[:, k] = np.einsum("bdk,bk->bd", pinv, ys[:, :k])
    return w


def ridge(xs: np.ndarray, ys: np.ndarray, *, lam: float) -> np.ndarray:
    """Ridge regression ŵ = (XᵀX + lam·I)⁻¹Xᵀy on each prefix.

    The sums are unnormalised (no 1/k factor): lam is compared with XᵀX, not
    with XᵀX/k. Position 0 predicts 0. Requires lam > 0.
    """
    xs, ys = check_prompts(xs, ys)
    lam = check_positive("lam", lam)

    def predict(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        gram, moment = prefix_gram(xs), prefix_moment(xs, ys)  # (b, K, d, d), (b, K, d)
        w = _solve(gram + lam * np.eye(xs.shape[2]), moment)  # (b, K, d)
        return predict_linear(xs, w)

    return map_chunks(predict, xs, ys)


def bayes(
    xs: np.ndarray,
    ys: np.ndarray,
    *,
    beta_star: np.ndarray,
    psi: np.ndarray,
    sigma: float,
) -> np.ndarray:
    """Bayes-optimal prediction x_kᵀE[β | prefix] (Zhang, Wu, Bartlett 2024, Assumption 3.1).

    Prior β ~ N(β*, Ψ), noise y = xᵀβ + ε with ε ~ N(0, σ²). Gaussian
    conjugacy gives the posterior mean (XᵀX/σ² + Ψ⁻¹)⁻¹(Xᵀy/σ² + Ψ⁻¹β*);
    position 0 predicts x_0ᵀβ*. Requires sigma > 0 and Ψ symmetric positive
    definite.
    """
    xs, ys = check_prompts(xs, ys)
    d = xs.shape[2]
    beta_star = check_vector("beta_star", beta_star, d)
    psi_inv = np.linalg.inv(check_covariance("psi", psi, d, definite=True))
    sigma = check_positive("sigma", sigma)

    def predict(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        gram, moment = prefix_gram(xs), prefix_moment(xs, ys)  # (b, K, d, d), (b, K, d)
        precision = gram / sigma**2 + psi_inv  # (b, K, d, d)
        mean = _solve(precision, moment / sigma**2 + psi_inv @ beta_star)  # (b, K, d)
        return predict_linear(xs, mean)

    return map_chunks(predict, xs, ys)


def gd(
    xs: np.ndarray,
    ys: np.ndarray,
    *,
    steps: int,
    lr: float,
    normalize: bool = False,
) -> np.ndarray:
    """`steps` steps of gradient descent from w = 0 on ½‖Xw − y‖² (the GD baseline of Fu et al. 2024)."""
    steps = check_count("steps", steps)
    return predict_linear(xs, gd_weights(xs, ys, steps=[steps], lr=lr, normalize=normalize)[0])


def gd_weights(
    xs: np.ndarray,
    ys: np.ndarray,
    *,
    steps: Sequence[int],
    lr: float,
    normalize: bool = False,
) -> np.ndarray:
    """The weights of ``gd`` after each step count in ``steps``, on each prefix: (J, B, K, d).

    Their update w ← w − lr·(Sw − b), with S = XᵀX, b = Xᵀy of the prefix; with
    normalize=True the gradient is divided by the prefix length k (S/k, b/k).
    Unrolling the recursion gives w = lr·Σ_{s<steps}(I − lr·S)^s b, which is
    evaluated in closed form on the eigenvalues of S: one eigendecomposition per
    prefix serves every step count, and the cost does not grow with the counts.
    A divergent lr (lr·λ_max > 2 for the, possibly normalised, S) yields huge or
    inf values, as the iteration would. Position 0 has w = 0.
    """
    xs, ys = check_prompts(xs, ys)
    steps = [check_count("steps", s) for s in steps]
    lr = check_finite("lr", lr)

    def weights(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        gram, moment = prefix_gram(xs), prefix_moment(xs, ys)  # (b, K, d, d), (b, K, d)
        if normalize:
            k = np.maximum(np.arange(xs.shape[1]), 1)  # (K,)
            gram, moment = gram / k[:, None, None], moment / k[:, None]
        eigvals, eigvecs = np.linalg.eigh(gram)  # (b, K, d), (b, K, d, d)
        gains = np.stack([lr * _geometric_sum(lr * eigvals, s) for s in steps], axis=1)  # (b, J, K, d)
        return _spectral_apply(eigvecs[:, None], gains, moment[:, None])  # (b, J, K, d)

    return map_chunks(weights, xs, ys).swapaxes(0, 1)


def newton(xs: np.ndarray, ys: np.ndarray, *, iterations: int) -> np.ndarray:
    """Iterative Newton's method for the prefix OLS solution (Fu et al. 2024, their baseline)."""
    iterations = check_count("iterations", iterations)
    return predict_linear(xs, newton_weights(xs, ys, iterations=[iterations])[0])


def newton_weights(xs: np.ndarray, ys: np.ndarray, *, iterations: Sequence[int]) -> np.ndarray:
    """The weights of ``newton`` after each count in ``iterations``, on each prefix: (J, B, K, d).

    S = XᵀX, M₀ = αS, M_{j+1} = 2M_j − M_j S M_j, weights w = M_j Xᵀy after
    j updates (0 gives M₀). α = 1/‖SSᵀ‖_F as in the authors' code. The paper
    writes α = 2/‖SSᵀ‖₂, but since I − M_{j+1}S = (I − M_jS)², that α puts the
    top eigendirection of S on the convergence boundary (error −1 there,
    forever); any α in (0, 2/‖SSᵀ‖₂) converges quadratically and
    1/‖SSᵀ‖_F ≤ 1/‖SSᵀ‖₂ lies inside.

    From the recursion, an eigenvalue λ of S gets M_j-eigenvalue
    (1 − (1 − αλ²)^(2^j))/λ = αλ·Σ_{s<2^j}(1 − αλ²)^s, evaluated in closed
    form on the eigendecomposition of S (one per prefix for every count); this
    is the iteration's exact value, without the round-off that repeated
    products amplify on the null space of S when k < d. Position 0 (S = 0) has w = 0.
    """
    xs, ys = check_prompts(xs, ys)
    iterations = [check_count("iterations", j) for j in iterations]

    def weights(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        gram, moment = prefix_gram(xs), prefix_moment(xs, ys)  # (b, K, d, d), (b, K, d)
        eigvals, eigvecs = np.linalg.eigh(gram)  # (b, K, d), (b, K, d, d)
        norm = np.sqrt(np.sum(eigvals**4, axis=-1, keepdims=True))  # ‖SSᵀ‖_F, (b, K, 1)
        alpha = np.divide(1.0, norm, out=np.zeros_like(norm), where=norm > 0)  # (b, K, 1)
        gains = np.stack(
            [alpha * eigvals * _geometric_sum(alpha * eigvals**2, 2.0**j) for j in iterations], axis=1
        )  # (b, J, K, d)
        return _spectral_apply(eigvecs[:, None], gains, moment[:, None])  # (b, J, K, d)

    return map_chunks(weights, xs, ys).swapaxes(0, 1)


def online_gd(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """One pass of online gradient descent with step 1/‖x_i‖² (the online GD baseline of Fu et al. 2024)."""
    return predict_linear(xs, online_gd_weights(xs, ys))


def online_gd_weights(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """The weights of ``online_gd`` on each prefix: (B, K, d).

    From w₀ = 0, example i moves w_i to w_{i+1} = w_i + (y_i − x_iᵀw_i)·x_i/‖x_i‖²: it fits
    example i exactly (the normalised LMS, or Kaczmarz, step). Position k has w_k, the
    weights after the first k examples. The recursion runs over positions (each step needs
    the last), vectorised over prompts; one pass gives every prefix.
    """
    xs, ys = check_prompts(xs, ys)

    def weights(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        w = np.zeros(xs.shape)  # (b, K, d); w[:, 0] = 0
        for k in range(xs.shape[1] - 1):
            x = xs[:, k]  # (b, d)
            norm2 = np.sum(x * x, axis=-1)  # (b,)
            residual = ys[:, k] - np.sum(x * w[:, k], axis=-1)  # (b,)
            step = np.divide(residual, norm2, out=np.zeros_like(norm2), where=norm2 > 0)  # (b,)
            w[:, k + 1] = w[:, k] + step[:, None] * x
        return w

    return map_chunks(weights, xs, ys)


def gd_beta(
    xs: np.ndarray,
    ys: np.ndarray,
    *,
    beta0: np.ndarray,
    gamma: np.ndarray,
) -> np.ndarray:
    """One preconditioned GD step from a learnable start: GD-β of Zhang, Wu, Bartlett 2024.

    f = x_kᵀ(β₀ + Γ·(1/k)Σ_{i<k} x_i(y_i − x_iᵀβ₀)), with Γ any (d, d) matrix
    (not necessarily symmetric), or (K, d, d): Γ_k at position k (e.g. the optimum for
    each context length k); position 0 predicts x_0ᵀβ₀. Their Theorem 6.3 shows
    gradient flow over (β₀, Γ) reaches the optimum of theory.gd_beta_optimum.
    """
    xs, ys = check_prompts(xs, ys)
    d = xs.shape[2]
    beta0 = check_vector("beta0", beta0, d)
    gamma = np.asarray(gamma, dtype=np.float64)
    if gamma.ndim == 3:
        if gamma.shape != (xs.shape[1], d, d):
            raise ValueError(f"gamma per position must have shape (K, d, d) = {(xs.shape[1], d, d)}, got {gamma.shape}")
    else:
        gamma = check_matrix("gamma", gamma, d)

    def predict(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        residual = ys - xs @ beta0  # (b, K)
        moment = prefix_moment(xs, residual)  # (b, K, d)
        k = np.maximum(np.arange(xs.shape[1]), 1)  # (K,)
        gammas = gamma if gamma.ndim == 3 else np.broadcast_to(gamma, (len(k), d, d))  # (K, d, d)
        step = np.einsum("kde,bke->bkd", gammas, moment / k[:, None])  # (b, K, d)
        return predict_linear(xs, beta0 + step)

    return map_chunks(predict, xs, ys)


def lsa(xs: np.ndarray, ys: np.ndarray, *, u: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The LSA of Zhang, Wu, Bartlett 2024, eq. (3.4), at given weights: f_k = uᵀĈ_kWx_k with
    Ĉ_k = (1/k)Σ_{i<k} z_iz_iᵀ, z_i = (x_i, y_i), u = W^{PV}[d+1, :] (d+1,), W = W^{KQ}[:, :d] (d+1, d);
    position 0 predicts 0. theory.lsa_class_optimum gives the risk-minimising (u, W)."""
    xs, ys = check_prompts(xs, ys)
    d = xs.shape[2]
    u = check_vector("u", u, d + 1)
    w = np.asarray(w, dtype=np.float64)
    if w.shape != (d + 1, d):
        raise ValueError(f"w must have shape (d+1, d) = {(d + 1, d)}, got {w.shape}")

    def predict(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        tokens = np.concatenate([xs, ys[..., None]], axis=-1)  # (b, K, d+1)
        moment = prefix_moment(tokens, tokens @ u)  # (b, K, d+1): Σ_{i<k} (uᵀz_i) z_i = kĈ_ku
        k = np.maximum(np.arange(xs.shape[1]), 1)  # (K,)
        return predict_linear(xs, (moment / k[:, None]) @ w)  # x_kᵀWᵀĈ_ku

    return map_chunks(predict, xs, ys)


# ---------------------------------------------------------------- helpers


def predict_linear(xs: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Row-wise inner products x_kᵀw_k: (b, K, d), (..., b, K, d) → (..., b, K)."""
    return np.einsum("bkd,...bkd->...bk", xs, w)


def _solve(matrices: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Batched A⁻¹v: (..., d, d), (..., d) → (..., d)."""
    return np.linalg.solve(matrices, vectors[..., None])[..., 0]


def _spectral_apply(eigvecs: np.ndarray, gain: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """U·diag(gain)·Uᵀv: (..., d, d), (..., d), (..., d) → (..., d)."""
    coords = np.einsum("...ij,...i->...j", eigvecs, vectors)  # Uᵀv, (..., d)
    return np.einsum("...ij,...j->...i", eigvecs, gain * coords)


def _geometric_sum(t: np.ndarray, power: float) -> np.ndarray:
    """Σ_{s<power}(1 − t)^s = (1 − (1 − t)^power)/t elementwise, equal to `power` at t = 0.

    Near t = 0 the closed form cancels; there it is evaluated as
    −expm1(power·log1p(−t))/t instead.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        direct = (1 - (1 - t) ** power) / t
        near_zero = -np.expm1(power * np.log1p(-t)) / t
    return np.where(t == 0, power, np.where(np.abs(t) < 0.5, near_zero, direct))
