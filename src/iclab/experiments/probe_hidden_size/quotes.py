"""The numbers the docs quote from the probe_hidden_size cube (Fu, Chen, Jia, Sharan 2024, §5): each 1-head GPT-2's
error/d past d examples (``tail_risk``: the claims' and the figure's panel b), its largest standard error, its error
at the last query, and the zero predictor's error/d they are read against; all means over seeds."""

import xarray as xr

from iclab.stats.estimates import zero_predictor_risk
from iclab.report.quotes import Quote, fixed, listed


def three_places(value: float) -> str:
    return fixed(value, 3)


def per_size(tail: xr.DataArray, last: xr.DataArray) -> list[Quote]:
    """Each hidden size's error/d past d examples and at the last query (tail, last: (hidden,))."""
    found = []
    for size in tail.hidden.values:
        found += [Quote(f"past_d_hidden{size}", three_places(tail.sel(hidden=size)),
                        f"error/d past d examples at hidden {size}, mean over seeds (tail_risk)"),
                  Quote(f"last_query_hidden{size}", three_places(last.sel(hidden=size)),
                        f"error/d at the last query at hidden {size}, mean over seeds (hidden_risk)")]
    return found


def quotes(cube) -> list[Quote]:
    at = cube.isel(d=0)
    d, sizes = int(at.d), ", ".join(str(size) for size in at.hidden.values)
    tail = at.tail_risk.mean("seed") / d  # (hidden,)
    last = at.hidden_risk.isel(position=-1).mean("seed") / d  # (hidden,)
    return [
        Quote("past_d", listed(tail.values, three_places),
              f"error/d past d examples (positions k > d) at hidden {sizes}, mean over seeds (tail_risk)"),
        Quote("past_d_sem", three_places(float((at.tail_risk_sem / d).max())),
              "the largest standard error of one seed's error/d past d examples over the evaluation prompts "
              "(tail_risk_sem)"),
        Quote("last_query", listed(last.values, three_places),
              f"error/d at the last query at hidden {sizes}, mean over seeds (hidden_risk)"),
        Quote("zero_predictor", three_places(zero_predictor_risk(at.risk.sel(learner="ols")) / d),
              "the zero predictor's error/d (least squares' risk at position 0; risk)"),
        *per_size(tail, last),
    ]
