"""Single-index tasks in a low-dimensional subspace (Oko, Song, Suzuki, Wu 2024, §2).

x ~ N(0, I_d); every prompt draws β uniformly on the unit sphere of a subspace V (dimension r,
fixed by ``subspace_seed``: the same V for pretraining and test) and a link
σ*(z) = Σ_{i=Q..P} cᵢ Heᵢ(z) with normalised Hermite polynomials Heᵢ/√(i!);
y = σ*(⟨x, β⟩) + σ ε.

Coefficient law (the paper's is not stated): c uniform on the unit sphere of R^{P−Q+1}, so that
E[y²] = Σ cᵢ² + σ² = 1 + σ² for every task, with the information exponent Q almost surely.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch

from iclab.tasks.base import Batch


def hermite_normalised(z: torch.Tensor, degree: int) -> torch.Tensor:
    """Heᵢ(z)/√(i!) for i = 0..degree, orthonormal under N(0, 1): (..., degree + 1).

    Probabilists' Hermite recursion He_{i+1}(z) = z Heᵢ(z) − i He_{i−1}(z), normalised as it goes:
    hᵢ₊₁ = (z hᵢ − √i hᵢ₋₁)/√(i+1).
    """
    values = [torch.ones_like(z), z]
    for i in range(1, degree):
        values.append((z * values[i] - math.sqrt(i) * values[i - 1]) / math.sqrt(i + 1))
    return torch.stack(values[: degree + 1], dim=-1)


@dataclass(frozen=True)
class SingleIndexTask:
    """Spec of the single-index prompt distribution (JSON-able via ``to_dict``)."""

    d: int
    r: int  # dimension of the subspace V that holds every task direction β
    n_points: int  # K: points per prompt (context examples + the final query)
    q: int = 2  # information exponent Q: the lowest Hermite degree of the link
    p: int = 3  # degree P of the link
    sigma: float = 0.0  # label noise
    subspace_seed: int = 0  # draws V: shared by every job with this spec

    def __post_init__(self) -> None:
        if not 1 <= self.r <= self.d:
            raise ValueError(f"need 1 <= r <= d, got r={self.r}, d={self.d}")
        if self.n_points <= 0:
            raise ValueError(f"n_points must be positive, got {self.n_points}")
        if not 1 <= self.q <= self.p:
            raise ValueError(f"need 1 <= q <= p (information exponent, degree), got q={self.q}, p={self.p}")
        if self.sigma < 0:
            raise ValueError(f"sigma must be >= 0, got {self.sigma}")

    def to_dict(self) -> dict[str, Any]:
        return {"family": "single_index"} | asdict(self)

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> SingleIndexTask:
        return cls(**{k: v for k, v in spec.items() if k != "family"})

    def subspace(self) -> np.ndarray:
        """Orthonormal basis of V, (d, r): the Q factor of a Gaussian matrix drawn from ``subspace_seed``."""
        gaussian = np.random.default_rng([self.subspace_seed, self.d, self.r]).standard_normal((self.d, self.r))
        basis, upper = np.linalg.qr(gaussian)
        return basis * np.sign(np.diag(upper))  # the unique QR with a positive diagonal

    def sample(
        self, batch_size: int, gen: torch.Generator, dtype=torch.float64, active_dims: int | None = None
    ) -> Batch:
        """Draw ``batch_size`` prompts (numpy arrays of ``dtype``); ``active_dims`` is not supported."""
        if active_dims is not None and active_dims != self.d:
            raise ValueError("single-index tasks have no dimension curriculum")
        b, k, d = batch_size, self.n_points, self.d
        basis = torch.as_tensor(self.subspace(), dtype=dtype)  # (d, r)
        directions = torch.randn(b, self.r, generator=gen, dtype=dtype)  # (B, r)
        betas = (directions / directions.norm(dim=1, keepdim=True)) @ basis.T  # (B, d): uniform on S(V)
        coefficients = torch.randn(b, self.p - self.q + 1, generator=gen, dtype=dtype)  # (B, P−Q+1)
        coefficients = coefficients / coefficients.norm(dim=1, keepdim=True)
        xs = torch.randn(b, k, d, generator=gen, dtype=dtype)  # (B, K, d)
        index = torch.einsum("bkd,bd->bk", xs, betas)  # (B, K)
        links = hermite_normalised(index, self.p)[..., self.q :]  # (B, K, P−Q+1)
        ys = torch.einsum("bki,bi->bk", links, coefficients) + self.sigma * torch.randn(
            b, k, generator=gen, dtype=dtype
        )
        return Batch(xs=xs.numpy(), ys=ys.numpy(), betas=betas.numpy(), covariances=np.ones((b, d)))
