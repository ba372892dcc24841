"""Learners that see only the test prompt (the baselines of Oko, Song, Suzuki, Wu 2024, §5):
kernel ridge regression with an RBF kernel, and a two-layer ReLU network trained by gradient
descent on the prompt's context; and ridge regression on random sigmoid features (the baseline of
the mean-field experiment, Kim & Suzuki 2024). Their hyperparameters are tuned, separately for every prompt
length, on held-out prompts of the same task family (a fixed seed on ``HOLDOUT_STREAM``).

Both follow the learner contract: position k is predicted from the k points before it.
"""

from __future__ import annotations

import logging
import math
from typing import Any, Callable

import numpy as np
import torch

from iclab.tasks import HOLDOUT_STREAM
from iclab.tasks.samplers import batch_generator, sample
from iclab.learners.tuning import HOLDOUT_PROMPTS, HOLDOUT_SEED

log = logging.getLogger("iclab.learners.prompt_only")

KRR_BANDWIDTHS = (0.25, 0.5, 1.0, 2.0, 4.0)  # h²/d: ‖x − x'‖² ≈ 2d for x ~ N(0, I_d)
KRR_PENALTIES = (1e-3, 1e-2, 1e-1, 1.0, 10.0)
NET_WIDTH = 64
NET_LEARNING_RATES = (0.3, 1.0)
NET_CHECKPOINTS = (0, 25, 50, 100, 200)  # GD steps at which predictions are read (early stopping)
# Prompts per batch. Kernel ridge factorises each prompt alone (float64), so its chunk changes speed only, not one
# bit: at 32 prompts its arrays stay in cache, ~3× faster than 256 at d = 32, 129 points
# (benchmarks/bench_single_index.py). The network's batched float32 products round differently with the number of
# prompts in a batch (~1e-7), so its chunk stays at 256, where its values were first measured.
KERNEL_CHUNK = 32
NET_CHUNK = 256


def rbf_gram(sq_distances: torch.Tensor, bandwidth: float, d: int) -> torch.Tensor:
    """exp(−‖x − x'‖² / (2·bandwidth·d)) from the squared distances (B, K, K)."""
    return torch.exp(-sq_distances / (2 * bandwidth * d))


def krr_prefix_from_gram(gram: torch.Tensor, ys: torch.Tensor, penalty: float) -> torch.Tensor:
    """Kernel ridge prediction at every position from the points before it: (B, K).

    With A = K + λI = LLᵀ, the leading k×k block of L is the Cholesky factor of the first k points,
    and L[k, :k] = L_k⁻¹ K[:k, k]; so ŷ_k = K[k, :k] A_k⁻¹ y_{:k} = Σ_{i<k} L[k, i] (L⁻¹y)_i:
    one factorisation per prompt gives every prefix (ŷ₀ = 0).
    """
    eye = torch.eye(gram.shape[-1], dtype=gram.dtype)
    lower = torch.linalg.cholesky(gram + penalty * eye)  # (B, K, K)
    whitened = torch.linalg.solve_triangular(lower, ys.unsqueeze(-1), upper=False)  # (B, K, 1)
    return (torch.tril(lower, diagonal=-1) @ whitened)[..., 0]


def krr_prefix_predictions(xs: torch.Tensor, ys: torch.Tensor, bandwidth: float, penalty: float) -> torch.Tensor:
    """RBF kernel ridge prediction at every position from the points before it (xs (B, K, d)): (B, K)."""
    gram = rbf_gram(torch.cdist(xs, xs) ** 2, bandwidth, xs.shape[-1])  # (B, K, K)
    return krr_prefix_from_gram(gram, ys, penalty)


def random_features_grid(
    xs: np.ndarray, ys: np.ndarray, width: int, seed: int = 0, chosen: np.ndarray | None = None
) -> np.ndarray:
    """Ridge regression on M = ``width`` random features φ(x) = σ(Wx) (sigmoid, rows of W ~ N(0, I/d):
    the mean-field transformer's first layer at initialisation), fitted to each prompt's prefix, for
    every penalty of ``KRR_PENALTIES``: (G, B, K). Solved as kernel ridge with the Gram matrix ΦΦᵀ/M
    (the same predictions as the primal ridge on φ/√M), one Cholesky factorisation per prompt.
    With ``chosen`` (K,) only the entries it names are computed (``wanted``); the others are NaN."""
    d = xs.shape[-1]
    weights = torch.randn(width, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) / math.sqrt(d)
    entries = wanted(len(KRR_PENALTIES), chosen)
    out = np.full((len(KRR_PENALTIES), *ys.shape), np.nan)
    for start in range(0, len(xs), KERNEL_CHUNK):
        rows = slice(start, start + KERNEL_CHUNK)
        x, y = torch.as_tensor(xs[rows]), torch.as_tensor(ys[rows])
        features = torch.sigmoid(x @ weights.T)  # (c, K, M)
        gram = features @ features.transpose(1, 2) / width  # (c, K, K)
        for g in entries:
            out[g, rows] = krr_prefix_from_gram(gram, y, KRR_PENALTIES[g]).numpy()
    return out


def krr_grid(
    xs: np.ndarray, ys: np.ndarray, bandwidths: tuple[float, ...] = KRR_BANDWIDTHS, chosen: np.ndarray | None = None
) -> np.ndarray:
    """Predictions for every (bandwidth, penalty) of the grid: (G, B, K), bandwidth-major.
    The distances are computed once per chunk and the kernel once per bandwidth. With ``chosen`` (K,) only the
    entries it names are computed (``wanted``); the others are NaN."""
    entries = wanted(len(bandwidths) * len(KRR_PENALTIES), chosen)
    out = np.full((len(bandwidths) * len(KRR_PENALTIES), *ys.shape), np.nan)
    for start in range(0, len(xs), KERNEL_CHUNK):
        rows = slice(start, start + KERNEL_CHUNK)
        x, y = torch.as_tensor(xs[rows]), torch.as_tensor(ys[rows])
        sq_distances = torch.cdist(x, x) ** 2  # (c, K, K)
        for i, bandwidth in enumerate(bandwidths):
            needed = [g for g in entries if g // len(KRR_PENALTIES) == i]
            gram = rbf_gram(sq_distances, bandwidth, x.shape[-1]) if needed else None
            for g in needed:
                out[g, rows] = krr_prefix_from_gram(gram, y, KRR_PENALTIES[g % len(KRR_PENALTIES)]).numpy()
    return out


def wanted(size: int, chosen: np.ndarray | None) -> list[int]:
    """The grid entries to compute: all ``size`` of them, or those that ``chosen`` (one per position) names.
    Each entry is computed alone, so computing fewer changes none of their bits."""
    return list(range(size)) if chosen is None else sorted(set(np.asarray(chosen).tolist()))


def two_layer_net_grid(
    xs: np.ndarray, ys: np.ndarray, positions: list[int], seed: int = 0, chosen: np.ndarray | None = None
) -> np.ndarray:
    """A two-layer ReLU network f(x) = Σⱼ aⱼ ReLU(⟨wⱼ, x⟩ + bⱼ)/√m fitted by full-batch GD to each
    prompt's first k points, for every k in ``positions``; the prediction at x_k is read at every
    step of ``NET_CHECKPOINTS`` and for every learning rate: (G, B, K), NaN at other positions.
    With ``chosen`` (K,) only the entry it names at each position is computed: one learning rate, GD run to the
    chosen step only (the steps before it are the same whatever comes after); the others are NaN.

    Initialisation, the same for every prompt: wⱼ ~ N(0, I/d), bⱼ ~ Unif[−1, 1], a = 0 (so that
    step 0 is the zero predictor and early stopping can fall back to it).
    """
    b, k_total, d = xs.shape
    out = np.full((len(NET_LEARNING_RATES) * len(NET_CHECKPOINTS), b, k_total), np.nan)
    gen = torch.Generator().manual_seed(seed)
    w0 = torch.randn(NET_WIDTH, d, generator=gen) / math.sqrt(d)  # (m, d)
    b0 = 2 * torch.rand(NET_WIDTH, generator=gen) - 1  # (m,)
    for start in range(0, b, NET_CHUNK):
        x_all = torch.as_tensor(xs[start : start + NET_CHUNK], dtype=torch.float32)  # (c, K, d)
        y_all = torch.as_tensor(ys[start : start + NET_CHUNK], dtype=torch.float32)  # (c, K)
        for k in positions:
            for i, lr in enumerate(NET_LEARNING_RATES):
                first = i * len(NET_CHECKPOINTS)
                steps = NET_CHECKPOINTS if chosen is None else checkpoints_up_to(chosen[k] - first)
                if steps:
                    out[first : first + len(steps), start : start + NET_CHUNK, k] = fit_two_layer_nets(
                        x_all[:, :k], y_all[:, :k], x_all[:, k], w0, b0, lr, steps
                    )
    return out


def checkpoints_up_to(index: int) -> tuple[int, ...]:
    """The steps of ``NET_CHECKPOINTS`` up to its entry ``index`` (none if ``index`` is outside it)."""
    return NET_CHECKPOINTS[: index + 1] if 0 <= index < len(NET_CHECKPOINTS) else ()


def fit_two_layer_nets(
    xs: torch.Tensor,
    ys: torch.Tensor,
    queries: torch.Tensor,
    w0: torch.Tensor,
    b0: torch.Tensor,
    lr: float,
    checkpoints: tuple[int, ...] | None = None,
) -> np.ndarray:
    """GD on each prompt's own mean squared error, one network per prompt (c, k, d), (c, k); the
    query predictions (c, d) at the steps of ``checkpoints`` (default ``NET_CHECKPOINTS``; GD stops at the last):
    (len(checkpoints), c). Gradients in closed form (the network has two layers)."""
    checkpoints = NET_CHECKPOINTS if checkpoints is None else checkpoints
    c, k, _ = xs.shape
    scale = 1 / math.sqrt(NET_WIDTH)
    w = w0.expand(c, *w0.shape).clone()  # (c, m, d)
    bias = b0.expand(c, *b0.shape).clone()  # (c, m)
    a = torch.zeros(c, NET_WIDTH)  # (c, m)
    readouts = []
    for step in range(checkpoints[-1] + 1):
        if step in checkpoints:
            hidden_q = torch.relu(torch.einsum("cmd,cd->cm", w, queries) + bias)  # (c, m)
            readouts.append((scale * (hidden_q * a).sum(-1)).numpy())
        if step == checkpoints[-1]:
            break
        pre = xs @ w.transpose(1, 2) + bias[:, None, :]  # (c, k, m)
        hidden = torch.relu(pre)
        residual = scale * (hidden @ a[:, :, None])[..., 0] - ys  # (c, k)
        d_out = 2 * residual / k  # (c, k): ∂(mean squared error)/∂f
        d_pre = scale * d_out[:, :, None] * a[:, None, :] * (pre > 0)  # (c, k, m)
        a -= lr * scale * (hidden * d_out[:, :, None]).sum(1)
        w -= lr * d_pre.transpose(1, 2) @ xs
        bias -= lr * d_pre.sum(1)
    return np.stack(readouts)


def tuned_predictor(task: Any, grid: Callable[..., np.ndarray], name: str, holdout_prompts: int = HOLDOUT_PROMPTS):
    """A predictor that uses, at every position, the grid entry with the lowest risk on ``holdout_prompts`` held-out
    prompts. ``grid(xs, ys, chosen=None)`` gives every entry (G, B, K); with ``chosen`` (K,) it may compute only
    those."""
    holdout = sample(task, holdout_prompts, batch_generator(HOLDOUT_SEED, HOLDOUT_STREAM, 0))
    risks = np.mean((grid(holdout.xs, holdout.ys) - holdout.ys) ** 2, axis=1)  # (G, K)
    computed = ~np.isnan(risks).all(axis=0)  # (K,)
    best = np.where(computed, np.argmin(np.where(np.isnan(risks), np.inf, risks), axis=0), 0)  # (K,)
    log.info("%s: held-out choice per position %s", name, best.tolist())

    def predict(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        chosen = best[: xs.shape[1]]  # (K,)
        predictions = np.take_along_axis(grid(xs, ys, chosen=chosen), chosen[None, None, :], axis=0)[0]  # (B, K)
        return np.where(computed[None, : xs.shape[1]], predictions, np.nan)

    return predict


def net_positions(n_points: int) -> list[int]:
    """Prompt lengths at which the network baseline is trained: powers of two and the last one."""
    powers = [2**j for j in range(1, int(math.log2(max(n_points - 1, 1))) + 1)]
    return sorted(set(powers) | {n_points - 1})


def krr(task: Any, bandwidths: list[float] | None = None, holdout_prompts: int = HOLDOUT_PROMPTS):
    """Kernel ridge tuned on held-out prompts over ``bandwidths`` (h²/d; default ``KRR_BANDWIDTHS``, for x ~ N(0, I_d))
    and ``KRR_PENALTIES``."""
    grid = KRR_BANDWIDTHS if bandwidths is None else tuple(bandwidths)
    return tuned_predictor(
        task, lambda xs, ys, chosen=None: krr_grid(xs, ys, grid, chosen=chosen), "krr", holdout_prompts
    )


def two_layer_net(task: Any, holdout_prompts: int = HOLDOUT_PROMPTS):
    positions = net_positions(task.n_points)
    return tuned_predictor(
        task,
        lambda xs, ys, chosen=None: two_layer_net_grid(xs, ys, positions, chosen=chosen),
        "two_layer_net",
        holdout_prompts,
    )


def random_features_ridge(task: Any, width: int, holdout_prompts: int = HOLDOUT_PROMPTS):
    return tuned_predictor(
        task,
        lambda xs, ys, chosen=None: random_features_grid(xs, ys, width, chosen=chosen),
        "random_features_ridge",
        holdout_prompts,
    )

