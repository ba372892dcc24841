"""Learnable in-context learners. Every model maps prompts ``xs (B, K, d)``, ``ys (B, K)``
to predictions ``ys_hat (B, K)``, position k predicted from the k points before it."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch
from torch import nn

from iclab.models.feature_attention import FeatureAttention
from iclab.models.linear import GDBeta, LinearSelfAttention, LinearTransformerBlock
from iclab.models.lstm import LSTMLearner
from iclab.models.mean_field import MeanFieldTransformer


def gpt2(**options: Any) -> nn.Module:
    """GPT-2 learner (imported on demand: transformers is slow to import)."""
    from iclab.models.gpt2 import GPT2Learner

    return GPT2Learner(**options)


def two_stage(**options: Any) -> nn.Module:
    """The transformer of Oko, Song, Suzuki, Wu 2024 (fitted by iclab.two_stage)."""
    from iclab.models.two_stage import TwoStageTransformer

    return TwoStageTransformer(**options)


MODEL_BUILDERS: dict[str, Callable[..., nn.Module]] = {
    "lsa": LinearSelfAttention,
    "ltb": LinearTransformerBlock,
    "gd_beta": GDBeta,
    "gpt2": gpt2,
    "lstm": LSTMLearner,
    "two_stage": two_stage,
    "mean_field": MeanFieldTransformer,
    "feature_attention": FeatureAttention,
}
MODEL_NAMES = tuple(MODEL_BUILDERS)


def build_model(spec: dict[str, Any], d: int) -> nn.Module:
    """Build the model named by ``spec['name']`` for covariate dimension ``d``."""
    options = {k: v for k, v in spec.items() if k not in ("name", "label")}
    try:
        builder = MODEL_BUILDERS[spec["name"]]
    except KeyError:
        raise ValueError(f"unknown model {spec['name']!r}; allowed: {', '.join(MODEL_NAMES)}") from None
    return builder(d=d, **options)


def default_device() -> torch.device:
    """CUDA when available, else CPU: the paper tier runs unchanged on a GPU machine."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def numpy_predictor(model: nn.Module, chunk_size: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Wrap a torch model as a float64 numpy predictor (B, K), ``chunk_size`` prompts per forward pass."""
    return _in_chunks(model, next(model.parameters()).device, chunk_size, axis=0)


def numpy_layer_states(model: nn.Module, chunk_size: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Wrap a model's ``layer_states`` as a float64 numpy function (L+1, B, K, E), ``chunk_size``
    prompts per forward pass (for per-layer probes)."""
    return _in_chunks(model.layer_states, next(model.parameters()).device, chunk_size, axis=1)


def numpy_query_layer_states(model: nn.Module, chunk_size: int) -> Callable[..., np.ndarray]:
    """Wrap a model's ``query_layer_states`` (xs, ys, queries (B, K, T, d)) as a float64 numpy
    function (L+1, B, K, T, E), ``chunk_size`` prompts at a time."""
    return _in_chunks(model.query_layer_states, next(model.parameters()).device, chunk_size, axis=1)


def _in_chunks(fn: Callable, device: torch.device, chunk_size: int, axis: int) -> Callable:
    """numpy arrays in, each with the prompts on its first axis; ``fn`` on float32 blocks of
    ``chunk_size`` prompts, without gradients; the float64 results joined along their prompt ``axis``."""

    def apply(*arrays: np.ndarray) -> np.ndarray:
        out = []
        with torch.no_grad():
            for start in range(0, len(arrays[0]), chunk_size):
                rows = slice(start, start + chunk_size)
                block = [torch.as_tensor(a[rows], dtype=torch.float32, device=device) for a in arrays]
                out.append(fn(*block).double().cpu().numpy())
        return np.concatenate(out, axis=axis)

    return apply
