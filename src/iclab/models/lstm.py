"""A stacked LSTM as an in-context learner (Fu, Chen, Jia, Sharan 2024, Table 1 and §5: it neither
improves across layers like a Transformer nor matches Newton; it resembles online GD).

It reads Garg et al.'s interleaved prompts like ``GPT2Learner`` (same read-in and read-out), one
single-layer ``nn.LSTM`` per layer so that every layer's output is exposed for per-layer probes. An
LSTM is causal by construction: the state at x_k's token has seen x₀, y₀, …, x_k only. Under bf16 autocast
(``train.precision: bfloat16``) its recurrent layers run in float32 on CUDA and, on the CPU, as torch runs them
there, which depends on the CPU (``recurrent_precision``).
"""

from __future__ import annotations

import torch
from torch import nn

from iclab.models.prompts import interleave, query_states_by_prefix


def cuda_autocast(state: torch.Tensor) -> bool:
    """Whether ``state`` would go through CUDA's autocast."""
    return state.device.type == "cuda" and torch.is_autocast_enabled("cuda")


def recurrent(layer: nn.LSTM, state: torch.Tensor) -> torch.Tensor:
    """One layer's outputs (B, T, hidden). Under CUDA's autocast in float32: autocast's only lower precision for
    cuDNN's RNN is float16 (no loss scaling here, and not the bfloat16 the config asks for), so on CUDA the
    recurrent layers run in float32 and only the read-in under bf16. On the CPU as autocast runs them
    (``recurrent_precision``)."""
    if cuda_autocast(state):
        with torch.autocast(state.device.type, enabled=False):
            return layer(state.float())[0]
    return layer(state)[0]


def onednn_bf16() -> bool:
    """Whether torch runs a bfloat16 LSTM on this CPU as oneDNN's fused layer: oneDNN enabled and its bf16 kernels
    supported by the CPU (AVX512 with BW/VL/DQ, or AMX; not AVX2). torch's own test (``use_mkldnn`` in ATen's
    RNN.cpp)."""
    return torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled and bool(
        torch.ops.mkldnn._is_mkldnn_bf16_supported())


def recurrent_precision(device: torch.device) -> str:
    """What the recurrent layers run in under ``train.precision: bfloat16`` on ``device`` (``recurrent``): float32
    on CUDA; on a CPU with oneDNN's bf16, its fused LSTM in bfloat16 (states included); elsewhere torch's
    decomposed LSTM, whose gate matmuls and activations autocast runs in bfloat16 while the cell and hidden
    states, started in float32, stay float32 by type promotion (tests/test_gpu_path.py traces both)."""
    if device.type == "cuda":
        return "float32"
    if device.type != "cpu":
        raise ValueError(f"the LSTM's recurrent precision is known on cpu and cuda, not on {device.type}")
    return "bfloat16" if onednn_bf16() else "bfloat16 gates, float32 states"


class LSTMLearner(nn.Module):
    def __init__(self, d: int, hidden: int, n_layer: int):
        super().__init__()
        self.d = d
        self.read_in = nn.Linear(d + 1, hidden)
        self.layers = nn.ModuleList(nn.LSTM(hidden, hidden, batch_first=True) for _ in range(n_layer))
        self.read_out = nn.Linear(hidden, 1)

    def hidden_states(self, xs: torch.Tensor, ys: torch.Tensor) -> torch.Tensor:
        """The read-in (index 0) and every layer's output at every token: (L+1, B, 2K, hidden)."""
        state = self.read_in(interleave(xs, ys))  # (B, 2K, hidden)
        states = [state]
        for layer in self.layers:
            state = recurrent(layer, state)  # (B, 2K, hidden)
            states.append(state)
        return torch.stack(states)

    def layer_states(self, xs: torch.Tensor, ys: torch.Tensor) -> torch.Tensor:
        """Every layer's state where position k's prediction is read (its x token): (L+1, B, K, hidden);
        ``read_out`` on index L is the model's own prediction."""
        return self.hidden_states(xs, ys)[:, :, 0::2]

    def query_layer_states(self, xs: torch.Tensor, ys: torch.Tensor, queries: torch.Tensor) -> torch.Tensor:
        """``layer_states`` at T fresh queries given each prefix as context: queries (B, K, T, d) →
        (L+1, B, K, T, hidden), by ``prompts.query_states_by_prefix``."""
        return query_states_by_prefix(self.layer_states, xs, ys, queries)

    def forward(self, xs: torch.Tensor, ys: torch.Tensor, last_only: bool = False) -> torch.Tensor:
        """Predictions (B, K), or (B, 1) for the final query with ``last_only``."""
        predictions = self.read_out(self.layer_states(xs, ys)[-1])[..., 0]  # (B, K)
        return predictions[:, -1:] if last_only else predictions
