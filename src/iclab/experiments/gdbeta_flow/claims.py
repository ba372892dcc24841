"""Claims of Zhang, Wu, Bartlett 2024, Theorem 6.3, on the gdbeta_flow cube. (SGD's zero drift on the kernel of H
holds by construction, the gradient has no component there: tests/test_theory.py checks it.)"""

from iclab.stats.claims import REACHES, REACHES_SOURCE, Claim
from iclab.stats.estimates import exact, over_seeds

SOURCE = "Zhang, Wu, Bartlett 2024, Theorem 6.3"
ROUNDING = 1e-6  # relative: what float64 integration leaves of an exact zero


def claims(cube):
    start, end = cube.flow_excess.isel(flow_time=0), cube.flow_excess.isel(flow_time=-1)
    time = float(cube.flow_time[-1])
    cases = f"{cube.sizes['case']} cases"
    sgd_end = cube.sgd_excess.isel(snapshot_time=-1)  # population excess risk of the last SGD snapshot (exact)
    minimum = cube.query_risk.isel(learner=0) - sgd_end  # R* = the last snapshot's risk − its excess
    return [
        Claim(f"gradient flow reaches the global minimum: largest excess risk at t = {time:g} over its start "
              f"({cases} × {cube.sizes['seed']} starts)", SOURCE, exact(float((abs(end) / start).max())), "≤",
              exact(0.0), "deterministic: the flow integrated in float64", ROUNDING,
              f"numerical integration (relative {ROUNDING:g})", verification=True),
        Claim(f"SGD reaches the global minimiser too: its excess risk at the end of training over R* (largest of "
              f"{cases}, per seed)", SOURCE, over_seeds((sgd_end / minimum).max("case")), "≤", exact(REACHES),
              "exact excess risk of each seed's last snapshot (t over seeds); R* from its evaluation risk"),
    ]
