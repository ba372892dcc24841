"""The numbers the docs quote from the nonparametric_icl cube (Kim, Nakamaki, Suzuki 2024): per pretraining-set size T
the risk on new tasks and on the pretraining tasks over the last octave of n and the features' coverage of the basis;
the known-basis references; the fitted slopes and the excess risks that the claims compare at the largest T."""

from iclab.stats.claims import NULL_FRACTION
from iclab.stats.estimates import zero_predictor_risk
from iclab.experiments.nonparametric_icl.claims import FACTOR, slope
from iclab.report.quotes import Quote, fixed, kept, listed, percent, span

MODEL = "feature_attention"
COVERED_FROM = 128  # "from T = 128 on": the coverage quoted over every T at least this


def degrees(value: float) -> str:
    return fixed(value, 0)


def last_octave(cube):
    """The cube at the last bin of positions (n/2..n), and that bin's positions as a selection."""
    last = cube.isel(position_bin=-1)
    return last, slice(int(last.bin_first), int(last.bin_last))


def per_t(cube) -> list[Quote]:
    """For each T: the new-task and pretraining-task risks per seed, the share outside span φ and the angle over
    seeds."""
    last, _ = last_octave(cube)
    new = last.binned_risk.sel(learner=MODEL)  # (T, seed)
    found = []
    for t in cube.pretraining_tasks.values:
        at = {"pretraining_tasks": t}
        found += [
            Quote(f"new_T{t}", listed(new.sel(at).values, lambda v: kept(v, 3)),
                  f"risk on new tasks over the last octave of n, per seed (T = {t}; binned_risk)"),
            Quote(f"pretraining_T{t}", listed(cube.pretraining_risk.sel(at).values, lambda v: fixed(v, 3)),
                  f"risk on its own pretraining tasks, per seed (T = {t}; pretraining_risk)"),
            Quote(f"outside_T{t}", span(cube.feature_residual.sel(at).values, lambda v: kept(v, 2)),
                  f"the prior-weighted share of f° outside span φ, over seeds (T = {t}; feature_residual)"),
            Quote(f"angle_T{t}", span(cube.principal_angle.sel(at).values, degrees),
                  f"the largest principal angle to the leading basis functions in degrees, over seeds (T = {t}; "
                  "principal_angle)"),
        ]
    return found


def references(cube) -> list[Quote]:
    """The baselines on the test prompts (last octave; the same at every T and seed) and the closed forms there."""
    last, window = last_octave(cube)
    first = last.isel(pretraining_tasks=0, seed=0)  # a baseline repeats along T and seeds
    theory = cube.isel(pretraining_tasks=0).sel(position=window).mean("position")  # the closed forms, mean over n
    return [
        Quote("bayes_prompts", fixed(first.binned_risk.sel(learner="basis_bayes"), 2),
              "the Bayes posterior mean with the known basis on the test prompts, last octave (binned_risk)"),
        Quote("bayes_theory", fixed(theory.bayes_risk, 3), "its closed form there, mean over n (bayes_risk)"),
        Quote("single_gamma_theory", fixed(theory.single_gamma_risk, 3),
              "attention on the true features with the one best Γ, closed form, last octave (single_gamma_risk)"),
        Quote("krr", fixed(first.binned_risk.sel(learner="krr"), 2),
              "kernel ridge on the test prompt, last octave (binned_risk)"),
        Quote("zero", fixed(first.binned_risk.sel(learner="zero"), 2),
              "the zero predictor, last octave (binned_risk)"),
    ]


def at_largest_t(cube) -> list[Quote]:
    """The claims' quantities at the largest T: slopes, excess risks against the class with the basis known."""
    large, small = int(cube.pretraining_tasks.max()), int(cube.pretraining_tasks.min())
    last, window = last_octave(cube)
    noise = float(cube.noise_variance.isel(pretraining_tasks=0))
    theory = cube.sel(pretraining_tasks=large, position=window).mean("position")
    known, bayes = float(theory.single_gamma_risk) - noise, float(theory.bayes_risk) - noise
    model = last.binned_risk.sel(learner=MODEL)  # (T, seed)
    covered = cube.feature_residual.sel(pretraining_tasks=cube.pretraining_tasks >= COVERED_FROM)  # (T, seed)
    found = [
        *[Quote(f"slope_{name}", fixed(slope(cube, large, learner).value, 2),
                f"{words}: fitted log-log slope of the excess risk from n = {int(cube.fit_from[0])}, mean over seeds "
                f"(T = {large}; binned_risk_groups, as the claim)")
          for name, learner, words in (("model", MODEL, "the pretrained model"), ("krr", "krr", "kernel ridge"),
                                       ("bayes", "basis_bayes", "the Bayes posterior mean on the test prompts"))],
        Quote("model_excess", fixed(float(model.sel(pretraining_tasks=large).mean()) - noise, 3),
              f"the pretrained model's excess risk over the last octave, mean over seeds (T = {large}; binned_risk "
              "less σ²)"),
        Quote("known_excess", fixed(known, 3), "the excess of attention on f° with the best single Γ there "
              "(single_gamma_risk less σ²)"),
        Quote("known_excess_bound", fixed(FACTOR * known, 3),
              f"{FACTOR:g}× that: the claim's bound (single_gamma_risk)"),
        Quote("bayes_excess", kept(bayes, 2), "the Bayes posterior mean's excess there (bayes_risk less σ²)"),
        Quote("class_gap", fixed(known / bayes, 1) + "×",
              "the best single Γ's excess over the Bayes posterior mean's (single_gamma_risk, bayes_risk)"),
        Quote("new_large", fixed(model.sel(pretraining_tasks=large).mean(), 2),
              f"risk on new tasks over the last octave, mean over seeds (T = {large}; binned_risk)"),
        Quote("new_small_span", span(model.sel(pretraining_tasks=small).values, lambda v: kept(v, 2)),
              f"risk on new tasks over the last octave per seed, lowest–highest (T = {small}; binned_risk)"),
        Quote("pretraining_small_span", span(cube.pretraining_risk.sel(pretraining_tasks=small).values,
                                             lambda v: fixed(v, 3)),
              f"risk on its pretraining tasks per seed, lowest–highest (T = {small}; pretraining_risk)"),
        Quote("zero_margin", fixed(NULL_FRACTION * zero_predictor_risk(cube.risk.sel(learner=MODEL)), 3),
              "the generalisation claim's margin: 5% of the zero predictor's risk (risk at position 0)"),
        Quote("outside_large", fixed(cube.feature_residual.sel(pretraining_tasks=large).mean(), 3),
              f"that share, mean over seeds (T = {large})"),
        *[Quote(f"angle_{name}", degrees(cube.principal_angle.sel(pretraining_tasks=t).mean()),
                f"the largest principal angle in degrees, mean over seeds (T = {t}; principal_angle)")
          for name, t in (("large", large), ("small", small))],
    ]
    if covered.size:  # a tiny run may have no T that large
        found.append(Quote("outside_covered", span(covered.values.ravel(), percent),
                           f"the share of f° outside span φ over seeds and every T ≥ {COVERED_FROM} "
                           "(feature_residual)"))
    return found


def quotes(cube) -> list[Quote]:
    return [*per_t(cube), *references(cube), *at_largest_t(cube)]
