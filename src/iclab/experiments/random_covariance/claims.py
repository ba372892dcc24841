"""Claims of Zhang, Frei, Bartlett 2024, Theorem 8, on the random_covariance cube (its largest N)."""

import numpy as np

from iclab.claims import Claim, Estimate, has, over_seeds

SOURCE = "Zhang, Frei, Bartlett 2024, Theorem 8"
WITHIN = 0.1  # the claim: u₋₁U₁₁ within 10% of its limit (relative Frobenius distance)


def claims(cube):
    n = int(cube.n.max())
    at = cube.sel(n=n)
    m = int(at.position.max())
    gap = at.product_learned - at.product_limit
    distance = np.sqrt((gap**2).sum(("row", "col")) / (at.product_limit**2).sum(("row", "col")))

    def error(learner: str):
        point = {"learner": learner, "position": m}
        return over_seeds(at.risk.sel(point), at.risk_sem.sel(point))

    basis = "95% band of the measured error (seeds, evaluation prompts)"
    rows = [
        Claim(f"the trained u₋₁U₁₁ is within {WITHIN:.0%} of E[Λ²](E[ΓΛ²])⁻¹ (N = {n})", SOURCE,
              over_seeds(distance), "<", Estimate(WITHIN), "95% band over seeds"),
        Claim(f"on new random covariances the trained LSA has the limit model's error (N = {n}, M = {m})",
              SOURCE, error("lsa"), "≈", Estimate(float(at.theory_error.sel(position=m))), basis + "; exact limit"),
    ]
    if has(at, learner="ols"):
        rows.append(Claim(f"least squares beats the LSA on new random covariances (N = {n}, M = {m})", SOURCE,
                          error("ols"), "<", error("lsa"), basis))
    return rows
