"""Tasks over a nonlinear feature map (Kim & Suzuki 2024, §2; Suzuki's 2024 talk).

A teacher two-layer network f°(x) = (1/M°) Σ_m a°_m σ(w°_mᵀx) ∈ R^k (sigmoid σ, fixed by
``teacher_seed``) with second moment E[f°(x)f°(x)ᵀ] = I_k/k (realisability: f° = h_{μ°} for the
measure μ° of its particles). x ~ N(0, I_d). Targets (``target``):
- ``linear``: F_t(x) = v_tᵀf°(x), v_t ~ N(0, I_k) per prompt, so E[F_t(x)²] = 1 (the paper's tasks);
- ``max``: g(x) = max_j f°_j(x), and ``norm_sq``: g(x) = ‖f°(x)‖² (the talk's nonlinear test tasks),
  the same function for every prompt, standardised to mean 0 and variance 1 over x.
Labels y = F(x) + σε. A model with k outputs trained on a teacher with another ``k`` is misaligned.

Normalisation: the raw teacher's second moment C is estimated on ``TEACHER_SAMPLES`` inputs drawn from
``teacher_seed``; a°_m ← C^{−1/2}a°_m/√k keeps f° a two-layer network and makes its second moment
I_k/k to that sample's accuracy. The standardisation of ``max``/``norm_sq`` uses the same sample.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import cached_property
from typing import Any

import numpy as np
import torch

from iclab.tasks.base import Batch

TARGETS = ("linear", "max", "norm_sq")
TEACHER_SAMPLES = 200_000


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


@dataclass(frozen=True)
class MeanFieldTask:
    """Spec of the prompt distribution (JSON-able via ``to_dict``)."""

    d: int
    k: int  # the teacher's feature dimension (k_true)
    n_points: int  # K: points per prompt (context examples + the final query)
    teacher_width: int = 8  # M°: the teacher's neurons
    teacher_radius: float = 2.0  # ‖w°_m‖: the teacher's neurons sit on this sphere (σ's nonlinear range)
    target: str = "linear"
    sigma: float = 0.0  # label noise
    teacher_seed: int = 0  # draws f°: shared by every job with this spec

    def __post_init__(self) -> None:
        for name in ("d", "k", "n_points", "teacher_width"):
            if getattr(self, name) < 1:
                raise ValueError(f"mean_field task: {name} must be >= 1, got {getattr(self, name)}")
        if self.target not in TARGETS:
            raise ValueError(f"mean_field task: target {self.target!r} unknown; allowed: {', '.join(TARGETS)}")
        if self.teacher_width < self.k:
            raise ValueError(f"mean_field task: teacher_width {self.teacher_width} < k {self.k} (f° rank-deficient)")
        if self.sigma < 0 or self.teacher_radius <= 0:
            raise ValueError(
                f"mean_field task: need sigma >= 0 and teacher_radius > 0, got {self.sigma}, {self.teacher_radius}"
            )

    def to_dict(self) -> dict[str, Any]:
        return {"family": "mean_field"} | asdict(self)

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> MeanFieldTask:
        return cls(**{k: v for k, v in spec.items() if k != "family"})

    @cached_property
    def teacher(self) -> Teacher:
        """f° of this spec (a pure function of ``teacher_seed``, d, k and the teacher's size)."""
        key = [self.teacher_seed, self.d, self.k, self.teacher_width]
        gen = torch.Generator().manual_seed(int(np.random.SeedSequence(key).generate_state(1, dtype=np.uint64)[0]))
        directions = torch.randn(self.teacher_width, self.d, generator=gen, dtype=torch.float64)
        w = self.teacher_radius * directions / directions.norm(dim=1, keepdim=True)  # (M°, d)
        a = torch.randn(self.teacher_width, self.k, generator=gen, dtype=torch.float64)  # (M°, k)
        xs = torch.randn(TEACHER_SAMPLES, self.d, generator=gen, dtype=torch.float64)  # (N, d)
        raw = sigmoid_features(xs, a, w)  # (N, k)
        evals, evecs = torch.linalg.eigh(raw.T @ raw / len(xs))  # C = E[hhᵀ]
        a = a @ (evecs * evals.rsqrt()) @ evecs.T / self.k**0.5  # a°_m ← C^{−1/2}a°_m/√k (C symmetric)
        features = sigmoid_features(xs, a, w)  # (N, k)
        targets = {name: nonlinear_target(features, name) for name in ("max", "norm_sq")}
        return Teacher(
            a=a.numpy(),
            w=w.numpy(),
            target_mean={name: float(t.mean()) for name, t in targets.items()},
            target_std={name: float(t.std()) for name, t in targets.items()},
        )

    def labels(self, xs: torch.Tensor, task_vectors: torch.Tensor) -> torch.Tensor:
        """Noiseless labels F(x) of xs (B, K, d); ``task_vectors`` (B, k) are used by ``linear`` only."""
        features = self.teacher.features(xs)  # (B, K, k)
        if self.target == "linear":
            return torch.einsum("bkj,bj->bk", features, task_vectors)
        mean, std = self.teacher.target_mean[self.target], self.teacher.target_std[self.target]
        return (nonlinear_target(features, self.target) - mean) / std

    def sample(
        self, batch_size: int, gen: torch.Generator, dtype=torch.float64, active_dims: int | None = None
    ) -> Batch:
        """Draw ``batch_size`` prompts (numpy arrays of ``dtype``); ``active_dims`` is not supported.

        ``Batch.betas`` holds no x-space task vector here (v_t lives in R^k): it is NaN."""
        if active_dims is not None and active_dims != self.d:
            raise ValueError("mean_field tasks have no dimension curriculum")
        b, k, d = batch_size, self.n_points, self.d
        task_vectors = torch.randn(b, self.k, generator=gen, dtype=dtype)  # (B, k)
        xs = torch.randn(b, k, d, generator=gen, dtype=dtype)  # (B, K, d)
        noise = torch.randn(b, k, generator=gen, dtype=dtype)  # (B, K)
        ys = self.labels(xs, task_vectors) + self.sigma * noise
        return Batch(xs=xs.numpy(), ys=ys.numpy(), betas=np.full((b, d), np.nan), covariances=np.ones((b, d)))
