"""Claims of Zhang, Frei, Bartlett 2024, Theorem 4, on the lsa_convergence cube: u₋₁U₁₁ → Γ⁻¹."""

import numpy as np

from iclab.claims import Claim, Estimate, over_seeds

SOURCE = "Zhang, Frei, Bartlett 2024, Theorem 4"
WITHIN = 0.1  # the claim: within 10% of Γ⁻¹ (relative Frobenius distance)


def claims(cube):
    rows = []
    for spectrum in cube.spectrum.values:
        at = cube.sel(spectrum=spectrum)
        time = float(at.flow_time[-1])
        flow = float(at.flow_distance.isel(flow_time=-1))
        sgd = np.log(at.sgd_distance.isel(snapshot_time=-1))  # geometric mean over seeds, as the figure
        log_sgd = over_seeds(sgd)
        rows += [
            Claim(f"gradient flow (the reduced ODE) brings u₋₁U₁₁ within {WITHIN:.0%} of Γ⁻¹ by t = {time:g} "
                  f"({spectrum} spectrum)", SOURCE, Estimate(flow), "<", Estimate(WITHIN),
                  "deterministic ODE: no interval"),
            Claim(f"SGD on sampled prompts brings u₋₁U₁₁ within {WITHIN:.0%} of Γ⁻¹ ({spectrum} spectrum; "
                  "geometric mean over seeds)", SOURCE, Estimate(float(np.exp(log_sgd.value)),
                  float(np.exp(log_sgd.value)) * (np.exp(log_sgd.half_width) - 1)), "<", Estimate(WITHIN),
                  "95% band over seeds (of the log distance)"),
        ]
    return rows
