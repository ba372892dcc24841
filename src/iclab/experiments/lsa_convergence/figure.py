"""Figure ``lsa_convergence`` (Zhang, Frei, Bartlett 2024, Theorem 4).

Top: ‖u₋₁U₁₁ − Γ⁻¹‖ / ‖Γ⁻¹‖ (Frobenius norms) against gradient-flow time: the paper's reduced ODE (line) and
SGD on sampled prompts from the same initialisation (mean over seeds, 95% t-band made multiplicative for the
log axis; step s at t = 2·lr·s). SGD follows the ODE down to its noise floor (∝ lr/batch);
the axis stops at 1e-4, below which the ODE goes on to round-off. Bottom: entries of the trained u₋₁U₁₁ against Γ⁻¹.
One column per covariance spectrum.
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import xarray as xr

from iclab.report.plots import declare_flat, lines_with_bands, save, seed_bands, theme

SHORT_RUN = 0.5  # the ODE's distance still above this share of its start at the end: the run trained too briefly

# Title phrases that state a claim → the claims table's row (its text's start) that holds it; every other title
# describes what is drawn (tests/test_figure_titles.py)
TITLE_CLAIMS: dict[str, str] = {"converges to Γ⁻¹": "SGD on sampled prompts brings u₋₁U₁₁ within 10% of Γ⁻¹"}


def matrix_entries(at: xr.Dataset) -> pd.DataFrame:
    """One row per (seed, row, col): the entry of Γ⁻¹ (theory), of the trained u₋₁U₁₁, and whether it is diagonal."""
    def square(matrix: xr.DataArray) -> xr.DataArray:  # this spectrum's d × d block of the padded matrices
        return matrix.dropna("row", how="all").dropna("col", how="all")

    entries = {"limit": square(at.gamma_inverse), "learned": square(at.product_learned)}
    frame = xr.Dataset(entries).reset_coords(drop=True).to_dataframe().reset_index()
    frame["entry"] = np.where(frame.row == frame.col, "diagonal", "off-diagonal")
    return frame


def figure(cube: xr.Dataset, png: str | os.PathLike) -> None:
    theme()
    spectra = list(cube.spectrum.values)
    fig, axes = plt.subplots(2, len(spectra), figsize=(5.0 * len(spectra), 8.0), squeeze=False)
    for col, name in enumerate(spectra):
        at = cube.sel(spectrum=name)
        top, bottom = axes[0, col], axes[1, col]
        flow = at.flow_distance.dropna("flow_time")
        top.semilogy(flow.flow_time, flow, "k-", label="gradient-flow ODE (theory)")
        top.set_ylim(bottom=1e-4)
        if float(flow[-1]) > SHORT_RUN * float(flow[0]):  # a smoke run's few steps: nothing has converged yet
            declare_flat(top, f"trained for t = {float(flow.flow_time[-1]):.2g} only: the ODE itself moves from "
                              f"{float(flow[0]):.3g} to {float(flow[-1]):.3g}")
        sgd = at.sgd_distance.dropna("snapshot_time", how="all")
        distances = seed_bands(sgd, log=True)  # mean over seeds, its band multiplicative
        label = f"LSA trained by SGD ({sgd.sizes['seed']} seeds)"
        lines_with_bands(distances, x="snapshot_time", ax=top, label=label, alpha=0.25)
        final = float(distances["mean"].iloc[-1])
        spectrum = at.covariance.dropna("row").values
        top.set_title(f"{name}: Λ = diag({', '.join(f'{v:g}' for v in spectrum)}), N = {int(at.n_train)}")
        top.set_xlabel("gradient-flow time t")
        top.set_ylabel("‖u₋₁U₁₁ − Γ⁻¹‖ / ‖Γ⁻¹‖ (Frobenius)")
        top.annotate(f"SGD at the end: {final:.3g}", xy=(0.98, 0.95), xycoords="axes fraction", ha="right", va="top")
        entries = matrix_entries(at)
        sns.scatterplot(data=entries, x="limit", y="learned", hue="entry", style="entry", markers={"diagonal": "o",
                        "off-diagonal": "X"}, alpha=0.7, ax=bottom, legend=col == 0)
        values = entries[["limit", "learned"]].to_numpy()
        lims = [values.min() - 0.05, values.max() + 0.05]
        bottom.plot(lims, lims, "k--", linewidth=1, label="y = x (Theorem 4)")
        bottom.set_xlabel("Γ⁻¹ entries (theory)")
        bottom.set_ylabel("trained u₋₁U₁₁ entries")
    axes[0, 0].legend(loc="lower right")  # the flow has left the panel there
    axes[1, 0].legend(loc="upper left")
    fig.suptitle("LSA trained from the balanced initialisation converges to Γ⁻¹ (judged at the end), beside the "
                 "reduced ODE's path")
    fig.tight_layout()
    save(fig, png, cube)
