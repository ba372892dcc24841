"""Claims of Zhang, Frei, Bartlett 2024, §5 (distribution shifts) and Theorem 5, on the lsa_shifts cube, at
M = N (the training length)."""

import numpy as np

from iclab.claims import Claim, Estimate, has, over_seeds

SOURCE = "Zhang, Frei, Bartlett 2024"
BASIS = "95% band of the measured error (seeds, evaluation prompts)"


def claims(cube):
    scales = cube.covariate_scale.where(np.isfinite(cube.covariate_scale), drop=True).sortby(lambda s: s)
    if scales.size < 2 or not has(cube, learner="lsa"):
        return []
    base, top = str(scales.condition.values[0]), str(scales.condition.values[-1])
    c_base, c_top = (float(cube.covariate_scale.sel(condition=c)) for c in (base, top))
    n = int(cube.train_n.sel(condition=top))

    def error(condition: str, learner: str):
        point = {"condition": condition, "learner": learner, "position": n}
        return over_seeds(cube.risk.sel(point), cube.risk_sem.sel(point))

    def theory(condition: str):
        return Estimate(float(cube.theory_error.sel(condition=condition, position=n)))

    exponent = np.log(cube.lsa_gain.sel(condition=top) / cube.lsa_gain.sel(condition=base)) / np.log(c_top / c_base)
    rows = [
        Claim(f"the LSA's prediction gain grows as c² under covariate scaling (fitted exponent, c = {c_base:g} → "
              f"{c_top:g})", f"{SOURCE}, §5", over_seeds(exponent), "≈", Estimate(2.0),
              "exact: ŷ is cubic and y linear in x; 95% band over seeds"),
        Claim(f"under covariate scaling c = {c_top:g} the trained LSA has its limit's error (M = N = {n})",
              f"{SOURCE}, Theorem 5", error(top, "lsa"), "≈", theory(top), BASIS + "; exact limit"),
        Claim(f"the LSA degrades under covariate scaling (c = {c_top:g} against {c_base:g}, M = N = {n})",
              f"{SOURCE}, §5", error(top, "lsa"), ">", error(base, "lsa"), BASIS),
    ]
    if has(cube, learner="gpt2"):
        rows.append(Claim(f"GPT-2 trained on the same prompts degrades too (c = {c_top:g} against {c_base:g})",
                          f"{SOURCE}, §5 and Figure 1", error(top, "gpt2"), ">", error(base, "gpt2"), BASIS))
    if has(cube, condition="relu labels"):
        rows.append(Claim(f"with ReLU labels the trained LSA has Theorem 5's error (M = N = {n})",
                          f"{SOURCE}, Theorem 5", error("relu labels", "lsa"), "≈", theory("relu labels"),
                          BASIS + "; exact limit"))
    return rows
