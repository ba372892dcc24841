"""Nonparametric tasks over a fixed basis (Kim, Nakamaki, Suzuki 2024, §2; the first part of Suzuki's 2024 talk).

The talk: F_t(x) = β_tᵀf°(x) + ε with a fixed, unknown basis f° and random coefficients, E β_{t,j}² ≲ j^(−2s−1);
its γ-smooth example is f_j°(x) = Π_k √2 cos(2π 2^{s_{j,k}} x_k − δ_{j,k} π/2). The talk states no experiment, so
these choices are iclab's:
- x ~ U[0, 1]^d; f_j°(x) = Π_k c_{ω_{j,k}, δ_{j,k}}(x_k) with c_{0,0} = 1, c_{ω,0}(t) = √2 cos(2πωt) and
  c_{ω,1}(t) = √2 sin(2πωt) (ω ≥ 1; integer frequencies ω ≤ ``max_frequency`` instead of the talk's powers of
  two): products of distinct one-dimensional factors, so E[f°(x)f°(x)ᵀ] = I exactly (orthonormal basis).
- The ``n_basis`` functions are the first of a random order (``basis_seed``) of all such products but the
  constant: which function carries the large coefficients has nothing to do with its frequency, so F is no
  smoother in x than its roughest basis functions (the Hölder-basis case α′/d < s of the talk: a learner that
  does not know the basis is held to the rate of functions on [0, 1]^d).
- β_j ~ N(0, λ_j), λ_j = j^(−2s−1) / Σ_i i^(−2s−1): E F(x)² = 1 (the zero predictor's excess risk).
- y = F(x) + σε, ε ~ N(0, 1).
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass
from functools import cached_property
from typing import Any

import numpy as np


@dataclass(frozen=True)
class NonparametricTask:
    """Spec of the prompt distribution (JSON-able via ``to_dict``)."""

    d: int
    n_points: int  # K: points per prompt (context examples + the final query)
    n_basis: int = 32  # J: basis functions with a non-zero coefficient
    max_frequency: int = 2  # ω ≤ this on every axis
    s: float = 1.0  # coefficient decay: λ_j ∝ j^(−2s−1)
    sigma: float = 0.5  # label noise
    basis_seed: int = 0  # draws the order of the basis: shared by every job with this spec

    def __post_init__(self) -> None:
        for name in ("d", "n_points", "n_basis", "max_frequency"):
            if getattr(self, name) < 1:
                raise ValueError(f"nonparametric task: {name} must be >= 1, got {getattr(self, name)}")
        available = (2 * self.max_frequency + 1) ** self.d - 1
        if self.n_basis > available:
            raise ValueError(
                f"nonparametric task: n_basis {self.n_basis} exceeds the {available} basis functions of d = {self.d}, "
                f"max_frequency = {self.max_frequency}; allowed: n_basis <= {available}"
            )
        if self.s <= 0 or self.sigma < 0:
            raise ValueError(f"nonparametric task: need s > 0 and sigma >= 0, got s={self.s}, sigma={self.sigma}")

    def to_dict(self) -> dict[str, Any]:
        return {"family": "nonparametric"} | asdict(self)

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> NonparametricTask:
        return cls(**{k: v for k, v in spec.items() if k != "family"})

    @cached_property
    def basis(self) -> tuple[np.ndarray, np.ndarray]:
        """(frequencies ω (J, d), sine flags δ (J, d)) of f_1°, …, f_J°: a pure function of ``basis_seed``, d and
        ``max_frequency``."""
        factors = [(0, 0)] + [(w, phase) for w in range(1, self.max_frequency + 1) for phase in (0, 1)]
        products = list(itertools.product(factors, repeat=self.d))[1:]  # every product but the constant
        rng = np.random.default_rng([self.basis_seed, self.d, self.max_frequency])
        chosen = [products[i] for i in rng.permutation(len(products))[: self.n_basis]]
        table = np.array(chosen, dtype=np.int64)  # (J, d, 2)
        return table[..., 0], table[..., 1]

    @cached_property
    def variances(self) -> np.ndarray:
        """λ_j = j^(−2s−1) / Σ_i i^(−2s−1), j = 1..J: (J,)."""
        raw = np.arange(1, self.n_basis + 1, dtype=np.float64) ** (-2 * self.s - 1)
        return raw / raw.sum()
