"""The numbers the docs quote from the ltb_table1 cube: Table 1's cells as ``table.py`` computes them (each loss
± the half-width of its 95% band, the GD-β optimum and the Bayes risk, noMLP over GPT2, each loss over the better
reference) and how far the seeds spread."""

from iclab.experiments.ltb_table1.table import COLUMNS, PAPER
from iclab.stats.intervals import band
from iclab.report.quotes import Quote, fixed, span


def loss(at, learner: str) -> tuple[float, float]:
    """A learner's loss at the final query, mean over seeds, and its band's half-width, as table.py's cells."""
    mean, _, high = band(at.query_risk.sel(learner=learner).values, at.query_risk_sem.sel(learner=learner).values)
    return float(mean), float(high - mean)


def setting(norm: float) -> str:
    """A row's name as table.py writes it."""
    return "β* = 0" if norm == 0 else f"‖β*‖ = {norm:g}"


def with_half_width(mean: float, half: float) -> str:
    return f"{fixed(mean, 3)} ± {fixed(half, 3)}"


def row_quotes(cube, norm: float) -> list[Quote]:
    """One row of the table: ‖β*‖ = ``norm``."""
    at, key, row = cube.sel(beta_star_norm=norm), f"beta{norm:g}", setting(norm)
    gpt2, nomlp = loss(at, "gpt2"), loss(at, "gpt2_nomlp")
    return [
        *[Quote(f"{learner}_{key}", with_half_width(*loss(at, learner)),
                f"{column}'s loss at the final query, mean over seeds ± its 95% band's half-width ({row}; "
                "query_risk, query_risk_sem)") for learner, column in COLUMNS.items()],
        Quote(f"nomlp_over_gpt2_{key}", fixed(nomlp[0] / gpt2[0], 2), f"GPT2-noMLP's loss over GPT2's ({row})"),
        Quote(f"gd_beta_optimum_{key}", fixed(at.theory_risk.sel(theory="gd_beta_optimum"), 3),
              f"the GD-β optimum's closed-form risk ({row}; theory_risk)"),
        Quote(f"bayes_{key}", fixed(at.theory_risk.sel(theory="bayes"), 4),
              f"the Bayes risk ({row}; theory_risk, Monte Carlo over designs)"),
    ]


def over_best(cube) -> list[float]:
    """Each loss over the better (lower) of the GD-β optimum and the Bayes risk, as table.py's '/ best' columns."""
    ratios = []
    for norm in cube.beta_star_norm.values:
        at = cube.sel(beta_star_norm=norm)
        best = float(at.theory_risk.sel(theory=["gd_beta_optimum", "bayes"]).min())
        ratios += [loss(at, learner)[0] / best for learner in COLUMNS]
    return ratios


def widest_seeds(cube):
    """The (‖β*‖, learner) whose seeds spread most (largest over smallest), as a row of query_risk: (seed,)."""
    spread = cube.query_risk.max("seed") / cube.query_risk.min("seed")  # (beta_star_norm, learner)
    norm, learner = (spread.stack(point=spread.dims).idxmax("point")).item()
    return cube.query_risk.sel(beta_star_norm=norm, learner=learner)


def quotes(cube) -> list[Quote]:
    seeds = widest_seeds(cube)  # (seed,)
    return [
        *[quote for norm in cube.beta_star_norm.values for quote in row_quotes(cube, float(norm))],
        Quote("over_best", span(over_best(cube), lambda v: fixed(v, 0)),
              "each loss (mean over seeds) over the better of the GD-β optimum and the Bayes risk, over the table's "
              "cells"),
        Quote("widest_seeds_at", f"{COLUMNS[str(seeds.learner.item())]} at {setting(float(seeds.beta_star_norm))}",
              "the cell whose seeds spread most (largest seed's loss over the smallest's; query_risk)"),
        Quote("widest_seeds", span(seeds.values, lambda v: fixed(v, 2)), "that cell's smallest and largest seed"),
        Quote("widest_seeds_ratio", fixed(float(seeds.max() / seeds.min()), 1), "the largest over the smallest"),
        *paper_quotes(),
    ]


def paper_quotes() -> list[Quote]:
    """The paper's Table 1 losses beside the run's (``table.PAPER``, the values the table's paper columns print)."""
    return [Quote(f"paper_{learner}_{'beta5' if shifted else 'beta0'}", f"{loss:g}",
                  f"the paper's {COLUMNS[learner]} loss at {'β* ≠ 0' if shifted else 'β* = 0'} (Table 1; not a run's)")
            for shifted, losses in PAPER.items() for learner, loss in zip(("gpt2", "gpt2_nomlp"), losses)]
