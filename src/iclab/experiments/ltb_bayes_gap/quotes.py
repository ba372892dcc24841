"""The numbers the docs quote from the ltb_bayes_gap cube: the closed-form GD-β optimum over the Bayes risk against n
(its peak, where it peaks, its value at the largest n) per SNR, and the Monte-Carlo risks against the closed forms."""

import numpy as np

from iclab.report.quotes import Quote, fixed, listed

CONTEXTS = slice(1, None)  # n ≥ 1, as the figure draws them (n = 0 is the prior's risk for both)


def theory_ratio(cube):
    """The GD-β optimum's closed-form risk over the Bayes risk: (snr, position) for n ≥ 1."""
    theory = cube.theory_risk.isel(position=CONTEXTS)
    return theory.sel(predictor="gd_beta_optimum") / theory.sel(predictor="bayes")


def deviations(cube) -> np.ndarray:
    """Monte Carlo minus closed form over their joint standard error, at every (snr, predictor, n ≥ 1)."""
    at = cube.isel(position=CONTEXTS)
    return ((at.mc_risk - at.theory_risk) / np.sqrt(at.mc_risk_sem**2 + at.theory_risk_sem**2)).values


def quotes(cube) -> list[Quote]:
    ratio = theory_ratio(cube)  # (snr, position)
    peak = ratio.max("position")  # (snr,)
    n_max = int(cube.position[-1])
    low, high = float(cube.snr.min()), float(cube.snr.max())
    return [
        Quote("ratio_peak", listed(peak.values, lambda v: fixed(v, 3)),
              f"the largest ratio over n = 1–{n_max} of the GD-β optimum's closed form to the Bayes risk, at each SNR "
              "(theory_risk)"),
        Quote("ratio_peak_n", listed(ratio.idxmax("position").values, lambda v: f"{int(v)}"),
              "the n where each SNR's ratio peaks"),
        Quote("ratio_at_n_max", listed(ratio.sel(position=n_max).values, lambda v: fixed(v, 3)),
              f"the ratio at n = {n_max}, at each SNR"),
        Quote("ratio_peak_high_snr", fixed(peak.sel(snr=high), 1), f"the ratio's peak at SNR {high:g}"),
        Quote("ratio_peak_low_snr", fixed(peak.sel(snr=low), 1), f"the ratio's peak at SNR {low:g}"),
        Quote("mc_points", f"{deviations(cube).size}",
              "the (SNR, predictor, n ≥ 1) points where the Monte-Carlo risk is set against the closed form"),
        Quote("mc_largest_deviation", fixed(np.abs(deviations(cube)).max(), 1),
              "the largest |Monte Carlo − closed form| over those points, in their joint standard error "
              "(mc_risk and mc_risk_sem against theory_risk and theory_risk_sem)"),
    ]
