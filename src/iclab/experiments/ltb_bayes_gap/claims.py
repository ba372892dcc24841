"""Checks of Zhang, Wu, Bartlett 2024, Corollary 6.2, on the ltb_bayes_gap cube: the optimal GD-β risk matches the
Bayes risk up to a factor that is bounded when the SNR is, and grows with it. Both rows are verifications of the
theory's computation, not claims: two closed-form predictors and no training, their orders decided by far (on the
default, hundreds of standard errors for "bounded in n", ~16 for "grows with the SNR"), so neither can come out
otherwise by chance (docs/claims.md). (That the Monte-Carlo risks equal the closed forms, and that GD-β is no better
than Bayes, hold by construction: tests/test_theory.py checks them.)"""

from iclab.stats.claims import Claim
from iclab.stats.estimates import ratio, with_sem

SOURCE = "Zhang, Wu, Bartlett 2024, Corollary 6.2"


def claims(cube):
    n_max, low, high = int(cube.position[-1]), float(cube.snr.min()), float(cube.snr.max())

    def theory_ratio(snr: float, n: int):
        """GD-β's closed-form optimum over the Bayes risk's integral (the same designs at every n)."""
        at = cube.sel(snr=snr, position=n)
        gd, bayes = (with_sem(at.theory_risk.sel(predictor=p), at.theory_risk_sem.sel(predictor=p), f"designs {snr}")
                     for p in ("gd_beta_optimum", "bayes"))
        return ratio(gd, bayes)

    def measured_ratio(snr: float):
        """The two predictors' Monte-Carlo risks on the evaluation prompts of this SNR, at n_max."""
        at = cube.sel(snr=snr, position=n_max)
        gd, bayes = (with_sem(at.mc_risk.sel(predictor=p), at.mc_risk_sem.sel(predictor=p), f"eval {snr}")
                     for p in ("gd_beta_optimum", "bayes"))
        return ratio(gd, bayes)

    quarter = n_max // 4
    rows = [
        Claim(f"at a fixed SNR the GD-β/Bayes risk ratio is bounded in n: past its peak it falls (SNR {high:g}, "
              f"n = {n_max} against n = {quarter})", SOURCE, theory_ratio(high, n_max), "<",
              theory_ratio(high, quarter),
              "closed-form GD-β risk; Bayes risk by Monte Carlo over designs (normal, delta method)",
              verification=True),
    ]
    if low < high:
        rows.append(Claim(f"the GD-β/Bayes risk ratio grows with the SNR (SNR {high:g} against {low:g}, n = {n_max})",
                          SOURCE, measured_ratio(high), ">", measured_ratio(low),
                          "Monte-Carlo risks on each SNR's evaluation prompts (normal, delta method)",
                          verification=True))
    return rows
