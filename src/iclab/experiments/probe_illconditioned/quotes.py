"""The numbers the docs quote from the probe_illconditioned cube (Fu, Chen, Jia, Sharan 2024, §5): the GPT-2 trained at
κ(Σ) = 100 (the cube's first condition number) and the same GPT-2 config trained at κ = 1 (``well_conditioned``):
each one's best-matching Newton iteration and GD step count per layer (probe_similarity's, the figure's), their last
layer's counts, its Similarity of Errors with least squares and online GD, and the output's similarities."""

import numpy as np
import xarray as xr

from iclab.experiments.probe_illconditioned.claims import WELL_CONDITIONED
from iclab.experiments.probe_similarity.quotes import (
    GRIDS,
    NAMES,
    best_counts,
    count,
    counts,
    last_layer,
    model_layers,
    output_row,
)
from iclab.report.quotes import Quote, listed, signed


def run_quotes(model: xr.Dataset, prefix: str, what: str) -> list[Quote]:
    """One run's best counts per layer (mean over seeds) and at its last layer, for Newton and GD."""
    found = []
    for algorithm in GRIDS:
        best = best_counts(model, algorithm)  # (layer,)
        found += [Quote(f"{prefix}{algorithm}_by_layer", counts(best),
                        f"{what}: the best-matching {NAMES[algorithm]} by layer 0–{int(model.layer.max())}, "
                        f"Similarity of Errors averaged over seeds (soe_{algorithm})"),
                  Quote(f"{prefix}{algorithm}_last_layer", count(best[-1]), f"{what}: the same at the last layer")]
    return found


def against_well(at: xr.Dataset, well: xr.Dataset, kappa: float) -> list[Quote]:
    """Layer by layer, the κ run's best Newton count minus the κ = 1 run's, and its GD count over theirs."""
    newton = best_counts(at, "newton") - best_counts(well, "newton")  # (layer,)
    gd = best_counts(at, "gd") / best_counts(well, "gd")  # (layer,)
    return [Quote("newton_minus_well_by_layer", listed(newton, lambda v: signed(count(v))),
                  f"the best-matching Newton iterations at κ = {kappa:g} minus those at κ = {WELL_CONDITIONED:g}, "
                  "by layer (soe_newton)"),
            Quote("gd_over_well_by_layer", listed(gd, lambda v: f"{v:g}"),
                  f"the best-matching GD steps at κ = {kappa:g} over those at κ = {WELL_CONDITIONED:g}, by layer "
                  "(soe_gd)"),
            Quote("gd_over_well_largest", f"{np.nanmax(gd):g}", "the same, its largest over the layers")]


def quotes(cube) -> list[Quote]:
    kappa = float(cube.condition_number[0])
    at = model_layers(cube.isel(condition_number=0, d=0, probed=0))
    found = [*run_quotes(at, "", f"κ = {kappa:g}"), *last_layer(at, "", f"κ = {kappa:g}"),
             *output_row(at, "", f"κ = {kappa:g}")]
    if WELL_CONDITIONED in cube.condition_number.values[1:]:
        well = model_layers(cube.sel(condition_number=WELL_CONDITIONED).isel(d=0, probed=0))
        what = f"the same GPT-2 config trained at κ = {WELL_CONDITIONED:g} (well_conditioned)"
        found += [*run_quotes(well, "well_", what), *last_layer(well, "well_", what), *against_well(at, well, kappa)]
    return found
