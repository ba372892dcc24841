"""Shared plotting helpers: the theme, seed bands, atomic PNG + PDF output."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import seaborn as sns  # noqa: E402
from scipy import stats  # noqa: E402

LEARNER_LABELS = {
    "lsa": "LSA (trained)",
    "ltb": "LTB (trained)",
    "gd_beta": "GD-β (trained)",
    "gpt2": "GPT-2 (trained)",
    "gpt2_nomlp": "GPT2-noMLP (trained)",
    "two_stage": "two-stage transformer (pretrained)",
    "krr": "kernel ridge (test prompt only)",
    "two_layer_net": "two-layer net, GD (test prompt only)",
    "bayes": "Bayes posterior mean",
    "gd_beta_optimal": "GD-β at (β*, Γ*)",
    "ridge": "ridge",
    "ols": "least squares",
    "zero": "zero",
}


def theme() -> None:
    sns.set_theme(context="paper", style="whitegrid", palette="colorblind", font_scale=1.1)


def seed_band(values: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean over the last axis (seeds) and its Student-t confidence interval; no band for one seed."""
    values = np.asarray(values, dtype=float)
    mean = values.mean(axis=-1)
    n = values.shape[-1]
    if n < 2:
        return mean, mean, mean
    half = stats.t.ppf(0.5 + level / 2, n - 1) * values.std(axis=-1, ddof=1) / np.sqrt(n)
    return mean, mean - half, mean + half


def save(fig: plt.Figure, png: str | os.PathLike) -> None:
    """Write ``png`` and the .pdf beside it, each atomically."""
    png = Path(png)
    png.parent.mkdir(parents=True, exist_ok=True)
    for path in (png, png.with_suffix(".pdf")):
        tmp = path.with_name(f".{path.name}.tmp{path.suffix}")
        fig.savefig(tmp, dpi=150, bbox_inches="tight")
        os.replace(tmp, path)
    plt.close(fig)
