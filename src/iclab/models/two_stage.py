"""The transformer of Oko, Song, Suzuki, Wu 2024: a nonlinear MLP layer followed by linear attention,

    f(X, y, x) = (1/n) Σᵢ yᵢ σ(W xᵢ + b)ᵀ Γ σ(W x + b),    σ = ReLU, width m.

Under the learner contract, position k is predicted from the k points before it (prefix sums):
ŷ_k = z_kᵀ Γ φ(x_k) with φ(x) = σ(Wx + b) and z_k = (1/k) Σ_{i<k} yᵢ φ(xᵢ); ŷ₀ = 0.
It is fitted by the two-stage algorithm in ``iclab.two_stage``, not by SGD.
"""

from __future__ import annotations

import torch
from torch import nn

from iclab.models.prompts import bilinear_readout, context_means


class TwoStageTransformer(nn.Module):
    def __init__(self, d: int, width: int):
        super().__init__()
        self.d, self.width = d, width
        self.weight = nn.Parameter(torch.zeros(width, d))  # W (m, d)
        self.bias = nn.Parameter(torch.zeros(width))  # b (m,)
        self.gamma = nn.Parameter(torch.zeros(width, width))  # Γ (m, m)

    def features(self, xs: torch.Tensor) -> torch.Tensor:
        """φ(x) = ReLU(Wx + b): (..., d) → (..., m)."""
        return torch.relu(xs @ self.weight.T + self.bias)

    def forward(self, xs: torch.Tensor, ys: torch.Tensor, last_only: bool = False) -> torch.Tensor:
        """Predictions (B, K), or (B, 1) for the final query with ``last_only``."""
        phi = self.features(xs)  # (B, K, m)
        z = context_means(phi, ys)  # (B, K, m)
        if last_only:
            z, phi = z[:, -1:], phi[:, -1:]
        return self.readout(z, phi)

    def readout(self, z: torch.Tensor, phi: torch.Tensor) -> torch.Tensor:
        """zᵀΓφ per prompt and position: (B, K, m), (B, K, m) → (B, K)."""
        return bilinear_readout(z, self.gamma, phi)
