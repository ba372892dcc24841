"""Table ``probe_similarity`` (Fu, Chen, Jia, Sharan 2024, Table 1), from the experiment cube alone:
the Similarity of Errors between the GPT-2's output and iterative Newton, gradient descent (each at
its best-matching count of the grid) and online GD, mean over training seeds, with the best counts;
the paper's row beside it. Written as CSV, Markdown and LaTeX, each atomically."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import xarray as xr

from iclab.atomic import write_text

PAPER = {"Newton": 0.991, "GD": 0.957, "online GD": 0.806}  # their Table 1, Transformer row (d = 20, 12 layers)


def table(cube: xr.Dataset, stem: str | os.PathLike) -> pd.DataFrame:
    cube = cube.isel(d=0)
    newton = cube.output_soe_newton.mean("seed")
    gd = cube.output_soe_gd.mean("seed")
    measured = {
        "model": f"GPT-2, this run (d = {int(cube.d)}, {int(cube.layer.max())} layers)",
        "Newton": float(newton.max()),
        "GD": float(gd.max()),
        "online GD": float(cube.output_soe_online_gd.mean("seed")),
        "Newton iterations": int(newton.newton_iterations[newton.argmax()]),
        "GD steps": int(gd.gd_steps[gd.argmax()]),
    }
    paper = {"model": "Transformer, Fu et al. Table 1 (d = 20, 12 layers)", **PAPER}
    frame = pd.DataFrame([measured, paper])
    stem = Path(stem)
    write_text(stem.with_suffix(".csv"), frame.to_csv(index=False))
    shown = frame.copy()
    for column in PAPER:
        shown[column] = frame[column].map("{:.3f}".format)
    for column in ("Newton iterations", "GD steps"):
        shown[column] = frame[column].map(lambda v: "" if pd.isna(v) else f"{int(v)}")
    write_text(stem.with_suffix(".md"), shown.to_markdown(index=False) + "\n")
    write_text(stem.with_suffix(".tex"), shown.to_latex(index=False))
    return frame
