"""Table ``ltb_table1`` (Zhang, Wu, Bartlett 2024, Table 1), from the experiment cube alone:
rows β* = 0 / β* ≠ 0, columns GPT2 and GPT2-noMLP, each 'loss ± half-width of the band'
(``iclab.stats.intervals``: training seeds and evaluation prompts); the closed-form GD-β optimum and the
Bayes risk as reference columns, the two ratios the paper's claim is about (noMLP over GPT2, and each
loss over the better reference), and the paper's losses. Written as CSV, Markdown and LaTeX, each atomically."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import xarray as xr

from iclab.atomic import write_text
from iclab.stats.intervals import band

COLUMNS = {"gpt2": "GPT2", "gpt2_nomlp": "GPT2-noMLP"}  # learner → column
PAPER = {False: (0.003, 0.024), True: (0.013, 8.871)}  # β* ≠ 0 → the paper's (GPT2, GPT2-noMLP) losses


def table(cube: xr.Dataset, stem: str | os.PathLike) -> pd.DataFrame:
    rows = []
    for norm in cube.beta_star_norm.values:
        at = cube.sel(beta_star_norm=norm)
        row = {"setting": "β* = 0" if norm == 0 else f"‖β*‖ = {norm:g}"}
        for label, column in COLUMNS.items():
            mean, _, high = band(at.query_risk.sel(learner=label).values, at.query_risk_sem.sel(learner=label).values)
            row[column], row[f"{column} ±95%"] = float(mean), float(high - mean)
        row["GD-β optimum"] = float(at.theory_risk.sel(theory="gd_beta_optimum"))
        row["Bayes"] = float(at.theory_risk.sel(theory="bayes"))
        best = min(row["GD-β optimum"], row["Bayes"])
        row["GPT2 / best"], row["GPT2-noMLP / best"] = row["GPT2"] / best, row["GPT2-noMLP"] / best
        row["noMLP / GPT2"] = row["GPT2-noMLP"] / row["GPT2"]
        row["paper GPT2"], row["paper GPT2-noMLP"] = PAPER[bool(norm != 0)]
        rows.append(row)
    frame = pd.DataFrame(rows)
    stem = Path(stem)
    write_text(stem.with_suffix(".csv"), frame.to_csv(index=False))
    shown = frame[["setting"]].copy()
    for column in COLUMNS.values():
        shown[column] = [f"{m:.4f} ± {h:.4f}" for m, h in zip(frame[column], frame[f"{column} ±95%"])]
    for column in ("GD-β optimum", "Bayes"):
        shown[column] = frame[column].map("{:.4f}".format)
    for column in ("GPT2 / best", "GPT2-noMLP / best", "noMLP / GPT2"):
        shown[column] = frame[column].map("{:.2f}".format)
    for column in ("paper GPT2", "paper GPT2-noMLP"):
        shown[column] = frame[column].map("{:g}".format)
    write_text(stem.with_suffix(".md"), shown.to_markdown(index=False) + "\n")
    write_text(stem.with_suffix(".tex"), shown.to_latex(index=False))
    return frame
