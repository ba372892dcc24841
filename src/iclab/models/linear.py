"""Linear self-attention (LSA), the linear transformer block (LTB) and GD-β.

Token matrix Z = [[Xᵀ, x_q], [yᵀ, 0]] ∈ R^{(d+1)×(n+1)}, mask M = diag(I_n, 0)
(Zhang, Wu, Bartlett 2024, §2; Zhang, Frei, Bartlett 2024, eq. (3)):
    LSA:  f(Z) = [Z + W^{PV} Z M Zᵀ W^{KQ} Z / n]_{d+1, n+1}
    LTB:  Z̃ = Z + W^{PV} Z M Zᵀ W^{KQ} Z / n,  f(Z) = [Z̃ + W₂ W₁ᵀ Z̃]_{d+1, n+1}
    GD-β: f = x_qᵀ(β₀ + Γ Xᵀ(y − Xβ₀) / n)
Every position k of a prompt is treated as a query with the k points before it as
context (n = k; causal, strictly lower-triangular attention), so one forward pass gives
the prediction for every prefix length. Only the query column is computed: the other
columns never reach the prediction of a one-layer model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn


def prefix_counts(k: int, device: torch.device | None = None) -> torch.Tensor:
    """(K,) number of context points before each position, floored at 1 to avoid 0/0."""
    return torch.arange(k, device=device).clamp(min=1).to(torch.get_default_dtype())


def exclusive_prefix_mean(terms: torch.Tensor) -> torch.Tensor:
    """(B, K, ...) → (B, K, ...): at position k the mean of terms[:, :k] (0 at k = 0)."""
    sums = torch.cat([torch.zeros_like(terms[:, :1]), terms[:, :-1].cumsum(dim=1)], dim=1)
    counts = prefix_counts(terms.shape[1], terms.device).to(terms.dtype)
    return sums / counts.view(1, -1, *([1] * (terms.dim() - 2)))


def tokens(xs: torch.Tensor, ys: torch.Tensor) -> torch.Tensor:
    """Columns z_i = (x_i, y_i) of Z, as rows: (B, K, d+1)."""
    return torch.cat([xs, ys.unsqueeze(-1)], dim=-1)


@dataclass(frozen=True)
class ReducedWeights:
    """The LSA weights that move from the balanced initialisation (Zhang, Frei, Bartlett 2024):
    U₁₁ = W^{KQ}[:d, :d] and u₋₁ = W^{PV}[d, d]; the prediction is x_qᵀ A ĥ with A = u₋₁U₁₁ᵀ."""

    u11: np.ndarray  # (d, d)
    u_pv: float

    @property
    def product(self) -> np.ndarray:
        """u₋₁U₁₁ (d, d): Γ⁻¹ at the limit of Theorem 4."""
        return self.u_pv * self.u11

    @property
    def a_matrix(self) -> np.ndarray:
        """A = u₋₁U₁₁ᵀ (d, d) of ŷ = x_qᵀ A ĥ."""
        return self.u_pv * self.u11.T


class LinearSelfAttention(nn.Module):
    """One LSA layer with full W^{PV}, W^{KQ} ∈ R^{(d+1)×(d+1)}.

    ``init="gaussian"``: i.i.d. N(0, init_scale²) entries. ``init="zfb"``: Zhang, Frei, Bartlett
    2024, Assumption 3, W^{PV}(0) = σ[[0,0],[0,1]], W^{KQ}(0) = σ[[ΘΘᵀ,0],[0,0]] with ΘΘᵀ = I/√d
    (‖ΘΘᵀ‖_F = 1, commutes with every Λ) and σ = init_scale.
    """

    def __init__(self, d: int, init_scale: float = 0.1, init: str = "gaussian"):
        super().__init__()
        self.d = d
        if init == "gaussian":
            self.w_pv = nn.Parameter(init_scale * torch.randn(d + 1, d + 1))
            self.w_kq = nn.Parameter(init_scale * torch.randn(d + 1, d + 1))
        elif init == "zfb":
            self.w_pv = nn.Parameter(torch.zeros(d + 1, d + 1))
            self.w_kq = nn.Parameter(torch.zeros(d + 1, d + 1))
            with torch.no_grad():
                self.w_pv[d, d] = init_scale
                self.w_kq[:d, :d] = init_scale * torch.eye(d) / d**0.5
        else:
            raise ValueError(f"unknown init {init!r}; allowed: gaussian, zfb")

    def reduced_weights(self) -> ReducedWeights:
        d = self.d
        return ReducedWeights(u11=self.w_kq.detach()[:d, :d].cpu().numpy(), u_pv=float(self.w_pv.detach()[d, d]))

    def attention_update(self, xs: torch.Tensor, ys: torch.Tensor, last_only: bool = False) -> torch.Tensor:
        """Query column of W^{PV} Z M Zᵀ W^{KQ} Z / n at every position, (B, K, d+1),
        or at the final position only, (B, 1, d+1), which costs O(K) instead of O(K²)."""
        z = tokens(xs, ys)  # (B, K, d+1)
        k = xs.shape[1]
        if last_only:
            xs, context = xs[:, -1:], z[:, :-1]  # (B, 1, d), (B, K-1, d+1)
            counts = torch.full((1,), max(k - 1, 1), dtype=z.dtype, device=z.device)
        else:
            context, counts = z, prefix_counts(k, xs.device)
        queries = xs @ self.w_kq[:, : self.d].T  # (B, Q, d+1) = W^{KQ} (x_q, 0)
        scores = queries @ context.transpose(1, 2)  # (B, Q, C): z_iᵀ W^{KQ} z_q
        if not last_only:
            causal = torch.ones(k, k, dtype=torch.bool, device=xs.device).tril(diagonal=-1)  # i < q
            scores = scores.masked_fill(~causal, 0.0)
        return ((scores / counts[:, None]) @ context) @ self.w_pv.T  # (B, Q, d+1)

    def forward(self, xs: torch.Tensor, ys: torch.Tensor, last_only: bool = False) -> torch.Tensor:
        """Predictions (B, K), or (B, 1) for the final query with ``last_only``.

        Only the last row p of W^{PV} reaches the prediction (Z_{d+1,q} = 0), so
        f_k = ((1/k) Σ_{i<k} (pᵀz_i) z_i)ᵀ W^{KQ}(x_k, 0): prefix sums, O(K) per prompt.
        """
        z = tokens(xs, ys)  # (B, K, d+1)
        weighted = z * (z @ self.w_pv[self.d]).unsqueeze(-1)  # (B, K, d+1): (pᵀz_i) z_i
        if last_only:
            context = weighted[:, :-1].sum(dim=1, keepdim=True) / max(xs.shape[1] - 1, 1)  # (B, 1, d+1)
            xs = xs[:, -1:]
        else:
            context = exclusive_prefix_mean(weighted)  # (B, K, d+1)
        return (context * (xs @ self.w_kq[:, : self.d].T)).sum(dim=-1)  # (B, Q)


class LinearTransformerBlock(LinearSelfAttention):
    """LSA followed by a linear MLP W₂W₁ᵀ (width ``mlp_width``, default d+1) with residual."""

    def __init__(self, d: int, init_scale: float = 0.1, mlp_width: int | None = None):
        super().__init__(d, init_scale)
        width = d + 1 if mlp_width is None else mlp_width
        self.w1 = nn.Parameter(init_scale * torch.randn(d + 1, width))
        self.w2 = nn.Parameter(init_scale * torch.randn(d + 1, width))

    def forward(self, xs: torch.Tensor, ys: torch.Tensor, last_only: bool = False) -> torch.Tensor:
        queries = xs[:, -1:] if last_only else xs  # (B, Q, d)
        z_q = torch.cat([queries, torch.zeros_like(queries[..., :1])], dim=-1)  # (B, Q, d+1)
        attended = z_q + self.attention_update(xs, ys, last_only)  # (B, Q, d+1) = z̃_q
        mlp_last_row = self.w2[self.d] @ self.w1.T  # (d+1,) = last row of W₂W₁ᵀ
        return attended[..., self.d] + attended @ mlp_last_row  # (B, Q)


class GDBeta(nn.Module):
    """One step of GD from a learnable initialisation β₀ with a learnable preconditioner Γ."""

    def __init__(self, d: int, init_scale: float = 0.0):
        super().__init__()
        self.beta0 = nn.Parameter(init_scale * torch.randn(d))
        self.gamma = nn.Parameter(init_scale * torch.randn(d, d))

    def forward(self, xs: torch.Tensor, ys: torch.Tensor, last_only: bool = False) -> torch.Tensor:
        if last_only:
            context_x, context_y, query = xs[:, :-1], ys[:, :-1], xs[:, -1]  # (B, n, d), (B, n), (B, d)
            mean_gradient = torch.einsum("bnd,bn->bd", context_x, context_y - context_x @ self.beta0)
            mean_gradient = mean_gradient / max(xs.shape[1] - 1, 1)  # (B, d)
            return (query @ self.beta0 + torch.einsum("bd,de,be->b", query, self.gamma, mean_gradient))[:, None]
        residuals = ys - xs @ self.beta0  # (B, K)
        mean_gradient = exclusive_prefix_mean(xs * residuals.unsqueeze(-1))  # (B, K, d): mean of x_i(y_i − x_iᵀβ₀)
        return xs @ self.beta0 + torch.einsum("bkd,de,bke->bk", xs, self.gamma, mean_gradient)
