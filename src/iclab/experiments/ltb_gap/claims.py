"""Claims of Zhang, Wu, Bartlett 2024 (Theorem 4.1 and §5) on the ltb_gap cube, at its largest n."""

from iclab.claims import REACHES, REACHES_SOURCE, Claim, groups_at, has, over_seeds, reaches_limit, with_sem

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


def reaches(claim: str, source: str, measured, expected) -> Claim:
    return Claim(claim, source, measured, "≈", expected, BASIS, REACHES * expected.value, REACHES_SOURCE)


def claims(cube):
    n, top = int(cube.n[-1]), float(cube.beta_star_norm.max())
    at = cube.sel(n=n)
    where = f"‖β*‖ = {top:g}, n = {n}"
    rows = []
    if has(at, learner="ltb"):
        rows.append(reaches(f"trained LTB reaches the GD-β optimum ({where})", f"{SOURCE}, §4–5",
                            trained(at, "ltb", top), optimum(at, "gd_beta_optimum", top)))
    if has(at, learner="lsa"):
        rows.append(lsa_reaches_its_class_optimum(at, top, where))
    if has(at, learner="lsa") and top > 0:
        rows.append(Claim(f"trained LSA stays above the GD-β optimum when β* ≠ 0 ({where})", f"{SOURCE}, Theorem 4.1",
                          trained(at, "lsa", top), ">", optimum(at, "gd_beta_optimum", top), BASIS,
                          verification=True))  # no LSA can go below its class's optimum, far above GD-β's
    if has(at, learner="lsa", beta_star_norm=0.0):
        rows.append(reaches(f"with β* = 0 the trained LSA reaches the GD-β optimum (n = {n})",
                            f"{SOURCE}, Theorem 4.1", trained(at, "lsa", 0.0), optimum(at, "gd_beta_optimum", 0.0)))
    return rows


def lsa_reaches_its_class_optimum(at, norm: float, where: str) -> Claim:
    """The trained LSA against the LSA at its class's optimum scored on the same prompts where the cube has it
    (paired: the prompts' error largely cancels), else against the optimum's exact risk."""
    on_prompts = trained(at, "lsa_optimal", norm) if has(at, learner="lsa_optimal") and "risk_groups" in at else None
    return reaches_limit(f"trained LSA reaches the LSA class's optimum ({where})", f"{SOURCE}, Theorem 4.1",
                         trained(at, "lsa", norm), optimum(at, "lsa_optimum", norm), "trained risk per seed (t)",
                         on_prompts)
