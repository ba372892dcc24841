"""The numbers the docs quote from the probe_layers cube (Fu, Chen, Jia, Sharan 2024, §4): each probed model's
readout error per layer and its own output's, as error/d and mean over seeds (the figure's lines), at the last query
and over the positions past d examples (the claims' tail, k ≥ d, where least squares is exact), and how far GPT-2's
last layer's readout is from its output there."""

import numpy as np
import xarray as xr

from iclab.experiments.probe_layers import PROBED_NAMES
from iclab.report.quotes import Quote, kept, listed, percent


def last_query(risk: xr.DataArray, d: int) -> xr.DataArray:
    """The error at the last position (risk: (..., position) → (...))."""
    return risk.isel(position=-1)


def past_d(risk: xr.DataArray, d: int) -> xr.DataArray:
    """The mean error over the positions k ≥ d, the claims' ``tail`` (risk: (..., position) → (...))."""
    return risk.sel(position=risk.position >= d).mean("position")


PLACES = {"last_query": (last_query, "at the last query"),
          "past_d": (past_d, "mean over the positions past d examples")}


def probed_quotes(at: xr.Dataset, label: str) -> list[Quote]:
    """One probed model's readout error/d by layer and its output's, mean over seeds, at each of ``PLACES``."""
    d, name = int(at.d), PROBED_NAMES.get(label, label)
    probe = at.probe_risk.sel(probed=label).mean("seed") / d  # (layer, position)
    probe = probe.sel(layer=np.isfinite(probe).all("position").values)  # this model's layers, as the figure
    output = at.risk.sel(learner=label).mean("seed") / d  # (position,)
    found = []
    for place, (reduce, said) in PLACES.items():
        found += [Quote(f"{label}_probe_{place}", listed(reduce(probe, d).values, kept),
                        f"{name}'s readout error/d by layer 0–{int(probe.layer.max())}, {said}, mean over seeds "
                        "(probe_risk)"),
                  Quote(f"{label}_output_{place}", kept(reduce(output, d)),
                        f"{name}'s own output's error/d, {said}, mean over seeds (risk)")]
    return found


def last_layer_last_query(at: xr.Dataset) -> Quote:
    """GPT-2's last layer's readout error/d at the last query, mean over seeds."""
    probe = last_query(at.probe_risk.sel(probed="gpt2").isel(layer=-1).mean("seed"), int(at.d)) / int(at.d)  # ()
    return Quote("gpt2_last_layer_last_query", kept(probe),
                 "GPT-2's last layer's readout error/d at the last query, mean over seeds (probe_risk)")


def last_layer_above_output(at: xr.Dataset) -> Quote:
    """GPT-2's last layer's readout error past d examples over its output's, minus 1 (each mean over seeds)."""
    d = int(at.d)
    probe = past_d(at.probe_risk.sel(probed="gpt2").isel(layer=-1).mean("seed"), d)  # ()
    output = past_d(at.risk.sel(learner="gpt2").mean("seed"), d)  # ()
    return Quote("gpt2_last_layer_above_output", percent(float(probe / output - 1), 1),
                 "GPT-2's last layer's readout error past d examples above its own output's, each mean over seeds "
                 "(probe_risk against risk)")


def quotes(cube) -> list[Quote]:
    at = cube.isel(d=0)
    found = [quote for label in at.probed.values for quote in probed_quotes(at, str(label))]
    return found + ([last_layer_last_query(at), last_layer_above_output(at)] if "gpt2" in at.probed.values else [])
