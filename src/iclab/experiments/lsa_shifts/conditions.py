"""The test conditions of ``lsa_shifts``, shared by the experiment and its figure (torch-free)."""

from __future__ import annotations

NOISY_LABELS = "noisy labels"
RELU_LABELS = "relu labels"
QUERY_COVARIANCE = "query covariance"
ORTHOGONAL_QUERY = "orthogonal query"
TASK_SHIFTS = (NOISY_LABELS, RELU_LABELS)
QUERY_SHIFTS = (QUERY_COVARIANCE, ORTHOGONAL_QUERY)


def covariate_condition(c: float) -> str:
    """The condition that scales every test covariate by c (c = 1: no shift)."""
    return f"covariate c={c:g}"
