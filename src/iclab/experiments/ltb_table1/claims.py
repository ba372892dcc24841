"""Claims of Zhang, Wu, Bartlett 2024, Table 1, on the ltb_table1 cube: GPT-2 with and without its MLP. The two
models of a seed train on the same batches (batches are a function of seed and step), so differences are paired
seed by seed; both are evaluated on the same prompts."""

from iclab.stats.claims import NULL_FRACTION, NULL_SOURCE, ONE_EDGE, Claim
from iclab.stats.estimates import difference, groups_at, has, over_seeds, with_sem

SOURCE = "Zhang, Wu, Bartlett 2024, Table 1"
BASIS = "trained risks per seed (t, paired) and evaluation prompts (normal)"


def claims(cube):
    top = float(cube.beta_star_norm.max())

    def loss(learner: str, norm: float):
        point = {"learner": learner, "beta_star_norm": norm}
        groups = groups_at(cube, **point, position=int(cube.position.max()))
        return over_seeds(cube.query_risk.sel(point), cube.query_risk_sem.sel(point), f"β* {norm:g}", groups)

    if not has(cube, learner="gpt2") or not has(cube, learner="gpt2_nomlp") or top == 0:
        return []
    rows = [
        Claim(f"GPT-2 with its MLP beats GPT-2 without it when β* ≠ 0 (‖β*‖ = {top:g}; paper 0.013 vs 8.871)",
              SOURCE, loss("gpt2", top), "<", loss("gpt2_nomlp", top), BASIS),
    ]
    if has(cube, beta_star_norm=0.0):
        at = cube.sel(beta_star_norm=0.0)
        bayes = with_sem(at.theory_risk.sel(theory="bayes"), at.theory_risk_sem.sel(theory="bayes"))
        rows.append(Claim(
            f"removing the MLP costs more at ‖β*‖ = {top:g} than at β* = 0 (paper: 8.86 vs 0.021)", SOURCE,
            difference(loss("gpt2_nomlp", top), loss("gpt2", top)), ">",
            difference(loss("gpt2_nomlp", 0.0), loss("gpt2", 0.0)), BASIS))
        if has(cube, theory="zero"):  # E y_q², the scale of "nearly zero" (cubes made before it lack it)
            null = float(at.theory_risk.sel(theory="zero"))
            rows += [
                Claim(f"{name} at β* = 0 comes within 5% of the zero predictor's risk ({null:.3g}) of the Bayes risk "
                      "(the paper's 'nearly zero loss': 0.003 and 0.024)", SOURCE, loss(learner, 0.0), "≈", bayes,
                      BASIS + "; Bayes risk by Monte Carlo over designs", NULL_FRACTION * null, NULL_SOURCE,
                      notes=(ONE_EDGE.format("the Bayes risk"),))
                for learner, name in (("gpt2", "GPT-2"), ("gpt2_nomlp", "GPT-2 without MLP"))
            ]
    return rows
