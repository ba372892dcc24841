"""Claims of Zhang, Frei, Bartlett 2024, Theorem 8, on the random_covariance cube (its largest N). (That least
squares beats the LSA is no test: on these noiseless prompts it is exact past d examples.)"""

import numpy as np

from iclab.stats.claims import Claim, reaches_limit
from iclab.stats.estimates import exact, groups_at, has, over_seeds

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
        return over_seeds(at.risk.sel(point), at.risk_sem.sel(point), prompts=f"random_covariance N={n}",
                          groups=groups_at(at, **point))

    rows = [
        Claim(f"the trained u₋₁U₁₁ is within {WITHIN:.0%} of E[Λ²]·(E[ΓΛ²])⁻¹ (N = {n})", SOURCE,
              over_seeds(distance), "<", exact(WITHIN), "relative distance per seed (t)"),
        reaches_limit(f"on new random covariances the trained LSA has the limit model's error (N = {n}, M = {m})",
                      SOURCE, error("lsa"), exact(float(at.theory_error.sel(position=m))),
                      "measured error per seed (t)", error("lsa_limit") if has(at, learner="lsa_limit") else None),
    ]
    if "prediction_gap" in at:
        limit_gap = exact(float(at.theory_gap.sel(position=m)))
        rows.append(Claim(
            f"on new random covariances the trained LSA's predictions approach xᵀKΛ′w (Λ′: the prompt's "
            f"covariance) as the limit model's do (relative distance at M = {m}, panel b)", SOURCE,
            prediction_gap(at, m), "≈", limit_gap,
            f"relative distance per seed (t){GAP_PROMPTS[prompt_error(at)]}; the limit model's, exact",
            WITHIN * limit_gap.value, f"the {WITHIN:.0%} of Theorem 8's claim on u₋₁U₁₁"))
        early = min(n, m)
        rows.append(Claim(f"the trained LSA's prediction distance to the limit falls with M (M = {m} against "
                          f"M = {early})", SOURCE, prediction_gap(at, m), "<", prediction_gap(at, early),
                          f"relative distance per seed (t), paired{GAP_PROMPTS[prompt_error(at)]}"))
    return rows


GAP_PROMPTS = {  # the basis's words for the evaluation prompts' error of the prediction gap, stored or not
    True: " and evaluation prompts (normal, delta method)",
    False: "; its evaluation-prompt error is not stored in this cube",
}


def prompt_error(at) -> bool:
    return "prediction_gap_sem" in at


def prediction_gap(at, position: int):
    """The trained LSA's relative prediction distance to the limit model at ``position``, per seed, with its
    evaluation prompts' s.e. where the cube stores it."""
    sems = at.prediction_gap_sem.sel(position=position) if prompt_error(at) else None
    return over_seeds(at.prediction_gap.sel(position=position), sems)
