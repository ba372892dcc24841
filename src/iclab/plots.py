"""Shared plotting helpers (torch-free): the theme, learner labels, atomic PNG + PDF output.
Bands come from ``iclab.intervals``."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from iclab.atomic import atomic_write

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
    "lsa_optimal": "LSA at the class's optimum",
    "ridge": "ridge",
    "ols": "least squares",
    "zero": "zero",
    "online_gd": "online GD (step 1/‖x‖²)",
    "attention": "attention: μ and Γ jointly (trained)",
    "static": "static: min over Γ, two-timescale (trained)",
    "modified": "modified: static + birth–death + perturbation (trained)",
    "teacher_attention": "teacher features f°, Γ* (oracle; the class optimum when k = k°)",
    "random_features_ridge": "ridge on random features (test prompt only)",
    "feature_attention": "MLP features + linear attention (pretrained)",
    "basis_bayes": "Bayes posterior mean, known basis f° (oracle)",
}


def theme() -> None:
    """Seaborn's paper look (white grid, colour-blind palette) from matplotlib's own copies of its
    styles: importing seaborn would cost every figure job about a second."""
    plt.style.use(["seaborn-v0_8-whitegrid", "seaborn-v0_8-colorblind", "seaborn-v0_8-paper"])
    plt.rcParams["lines.markeredgewidth"] = 1.2  # the styles set 0, which hides the line-only markers x and +


def save(fig: plt.Figure, png: str | os.PathLike) -> None:
    """Write ``png`` and the .pdf beside it, each atomically."""
    png = Path(png)
    for path in (png, png.with_suffix(".pdf")):
        atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=150, bbox_inches="tight"))
    plt.close(fig)


def log_positions(m_max: int, count: int = 25) -> np.ndarray:
    return np.unique(np.geomspace(1, m_max, count).round().astype(int))


def loglog_slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of log y against log x."""
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])
