"""Per-layer linear readouts of a frozen learner (Fu, Chen, Jia, Sharan 2024, Def. 3.3).

For each layer ℓ = 0…L, one affine readout ŷ = uᵀh + v on that layer's hidden state h at the
position where the learner reads its prediction for the query, shared by every position. The
authors train it with Adam; here it is the least-squares fit in closed form (float64, a tiny ridge
on u), exact and deterministic. It is fitted on probe-fitting prompts and scored on others.

A learner is probed through ``layer_states(xs, ys)`` → (L+1, B, K, E) (its residual stream at every
layer and query position) and, for induced weights, ``query_layer_states(xs, ys, queries)`` →
(L+1, B, K, T, E) (the states at T fresh queries given each prefix as context): nothing here
depends on which model it is.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

RIDGE = 1e-8  # relative to the states' mean Gram eigenvalue: acts only on directions the states barely use


def fit_readouts(states: np.ndarray, ys: np.ndarray, ridge: float = RIDGE) -> np.ndarray:
    """Least-squares readout per layer: states (L+1, B, K, E), targets ys (B, K) → (L+1, E+1) = [u, v].

    Minimises Σ_{b,k}(uᵀh_{bk} + v − y_{bk})² + λ‖u‖², with λ = ridge·tr(H̃ᵀH̃)/E (``ridge`` times
    the mean eigenvalue of the centred states' Gram matrix H̃ᵀH̃), the states centred first so that
    the intercept v is not penalised.
    """
    states = np.asarray(states, dtype=np.float64)
    n_layers, e = states.shape[0], states.shape[-1]
    h = states.reshape(n_layers, -1, e)  # (L+1, P, E), P = B·K
    y = np.asarray(ys, dtype=np.float64).reshape(-1)  # (P,)
    if h.shape[1] != y.size:
        raise ValueError(f"states {states.shape} and targets {np.shape(ys)} cover different positions")
    mean_h, mean_y = h.mean(axis=1), y.mean()  # (L+1, E), ()
    centred = h - mean_h[:, None]  # (L+1, P, E)
    gram = np.einsum("lpe,lpf->lef", centred, centred)  # (L+1, E, E)
    lam = ridge * np.trace(gram, axis1=1, axis2=2) / e  # (L+1,)
    u = np.linalg.solve(gram + lam[:, None, None] * np.eye(e), np.einsum("lpe,p->le", centred, y - mean_y)[..., None])
    u = u[..., 0]  # (L+1, E)
    v = mean_y - np.einsum("le,le->l", u, mean_h)  # (L+1,)
    return np.concatenate([u, v[:, None]], axis=1)


def apply_readouts(readouts: np.ndarray, states: np.ndarray) -> np.ndarray:
    """Each layer's readout on its states: (L+1, E+1), (L+1, ..., E) → (L+1, ...)."""
    readouts = np.asarray(readouts, dtype=np.float64)
    n_layers, e = readouts.shape[0], readouts.shape[1] - 1
    states = np.asarray(states, dtype=np.float64)
    flat = states.reshape(n_layers, -1, e)  # (L+1, P, E)
    out = np.einsum("lpe,le->lp", flat, readouts[:, :e]) + readouts[:, e:]  # (L+1, P)
    return out.reshape(states.shape[:-1])


def probe_predictions(
    layer_states: Callable[[np.ndarray, np.ndarray], np.ndarray],
    fit: tuple[np.ndarray, np.ndarray],
    evaluate: tuple[np.ndarray, np.ndarray],
    ridge: float = RIDGE,
) -> np.ndarray:
    """Every layer's readout, fitted on the prompts ``fit`` = (xs, ys), predicting on ``evaluate``:
    (L+1, B, K). ``layer_states(xs, ys)`` → (L+1, B, K, E) is the learner's (e.g. ``numpy_layer_states``)."""
    readouts = fit_readouts(layer_states(*fit), fit[1], ridge)
    return apply_readouts(readouts, layer_states(*evaluate))
