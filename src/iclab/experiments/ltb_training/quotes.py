"""The numbers the docs quote from the ltb_training cube: where the LTB's, GD-β's and the LSA's training ends (the last
snapshot at the final query) against the two optima run on the same prompts, and Theorem 4.1's gap at each ‖β*‖."""

from iclab.report.quotes import Quote, fixed, listed, percent, span


def last_snapshot(cube, trained: list[str]):
    """The last training snapshot's risk on the evaluation set: (beta_star_norm, trained, seed)."""
    return cube.training_risk.sel(trained=trained).isel(step=-1)


def baseline(cube, learner: str):
    """An optimum run on the evaluation prompts (the same on every seed): (beta_star_norm, seed)."""
    return cube.query_risk.sel(learner=learner)


def quotes(cube) -> list[Quote]:
    top = float(cube.beta_star_norm.max())
    step = int(cube.step[-1])
    gd_beta_on_prompts = baseline(cube, "gd_beta_optimal")  # (‖β*‖, seed)
    exact = cube.theory_risk.sel(theory="gd_beta_optimum")  # (‖β*‖,)
    reaching = last_snapshot(cube, ["ltb", "gd_beta"])  # (‖β*‖, trained, seed)
    lsa = last_snapshot(cube, ["lsa"]).squeeze("trained", drop=True)  # (‖β*‖, seed)
    shifted = cube.beta_star_norm > 0
    lsa_over_gd_beta = lsa.mean("seed") / gd_beta_on_prompts.mean("seed") - 1  # (‖β*‖,)
    exact_gap = cube.theory_risk.sel(theory="lsa_optimum") / exact - 1  # (‖β*‖,)
    on_prompts_top = float(gd_beta_on_prompts.sel(beta_star_norm=top).isel(seed=0))
    exact_top = float(exact.sel(beta_star_norm=top))
    standard_error_top = float(cube.query_risk_sem.sel(learner="gd_beta_optimal", beta_star_norm=top).isel(seed=0))
    return [
        Quote("ltb_gd_beta_ends", span(reaching.values.ravel(), lambda v: fixed(v, 4)),
              f"every trained LTB's and GD-β's risk at its last snapshot (step {step}), over ‖β*‖ and seeds "
              "(training_risk)"),
        Quote("ltb_gd_beta_above_optimal", span((reaching / gd_beta_on_prompts - 1).values.ravel(),
                                                lambda v: percent(v, 2)),
              "the same above the GD-β optimum run on the same prompts (the gd_beta_optimal baseline of query_risk), "
              "each seed at each ‖β*‖"),
        Quote("gd_beta_on_prompts", fixed(on_prompts_top, 4),
              f"the GD-β optimum run on the evaluation prompts (‖β*‖ = {top:g}; query_risk of gd_beta_optimal)"),
        Quote("gd_beta_exact", fixed(exact_top, 4), "the GD-β optimum's closed-form risk (theory_risk)"),
        Quote("gd_beta_exact_se", fixed((exact_top - on_prompts_top) / standard_error_top, 1),
              "the closed form above the optimum on the prompts, in standard errors of the evaluation set "
              "(query_risk_sem)"),
        Quote("gd_beta_prompts_off", percent(1 - on_prompts_top / exact_top, 1),
              "the GD-β optimum on the evaluation prompts below its closed form (the prompts' Monte-Carlo error)"),
        Quote("lsa_above_optimal", span((lsa / baseline(cube, "lsa_optimal") - 1).values.ravel(),
                                        lambda v: percent(v, 2)),
              f"every trained LSA at its last snapshot (step {step}) above the LSA class's optimum run on the same "
              "prompts (training_risk over query_risk of lsa_optimal), each seed at each ‖β*‖"),
        Quote("lsa_above_gd_beta", listed(lsa_over_gd_beta.sel(beta_star_norm=shifted).values,
                                          lambda v: percent(v, 1)),
              "the trained LSA's last snapshot, mean over seeds, above the GD-β optimum on the same prompts, at each "
              "‖β*‖ > 0"),
        Quote("lsa_gap_exact", listed(exact_gap.sel(beta_star_norm=shifted).values, lambda v: percent(v, 1)),
              "Theorem 4.1's gap, the LSA class's optimum over the GD-β optimum minus 1, at each ‖β*‖ > 0 "
              "(theory_risk)"),
    ]
