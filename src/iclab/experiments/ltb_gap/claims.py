"""Claims of Zhang, Wu, Bartlett 2024 (Theorem 4.1 and §5) on the ltb_gap cube, at its largest n."""

from iclab.stats.claims import ONE_EDGE, Claim, reaches_limit
from iclab.stats.estimates import groups_at, has, over_seeds, with_sem

SOURCE = "Zhang, Wu, Bartlett 2024"
BASIS = "trained risk per seed (t) and evaluation prompts (normal); closed-form optimum"


def trained(at, learner: str, norm: float):
    """A learner's risk at the final query on the evaluation set of ‖β*‖ = norm (a baseline's: one value), with its
    prompt groups on that named set."""
    point = {"learner": learner, "beta_star_norm": norm}
    groups = groups_at(at, **point, position=int(at.position.max()))
    prompts = f"ltb_gap n={int(at.n)} ‖β*‖={norm:g}"  # the evaluation set of this sweep point
    return over_seeds(at.query_risk.sel(point), at.query_risk_sem.sel(point), prompts=prompts, groups=groups)


def optimum(at, theory: str, norm: float):
    point = {"theory": theory, "beta_star_norm": norm}
    return with_sem(at.theory_risk.sel(point), at.theory_risk_sem.sel(point))


def claims(cube):
    n, top = int(cube.n[-1]), float(cube.beta_star_norm.max())
    at = cube.sel(n=n)
    where = f"‖β*‖ = {top:g}, n = {n}"
    rows = []
    if has(at, learner="ltb"):
        rows.append(reaches_optimum(at, f"trained LTB reaches the GD-β optimum ({where})", f"{SOURCE}, §4–5", "ltb",
                                    top, "gd_beta_optimum", "gd_beta_optimal"))
    if has(at, learner="lsa"):
        rows.append(reaches_optimum(at, f"trained LSA reaches the LSA class's optimum ({where})",
                                    f"{SOURCE}, Theorem 4.1", "lsa", top, "lsa_optimum", "lsa_optimal"))
    if has(at, learner="lsa") and top > 0:
        rows.append(Claim(f"trained LSA stays above the GD-β optimum when β* ≠ 0 ({where})", f"{SOURCE}, Theorem 4.1",
                          trained(at, "lsa", top), ">", optimum(at, "gd_beta_optimum", top), BASIS,
                          verification=True))  # no LSA can go below its class's optimum, far above GD-β's
    if has(at, learner="lsa", beta_star_norm=0.0):
        rows.append(reaches_optimum(at, f"with β* = 0 the trained LSA reaches the GD-β optimum (n = {n})",
                                    f"{SOURCE}, Theorem 4.1", "lsa", 0.0, "gd_beta_optimum", "gd_beta_optimal"))
    return rows


def reaches_optimum(at, claim: str, source: str, learner: str, norm: float, theory: str, baseline: str) -> Claim:
    """A trained learner against an optimum: against the predictor at that optimum (``baseline``) scored on the same
    prompts where the cube has it (paired: the prompts' error largely cancels), else against the optimum's exact
    risk (``theory``); the margin is on the exact risk either way. No learner of the class goes below its optimum:
    only the upper edge binds (``ONE_EDGE``)."""
    on_prompts = trained(at, baseline, norm) if has(at, learner=baseline) and "risk_groups" in at else None
    return reaches_limit(claim, source, trained(at, learner, norm), optimum(at, theory, norm),
                         "trained risk per seed (t)", on_prompts, (ONE_EDGE.format("the optimum of its class"),))
