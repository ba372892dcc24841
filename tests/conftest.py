"""Shared fixtures: small task specs, the repository root, a runner for the CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

# One BLAS/OpenMP thread a test worker, set before numpy or torch loads: two workers of two threads on two cores
# spin against each other (measured: test_train, test_mean_field, test_nonparametric and test_claims under -n 2,
# 58 and 61 s with two threads, 38 and 36 s with one, alternated). Snakemake sets its jobs' own.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


# The two longest files first: with ``-n 2 --dist loadfile --no-loadscope-reorder`` (pyproject.toml) one worker
# runs the tiny workflow (test_workflow.py) while the other runs the other workflow runs and then every other file.
FIRST = ("test_workflow.py", "test_workflow_runs.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: FIRST.index(item.path.name) if item.path.name in FIRST else len(FIRST))


def run_cli(*args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """Run ``python -m iclab ARGS`` in a fresh interpreter."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "iclab", *args], cwd=cwd or REPO, env=env, capture_output=True, text=True
    )
    if check and result.returncode != 0:
        raise AssertionError(f"iclab {args[0]} failed:\n{result.stderr}")
    return result


# The Snakemake workflow, run in scratch directories (tests/test_workflow*.py)

TINY = REPO / "tests" / "data" / "tiny.yaml"
TOY_CONFIG = REPO / "tests" / "data" / "toy.yaml"
TOY_PACKAGE = REPO / "tests" / "data" / "toy_experiment"
SNAKEMAKE = Path(sys.executable).with_name("snakemake")


@pytest.fixture(scope="module")
def scratch_src(tmp_path_factory) -> Path:
    """A copy of the iclab package with the toy experiment's package added, and nothing else changed."""
    src = tmp_path_factory.mktemp("src")
    shutil.copytree(REPO / "src" / "iclab", src / "iclab", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(TOY_PACKAGE, src / "iclab" / "experiments" / "toy_noise")
    return src


def snakemake(
    workdir: Path, src: Path, *args: str, config: Path = TINY, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    cmd = [
        str(SNAKEMAKE),
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        "--configfile",
        str(config),
        "--replace-workflow-config",
        "--cores",
        "2",
        *args,
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(src)} | (env or {})
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=workdir)


def job_counts(result: subprocess.CompletedProcess) -> dict[str, int]:
    """The first 'Job stats' table of a Snakemake run (on stderr) or dry run (stdout): rule → number of jobs."""
    rows = (result.stdout + result.stderr).split("Job stats:")[1].split("\n\n")[0].splitlines()[3:]
    return {rule: int(count) for rule, count in (row.split() for row in rows)}


# Hand-written references of Zhang, Frei, Bartlett 2024, shared by the tests (independent of iclab.theory).


def hand_gamma_inverse(lam: np.ndarray, n: int) -> np.ndarray:
    """Γ⁻¹, Γ = (1 + 1/N)Λ + (tr Λ/N)I (Theorem 4), for a diagonal Λ = diag(lam): (d, d)."""
    lam = np.asarray(lam, dtype=float)
    return np.diag(1.0 / ((1 + 1 / n) * lam + lam.sum() / n))


def hand_theorem8_limit(d: int, n: int) -> np.ndarray:
    """K = E[Λ²](E[ΓΛ²])⁻¹ of Theorem 8 for i.i.d. Exponential(1) diagonal entries (E λᵏ = k!):
    2/(6(1 + 1/N) + (6 + 2(d − 1))/N)·I: (d, d)."""
    return 2 / (6 * (1 + 1 / n) + (6 + 2 * (d - 1)) / n) * np.eye(d)


# The prelude of a script run as on the lent GPU's image: torch, transformers, numpy, xarray, pyyaml; not these.
GPU_IMAGE_PRELUDE = """
import sys, torch

class NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("jsonschema", "netCDF4", "snakemake"):
            raise ImportError(f"no module named {name!r} on the GPU image")

sys.meta_path.insert(0, NotInstalled())
"""
