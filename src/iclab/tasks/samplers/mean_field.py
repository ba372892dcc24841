"""The mean-field task's sampler (``iclab.tasks.mean_field``): the teacher f° (drawn and normalised once per spec),
its linear and nonlinear targets, and prompts x ~ N(0, I_d) labelled by them."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import torch

from iclab.tasks.base import Batch
from iclab.tasks.mean_field import TEACHER_SAMPLES, MeanFieldTask


def sigmoid_features(xs: torch.Tensor, a: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """h(x) = (1/M) Σ_m a_m σ(w_mᵀx): xs (..., d), a (M, k), w (M, d) → (..., k)."""
    return torch.sigmoid(xs @ w.T) @ a / a.shape[0]


@dataclass(frozen=True)
class Teacher:
    """The teacher's particles (a°, w°) after normalisation, and the nonlinear targets' standardisation."""

    a: np.ndarray  # (M°, k)
    w: np.ndarray  # (M°, d)
    target_mean: dict[str, float]
    target_std: dict[str, float]

    def features(self, xs: torch.Tensor) -> torch.Tensor:
        """f°(x): (..., d) → (..., k), in the dtype of ``xs``."""
        return sigmoid_features(xs, torch.as_tensor(self.a, dtype=xs.dtype), torch.as_tensor(self.w, dtype=xs.dtype))


def nonlinear_target(features: torch.Tensor, target: str) -> torch.Tensor:
    """max_j f_j or ‖f‖² of features (..., k) → (...), before standardisation."""
    if target == "max":
        return features.max(dim=-1).values
    if target == "norm_sq":
        return (features**2).sum(dim=-1)
    raise ValueError(f"no nonlinear target {target!r}; allowed: max, norm_sq")


@cache
def teacher(task: MeanFieldTask) -> Teacher:
    """f° of this spec (a pure function of ``teacher_seed``, d, k and the teacher's size)."""
    key = [task.teacher_seed, task.d, task.k, task.teacher_width]
    gen = torch.Generator().manual_seed(int(np.random.SeedSequence(key).generate_state(1, dtype=np.uint64)[0]))
    directions = torch.randn(task.teacher_width, task.d, generator=gen, dtype=torch.float64)
    w = task.teacher_radius * directions / directions.norm(dim=1, keepdim=True)  # (M°, d)
    a = torch.randn(task.teacher_width, task.k, generator=gen, dtype=torch.float64)  # (M°, k)
    xs = torch.randn(TEACHER_SAMPLES, task.d, generator=gen, dtype=torch.float64)  # (N, d)
    raw = sigmoid_features(xs, a, w)  # (N, k)
    evals, evecs = torch.linalg.eigh(raw.T @ raw / len(xs))  # C = E[hhᵀ]
    a = a @ (evecs * evals.rsqrt()) @ evecs.T / task.k**0.5  # a°_m ← C^{−1/2}a°_m/√k (C symmetric)
    features = sigmoid_features(xs, a, w)  # (N, k)
    targets = {name: nonlinear_target(features, name) for name in ("max", "norm_sq")}
    return Teacher(
        a=a.numpy(),
        w=w.numpy(),
        target_mean={name: float(t.mean()) for name, t in targets.items()},
        target_std={name: float(t.std()) for name, t in targets.items()},
    )


def labels(task: MeanFieldTask, xs: torch.Tensor, task_vectors: torch.Tensor) -> torch.Tensor:
    """Noiseless labels F(x) of xs (B, K, d); ``task_vectors`` (B, k) are used by ``linear`` only."""
    f = teacher(task)
    features = f.features(xs)  # (B, K, k)
    if task.target == "linear":
        return torch.einsum("bkj,bj->bk", features, task_vectors)
    mean, std = f.target_mean[task.target], f.target_std[task.target]
    return (nonlinear_target(features, task.target) - mean) / std


def sample(
    task: MeanFieldTask, batch_size: int, gen: torch.Generator, dtype=torch.float64, active_dims: int | None = None
) -> Batch:
    """Draw ``batch_size`` prompts (numpy arrays of ``dtype``); ``active_dims`` is not supported.

    ``Batch.betas`` holds no x-space task vector here (v_t lives in R^k): it is NaN."""
    if active_dims is not None and active_dims != task.d:
        raise ValueError("mean_field tasks have no dimension curriculum")
    b, k, d = batch_size, task.n_points, task.d
    task_vectors = torch.randn(b, task.k, generator=gen, dtype=dtype)  # (B, k)
    xs = torch.randn(b, k, d, generator=gen, dtype=dtype)  # (B, K, d)
    noise = torch.randn(b, k, generator=gen, dtype=dtype)  # (B, K)
    ys = labels(task, xs, task_vectors) + task.sigma * noise
    return Batch(xs=xs.numpy(), ys=ys.numpy(), betas=np.full((b, d), np.nan), covariances=np.ones((b, d)))
