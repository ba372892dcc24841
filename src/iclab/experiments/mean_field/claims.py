"""Claims of Kim & Suzuki 2024 (mean-field dynamics with linear attention, in Suzuki's 2024 talk) on the
mean_field cube."""

from iclab.claims import Claim, Estimate, has, over_seeds

SOURCE = "Kim & Suzuki 2024"
WITHIN = 0.1  # the claim: the population risk falls below 10% of its start (toward the global minimum, 0)
LINEAR_CASES = ("realisable", "misaligned")  # tasks vᵀf°(x): there the global minimum is a lower bound; for the
# nonlinear test targets it is g's distance to span(f°), which other features may beat (experiment.py)


def claims(cube):
    rows = []
    if has(cube, case="realisable"):
        at = cube.sel(case="realisable")
        step = int(at.step[-1])
        for dynamics in at.trained.values:
            risk = at.population_risk.sel(trained=dynamics)
            rows.append(Claim(
                f"{dynamics} dynamics: the features' population risk min_Γ L(μ, Γ) falls below {WITHIN:.0%} of its "
                f"start by step {step} (realisable; global minimum 0)", f"{SOURCE}, global convergence",
                over_seeds(risk.isel(step=-1) / risk.isel(step=0)), "<", Estimate(WITHIN), "95% band over seeds"))
    if has(cube, case="realisable", learner="attention") and has(cube, learner="zero"):
        at, point = cube.sel(case="realisable"), {"learner": "attention"}
        rows.append(Claim("the attention model beats the zero predictor at the final query (realisable)", SOURCE,
                          over_seeds(at.query_risk.sel(point), at.query_risk_sem.sel(point)), "<",
                          over_seeds(at.query_risk.sel(learner="zero"), at.query_risk_sem.sel(learner="zero")),
                          "95% bands (seeds, evaluation prompts)"))
    linear = [case for case in LINEAR_CASES if has(cube, case=case)]
    if linear:
        at = cube.sel(case=linear)
        excess = (at.population_risk - at.global_minimum_risk).min()
        rows.append(Claim(f"no dynamics goes below the global minimum of min_Γ L(μ, Γ) on linear tasks (0, or the "
                          f"misaligned floor by Eckart–Young; {', '.join(linear)}): smallest excess",
                          f"{SOURCE}, the two-timescale objective", Estimate(float(excess)), "≥", Estimate(0.0),
                          "exact bound on the same samples; slack 1e-9 (float64)", slack=1e-9))
    return rows
