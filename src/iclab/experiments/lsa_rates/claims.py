"""Claims of Zhang, Frei, Bartlett 2024, Theorem 5, on the lsa_rates cube."""

import numpy as np
import xarray as xr

from iclab.claims import Claim, over_seeds

SOURCE = "Zhang, Frei, Bartlett 2024, Theorem 5"


def slope(floor: xr.DataArray) -> xr.DataArray:
    """Least-squares slope of log(floor) against log N (over the cube's n), per remaining index."""
    x = np.log(floor.n.astype(float))
    y = np.log(floor)
    return ((x - x.mean()) * (y - y.mean("n"))).sum("n") / ((x - x.mean()) ** 2).sum()


def claims(cube):
    n, m = int(cube.n.max()), int(cube.position.max())
    at = cube.sel(n=n, learner="lsa").isel(position=-1)
    measured = over_seeds(at.risk, at.risk_sem)
    rows = [
        Claim(f"the trained LSA's error is Theorem 5's error of its own weights (N = {n}, M = {m})", SOURCE,
              measured, "≈", over_seeds(at.trained_theory_error),
              "95% bands of the measured risk (seeds, evaluation prompts) and of the exact error (seeds)"),
        Claim(f"the trained LSA's error is that of the limit A = Γ⁻¹ (N = {n}, M = {m})", SOURCE, measured, "≈",
              over_seeds(at.theory_error), "95% band of the measured risk (seeds, evaluation prompts); exact limit"),
    ]
    if cube.sizes["n"] > 1:
        rows.append(
            Claim(f"the M → ∞ floor of the trained weights falls with N at the limit's rate (slope of log floor "
                  f"against log N over N = {', '.join(str(int(v)) for v in cube.n.values)}; 1/N² asymptotically)",
                  SOURCE, over_seeds(slope(cube.trained_theory_floor)), "≈",
                  over_seeds(slope(cube.theory_floor)), "95% band over seeds of the fitted slope; exact limit")
        )
    return rows
