"""The numbers the docs quote from the lsa_rates cube (Theorem 5): the M → ∞ floor's slope in N over the grid and over
the last two N, and the slope in M of the error above the floor at the largest N, as the claims and figure compute
them."""

import numpy as np

from iclab.experiments.lsa_rates.claims import slope
from iclab.report.plots import log_positions, loglog_slope
from iclab.report.quotes import Quote, fixed


def small_positions(cube) -> np.ndarray:
    """The figure's M for the slope in M: its log-spaced positions up to max(2, M_max // 50)."""
    m_max = int(cube.position.max())
    ms = log_positions(m_max)
    return ms[ms <= max(2, m_max // 50)]


def m_slopes(cube) -> tuple[float, float]:
    """The slope in M of the error above its M → ∞ floor at the largest N: measured (mean over seeds, above the trained
    weights' floor) and the limit's (above its floor), as the figure's title."""
    at, ms = cube.isel(n=-1), small_positions(cube)
    measured = at.risk.sel(learner="lsa", position=ms).mean("seed") - at.trained_theory_floor.mean("seed")  # (M,)
    theory = at.theory_error.sel(position=ms) - at.theory_floor  # (M,)
    return loglog_slope(ms, measured.values), loglog_slope(ms, theory.values)


def last_two_slopes(cube) -> tuple[float, float]:
    """The floor's slope over the last two N: the trained weights' (mean over seeds) and the limit's."""
    ns = cube.n.values[-2:]
    trained = cube.trained_theory_floor.mean("seed").values[-2:]  # (2,)
    return loglog_slope(ns, trained), loglog_slope(ns, cube.theory_floor.values[-2:])


def quotes(cube) -> list[Quote]:
    grid = f"N = {int(cube.n[0])}–{int(cube.n[-1])}"
    n, ms = int(cube.n[-1]), small_positions(cube)
    measured_m, theory_m = m_slopes(cube)
    trained_two, theory_two = last_two_slopes(cube)
    return [
        Quote("floor_slope", fixed(float(slope(cube.trained_theory_floor).mean("seed")), 2),
              f"the slope of the trained weights' log M → ∞ floor against log N over {grid}, mean over seeds "
              "(trained_theory_floor)"),
        Quote("floor_slope_theory", fixed(float(slope(cube.theory_floor)), 2),
              "the same for the limit A = Γ⁻¹ (theory_floor)"),
        Quote("m_slope", fixed(measured_m, 2),
              f"the slope of log(error − floor) against log M over M ≤ {int(ms[-1])} at N = {n}: measured, mean over "
              "seeds (risk − trained_theory_floor)"),
        Quote("m_slope_theory", fixed(theory_m, 2), "the same for the limit (theory_error − theory_floor)"),
        Quote("floor_slope_last_two", fixed(trained_two, 2),
              "the slope of the trained weights' floor over the last two N, mean over seeds (trained_theory_floor)"),
        Quote("floor_slope_last_two_theory", fixed(theory_two, 2), "the same for the limit (theory_floor)"),
    ]
