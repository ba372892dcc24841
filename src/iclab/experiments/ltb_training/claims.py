"""Claims of Zhang, Wu, Bartlett 2024, Figure 1, on the ltb_training cube: where training ends."""

from iclab.claims import REACHES, REACHES_SOURCE, Claim, has, over_seeds, with_sem

SOURCE = "Zhang, Wu, Bartlett 2024, Figure 1"
BASIS = "last snapshot's risk per seed (t) and on its prompts (normal); closed-form optimum"


def claims(cube):
    top = float(cube.beta_star_norm.max())
    at = cube.sel(beta_star_norm=top).isel(step=-1)
    step = int(at.step)

    def final(learner: str):
        return over_seeds(at.training_risk.sel(trained=learner), at.training_risk_sem.sel(trained=learner))

    optimum = with_sem(at.theory_risk.sel(theory="gd_beta_optimum"), at.theory_risk_sem.sel(theory="gd_beta_optimum"))
    where = f"‖β*‖ = {top:g}, step {step}"
    rows = [
        Claim(f"{name} training ends at the GD-β optimum ({where})", SOURCE, final(learner), "≈", optimum, BASIS,
              REACHES * optimum.value, REACHES_SOURCE)
        for learner, name in (("ltb", "LTB"), ("gd_beta", "GD-β"))
        if has(at, trained=learner)
    ]
    if has(at, trained="lsa") and top > 0:
        rows.append(Claim(f"LSA training ends above the GD-β optimum ({where})", SOURCE, final("lsa"), ">", optimum,
                          BASIS))
    return rows
