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

from collections.abc import Callable, Iterator

import numpy as np

RIDGE = 1e-8  # relative to the states' mean Gram eigenvalue: acts only on directions the states barely use


def fit_readouts(states: np.ndarray, ys: np.ndarray, ridge: float = RIDGE) -> np.ndarray:
    """Least-squares readout per layer: states (L+1, B, K, E), targets ys (B, K) → (L+1, E+1) = [u, v].

    Minimises Σ_{b,k}(uᵀh_{bk} + v − y_{bk})² + λ‖u‖², with λ = ridge·tr(H̃ᵀH̃)/E (``ridge`` times
    the mean eigenvalue of the centred states' Gram matrix H̃ᵀH̃), the states centred first so that
    the intercept v is not penalised.
    """
    states = np.asarray(states, dtype=np.float64)
    if states.shape[1:-1] != np.shape(ys):
        raise ValueError(f"states {states.shape} and targets {np.shape(ys)} cover different positions")
    sums = ReadoutSums()
    sums.add(states, ys)
    return sums.solve(ridge)


class ReadoutSums:
    """The sums that determine ``fit_readouts``, accumulated over chunks of prompts: the count, means, centred Gram
    matrix and cross products of the states, each chunk shifted by the first chunk's means (so that subtracting the
    means at the end loses no precision to large common components of the states)."""

    def __init__(self) -> None:
        self.count = 0
        self.shift_h = self.shift_y = None  # (L+1, E), (): the first chunk's means
        self.sum_h = self.sum_y = self.gram = self.cross = 0.0

    def add(self, states: np.ndarray, ys: np.ndarray) -> None:
        """States (L+1, B, ...positions, E) and targets (B, ...positions) of one chunk of prompts."""
        h = np.asarray(states, dtype=np.float64).reshape(states.shape[0], -1, states.shape[-1])  # (L+1, P, E)
        y = np.asarray(ys, dtype=np.float64).reshape(-1)  # (P,)
        if self.shift_h is None:
            self.shift_h, self.shift_y = h.mean(axis=1), y.mean()
        h, y = h - self.shift_h[:, None], y - self.shift_y
        self.count += y.size
        self.sum_h, self.sum_y = self.sum_h + h.sum(axis=1), self.sum_y + y.sum()
        self.gram = self.gram + np.einsum("lpe,lpf->lef", h, h)  # (L+1, E, E)
        self.cross = self.cross + np.einsum("lpe,p->le", h, y)  # (L+1, E)

    def solve(self, ridge: float = RIDGE) -> np.ndarray:
        """The readouts (L+1, E+1) of every chunk added."""
        mean_h, mean_y = self.sum_h / self.count, self.sum_y / self.count  # (L+1, E), (): of the shifted states
        gram = self.gram - self.count * np.einsum("le,lf->lef", mean_h, mean_h)  # the centred states' Gram matrix
        cross = self.cross - self.count * mean_h * mean_y  # (L+1, E)
        e = gram.shape[-1]
        lam = ridge * np.trace(gram, axis1=1, axis2=2) / e  # (L+1,)
        u = np.linalg.solve(gram + lam[:, None, None] * np.eye(e), cross[..., None])[..., 0]  # (L+1, E)
        v = (mean_y + self.shift_y) - np.einsum("le,le->l", u, mean_h + self.shift_h)  # (L+1,)
        return np.concatenate([u, v[:, None]], axis=1)


def fit_readouts_in_chunks(
    layer_states: Callable[..., np.ndarray], xs: np.ndarray, ys: np.ndarray, ridge: float = RIDGE
) -> np.ndarray:
    """``fit_readouts(layer_states(xs, ys), ys)`` with one chunk of prompts' states held at a time
    (``state_chunks``): Fu et al.'s 4096 probe prompts at the paper's shape have 4.5 GB of states."""
    sums = ReadoutSums()
    for rows, states in state_chunks(layer_states, xs, ys):
        sums.add(states, ys[rows])
    return sums.solve(ridge)


def apply_readouts(readouts: np.ndarray, states: np.ndarray) -> np.ndarray:
    """Each layer's readout on its states: (L+1, E+1), (L+1, ..., E) → (L+1, ...)."""
    readouts = np.asarray(readouts, dtype=np.float64)
    n_layers, e = readouts.shape[0], readouts.shape[1] - 1
    states = np.asarray(states, dtype=np.float64)
    flat = states.reshape(n_layers, -1, e)  # (L+1, P, E)
    out = np.einsum("lpe,le->lp", flat, readouts[:, :e]) + readouts[:, e:]  # (L+1, P)
    return out.reshape(states.shape[:-1])


STATES_BUDGET_BYTES = 5e8  # one chunk's states (float64) held at once by state_chunks


def state_chunks(layer_states: Callable[..., np.ndarray], *arrays: np.ndarray) -> Iterator[tuple[slice, np.ndarray]]:
    """(rows, ``layer_states(*arrays[rows])``) over equal chunks of prompts, sized from one prompt's states so that a
    chunk's stay within ``STATES_BUDGET_BYTES`` (that prompt's states are computed again in its chunk: a model's
    float32 matrix products may round a lone prompt differently, by thread count; not when it is the only one)."""
    first = layer_states(*(a[:1] for a in arrays))
    if len(arrays[0]) == 1:
        yield slice(0, 1), first
        return
    chunk = max(1, int(STATES_BUDGET_BYTES // first.nbytes))
    for start in range(0, len(arrays[0]), chunk):
        rows = slice(start, start + chunk)
        yield rows, layer_states(*(a[rows] for a in arrays))


def readouts_in_chunks(readouts: np.ndarray, layer_states: Callable[..., np.ndarray], *arrays: np.ndarray) -> np.ndarray:
    """``apply_readouts(readouts, layer_states(*arrays))`` with one chunk of prompts' states held at a time
    (``state_chunks``): (L+1, B, ...). The query states of Fu et al.'s paper shape are (L+1, K, T, E) =
    (13, 41, 200, 256) a prompt, 218 MB: all 64 prompts of their induced weights at once would need 14 GB."""
    return np.concatenate([apply_readouts(readouts, states) for _, states in state_chunks(layer_states, *arrays)], axis=1)


def probe_predictions(
    layer_states: Callable[[np.ndarray, np.ndarray], np.ndarray],
    fit: tuple[np.ndarray, np.ndarray],
    evaluate: tuple[np.ndarray, np.ndarray],
    ridge: float = RIDGE,
) -> np.ndarray:
    """Every layer's readout, fitted on the prompts ``fit`` = (xs, ys), predicting on ``evaluate``:
    (L+1, B, K). ``layer_states(xs, ys)`` → (L+1, B, K, E) is the learner's (e.g. ``numpy_layer_states``)."""
    readouts = fit_readouts_in_chunks(layer_states, *fit, ridge)
    return readouts_in_chunks(readouts, layer_states, *evaluate)
