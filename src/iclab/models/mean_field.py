"""The transformer of Kim & Suzuki 2024 (§2): a mean-field two-layer network followed by linear attention,

    h_μ(x) = (1/M) Σ_m a_m σ(w_mᵀx) ∈ R^k (σ the sigmoid),    ŷ_q = (1/n) Σᵢ yᵢ h_μ(xᵢ)ᵀ Γ h_μ(x_q).

The M particles θ_m = (a_m, w_m) are samples of the measure μ. Under the learner contract,
position k is predicted from the k points before it: ŷ_k = z_kᵀ Γ h(x_k) with
z_k = (1/k) Σ_{i<k} yᵢ h(xᵢ); ŷ₀ = 0. Fitted by ``iclab.fit.mean_field`` (three variants).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from iclab.models.prompts import attention_readout
from iclab.tasks.samplers.mean_field import sigmoid_features


class MeanFieldTransformer(nn.Module):
    def __init__(self, d: int, k: int, width: int):
        super().__init__()
        self.d, self.k, self.width = d, k, width
        self.a = nn.Parameter(torch.randn(width, k))  # (M, k): a_m ~ N(0, I_k)
        self.w = nn.Parameter(torch.randn(width, d) / math.sqrt(d))  # (M, d): w_m ~ N(0, I_d/d), so w_mᵀx ~ N(0, 1)
        self.gamma = nn.Parameter(torch.eye(k))  # Γ (k, k)

    def features(self, xs: torch.Tensor) -> torch.Tensor:
        """h_μ(x): (..., d) → (..., k)."""
        return sigmoid_features(xs, self.a, self.w)

    def forward(self, xs: torch.Tensor, ys: torch.Tensor, last_only: bool = False) -> torch.Tensor:
        """Predictions (B, K), or (B, 1) for the final query with ``last_only``."""
        h = self.features(xs)  # (B, K, k)
        return attention_readout(h, ys, self.gamma, last_only)

    def final_query_terms(self, xs: torch.Tensor, ys: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(z, h(x_q)) at each prompt's final query: (B, k) each."""
        h = self.features(xs)  # (B, K, k)
        z = ys[:, :-1, None].mul(h[:, :-1]).mean(dim=1)  # (B, k): (1/n) Σ_{i<n} yᵢ h(xᵢ)
        return z, h[:, -1]


def optimal_gamma(z: torch.Tensor, h_query: torch.Tensor, y_query: torch.Tensor, ridge: float) -> torch.Tensor:
    """Γ* = argmin_Γ (1/N) Σ_t (y_t − z_tᵀΓh_t)² + ridge‖Γ‖²_F for given features (Kim & Suzuki's
    min over Γ of the two-timescale objective, on N prompts): z, h_query (N, k), y_query (N,) → (k, k).

    zᵀΓh = ⟨vec Γ, vec(z hᵀ)⟩: a ridge regression on the k² products, solved in float64."""
    n, k = z.shape
    design = (z[:, :, None] * h_query[:, None, :]).reshape(n, k * k).double()  # (N, k²): row t = vec(z_t h_tᵀ)
    gram = design.T @ design / n + ridge * torch.eye(k * k, dtype=torch.float64, device=z.device)
    return torch.linalg.solve(gram, design.T @ y_query.double() / n).reshape(k, k).to(z.dtype)
