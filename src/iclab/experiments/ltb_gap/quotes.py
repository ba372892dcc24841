"""The numbers the docs quote from the ltb_gap cube (Theorem 4.1's gap and the trained models against the optima)."""

from iclab.report.quotes import Quote, fixed, listed, percent, span


def quotes(cube) -> list[Quote]:
    n, top = int(cube.n[-1]), float(cube.beta_star_norm.max())
    at = cube.sel(n=n)
    risk = at.query_risk.mean("seed")  # (beta_star_norm, learner): a baseline is the same on every seed
    gap = cube.theory_risk.sel(theory="lsa_optimum") / cube.theory_risk.sel(theory="gd_beta_optimum") - 1  # (‖β*‖, n)
    exact = float(at.theory_risk.sel(theory="gd_beta_optimum", beta_star_norm=top))
    on_prompts = float(risk.sel(learner="gd_beta_optimal", beta_star_norm=top))
    lsa_above = at.query_risk.sel(learner="lsa") / at.query_risk.sel(learner="lsa_optimal") - 1  # (‖β*‖, seed)
    baselines = ["gd_beta_optimal", "lsa_optimal"]  # the same on every seed: seed 0
    on_set = at.query_risk.sel(learner=baselines).isel(seed=0)  # (‖β*‖, learner)
    exact_of = at.theory_risk.sel(theory=["gd_beta_optimum", "lsa_optimum"]).rename(theory="learner")
    exact_of["learner"] = on_set.learner  # each baseline beside its optimum's exact risk
    under = (1 - on_set / exact_of).values
    standard_errors = ((exact_of - on_set) / at.query_risk_sem.sel(learner=baselines).isel(seed=0)).values
    return [
        Quote("lsa_gap", listed(gap.sel(n=n).values, percent),
              f"Theorem 4.1's gap: the LSA class's optimum over the GD-β optimum, minus 1, at each ‖β*‖ (n = {n}; "
              "theory_risk)"),
        *[Quote(f"lsa_gap_n{int(m)}", listed(gap.sel(n=m).values, lambda v: percent(v, 1)),
                f"the same to 0.1% at n = {int(m)}") for m in cube.n.values],
        Quote("lsa_trained", fixed(risk.sel(learner="lsa", beta_star_norm=top), 3),
              f"the trained LSA's risk at the final query, mean over seeds (‖β*‖ = {top:g}, n = {n}; query_risk)"),
        Quote("lsa_optimal", fixed(risk.sel(learner="lsa_optimal", beta_star_norm=top), 3),
              "the LSA class's optimum run on the same prompts (the lsa_optimal baseline)"),
        Quote("lsa_above_optimal", span(lsa_above.mean("seed").values, lambda v: percent(v, 2)),
              f"the trained LSA above the LSA optimum on the same prompts, mean over seeds, over ‖β*‖ (n = {n})"),
        Quote("lsa_above_optimal_seed", percent(float(lsa_above.max()), 2),
              f"the same, the largest single seed (n = {n})"),
        Quote("ltb_trained", fixed(risk.sel(learner="ltb", beta_star_norm=top), 4),
              f"the trained LTB's risk at the final query, mean over seeds (‖β*‖ = {top:g}, n = {n})"),
        Quote("gd_beta_on_prompts", fixed(on_prompts, 4),
              "the GD-β optimum run on the same prompts (the gd_beta_optimal baseline)"),
        Quote("gd_beta_exact", fixed(exact, 3), "the GD-β optimum's closed-form risk (theory_risk)"),
        Quote("gd_beta_prompts_off", percent(1 - on_prompts / exact, 1),
              "the GD-β optimum on the evaluation prompts below its closed form (the prompts' Monte-Carlo error)"),
        Quote("optima_under_exact", span(under.ravel(), lambda v: percent(v, 1)),
              f"both optima on the evaluation set below their exact risks, over ‖β*‖ (n = {n})"),
        Quote("optima_under_exact_se", span(standard_errors.ravel(), lambda v: fixed(v, 1)),
              "the same in standard errors of the evaluation set"),
    ]
