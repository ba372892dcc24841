"""The numbers the docs quote from the probe_similarity cube (Fu, Chen, Jia, Sharan 2024, §4): each probed model's
best-matching Newton iteration and GD step count per layer by Similarity of Errors (the figure's: ``best_match`` of
the mean over seeds, and per seed), how they grow layer by layer from layer 1, the last layer's similarity with
least squares and online GD (the figure's titles), and the output's similarities of the table (their Table 1), beside
which the table prints the paper's rows (``table.PAPER``: quoted too, so that a page writes them as the table does)."""

import numpy as np
import xarray as xr

from iclab.experiments.probe_layers import PROBED_NAMES
from iclab.experiments.probe_similarity.table import ALGORITHMS, PAPER
from iclab.report.quotes import Quote, fixed, listed
from iclab.learners.similarity import best_match

GRIDS = {"newton": "newton_iterations", "gd": "gd_steps"}
NAMES = {"newton": "Newton iterations", "gd": "GD steps"}
FIRST_LAYER = 1  # the claims' (and the growth's) first layer: layer 0 is the read-in


def model_layers(model: xr.Dataset) -> xr.Dataset:
    """``model`` on its own layers (those with a similarity; a shallower model's others are NaN), as the figure."""
    return model.sel(layer=np.isfinite(model.soe_ols.mean("seed")).values)


def best_counts(model: xr.Dataset, algorithm: str) -> np.ndarray:
    """The best-matching count of ``algorithm``'s grid per layer by Similarity of Errors (NaN: no match, flat),
    ``model``: (layer, grid) or (layer, grid, seed) averaged over seeds first, as the figure draws it."""
    grid = GRIDS[algorithm]
    similarity = model[f"soe_{algorithm}"]
    if "seed" in similarity.dims:
        similarity = similarity.mean("seed")
    similarity = similarity.transpose("layer", grid)  # (layer, count)
    return best_match(similarity.values, similarity[grid].values)  # (layer,)


def count(value: float) -> str:
    """A grid count as the docs write it (2048); 'none' for a layer with no match."""
    return "none" if np.isnan(value) else f"{value:.0f}"


def counts(values: np.ndarray) -> str:
    return listed(values, count)


def by_layer(model: xr.Dataset, prefix: str, what: str) -> list[Quote]:
    """Both algorithms' best counts per layer (mean over seeds) and one list per seed."""
    found = []
    for algorithm in GRIDS:
        found.append(Quote(f"{prefix}{algorithm}_by_layer", counts(best_counts(model, algorithm)),
                           f"{what}: the best-matching {NAMES[algorithm]} by layer 0–{int(model.layer.max())}, "
                           f"Similarity of Errors averaged over seeds (soe_{algorithm})"))
        found += [Quote(f"{prefix}{algorithm}_by_layer_seed{int(seed)}",
                        counts(best_counts(model.sel(seed=seed), algorithm)), f"the same, seed {int(seed)} alone")
                  for seed in model.seed.values]
    return found


def growth(model: xr.Dataset, prefix: str, what: str) -> list[Quote]:
    """How the best counts (mean over seeds) grow from layer ``FIRST_LAYER`` on: Newton's iterations added and GD's
    steps multiplied, layer by layer and on average (GD's a geometric mean)."""
    layers = model.layer.values >= FIRST_LAYER
    newton = best_counts(model, "newton")[layers]  # (layer ≥ 1,)
    gd = best_counts(model, "gd")[layers]
    spans = len(newton) - 1  # layers crossed from the first to the last
    last = int(model.layer.max())
    return [
        Quote(f"{prefix}newton_added", counts(np.diff(newton)),
              f"{what}: Newton iterations added from each layer to the next, layers {FIRST_LAYER}→{FIRST_LAYER + 1} "
              f"… {last - 1}→{last} (best counts of soe_newton averaged over seeds)"),
        Quote(f"{prefix}gd_multiplied", listed(gd[1:] / gd[:-1], lambda v: f"{v:g}"),
              f"{what}: the factor on GD's steps from each layer to the next, layers {FIRST_LAYER}→{FIRST_LAYER + 1} "
              f"… {last - 1}→{last} (soe_gd)"),
        Quote(f"{prefix}newton_per_layer", fixed((newton[-1] - newton[0]) / spans, 1),
              f"{what}: Newton iterations added per layer on average from layer {FIRST_LAYER} to {last}"),
        Quote(f"{prefix}gd_factor_per_layer", fixed((gd[-1] / gd[0]) ** (1 / spans), 1),
              f"{what}: GD's steps' factor per layer on average (geometric) from layer {FIRST_LAYER} to {last}"),
    ]


def last_layer(model: xr.Dataset, prefix: str, what: str) -> list[Quote]:
    """The last layer's Similarity of Errors with least squares and online GD, mean over seeds (the figure's title)."""
    top = model.isel(layer=-1).mean("seed")
    return [Quote(f"{prefix}last_layer_{algorithm}", fixed(top[f"soe_{algorithm}"], 3),
                  f"{what}: the last layer's Similarity of Errors with {name}, mean over seeds (soe_{algorithm})")
            for algorithm, name in (("ols", "least squares"), ("online_gd", "online GD"))]


def output_row(model: xr.Dataset, prefix: str, what: str) -> list[Quote]:
    """The table's row: the output's Similarity of Errors (mean over seeds) with Newton and GD at each one's best
    count, that count, and with online GD."""
    found = []
    for algorithm, grid in GRIDS.items():
        similarity = model[f"output_soe_{algorithm}"].mean("seed")  # (count,)
        found += [Quote(f"{prefix}output_{algorithm}", fixed(similarity.max(), 3),
                        f"{what}: the output's Similarity of Errors with {NAMES[algorithm].split()[0]} at its best "
                        f"count, mean over seeds (output_soe_{algorithm})"),
                  Quote(f"{prefix}output_{algorithm}_count", count(float(similarity.idxmax(grid))),
                        f"{what}: that best count ({NAMES[algorithm]})")]
    online = model.output_soe_online_gd.mean("seed")
    return found + [Quote(f"{prefix}output_online_gd", fixed(online, 3),
                          f"{what}: the output's Similarity of Errors with online GD, mean over seeds "
                          "(output_soe_online_gd)")]


def model_quotes(model: xr.Dataset, prefix: str, what: str) -> list[Quote]:
    """Every quote of one probed model (``model``: one probed, one d)."""
    model = model_layers(model)
    return [*by_layer(model, prefix, what), *growth(model, prefix, what), *last_layer(model, prefix, what),
            *output_row(model, prefix, what)]


def paper_rows() -> list[Quote]:
    """The paper's Table 1 rows as the table prints them beside the run's (not the cube's: their d = 20 models)."""
    keys = {"Newton": "newton", "GD": "gd", "online GD": "online_gd"}
    return [Quote(f"paper_{row['model'].split(',')[0].lower()}_{keys[algorithm]}", fixed(row[algorithm], 3),
                  f"the paper's value, not the cube's: {row['model']}, output Similarity of Errors with {algorithm} "
                  "(table.PAPER)")
            for row in PAPER for algorithm in ALGORITHMS]


def quotes(cube) -> list[Quote]:
    at = cube.isel(d=0)
    found = []
    for label in at.probed.values:
        found += model_quotes(at.sel(probed=label), f"{label}_", f"{PROBED_NAMES[str(label)]} (d = {int(at.d)})")
    return found + paper_rows()
