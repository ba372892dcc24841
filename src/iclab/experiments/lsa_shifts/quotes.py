"""The numbers the docs quote from the lsa_shifts cube: the trained LSA's error at M = N at the smallest and the largest
covariate scale c, and the fitted exponent in c of its gain (the c² law, an identity of the limit)."""

from iclab.experiments.lsa_shifts.figure import covariate_conditions
from iclab.report.plots import loglog_slope
from iclab.report.quotes import Quote, fixed, significant


def error_at_n(cube, condition: str) -> float:
    """The trained LSA's error at M = N under ``condition``, mean over seeds."""
    n = int(cube.train_n.sel(condition=condition))
    return float(cube.risk.sel(condition=condition, learner="lsa", position=n).mean("seed"))


def gain_exponent(cube) -> float:
    """The slope of the LSA's log gain (mean over seeds) against log c, as the figure's title."""
    conditions, scales = covariate_conditions(cube)
    return loglog_slope(scales, cube.lsa_gain.sel(condition=conditions).mean("seed").values)


def quotes(cube) -> list[Quote]:
    conditions, scales = covariate_conditions(cube)  # in increasing c
    base, top = str(conditions[0]), str(conditions[-1])
    return [
        Quote("lsa_error_top_scale", fixed(error_at_n(cube, top), 0),
              f"the trained LSA's error at M = N under covariate scaling c = {scales[-1]:g}, mean over seeds (risk)"),
        Quote("lsa_error_base_scale", significant(error_at_n(cube, base), 3),
              f"the same at c = {scales[0]:g}"),
        Quote("gain_exponent", fixed(gain_exponent(cube), 3),
              "the fitted exponent of the LSA's gain E[ŷy]/E[y²] in c, mean over seeds (lsa_gain)"),
    ]
