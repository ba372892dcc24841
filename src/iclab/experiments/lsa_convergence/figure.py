"""Figure ``lsa_convergence`` (Zhang, Frei, Bartlett 2024, Theorem 4).

Top: ‖u₋₁U₁₁ − Γ⁻¹‖_F / ‖Γ⁻¹‖_F against gradient-flow time: the paper's reduced ODE (line) and
SGD on sampled prompts from the same initialisation (geometric mean over seeds, 95% t-band of
log-distances; step s at t = 2·lr·s). SGD follows the ODE down to its noise floor (∝ lr/batch);
the axis stops at 1e-4, below which the ODE goes on to round-off. Bottom: entries of the trained u₋₁U₁₁ against Γ⁻¹.
One column per covariance spectrum.
"""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import numpy as np
import xarray as xr

from iclab.intervals import band
from iclab.plots import save, theme


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
        sgd = at.sgd_distance.dropna("snapshot_time", how="all").transpose("snapshot_time", "seed")
        mean, lo, hi = (10**v for v in band(np.log10(sgd.values)))
        top.semilogy(sgd.snapshot_time, mean, color="C0", label=f"LSA trained by SGD ({sgd.sizes['seed']} seeds)")
        top.fill_between(sgd.snapshot_time, lo, hi, color="C0", alpha=0.25, linewidth=0)
        final = float(mean[-1])
        spectrum = at.covariance.dropna("row").values
        top.set_title(f"{name}: Λ = diag({', '.join(f'{v:g}' for v in spectrum)}), N = {int(at.n_train)}")
        top.set_xlabel("gradient-flow time t")
        top.set_ylabel("‖u₋₁U₁₁ − Γ⁻¹‖_F / ‖Γ⁻¹‖_F")
        top.annotate(f"SGD at the end: {final:.3g}", xy=(0.98, 0.95), xycoords="axes fraction", ha="right", va="top")
        limit = at.gamma_inverse.dropna("row", how="all").dropna("col", how="all").values
        learned = at.product_learned.dropna("row", how="all").dropna("col", how="all").values  # (seeds, d, d)
        diag = np.eye(len(limit), dtype=bool)
        for mask, label, marker in ((diag, "diagonal", "o"), (~diag, "off-diagonal", "x")):
            bottom.scatter(
                np.broadcast_to(limit, learned.shape)[:, mask], learned[:, mask], marker=marker, label=label, alpha=0.7
            )
        lims = [min(limit.min(), learned.min()) - 0.05, max(limit.max(), learned.max()) + 0.05]
        bottom.plot(lims, lims, "k--", linewidth=1, label="y = x (Theorem 4)")
        bottom.set_xlabel("Γ⁻¹ entries (theory)")
        bottom.set_ylabel("trained u₋₁U₁₁ entries")
    axes[0, 0].legend(loc="lower left", fontsize=9)
    axes[1, 0].legend(loc="upper left", fontsize=9)
    fig.suptitle("LSA trained from the balanced initialisation converges to Γ⁻¹, along the ODE")
    fig.tight_layout()
    save(fig, png)
