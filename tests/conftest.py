"""Shared fixtures: small task specs, the repository root, a runner for the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def run_cli(*args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """Run ``python -m iclab ARGS`` in a fresh interpreter."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "iclab", *args], cwd=cwd or REPO, env=env, capture_output=True, text=True
    )
    if check and result.returncode != 0:
        raise AssertionError(f"iclab {args[0]} failed:\n{result.stderr}")
    return result


# Hand-written references of Zhang, Frei, Bartlett 2024, shared by the tests (independent of iclab.theory).


def hand_gamma_inverse(lam: np.ndarray, n: int) -> np.ndarray:
    """Γ⁻¹, Γ = (1 + 1/N)Λ + (tr Λ/N)I (Theorem 4), for a diagonal Λ = diag(lam): (d, d)."""
    lam = np.asarray(lam, dtype=float)
    return np.diag(1.0 / ((1 + 1 / n) * lam + lam.sum() / n))


def hand_theorem8_limit(d: int, n: int) -> np.ndarray:
    """K = E[Λ²](E[ΓΛ²])⁻¹ of Theorem 8 for i.i.d. Exponential(1) diagonal entries (E λᵏ = k!):
    2/(6(1 + 1/N) + (6 + 2(d − 1))/N)·I: (d, d)."""
    return 2 / (6 * (1 + 1 / n) + (6 + 2 * (d - 1)) / n) * np.eye(d)
