"""Claims of Fu, Chen, Jia, Sharan 2024, §5 (hidden size), on the probe_hidden_size cube (its first d): 1-head
GPT-2s of several widths against least squares, exact past d examples."""

from iclab.stats.claims import NULL_FRACTION, NULL_SOURCE, ONE_EDGE, Claim
from iclab.stats.estimates import exact, has, over_seeds, zero_predictor_risk

SOURCE = "Fu, Chen, Jia, Sharan 2024, §5"
BASIS = "error past d examples per seed (t) and evaluation prompts (normal); least squares is exact there"


def claims(cube):
    at = cube.isel(d=0)
    narrow, wide = int(at.hidden.min()), int(at.hidden.max())
    if not has(at, learner="ols"):
        return []
    null = zero_predictor_risk(at.risk.sel(learner="ols"))

    def tail(hidden: int):
        return over_seeds(at.tail_risk.sel(hidden=hidden), at.tail_risk_sem.sel(hidden=hidden))

    near = f"within {NULL_FRACTION:.0%} of the zero predictor's error {null:.3g}"
    return [
        Claim(f"the narrowest 1-head GPT-2 (hidden {narrow}) stays away from least squares past d examples ({near} "
              "is not reached)", SOURCE, tail(narrow), ">", exact(0.0), BASIS, NULL_FRACTION * null, NULL_SOURCE),
        Claim(f"the widest (hidden {wide}) reaches least squares past d examples ({near})", SOURCE, tail(wide), "≈",
              exact(0.0), BASIS, NULL_FRACTION * null, NULL_SOURCE, notes=(ONE_EDGE.format("least squares' exact 0"),)),
    ]
