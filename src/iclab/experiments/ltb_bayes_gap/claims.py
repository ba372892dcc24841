"""Claims of Zhang, Wu, Bartlett 2024, Lemma 6.1 and Corollary 6.2, on the ltb_bayes_gap cube, at its largest n."""

from iclab.claims import Claim, Estimate, with_sem

SOURCE = "Zhang, Wu, Bartlett 2024"
BASIS = "95% intervals of the Monte-Carlo risks on the evaluation prompts and of the Bayes risk's integral"


def ratio(cube, snr: float) -> Estimate:
    """GD-β optimum's risk over the Bayes risk on the evaluation prompts (delta method)."""
    gd, bayes = (with_sem(cube.mc_risk.sel(predictor=p, snr=snr), cube.mc_risk_sem.sel(predictor=p, snr=snr))
                 for p in ("gd_beta_optimum", "bayes"))
    value = gd.value / bayes.value
    return Estimate(value, value * ((gd.half_width / gd.value) ** 2 + (bayes.half_width / bayes.value) ** 2) ** 0.5)


def claims(cube):
    at = cube.isel(position=-1)
    n, low, high = int(at.position), float(cube.snr.min()), float(cube.snr.max())

    def measured(predictor: str, snr: float):
        point = {"predictor": predictor, "snr": snr}
        return with_sem(at.mc_risk.sel(point), at.mc_risk_sem.sel(point))

    def theory(predictor: str, snr: float):
        point = {"predictor": predictor, "snr": snr}
        return with_sem(at.theory_risk.sel(point), at.theory_risk_sem.sel(point))

    rows = [
        Claim(f"GD-β at its optimum has the closed-form risk (SNR {high:g}, n = {n})", f"{SOURCE}, Lemma 6.1",
              measured("gd_beta_optimum", high), "≈", theory("gd_beta_optimum", high), BASIS),
        Claim(f"the posterior mean (ridge centred at β*) has the Bayes risk (SNR {high:g}, n = {n})",
              f"{SOURCE}, Lemma 6.1", measured("bayes", high), "≈", theory("bayes", high), BASIS),
        Claim(f"GD-β's optimum is no better than Bayes (SNR {high:g}, n = {n})", f"{SOURCE}, Corollary 6.2",
              measured("gd_beta_optimum", high), "≥", measured("bayes", high), BASIS),
    ]
    if low < high:
        rows.append(Claim(f"the GD-β/Bayes risk ratio grows with the SNR (SNR {high:g} against {low:g}, n = {n})",
                          f"{SOURCE}, Corollary 6.2", ratio(at, high), ">", ratio(at, low), BASIS + " (delta method)"))
    return rows
