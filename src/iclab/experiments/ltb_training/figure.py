"""Figure ``ltb_training``: risk at the final query against the training step (Zhang, Wu, Bartlett 2024,
Figure 1), one panel per ‖β*‖: the trained models' snapshots on the evaluation set (mean over seeds, 95% t-band
made multiplicative for the log axis) and the GD-β optimum, the LSA class's optimum and the Bayes risk as horizontal
lines."""

from __future__ import annotations

import os

import seaborn as sns
import xarray as xr

from iclab.report.plots import (LEARNER_LABELS, learner_colours, lines_with_bands, save, seed_bands, theme,
                                tight_layout_above)

# Title phrases that state a claim → the claims table's row (its text's start) that holds it; every other title
# describes what is drawn (tests/test_figure_titles.py)
TITLE_CLAIMS: dict[str, str] = {
    "LTB reaches the GD-β optimum": "trained LTB reaches the GD-β optimum",
    "LSA stops at its class's optimum": "trained LSA reaches the LSA class's optimum",
}

REFERENCES = {  # theory → line style
    "gd_beta_optimum": dict(color="k", linestyle="--", label="GD-β optimum (closed form)"),
    "lsa_optimum": dict(linestyle="-", linewidth=3, alpha=0.5, label="LSA class optimum (Theorem 4.1)"),
    "bayes": dict(color="k", linestyle=":", label="Bayes risk"),
}


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    frame = seed_bands(cube.training_risk, cube.training_risk_sem, log=True)  # (norm, trained, step) rows
    frame["label"] = [LEARNER_LABELS[name] for name in frame.trained]
    palette = learner_colours(frame.trained.unique(), by_label=True)
    lsa_colour = palette.get(LEARNER_LABELS["lsa"], "C0")
    grid = sns.FacetGrid(frame, col="beta_star_norm", col_wrap=min(cube.sizes["beta_star_norm"], 2), height=4.0,
                         aspect=1.375, sharey=True)
    grid.map_dataframe(lines_with_bands, x="step", hue="label", palette=palette, alpha=0.25)
    steps = cube.step.values
    for norm, ax in grid.axes_dict.items():
        for theory, style in REFERENCES.items():
            risk = float(cube.theory_risk.sel(beta_star_norm=norm, theory=theory))
            ax.axhline(risk, **{"color": lsa_colour, **style})
    grid.set(yscale="log", xlim=(0, steps[-1]))
    for ax in grid.axes.flat:
        ax.set_xscale("symlog", linthresh=max(steps[1], 1) if len(steps) > 1 else 1)  # the early steps, and step 0
    grid.set_titles("‖β*‖ = {col_name:g}")
    grid.set_axis_labels("training step", "ICL risk at the final query  E(f − y)²")
    handles, labels = grid.axes.flat[0].get_legend_handles_labels()
    key = grid.figure.legend(handles, labels, loc="lower center", ncol=3, frameon=False)
    grid.figure.suptitle("Test risk along training: LTB reaches the GD-β optimum, LSA stops at its class's optimum")
    tight_layout_above(grid.figure, key)
    save(grid.figure, png, cube)
