"""Claims of Zhang, Wu, Bartlett 2024, Table 1, on the ltb_table1 cube: GPT-2 with and without its MLP."""

from iclab.claims import Claim, difference, has, over_seeds

SOURCE = "Zhang, Wu, Bartlett 2024, Table 1"
BASIS = "95% bands of both trained risks (seeds, evaluation prompts), added in quadrature"


def claims(cube):
    top = float(cube.beta_star_norm.max())

    def loss(learner: str, norm: float):
        point = {"learner": learner, "beta_star_norm": norm}
        return over_seeds(cube.query_risk.sel(point), cube.query_risk_sem.sel(point))

    if not has(cube, learner="gpt2") or not has(cube, learner="gpt2_nomlp") or top == 0:
        return []
    rows = [
        Claim(f"GPT-2 with its MLP beats GPT-2 without it when β* ≠ 0 (‖β*‖ = {top:g}; paper 0.013 vs 8.871)",
              SOURCE, loss("gpt2", top), "<", loss("gpt2_nomlp", top), BASIS),
    ]
    if has(cube, beta_star_norm=0.0):
        rows.append(Claim(
            f"removing the MLP costs more at ‖β*‖ = {top:g} than at β* = 0 (paper: 8.86 vs 0.021)", SOURCE,
            difference(loss("gpt2_nomlp", top), loss("gpt2", top)), ">",
            difference(loss("gpt2_nomlp", 0.0), loss("gpt2", 0.0)), BASIS))
    return rows
