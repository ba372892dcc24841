"""The numbers the docs quote from the gdbeta_flow cube: how close the gradient flow ends to the minimiser, SGD's noise
floor (as the figure's dotted line computes it) and when it reaches it, SGD's end against R* (the claim's measure) and
the drift of the part of (β₀, Γ) on the kernel of H."""

import numpy as np

from iclab.report.quotes import Quote, fixed, listed, percent, significant, span


def noise_floor(cube, quantity: str):
    """SGD's mean over seeds averaged over the second half of its snapshots, the figure's dotted line: (case,)."""
    mean = cube[f"sgd_{quantity}"].mean("seed")  # (case, snapshot_time)
    return mean.isel(snapshot_time=slice(cube.sizes["snapshot_time"] // 2, None)).mean("snapshot_time")


def floor_reached(cube, quantity: str):
    """The first snapshot time at which SGD's mean over seeds is at or below its noise floor: (case,)."""
    mean = cube[f"sgd_{quantity}"].mean("seed")  # (case, snapshot_time)
    return (mean <= noise_floor(cube, quantity)).idxmax("snapshot_time")


def sgd_end_over_minimum(cube) -> float:
    """The claim's measure: the last SGD snapshot's excess risk over R*, the largest case, mean over seeds."""
    end = cube.sgd_excess.isel(snapshot_time=-1)  # (case, seed)
    minimum = cube.query_risk.isel(learner=0) - end  # (case, seed): R* = the last snapshot's risk − its excess
    return float((end / minimum).max("case").mean("seed"))


def kernel_drift(cube) -> float:
    """The largest drift from its start of the part on the kernel of H, flow's and SGD's, over the cases with one
    (0 where none has one)."""
    kernel = [case for case in cube.case.values
              if int(cube.image_rank.sel(case=case)) < int(cube.dimension.sel(case=case))]
    return max([float(np.abs(cube[f"{source}_drift"].sel(case=kernel)).max()) for source in ("flow", "sgd")]
               if kernel else [0.0])


def quotes(cube) -> list[Quote]:
    flow_end = cube.flow_distance.isel(flow_time=-1).max("seed")  # (case,): the farthest start's end
    time = float(cube.flow_time[-1])
    cases = ", ".join(str(case) for case in cube.case.values)
    return [
        Quote("flow_distance_end", listed(flow_end.values, lambda v: significant(v, 2)),
              f"the gradient flow's distance to the minimiser at t = {time:g}, the largest over seeds, for each case "
              f"({cases}; flow_distance)"),
        Quote("flow_distance_largest", significant(flow_end.max(), 2), "the same, the largest over the cases"),
        Quote("sgd_distance_floor", span(noise_floor(cube, "distance").values, lambda v: fixed(v, 2)),
              "SGD's distance to the minimiser, mean over seeds averaged over the second half of training, over the "
              "cases (sgd_distance)"),
        Quote("sgd_excess_floor", span(noise_floor(cube, "excess").values, lambda v: significant(v, 2)),
              "SGD's excess risk the same way, over the cases (sgd_excess)"),
        Quote("sgd_floor_reached", span(floor_reached(cube, "excess").values, lambda v: significant(v, 2)),
              "the first flow time at which SGD's excess risk, mean over seeds, is at or below that floor, over the "
              "cases"),
        Quote("sgd_end_over_minimum", percent(sgd_end_over_minimum(cube), 1),
              "SGD's excess risk at its last snapshot over R*, the largest case, mean over seeds (sgd_excess and "
              "query_risk; the claims row's measure)"),
        Quote("kernel_drift", significant(kernel_drift(cube), 2),
              "the largest drift from its start of the part of (β₀, Γ) on the kernel of H, flow's and SGD's "
              "(flow_drift, sgd_drift)"),
    ]
