"""The linear task's sampler (``iclab.tasks.linear``): x ~ N(0, H) with H fixed or drawn per prompt, β ~ N(β*, Ψ),
y = xᵀβ + ε (or its ReLU)."""

from __future__ import annotations

import numpy as np
import torch

from iclab.tasks.base import Batch
from iclab.tasks.linear import LinearTask


def haar_orthogonal(batch_size: int, d: int, gen: torch.Generator, dtype) -> torch.Tensor:
    """Haar-distributed orthogonal matrices (B, d, d): QR of a Gaussian matrix, the signs of R's
    diagonal moved into Q (Mezzadri 2007), so that Q is uniform and not biased by the QR convention."""
    q, r = torch.linalg.qr(torch.randn(batch_size, d, d, generator=gen, dtype=dtype))
    return q * torch.sign(torch.diagonal(r, dim1=-2, dim2=-1))[:, None, :]


def sample(
    task: LinearTask, batch_size: int, gen: torch.Generator, dtype=torch.float64, active_dims: int | None = None
) -> Batch:
    """Draw ``batch_size`` prompts of ``task`` (numpy arrays of ``dtype``).

    ``active_dims`` (Garg et al.'s curriculum) zeroes the covariates' later coordinates before
    the labels are computed; the random draws are the same whatever its value.
    """
    b, k, d = batch_size, task.n_points, task.d
    normal = lambda *shape: torch.randn(shape, generator=gen, dtype=dtype)
    psi_root = task.psi**0.5 if task.psi_values is None else torch.as_tensor(task.psi_values, dtype=dtype).sqrt()
    betas = torch.as_tensor(task.beta_star, dtype=dtype) + psi_root * normal(b, d)  # (B, d): Ψ is diagonal
    white = normal(b, k, d)  # (B, K, d)
    if task.covariance == "random_exponential":
        diag = task.covariance_scale * torch.empty(b, d, dtype=dtype).exponential_(1.0, generator=gen)  # (B, d)
        xs = white * diag.sqrt()[:, None, :]
    elif task.covariance == "random_basis":  # H_b = U_b diag(λ) U_bᵀ, U_b Haar per prompt
        basis = haar_orthogonal(b, d, gen, dtype)  # (B, d, d)
        roots = basis * torch.as_tensor(task.covariance_values, dtype=dtype).sqrt()  # (B, d, d): U diag(√λ)
        xs = white @ roots.transpose(1, 2)  # (B, K, d): x = U diag(√λ) z
        diag = (roots**2).sum(-1)  # (B, d): the diagonal of H_b
    elif task.covariance == "matrix":
        h = torch.as_tensor(task.h_matrix, dtype=dtype)
        diag = torch.diagonal(h).expand(b, d)
        xs = white @ torch.linalg.cholesky(h).T
    else:  # identity or diagonal: a square root that also allows zero variances
        diag = torch.tensor(np.diag(task.h_matrix), dtype=dtype).expand(b, d)
        xs = white * diag.sqrt()[:, None, :]
    if task.query_covariance_values is not None:
        query_std = torch.as_tensor(task.query_covariance_values, dtype=dtype).sqrt()
        xs = torch.cat([xs[:, :-1], white[:, -1:] * query_std], dim=1)
    if active_dims is not None:
        xs[..., active_dims:] = 0.0
    signal = torch.einsum("bkd,bd->bk", xs, betas)  # (B, K)
    if task.label == "relu":
        signal = signal.clamp(min=0.0)
    ys = signal + task.sigma * normal(b, k)  # (B, K)
    return Batch(xs=xs.numpy(), ys=ys.numpy(), betas=betas.numpy(), covariances=diag.contiguous().numpy())
