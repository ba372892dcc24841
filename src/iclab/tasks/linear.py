"""Linear regression prompts with a shared signal (Zhang, Wu, Bartlett 2024, Assumption 3.1):
β ~ N(β*, Ψ), x ~ N(0, H), y = xᵀβ + ε, ε ~ N(0, σ²). A prompt holds K points;
position k is predicted from the k points before it (the learner contract).
H is fixed (identity / diagonal / any SPD matrix) or drawn per prompt: diagonal with i.i.d.
Exponential(1) entries times a scale c (Zhang, Frei, Bartlett 2024, §6), or a fixed spectrum in a
Haar-random eigenbasis (``random_basis``; Fu, Chen, Jia, Sharan 2024, §5: κ(H) = 100, see
``ill_conditioned_spectrum``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

COVARIANCE_KINDS = ("identity", "diagonal", "matrix", "random_exponential", "random_basis")
RANDOM_KINDS = ("random_exponential", "random_basis")  # H drawn per prompt
LABELS = ("linear", "relu")


def ill_conditioned_spectrum(d: int, condition_number: float) -> tuple[float, ...]:
    """Fu, Chen, Jia, Sharan 2024, §5 (and their code's sampler): the first ⌊d/2⌋ eigenvalues
    ``condition_number``, the rest 1, scaled so that tr H = d; for ``covariance='random_basis'``."""
    if d < 2 or condition_number < 1:
        raise ValueError(
            f"an ill-conditioned spectrum needs d >= 2 and condition_number >= 1, got d={d}, {condition_number}"
        )
    raw = np.ones(d)
    raw[: d // 2] = condition_number
    return tuple(float(v) for v in raw * d / raw.sum())


@dataclass(frozen=True)
class LinearTask:
    """Spec of the linear-regression prompt distribution (JSON-able via ``to_dict``)."""

    d: int
    n_points: int  # K: points per prompt (context examples + the final query)
    beta_star: tuple[float, ...]
    psi: float  # Ψ = psi · I, unless psi_values is given
    sigma: float
    covariance: str = "identity"
    covariance_values: tuple[float, ...] | None = None  # diagonal, random_basis: d values; matrix: d*d row-major
    covariance_scale: float = 1.0
    # Optional fields, left out of to_dict at their defaults so that adding them did not rename existing
    # jobs: test-time shifts (Zhang, Frei, Bartlett 2024, §5) and a diagonal Ψ.
    label: str = "linear"  # linear: y = xᵀβ + ε | relu: y = max(xᵀβ, 0) + ε (a nonlinear task shift)
    query_covariance_values: tuple[float, ...] | None = None  # diagonal covariance of the final point only
    psi_values: tuple[float, ...] | None = None  # Ψ = diag(psi_values) (≥ 0: rank-deficient allowed), for psi · I

    def __post_init__(self) -> None:
        if self.d <= 0 or self.n_points <= 0:
            raise ValueError(f"d and n_points must be positive, got d={self.d}, n_points={self.n_points}")
        if len(self.beta_star) != self.d:
            raise ValueError(f"beta_star has {len(self.beta_star)} entries, expected d={self.d}")
        if self.psi < 0 or self.sigma < 0:
            raise ValueError(f"psi and sigma must be >= 0, got psi={self.psi}, sigma={self.sigma}")
        if self.covariance not in COVARIANCE_KINDS:
            raise ValueError(f"covariance {self.covariance!r} unknown; allowed: {', '.join(COVARIANCE_KINDS)}")
        expected = {"diagonal": self.d, "random_basis": self.d, "matrix": self.d * self.d}.get(self.covariance)
        if expected is not None and (self.covariance_values is None or len(self.covariance_values) != expected):
            raise ValueError(f"covariance {self.covariance!r} needs covariance_values with {expected} entries")
        if expected is None and self.covariance_values is not None:
            raise ValueError(f"covariance {self.covariance!r} takes no covariance_values (they would go unused)")
        if self.label not in LABELS:
            raise ValueError(f"label {self.label!r} unknown; allowed: {', '.join(LABELS)}")
        for name in ("covariance_values", "query_covariance_values"):
            values = getattr(self, name)
            if self.covariance != "matrix" and values is not None and min(values) < 0:
                raise ValueError(f"{name} must be >= 0 (a diagonal covariance), got {values}")
        if self.psi_values is not None and (len(self.psi_values) != self.d or min(self.psi_values) < 0):
            raise ValueError(f"psi_values must hold d={self.d} values >= 0 (Ψ = diag(psi_values)), got {self.psi_values}")
        if self.query_covariance_values is not None and len(self.query_covariance_values) != self.d:
            raise ValueError(f"query_covariance_values needs d={self.d} entries")
        if self.covariance == "matrix":
            eigenvalues = np.linalg.eigvalsh(self.fixed_covariance_raw())
            if eigenvalues.min() <= 0 or not np.allclose(self.fixed_covariance_raw(), self.fixed_covariance_raw().T):
                raise ValueError("covariance 'matrix' must be symmetric positive definite")

    def canonical(self) -> LinearTask:
        """The same distribution spelled one way, so that experiments training on it share data sets and models:
        a diagonal covariance of ones is the identity (both scale the same white noise by √1: the same draws)."""
        if self.covariance == "diagonal" and all(value == 1.0 for value in self.covariance_values):
            return replace(self, covariance="identity", covariance_values=None)
        return self

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": "linear",
            "d": self.d,
            "n_points": self.n_points,
            "beta_star": list(self.beta_star),
            "psi": self.psi,
            "sigma": self.sigma,
            "covariance": self.covariance,
            "covariance_values": None if self.covariance_values is None else list(self.covariance_values),
            "covariance_scale": self.covariance_scale,
        } | self.optional_fields()

    def optional_fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        if self.label != "linear":
            fields["label"] = self.label
        if self.query_covariance_values is not None:
            fields["query_covariance_values"] = list(self.query_covariance_values)
        if self.psi_values is not None:
            fields["psi_values"] = list(self.psi_values)
        return fields

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> LinearTask:
        fields = {k: v for k, v in spec.items() if k != "family"}
        fields["beta_star"] = tuple(fields["beta_star"])
        for name in ("covariance_values", "query_covariance_values", "psi_values"):
            if fields.get(name) is not None:
                fields[name] = tuple(fields[name])
        return cls(**fields)

    @property
    def psi_matrix(self) -> np.ndarray:
        if self.psi_values is not None:
            return np.diag(np.asarray(self.psi_values, dtype=float))
        return self.psi * np.eye(self.d)

    def fixed_covariance_raw(self) -> np.ndarray:
        if self.covariance == "identity":
            return np.eye(self.d)
        if self.covariance == "diagonal":
            return np.diag(np.asarray(self.covariance_values, dtype=float))
        return np.asarray(self.covariance_values, dtype=float).reshape(self.d, self.d)

    @property
    def h_matrix(self) -> np.ndarray:
        """The covariate covariance H (fixed kinds only)."""
        if self.covariance in RANDOM_KINDS:
            raise ValueError(f"covariance {self.covariance!r} has no fixed H: it is drawn per prompt")
        return self.covariance_scale * self.fixed_covariance_raw()


def final_query_setting(task: LinearTask) -> dict:
    """The task as the keyword arguments of the Zhang, Wu, Bartlett closed forms, at its final query n = K − 1."""
    beta_star = np.asarray(task.beta_star)
    return dict(beta_star=beta_star, psi=task.psi_matrix, h=task.h_matrix, sigma=task.sigma, n=task.n_points - 1)
