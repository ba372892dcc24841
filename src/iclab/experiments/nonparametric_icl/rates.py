"""Fitted log-log slopes of the excess risk (numpy only: the figure and the claims read them from the cube)."""

from __future__ import annotations

import numpy as np


def fitted_slope(positions: np.ndarray, excess: np.ndarray) -> np.ndarray:
    """Least-squares slope of log excess risk against log n over the last axis: positions (P,), excess (..., P) →
    (...); NaN where an excess is not positive (a Monte-Carlo mean below the noise floor)."""
    x = np.log(positions) - np.log(positions).mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        y = np.where(excess > 0, np.log(np.where(excess > 0, excess, 1.0)), np.nan)
    y = y - y.mean(axis=-1, keepdims=True)
    return (y * x).sum(axis=-1) / (x**2).sum()


def bin_centres(first: np.ndarray, last: np.ndarray) -> np.ndarray:
    """The geometric centre √(first·last) of each bin of positions."""
    return np.sqrt(np.asarray(first, dtype=float) * np.asarray(last, dtype=float))


def fit_bins(cube, fit_from: int) -> np.ndarray:
    """The position bins whose first position is at least ``fit_from``: a boolean mask over ``position_bin``."""
    return cube.bin_first.values >= fit_from
