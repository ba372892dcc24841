"""The numbers the docs quote from the mean_field cube (Kim & Suzuki 2024): every learner's risk at the final query
over the zero predictor's per case, the population risk L(μ) = min_Γ L(μ, Γ) at the end against its global minimum,
the realisable case along training against the teacher's own features, and the principal angles to span f°."""

from iclab.report.quotes import Quote, fixed, kept, listed, percent, span

EARLY_STEP = 300  # "by step 300": the snapshot quoted along training
WITHIN = 2.0  # "within 2× of the teacher's own features": the first snapshot where a dynamics gets there
PROMPT_ONLY = ["random_features_ridge", "krr"]  # the baselines that see only the test prompt


def digits(value: float) -> str:
    """Two significant digits (trailing zeros kept: 0.30), two decimals from 1 on (1.05)."""
    value = float(value)
    return fixed(value, 2) if abs(value) >= 1 else kept(value, 2)


def relative(cube):
    """Each learner's risk at the final query over the zero predictor's there, mean over seeds: (case, learner)."""
    zero = cube.query_risk.sel(learner="zero").mean("seed")  # (case,)
    return (cube.query_risk / zero).mean("seed")


def risk_table(cube) -> list[Quote]:
    ratio = relative(cube)
    learners = [str(learner) for learner in cube.learner.values if learner != "zero"]
    return [Quote(f"{case}_{learner}", digits(ratio.sel(case=case, learner=learner)),
                  f"{learner}'s risk at the final query over the zero predictor's, mean over seeds ({case}; "
                  "query_risk)")
            for case in cube.case.values for learner in learners]


def population(cube) -> list[Quote]:
    """L(μ) at the end per dynamics (realisable and misaligned) and each case's global minimum."""
    end = cube.population_risk.isel(step=-1).mean("seed")  # (case, trained)
    shown = {"realisable": digits, "misaligned": lambda v: fixed(v, 3)}  # the misaligned beside its minimum 0.278
    found = [Quote(f"population_{case}_{dynamics}", show(end.sel(case=case, trained=dynamics)),
                   f"L(μ) at the last step, mean over seeds ({dynamics} dynamics, {case}; population_risk)")
             for case, show in shown.items() if case in cube.case.values for dynamics in cube.trained.values]
    if "misaligned" in cube.case.values:
        found.append(Quote("population_misaligned_span", span(end.sel(case="misaligned").values,
                                                              lambda v: fixed(v, 3)),
                           "L(μ) at the last step, mean over seeds, lowest–highest over the dynamics (misaligned; "
                           "population_risk)"))
    found += [Quote(f"minimum_{case}", fixed(cube.global_minimum_risk.sel(case=case), 3),
                    f"the global minimum of L(μ) ({case}; global_minimum_risk)")
              for case in cube.case.values if float(cube.global_minimum_risk.sel(case=case)) > 0]
    return found


def first_within(training, teacher: float) -> int | None:
    """The first snapshot step where ``training`` (step,) is within WITHIN× ``teacher`` (None: never)."""
    within = training.step[training <= WITHIN * teacher]
    return int(within[0]) if within.size else None


def along_training(cube) -> list[Quote]:
    """The realisable case along training, over the zero predictor's risk at the final query."""
    at = cube.sel(case="realisable")
    zero = float(at.query_risk.sel(learner="zero").mean())
    training = at.training_risk.mean("seed") / zero  # (trained, step)
    teacher = float(relative(cube).sel(case="realisable", learner="teacher_attention"))
    end = training.isel(step=-1)  # (trained,)
    early = EARLY_STEP in training.step.values  # a short run may stop before it
    within = {dynamics: first_within(training.sel(trained=dynamics), teacher) for dynamics in ("static", "attention")}
    return [
        *[Quote(f"{dynamics}_at_step_{EARLY_STEP}", percent(training.sel(trained=dynamics, step=EARLY_STEP), 1),
                f"{dynamics} dynamics' risk at the final query at step {EARLY_STEP} over the zero predictor's, mean "
                "over seeds (realisable; training_risk)") for dynamics in ("static", "attention") if early],
        *[Quote(f"{dynamics}_within_teacher_step", str(step),
                f"the first step where {dynamics} dynamics' risk is within {WITHIN:g}× the teacher features' "
                "(realisable; training_risk, query_risk)") for dynamics, step in within.items() if step is not None],
        Quote("end_over_teacher", fixed(float(end.sel(trained=["attention", "static"]).max()) / teacher, 1) + "×",
              "the larger of attention's and static's last risk over the teacher features' (realisable; "
              "training_risk, query_risk)"),
        Quote("realisable_attention_seeds", listed(at.query_risk.sel(learner="attention").values / zero,
                                                   lambda v: fixed(v, 3)),
              "attention's risk at the final query over the zero predictor's, per seed (realisable; query_risk)"),
    ]


def angles_and_baselines(cube) -> list[Quote]:
    angle = cube.principal_angle.sel(case="realisable")  # (trained, seed)
    found = [Quote(f"angle_{dynamics}", span(angle.sel(trained=dynamics).values, lambda v: fixed(v, 0)),
                   f"the largest principal angle between span h_μ and span f° in degrees, over seeds ({dynamics}, "
                   "realisable; principal_angle)") for dynamics in cube.trained.values]
    if "misaligned" in cube.case.values and set(PROMPT_ONLY) <= set(cube.learner.values):
        prompt_only = relative(cube).sel(case="misaligned", learner=PROMPT_ONLY)
        found.append(Quote("misaligned_prompt_only", span(prompt_only.values, digits),
                           "the test-prompt-only learners' risk at the final query over the zero predictor's, "
                           "lowest–highest (misaligned; query_risk)"))
    return found


def quotes(cube) -> list[Quote]:
    return [*risk_table(cube), *population(cube), *along_training(cube), *angles_and_baselines(cube)]
