"""The nonparametric task's sampler (``iclab.tasks.nonparametric``): x ~ U[0, 1]^d, β_j ~ N(0, λ_j),
y = β_tᵀf°(x) + σε, with the basis f° in torch."""

from __future__ import annotations

import numpy as np
import torch

from iclab.tasks.base import Batch
from iclab.tasks.nonparametric import NonparametricTask


def features(task: NonparametricTask, xs: torch.Tensor) -> torch.Tensor:
    """f°(x): (..., d) → (..., J), in the dtype of ``xs``."""
    omega, sine = (torch.as_tensor(a, dtype=xs.dtype, device=xs.device) for a in task.basis)  # (J, d) each
    angles = 2 * torch.pi * xs[..., None, :] * omega - sine * (torch.pi / 2)  # (..., J, d)
    factors = torch.where(omega > 0, np.sqrt(2.0) * torch.cos(angles), torch.ones_like(angles))
    return factors.prod(dim=-1)


def sample(
    task: NonparametricTask, batch_size: int, gen: torch.Generator, dtype=torch.float64, active_dims: int | None = None
) -> Batch:
    """Draw ``batch_size`` prompts (numpy arrays of ``dtype``); ``active_dims`` is not supported.

    ``Batch.betas`` holds no x-space task vector here (β_t lives in R^J): it is NaN."""
    if active_dims is not None and active_dims != task.d:
        raise ValueError("nonparametric tasks have no dimension curriculum")
    b, k, d = batch_size, task.n_points, task.d
    scale = torch.as_tensor(np.sqrt(task.variances), dtype=dtype)
    coefficients = torch.randn(b, task.n_basis, generator=gen, dtype=dtype) * scale  # (B, J)
    xs = torch.rand(b, k, d, generator=gen, dtype=dtype)  # (B, K, d)
    noise = torch.randn(b, k, generator=gen, dtype=dtype)  # (B, K)
    ys = torch.einsum("bkj,bj->bk", features(task, xs), coefficients) + task.sigma * noise
    variances = np.full((b, d), 1 / 12)  # of U[0, 1]
    return Batch(xs=xs.numpy(), ys=ys.numpy(), betas=np.full((b, d), np.nan), covariances=variances)
