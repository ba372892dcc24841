"""Prompt layouts shared by several models.

- Garg et al.'s interleaved prompts, for the sequence models (GPT-2, LSTM): tokens x₀, y₀, x₁, y₁, …
  as (x, 0) and (0, y) in R^{d+1}; position k's prediction is read at the token of x_k, which follows
  x₀, y₀, …, y_{k−1} and none of the labels from y_k on.
- Context means z_k = (1/k) Σ_{i<k} yᵢ φ(xᵢ) and the read-out z_kᵀΓφ(x_k) (``attention_readout``), for the
  feature-then-linear-attention models (two-stage transformer, mean-field transformer, the feature-map attention
  of Kim, Nakamaki, Suzuki).
- ``Float32ReadOut``: GPT-2's last linear map, kept in float32 under bfloat16 autocast."""

from __future__ import annotations

from typing import Callable

import torch
from torch import nn


class Float32ReadOut(nn.Linear):
    """The read-out of a prediction from a model's state: a linear map that runs in float32 even under autocast (the
    state cast up first), so that ``train.precision: bfloat16`` rounds the body of the model, never the prediction
    itself (bfloat16 keeps 8 bits: a prediction near |y| = 5 would move by up to 0.016, a third of √0.003, Zhang, Wu,
    Bartlett's Table 1 loss). Without autocast it is ``nn.Linear``, to the bit. (The LSTM keeps a plain read-out: the
    default config trains it under bfloat16, and its cubes and verdicts were measured so; the paper tier trains it in
    float32.)"""

    def forward(self, states: torch.Tensor) -> torch.Tensor:
        with torch.autocast(states.device.type, enabled=False):
            return super().forward(states.float())


def interleave(xs: torch.Tensor, ys: torch.Tensor) -> torch.Tensor:
    """xs (B, K, d), ys (B, K) → tokens (B, 2K, d+1): x₀, y₀, x₁, …"""
    zero = torch.zeros_like(ys).unsqueeze(-1)  # (B, K, 1)
    x_tokens = torch.cat([xs, zero], dim=-1)  # (B, K, d+1)
    y_tokens = torch.cat([torch.zeros_like(xs), ys.unsqueeze(-1)], dim=-1)  # (B, K, d+1)
    return torch.stack([x_tokens, y_tokens], dim=2).flatten(1, 2)  # (B, 2K, d+1)


def query_states_by_prefix(
    layer_states: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    xs: torch.Tensor,
    ys: torch.Tensor,
    queries: torch.Tensor,
) -> torch.Tensor:
    """A model's ``layer_states`` (xs, ys → (L+1, B, K, E) at the x tokens) at T fresh queries given
    each prefix as context: queries (B, K, T, d) → (L+1, B, K, T, E). Query j at position k sees
    x₀, y₀, …, x_{k−1}, y_{k−1} and itself, as x_k would; one forward pass per prefix length over
    the B·T prompts."""
    b, n_points, t, d = queries.shape
    per_prefix = []
    for k in range(n_points):
        context_x = xs[:, :k].repeat_interleave(t, dim=0)  # (B·T, k, d)
        context_y = ys[:, :k].repeat_interleave(t, dim=0)  # (B·T, k)
        prompt_x = torch.cat([context_x, queries[:, k].reshape(b * t, 1, d)], dim=1)  # (B·T, k+1, d)
        prompt_y = torch.cat([context_y, context_y.new_zeros(b * t, 1)], dim=1)  # (B·T, k+1): its label unseen
        states = layer_states(prompt_x, prompt_y)[:, :, k]  # (L+1, B·T, E): at the query's token
        per_prefix.append(states.reshape(len(states), b, t, -1))
    return torch.stack(per_prefix, dim=2)  # (L+1, B, K, T, E)


def context_means(phi: torch.Tensor, ys: torch.Tensor) -> torch.Tensor:
    """z_k = (1/k) Σ_{i<k} yᵢ φ(xᵢ) for every position k (z₀ = 0): φ (B, K, m), ys (B, K) → (B, K, m)."""
    sums = torch.cumsum(ys.unsqueeze(-1) * phi, dim=1)  # (B, K, m): Σ_{i≤k}
    sums = torch.cat([torch.zeros_like(sums[:, :1]), sums[:, :-1]], dim=1)  # Σ_{i<k}
    counts = torch.arange(ys.shape[1], device=ys.device, dtype=phi.dtype).clamp(min=1)  # (K,)
    return sums / counts[:, None]


def bilinear_readout(z: torch.Tensor, gamma: torch.Tensor, phi: torch.Tensor) -> torch.Tensor:
    """z_kᵀ Γ φ(x_k) per prompt and position: z (B, K, m), Γ (m, m), φ (B, K, m) → (B, K)."""
    return torch.einsum("bkm,mn,bkn->bk", z, gamma, phi)


def attention_readout(
    phi: torch.Tensor, ys: torch.Tensor, gamma: torch.Tensor, last_only: bool = False
) -> torch.Tensor:
    """ŷ_k = z_kᵀΓφ(x_k) with the context means z_k of features φ (B, K, m), labels ys (B, K), Γ (m, m): (B, K),
    or (B, 1) for the final query with ``last_only``."""
    z = context_means(phi, ys)  # (B, K, m)
    if last_only:
        z, phi = z[:, -1:], phi[:, -1:]
    return bilinear_readout(z, gamma, phi)
