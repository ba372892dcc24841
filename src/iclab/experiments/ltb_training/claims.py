"""Claims of Zhang, Wu, Bartlett 2024, Figure 1, on the ltb_training cube: where GD-β's training ends. (Where the
LTB's and the LSA's end are ltb_gap's rows: the same models on the same prompts, so the same intervals.)"""

from iclab.stats.claims import REACHES, REACHES_SOURCE, Claim
from iclab.stats.estimates import has, over_seeds, with_sem

SOURCE = "Zhang, Wu, Bartlett 2024, Figure 1"
BASIS = "last snapshot's risk per seed (t) and on its prompts (normal); closed-form optimum"


def claims(cube):
    top = float(cube.beta_star_norm.max())
    at = cube.sel(beta_star_norm=top).isel(step=-1)
    step = int(at.step)

    def final(learner: str):
        return over_seeds(at.training_risk.sel(trained=learner), at.training_risk_sem.sel(trained=learner))

    optimum = with_sem(at.theory_risk.sel(theory="gd_beta_optimum"), at.theory_risk_sem.sel(theory="gd_beta_optimum"))
    if not has(at, trained="gd_beta"):
        return []
    return [Claim(f"GD-β training ends at the GD-β optimum (‖β*‖ = {top:g}, step {step})", SOURCE, final("gd_beta"),
                  "≈", optimum, BASIS, REACHES * optimum.value, REACHES_SOURCE)]
