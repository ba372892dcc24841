"""How alike two in-context learners are (Fu, Chen, Jia, Sharan 2024, Section 3 and Table 1).

Learners enter as stacks of predictions (M, B, K) or of weights (M, B, K, d) on the same prompts,
one entry per method (a layer's probe, an iteration count of an algorithm); every function compares
two stacks at once and returns an (M, N) matrix, vectorised over prompts, positions and methods.
- Similarity of Errors: per prompt, the cosine between the two methods' residual vectors
  (ŷ − y over the K positions), averaged over prompts.
- Similarity of Induced Weights: at each prefix, the weight vector a method acts as (for an
  algorithm that is linear in the query, its own weights; for any other learner, the least-squares
  fit to its predictions on many fresh queries with that context), then the cosine between two
  methods' vectors, averaged over prompts and prefixes.
- Best match (their Def. 3.4): for each method of the first stack, the entry of the second with the
  highest similarity.
Similarities of Errors are also given per group of prompts, from which claims bootstrap their intervals.
"""

from __future__ import annotations

import numpy as np


def errors_similarity(a: np.ndarray, b: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Similarity of Errors of every pair of methods: (M, B, K), (N, B, K), ys (B, K) → (M, N).

    A prompt on which either residual vector is zero has no angle; it is left out of that pair's mean.
    """
    cosines, defined = _error_cosines(a, b, ys)
    return cosines.sum(axis=-1) / defined.sum(axis=-1)


def errors_similarity_groups(a: np.ndarray, b: np.ndarray, ys: np.ndarray, groups: int) -> tuple[np.ndarray, ...]:
    """Similarity of Errors over all prompts, (M, N), and within each of ``groups`` contiguous groups of prompts
    (as ``intervals.group_means`` splits them), (M, N, G), for intervals by resampling groups of prompts; the
    per-prompt cosines are computed once for both."""
    cosines, defined = _error_cosines(a, b, ys)
    parts = np.array_split(np.arange(ys.shape[0]), min(groups, ys.shape[0]))
    per_group = [cosines[..., part].sum(axis=-1) / defined[..., part].sum(axis=-1) for part in parts]
    return cosines.sum(axis=-1) / defined.sum(axis=-1), np.stack(per_group, axis=-1)


def _error_cosines(a: np.ndarray, b: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per prompt the cosine between every pair of residual vectors, 0 where undefined, and where it is defined:
    (M, B, K), (N, B, K), ys (B, K) → (M, N, B) each."""
    ra = np.asarray(a, dtype=np.float64) - ys  # (M, B, K)
    rb = np.asarray(b, dtype=np.float64) - ys  # (N, B, K)
    return _cosines(np.einsum("mbk,nbk->mnb", ra, rb), np.linalg.norm(ra, axis=-1), np.linalg.norm(rb, axis=-1))


def weights_similarity(wa: np.ndarray, wb: np.ndarray) -> np.ndarray:
    """Similarity of Induced Weights of every pair of methods: (M, B, K, d), (N, B, K, d) → (M, N).

    The mean over prompts and prefixes of the cosine between the two weight vectors; a prefix where
    either vector is zero (e.g. position 0, before any example) has no angle and is left out.
    """
    wa, wb = np.asarray(wa, dtype=np.float64), np.asarray(wb, dtype=np.float64)
    m, n = len(wa), len(wb)
    wa, wb = wa.reshape(m, -1, wa.shape[-1]), wb.reshape(n, -1, wb.shape[-1])  # (M, B·K, d), (N, B·K, d)
    return _mean_cosine(np.einsum("mpd,npd->mnp", wa, wb), np.linalg.norm(wa, axis=-1), np.linalg.norm(wb, axis=-1))


def induced_weights(queries: np.ndarray, predictions: np.ndarray) -> np.ndarray:
    """The least-squares weights of predictions on fresh queries: (B, K, T, d), (M, B, K, T) → (M, B, K, d).

    For each prompt and prefix, w̃ = (QᵀQ)⁻¹Qᵀp over the T queries Q (T ≥ d, in general position)
    given that prefix as context; a learner that predicts xᵀw on that context gets exactly w.
    Solved through the QR factors of Q (float64), shared by the M methods.
    """
    queries = np.asarray(queries, dtype=np.float64)
    predictions = np.asarray(predictions, dtype=np.float64)
    t, d = queries.shape[-2:]
    if t < d:
        raise ValueError(f"induced weights need at least d = {d} fresh queries per prefix, got {t}")
    if predictions.shape[1:] != queries.shape[:-1]:
        raise ValueError(f"predictions {predictions.shape} do not match queries {queries.shape} (want (M, B, K, T))")
    q, r = np.linalg.qr(queries)  # (B, K, T, d), (B, K, d, d)
    projected = np.einsum("bktd,mbkt->mbkd", q, predictions)  # Qᵀp in the QR basis, (M, B, K, d)
    return np.linalg.solve(r, projected[..., None])[..., 0]  # R⁻¹Qᵀp, (M, B, K, d)


FLAT_TOLERANCE = 0.01  # a row whose similarity ranges over less than this has no best match


def best_match(similarity: np.ndarray, grid: np.ndarray, tolerance: float = FLAT_TOLERANCE) -> np.ndarray:
    """Per row (a layer), the grid value (an iteration count) of the most similar column: (M, N), (N,) → (M,);
    NaN ("no match") where the row's similarity ranges over less than ``tolerance``: its argmax is then a tie broken
    by noise (a layer that reads nothing of the prompt matches every count equally), not a result."""
    matches = np.asarray(grid, dtype=float)[np.argmax(similarity, axis=1)]
    flat = np.ptp(similarity, axis=1) < tolerance  # (M,)
    return np.where(flat, np.nan, matches)


def _cosines(dots: np.ndarray, norms_a: np.ndarray, norms_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """dots/(|a||b|), 0 for pairs with a zero vector, and where it is defined: (M, N, P) each."""
    scale = norms_a[:, None] * norms_b[None, :]  # (M, N, P)
    defined = scale > 0
    return np.divide(dots, scale, out=np.zeros_like(dots), where=defined), defined


def _mean_cosine(dots: np.ndarray, norms_a: np.ndarray, norms_b: np.ndarray) -> np.ndarray:
    """Mean over the last axis of dots/(|a||b|), skipping pairs with a zero vector: (M, N, P) → (M, N)."""
    cosines, defined = _cosines(dots, norms_a, norms_b)
    return cosines.sum(axis=-1) / defined.sum(axis=-1)
