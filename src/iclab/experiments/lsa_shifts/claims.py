"""Claims of Zhang, Frei, Bartlett 2024, §5 (distribution shifts) and Theorem 5, on the lsa_shifts cube, at
M = N (the training length). (The gain's exact c² under covariate scaling, ŷ cubic and y linear in x, and least
squares' exactness without noise are identities: tests/test_workflow.py checks them.)"""

import numpy as np

from iclab.stats.claims import Claim, reaches_limit
from iclab.stats.estimates import exact, groups_at, has, over_seeds

SOURCE = "Zhang, Frei, Bartlett 2024"
BASIS = "measured error per seed (t) and evaluation prompts (normal)"


def claims(cube):
    scales = cube.covariate_scale.where(np.isfinite(cube.covariate_scale), drop=True).sortby(lambda s: s)
    if scales.size < 2 or not has(cube, learner="lsa"):
        return []
    base, top = str(scales.condition.values[0]), str(scales.condition.values[-1])
    c_base, c_top = (float(cube.covariate_scale.sel(condition=c)) for c in (base, top))
    n = int(cube.train_n.sel(condition=top))

    def error(condition: str, learner: str):
        point = {"condition": condition, "learner": learner, "position": n}
        return over_seeds(cube.risk.sel(point), cube.risk_sem.sel(point), f"lsa_shifts {condition}",
                          groups_at(cube, **point))

    def has_limit_error(condition: str, what: str, source: str) -> Claim:
        limit = exact(float(cube.theory_error.sel(condition=condition, position=n)))
        on_prompts = error(condition, "lsa_limit") if has(cube, learner="lsa_limit") else None
        return reaches_limit(f"{what} the trained LSA has its limit's error, Theorem 5 (M = N = {n})",
                             f"{SOURCE}, {source}", error(condition, "lsa"), limit, "measured error per seed (t)",
                             on_prompts)

    rows = [
        has_limit_error(top, f"under covariate scaling c = {c_top:g}", "§5 and Theorem 5"),
        Claim(f"the LSA degrades under covariate scaling (c = {c_top:g} against {c_base:g}, M = N = {n})",
              f"{SOURCE}, §5", error(top, "lsa"), ">", error(base, "lsa"), BASIS + "; seeds paired",
              verification=True),  # the LSA's prediction is cubic in x: scaling x by c/c' scales its error by far
    ]
    if has(cube, learner="gpt2"):
        rows.append(Claim(f"GPT-2 trained on the same prompts degrades too (c = {c_top:g} against {c_base:g})",
                          f"{SOURCE}, §5 and Figure 1", error(top, "gpt2"), ">", error(base, "gpt2"),
                          BASIS + "; seeds paired"))
    for condition, what in (("query covariance", "with a shifted query covariance (query shift)"),
                            ("relu labels", "with ReLU labels")):
        if has(cube, condition=condition):
            rows.append(has_limit_error(condition, what, "Theorem 5"))
    return rows
