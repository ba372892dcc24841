"""Claims of Zhang, Frei, Bartlett 2024, Theorem 4, on the lsa_convergence cube: u₋₁U₁₁ → Γ⁻¹."""

import numpy as np

from iclab.stats.claims import Claim
from iclab.stats.estimates import exact, log, over_seeds

SOURCE = "Zhang, Frei, Bartlett 2024, Theorem 4"
WITHIN = 0.1  # the claim: within 10% of Γ⁻¹ (relative Frobenius distance)


def claims(cube):
    rows = []
    for spectrum in cube.spectrum.values:
        at = cube.sel(spectrum=spectrum)
        time = float(at.flow_time[-1])
        flow = float(at.flow_distance.isel(flow_time=-1))
        sgd = over_seeds(at.sgd_distance.isel(snapshot_time=-1))
        rows += [
            Claim(f"gradient flow (the reduced ODE) brings u₋₁U₁₁ within {WITHIN:.0%} of Γ⁻¹ by t = {time:g} "
                  f"({spectrum} spectrum)", SOURCE, exact(flow), "<", exact(WITHIN), "deterministic ODE",
                  verification=True),
            Claim(f"SGD on sampled prompts brings u₋₁U₁₁ within {WITHIN:.0%} of Γ⁻¹ ({spectrum} spectrum; log of the "
                  "relative distance, geometric mean over seeds)", SOURCE, log(sgd), "<", exact(np.log(WITHIN)),
                  "log distance per seed (t)"),
        ]
    return rows
