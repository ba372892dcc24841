"""Tasks over a nonlinear feature map (Kim & Suzuki 2024, §2; Suzuki's 2024 talk).

A teacher two-layer network f°(x) = (1/M°) Σ_m a°_m σ(w°_mᵀx) ∈ R^k (sigmoid σ, fixed by
``teacher_seed``) with second moment E[f°(x)f°(x)ᵀ] = I_k/k (realisability: f° = h_{μ°} for the
measure μ° of its particles). x ~ N(0, I_d). Targets (``target``):
- ``linear``: F_t(x) = v_tᵀf°(x), v_t ~ N(0, I_k) per prompt, so E[F_t(x)²] = 1 (the paper's tasks);
- ``max``: g(x) = max_j f°_j(x), and ``norm_sq``: g(x) = ‖f°(x)‖² (the talk's nonlinear test tasks),
  the same function for every prompt, standardised to mean 0 and variance 1 over x.
Labels y = F(x) + σε. A model with k outputs trained on a teacher with another ``k`` is misaligned.

Normalisation: the raw teacher's second moment C is estimated on ``TEACHER_SAMPLES`` inputs drawn from
``teacher_seed``; a°_m ← C^{−1/2}a°_m/√k keeps f° a two-layer network and makes its second moment
I_k/k to that sample's accuracy. The standardisation of ``max``/``norm_sq`` uses the same sample.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


TARGETS = ("linear", "max", "norm_sq")
TEACHER_SAMPLES = 200_000


@dataclass(frozen=True)
class MeanFieldTask:
    """Spec of the prompt distribution (JSON-able via ``to_dict``)."""

    d: int
    k: int  # the teacher's feature dimension (k_true)
    n_points: int  # K: points per prompt (context examples + the final query)
    teacher_width: int = 8  # M°: the teacher's neurons
    teacher_radius: float = 2.0  # ‖w°_m‖: the teacher's neurons sit on this sphere (σ's nonlinear range)
    target: str = "linear"
    sigma: float = 0.0  # label noise
    teacher_seed: int = 0  # draws f°: shared by every job with this spec

    def __post_init__(self) -> None:
        for name in ("d", "k", "n_points", "teacher_width"):
            if getattr(self, name) < 1:
                raise ValueError(f"mean_field task: {name} must be >= 1, got {getattr(self, name)}")
        if self.target not in TARGETS:
            raise ValueError(f"mean_field task: target {self.target!r} unknown; allowed: {', '.join(TARGETS)}")
        if self.teacher_width < self.k:
            raise ValueError(f"mean_field task: teacher_width {self.teacher_width} < k {self.k} (f° rank-deficient)")
        if self.sigma < 0 or self.teacher_radius <= 0:
            raise ValueError(
                f"mean_field task: need sigma >= 0 and teacher_radius > 0, got {self.sigma}, {self.teacher_radius}"
            )

    def to_dict(self) -> dict[str, Any]:
        return {"family": "mean_field"} | asdict(self)

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> MeanFieldTask:
        return cls(**{k: v for k, v in spec.items() if k != "family"})
