"""The single-index task's sampler (``iclab.tasks.single_index``): β uniform on the unit sphere of V, a link of
normalised Hermite polynomials with coefficients uniform on their sphere, x ~ N(0, I_d)."""

from __future__ import annotations

import math

import numpy as np
import torch

from iclab.tasks.base import Batch
from iclab.tasks.single_index import SingleIndexTask


def hermite_normalised(z: torch.Tensor, degree: int) -> torch.Tensor:
    """Heᵢ(z)/√(i!) for i = 0..degree, orthonormal under N(0, 1): (..., degree + 1).

    Probabilists' Hermite recursion He_{i+1}(z) = z Heᵢ(z) − i He_{i−1}(z), normalised as it goes:
    hᵢ₊₁ = (z hᵢ − √i hᵢ₋₁)/√(i+1).
    """
    values = [torch.ones_like(z), z]
    for i in range(1, degree):
        values.append((z * values[i] - math.sqrt(i) * values[i - 1]) / math.sqrt(i + 1))
    return torch.stack(values[: degree + 1], dim=-1)


def sample(
    task: SingleIndexTask, batch_size: int, gen: torch.Generator, dtype=torch.float64, active_dims: int | None = None
) -> Batch:
    """Draw ``batch_size`` prompts (numpy arrays of ``dtype``); ``active_dims`` is not supported."""
    if active_dims is not None and active_dims != task.d:
        raise ValueError("single-index tasks have no dimension curriculum")
    b, k, d = batch_size, task.n_points, task.d
    basis = torch.as_tensor(task.subspace(), dtype=dtype)  # (d, r)
    directions = torch.randn(b, task.r, generator=gen, dtype=dtype)  # (B, r)
    betas = (directions / directions.norm(dim=1, keepdim=True)) @ basis.T  # (B, d): uniform on S(V)
    coefficients = torch.randn(b, task.p - task.q + 1, generator=gen, dtype=dtype)  # (B, P−Q+1)
    coefficients = coefficients / coefficients.norm(dim=1, keepdim=True)
    xs = torch.randn(b, k, d, generator=gen, dtype=dtype)  # (B, K, d)
    index = torch.einsum("bkd,bd->bk", xs, betas)  # (B, K)
    links = hermite_normalised(index, task.p)[..., task.q :]  # (B, K, P−Q+1)
    ys = torch.einsum("bki,bi->bk", links, coefficients) + task.sigma * torch.randn(
        b, k, generator=gen, dtype=dtype
    )
    return Batch(xs=xs.numpy(), ys=ys.numpy(), betas=betas.numpy(), covariances=np.ones((b, d)))
