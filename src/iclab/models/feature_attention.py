"""The transformer of Kim, Nakamaki, Suzuki 2024 (§2): a deep feature map followed by one linear attention layer,

    φ: R^d → R^N (an MLP: the "internal layers"),    ŷ_q = (1/n) Σᵢ yᵢ φ(xᵢ)ᵀ Γ φ(x_q),    Γ ∈ R^{N×N}.

Under the learner contract, position k is predicted from the k points before it: ŷ_k = z_kᵀΓφ(x_k) with
z_k = (1/k) Σ_{i<k} yᵢ φ(xᵢ); ŷ₀ = 0. Trained by gradient steps (``iclab.fit.sgd``), on a finite set of
pretraining prompts when its ``train.pretraining_prompts`` is set (the paper's T tasks).
"""

from __future__ import annotations

import torch
from torch import nn

from iclab.models.prompts import attention_readout


class FeatureAttention(nn.Module):
    def __init__(self, d: int, features: int, width: int, depth: int):
        super().__init__()
        self.d, self.n_features = d, features
        sizes = [d] + [width] * depth
        layers: list[nn.Module] = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            layers += [nn.Linear(fan_in, fan_out), nn.GELU()]
        self.feature_map = nn.Sequential(*layers, nn.Linear(sizes[-1], features))  # φ
        self.gamma = nn.Parameter(torch.eye(features))  # Γ (N, N)

    def features(self, xs: torch.Tensor) -> torch.Tensor:
        """φ(x): (..., d) → (..., N)."""
        return self.feature_map(xs)

    def forward(self, xs: torch.Tensor, ys: torch.Tensor, last_only: bool = False) -> torch.Tensor:
        """Predictions (B, K), or (B, 1) for the final query with ``last_only``."""
        phi = self.features(xs)  # (B, K, N)
        return attention_readout(phi, ys, self.gamma, last_only)
