"""Claims of Zhang, Frei, Bartlett 2024, Theorem 5, on the lsa_rates cube. (That the measured error is Theorem 5's
error of the same trained weights is an identity of Monte Carlo: tests/test_workflow.py checks it.)"""

import numpy as np
import xarray as xr

from iclab.stats.claims import REACHES, REACHES_SOURCE, Claim, reaches_limit
from iclab.stats.estimates import exact, groups_at, has, over_seeds

SOURCE = "Zhang, Frei, Bartlett 2024, Theorem 5"


def slope(floor: xr.DataArray) -> xr.DataArray:
    """Least-squares slope of log(floor) against log N (over the cube's n), per remaining index."""
    x = np.log(floor.n.astype(float))
    y = np.log(floor)
    return ((x - x.mean()) * (y - y.mean("n"))).sum("n") / ((x - x.mean()) ** 2).sum()


def claims(cube):
    n, m = int(cube.n.max()), int(cube.position.max())
    at = cube.sel(n=n).isel(position=-1)

    def risk(learner: str):
        point = at.sel(learner=learner)
        return over_seeds(point.risk, point.risk_sem, prompts=f"lsa_rates N={n}", groups=groups_at(point))

    rows = [
        reaches_limit(f"the trained LSA's error is that of the limit A = Γ⁻¹ (N = {n}, M = {m})", SOURCE,
                      risk("lsa"), exact(float(at.theory_error)), "measured risk per seed (t)",
                      risk("lsa_limit") if has(at, learner="lsa_limit") else None),
    ]
    if cube.sizes["n"] > 1:
        grid = ", ".join(str(int(v)) for v in cube.n.values)
        limit_slope = exact(float(slope(cube.theory_floor)))
        rows.append(
            Claim(f"the M → ∞ floor of the trained weights falls with N at the limit's rate (slope of log floor "
                  f"against log N over N = {grid}; 1/N² asymptotically)", SOURCE,
                  over_seeds(slope(cube.trained_theory_floor)), "≈", limit_slope,
                  "fitted slope per seed (t); the limit's slope on the same grid (exact)",
                  REACHES * abs(limit_slope.value), REACHES_SOURCE)
        )
    return rows
