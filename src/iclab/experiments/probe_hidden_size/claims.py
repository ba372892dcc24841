"""Claims of Fu, Chen, Jia, Sharan 2024, §5 (hidden size), on the probe_hidden_size cube (its first d)."""

from iclab.claims import Claim, Estimate, over_seeds

SOURCE = "Fu, Chen, Jia, Sharan 2024, §5"
BASIS = "95% band of the error past d examples (seeds, evaluation prompts); least squares is exact there"


def claims(cube):
    at = cube.isel(d=0)
    narrow, wide = int(at.hidden.min()), int(at.hidden.max())

    def tail(hidden: int):
        return over_seeds(at.tail_risk.sel(hidden=hidden), at.tail_risk_sem.sel(hidden=hidden))

    return [
        Claim(f"the narrowest 1-head GPT-2 (hidden {narrow}) stays above least squares past d examples",
              SOURCE, tail(narrow), ">", Estimate(0.0), BASIS),
        Claim(f"the widest (hidden {wide}) reaches least squares past d examples", SOURCE, tail(wide), "≈",
              Estimate(0.0), BASIS),
    ]
