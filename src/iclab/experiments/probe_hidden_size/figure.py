"""Figure ``probe_hidden_size`` (Fu, Chen, Jia, Sharan 2024, §5: hidden size against d).

(a) Squared error / d against in-context examples for each 1-head GPT-2 (colour: hidden size; 95%
band over seeds and prompts) and least squares (dashed, drawn down to ``FLOOR``: exact from d examples on); (b) the
mean error / d over the positions past d examples (where least squares is exact; per prompt, then its 95% interval
over prompts and seeds) against the hidden size, over the claims' margin (grey: within ``claims.NULL_FRACTION`` of
the zero predictor's error). With one seed the figure says so, and its bands are the prompts' error alone.
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import numpy as np
import xarray as xr

from iclab.stats.claims import NULL_FRACTION
from iclab.stats.estimates import zero_predictor_risk
from iclab.stats.intervals import band
from iclab.report.plots import colours, lines_with_bands, save, seed_bands, theme

# Title phrases that state a claim → the claims table's row (its text's start) that holds it; every other title
# describes what is drawn (tests/test_figure_titles.py)
TITLE_CLAIMS: dict[str, str] = {}

FLOOR = 1e-3  # lowest error/d drawn: least squares reaches 0


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    cube = cube.isel(d=0)
    d = int(cube.d)
    m = cube.position.values  # examples before each query
    sizes = cube.hidden.values
    fig, (curves, summary) = plt.subplots(1, 2, figsize=(13.0, 5.6))
    past_d = m > d
    frame = seed_bands(cube.hidden_risk, cube.hidden_risk_sem, scale=d, log=True)  # (hidden, position) rows
    frame["mean"] = frame["mean"].clip(lower=FLOOR)
    frame["label"] = [f"hidden {size} (1 head)" for size in frame.hidden]
    palette = colours(frame.label.unique(), "viridis")
    lines_with_bands(frame, x="position", hue="label", palette=palette, ax=curves, floor=FLOOR)
    tail = band(*(cube[name].transpose("hidden", "seed").values for name in ("tail_risk", "tail_risk_sem")))
    ols = cube.risk.sel(learner="ols").isel(seed=0).values
    shown = np.where(ols / d >= FLOOR, ols / d, np.nan)  # exact from d examples on: below the axis, not drawn
    curves.plot(m, shown, "k--", label="least squares (exact past d: below the axis)")
    curves.axvline(d, color="grey", linestyle=":", linewidth=1)
    curves.set_yscale("log")
    curves.set_ylim(FLOOR, 2.0)
    curves.set_xlabel("in-context examples (dotted: d)")
    curves.set_ylabel("squared error / d")
    curves.set_title("(a) 1-head GPT-2s: error against examples")
    curves.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)  # off the data
    means, lows, highs = (values / d for values in tail)
    margin = NULL_FRACTION * zero_predictor_risk(cube.risk.sel(learner="ols")) / d
    summary.axhspan(FLOOR, margin, color="0.85", linewidth=0,
                    label=f"the claims' margin: within {NULL_FRACTION:.0%} of the zero predictor's error")
    summary.errorbar(sizes, means, yerr=[means - lows, highs - means], fmt="o-", capsize=3, label="GPT-2 (1 head)")
    summary.set_xscale("log", base=2)
    summary.set_yscale("log")
    summary.set_ylim(bottom=FLOOR)
    summary.set_xticks(sizes, [str(s) for s in sizes])
    summary.set_xlabel(f"hidden size (ratio to d: {', '.join(f'{s / d:g}' for s in sizes)})")
    summary.set_ylabel(f"mean squared error / d past {d} examples")
    summary.set_title("(b) past d examples, where least squares is exact (0)")
    summary.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)  # off the data
    seeds = cube.sizes["seed"]
    fig.suptitle(f"1-head GPT-2s of hidden size {int(sizes.min())}–{int(sizes.max())} at d = {d} against least squares "
                 f"({seeds} seed{'s' if seeds > 1 else ''})")
    fig.tight_layout()
    save(fig, png, cube)
