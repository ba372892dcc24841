"""Claims of Zhang, Wu, Bartlett 2024, Theorem 6.3, on the gdbeta_flow cube."""

from iclab.claims import Claim, Estimate

SOURCE = "Zhang, Wu, Bartlett 2024, Theorem 6.3"
ROUNDING = 1e-6  # relative: what float64 integration and float32 training leave of an exact zero


def claims(cube):
    start, end = cube.flow_excess.isel(flow_time=0), cube.flow_excess.isel(flow_time=-1)
    time = float(cube.flow_time[-1])
    rows = [
        Claim(f"gradient flow reaches the global minimum: largest excess risk at t = {time:g} over its start "
              f"({cube.sizes['case']} cases × {cube.sizes['seed']} starts)", SOURCE,
              Estimate(float((abs(end) / start).max())), "≤", Estimate(0.0),
              f"exact limit 0; slack {ROUNDING:g} (numerical integration)", slack=ROUNDING),
    ]
    deficient = cube.case[cube.image_rank < cube.dimension]
    if deficient.size:
        at = cube.sel(case=deficient)
        drift = float(at.sgd_drift.isel(snapshot_time=-1).max())
        scale = float(abs(at.sgd_distance.isel(snapshot_time=0)).max())
        rows.append(Claim(f"SGD leaves the part of (β₀, Γ) on the kernel of H where it started "
                          f"({', '.join(deficient.values)}: largest drift over the starting distance)", SOURCE,
                          Estimate(drift / scale), "≤", Estimate(0.0),
                          f"exact 0; slack {ROUNDING:g} (float32 rounding)", slack=ROUNDING))
    return rows
