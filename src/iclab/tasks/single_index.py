"""Single-index tasks in a low-dimensional subspace (Oko, Song, Suzuki, Wu 2024, §2).

x ~ N(0, I_d); every prompt draws β uniformly on the unit sphere of a subspace V (dimension r,
fixed by ``subspace_seed``: the same V for pretraining and test) and a link
σ*(z) = Σ_{i=Q..P} cᵢ Heᵢ(z) with normalised Hermite polynomials Heᵢ/√(i!);
y = σ*(⟨x, β⟩) + σ ε.

Coefficient law (the paper's is not stated): c uniform on the unit sphere of R^{P−Q+1}, so that
E[y²] = Σ cᵢ² + σ² = 1 + σ² for every task, with the information exponent Q almost surely.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class SingleIndexTask:
    """Spec of the single-index prompt distribution (JSON-able via ``to_dict``)."""

    d: int
    r: int  # dimension of the subspace V that holds every task direction β
    n_points: int  # K: points per prompt (context examples + the final query)
    q: int = 2  # information exponent Q: the lowest Hermite degree of the link
    p: int = 3  # degree P of the link
    sigma: float = 0.0  # label noise
    subspace_seed: int = 0  # draws V: shared by every job with this spec

    def __post_init__(self) -> None:
        if not 1 <= self.r <= self.d:
            raise ValueError(f"need 1 <= r <= d, got r={self.r}, d={self.d}")
        if self.n_points <= 0:
            raise ValueError(f"n_points must be positive, got {self.n_points}")
        if not 1 <= self.q <= self.p:
            raise ValueError(f"need 1 <= q <= p (information exponent, degree), got q={self.q}, p={self.p}")
        if self.sigma < 0:
            raise ValueError(f"sigma must be >= 0, got {self.sigma}")

    def to_dict(self) -> dict[str, Any]:
        return {"family": "single_index"} | asdict(self)

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> SingleIndexTask:
        return cls(**{k: v for k, v in spec.items() if k != "family"})

    def subspace(self) -> np.ndarray:
        """Orthonormal basis of V, (d, r): the Q factor of a Gaussian matrix drawn from ``subspace_seed``."""
        gaussian = np.random.default_rng([self.subspace_seed, self.d, self.r]).standard_normal((self.d, self.r))
        basis, upper = np.linalg.qr(gaussian)
        return basis * np.sign(np.diag(upper))  # the unique QR with a positive diagonal
