"""Figure ``probe_hidden_size`` (Fu, Chen, Jia, Sharan 2024, §5: hidden size against d).

(a) Squared error / d against in-context examples for each 1-head GPT-2 (colour: hidden size; 95%
band over seeds and prompts) and least squares (dashed; exact from d examples on); (b) the mean
error / d over the positions past d examples (where least squares is exact; per prompt, then its
95% interval over prompts and seeds) against the hidden size.
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import numpy as np
import xarray as xr

from iclab.intervals import band
from iclab.plots import colours, lines_with_bands, save, seed_bands, theme

FLOOR = 1e-3  # lowest error/d drawn: least squares reaches 0


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    cube = cube.isel(d=0)
    d = int(cube.d)
    m = cube.position.values  # examples before each query
    sizes = cube.hidden.values
    fig, (curves, summary) = plt.subplots(1, 2, figsize=(12.0, 4.6))
    past_d = m > d
    frame = seed_bands(cube.hidden_risk, cube.hidden_risk_sem, scale=d, log=True)  # (hidden, position) rows
    frame["mean"] = frame["mean"].clip(lower=FLOOR)
    frame["label"] = [f"hidden {size} (1 head)" for size in frame.hidden]
    palette = colours(frame.label.unique(), "viridis")
    lines_with_bands(frame, x="position", hue="label", palette=palette, ax=curves, floor=FLOOR)
    tail = band(*(cube[name].transpose("hidden", "seed").values for name in ("tail_risk", "tail_risk_sem")))
    ols = cube.risk.sel(learner="ols").isel(seed=0).values
    curves.plot(m, np.maximum(ols / d, FLOOR / 10), "k--", label="least squares")
    curves.axvline(d, color="grey", linestyle=":", linewidth=1)
    curves.set_yscale("log")
    curves.set_ylim(FLOOR, 2.0)
    curves.set_xlabel("in-context examples")
    curves.set_ylabel("squared error / d")
    curves.set_title("(a) 1-head GPT-2s: error against examples")
    curves.legend()
    means, lows, highs = (values / d for values in tail)
    summary.errorbar(sizes, means, yerr=[means - lows, highs - means], fmt="o-", capsize=3, label="GPT-2 (1 head)")
    ols_tail = ols[past_d].mean() / d
    named = f"least squares ({ols_tail:.2g})" if ols_tail >= FLOOR else "least squares (≈ 0, drawn at the floor)"
    summary.axhline(max(ols_tail, FLOOR), color="k", linestyle="--", label=named)
    summary.set_xscale("log", base=2)
    summary.set_yscale("log")
    summary.set_xticks(sizes, [str(s) for s in sizes])
    summary.set_xlabel("hidden size")
    summary.set_ylabel(f"mean squared error / d past {d} examples")
    summary.set_title(f"(b) hidden size against d = {d} (ratio to d: {', '.join(f'{s / d:g}' for s in sizes)})")
    summary.legend()
    fig.suptitle(f"Hidden size must grow with d (d = {d}; dotted: d examples)")
    fig.tight_layout()
    save(fig, png, cube)
