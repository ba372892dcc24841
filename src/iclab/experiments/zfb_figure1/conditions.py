"""Training and test covariances of ``zfb_figure1``, shared by the experiment and its figure (torch-free)."""

from __future__ import annotations

FIXED = "fixed"  # the identity covariance
RANDOM = "random"  # diagonal, i.i.d. Exponential(1)·c entries per prompt


def random_test(c: float) -> str:
    """The test on random covariances scaled by c."""
    return f"{RANDOM} c={c:g}"
