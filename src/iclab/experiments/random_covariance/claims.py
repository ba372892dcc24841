"""Claims of Zhang, Frei, Bartlett 2024, Theorem 8, on the random_covariance cube (its largest N). (That least
squares beats the LSA is no test: on these noiseless prompts it is exact past d examples.)"""

import numpy as np

from iclab.claims import REACHES, REACHES_SOURCE, Claim, exact, groups_at, over_seeds

SOURCE = "Zhang, Frei, Bartlett 2024, Theorem 8"
WITHIN = 0.1  # the claim: u₋₁U₁₁ within 10% of its limit (relative Frobenius distance)


def claims(cube):
    n = int(cube.n.max())
    at = cube.sel(n=n)
    m = int(at.position.max())
    gap = at.product_learned - at.product_limit
    distance = np.sqrt((gap**2).sum(("row", "col")) / (at.product_limit**2).sum(("row", "col")))
    limit_error = exact(float(at.theory_error.sel(position=m)))
    rows = [
        Claim(f"the trained u₋₁U₁₁ is within {WITHIN:.0%} of E[Λ²](E[ΓΛ²])⁻¹ (N = {n})", SOURCE,
              over_seeds(distance), "<", exact(WITHIN), "relative distance per seed (t)"),
        Claim(f"on new random covariances the trained LSA has the limit model's error (N = {n}, M = {m})", SOURCE,
              over_seeds(at.risk.sel(learner="lsa", position=m), at.risk_sem.sel(learner="lsa", position=m),
                         groups=groups_at(at, learner="lsa", position=m)), "≈",
              limit_error, "measured error per seed (t) and evaluation prompts (normal); exact limit",
              REACHES * limit_error.value, REACHES_SOURCE),
    ]
    if "prediction_gap" in at:
        limit_gap = exact(float(at.theory_gap.sel(position=m)))
        rows.append(Claim(
            f"on new random covariances the trained LSA's predictions approach x_qᵀKΛ_new w as the limit model's do "
            f"(relative distance at M = {m}, panel b)", SOURCE, over_seeds(at.prediction_gap.sel(position=m)), "≈",
            limit_gap, "relative distance per seed (t; its evaluation-prompt error is not stored); the limit "
            "model's, exact", WITHIN * limit_gap.value,
            f"the {WITHIN:.0%} of Theorem 8's claim on u₋₁U₁₁"))
        early = min(n, m)
        rows.append(Claim(f"the trained LSA's prediction distance to the limit falls with M (M = {m} against "
                          f"M = {early})", SOURCE, over_seeds(at.prediction_gap.sel(position=m)), "<",
                          over_seeds(at.prediction_gap.sel(position=early)), "relative distance per seed (t), paired"))
    return rows
