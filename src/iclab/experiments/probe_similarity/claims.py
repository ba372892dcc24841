"""Claims of Fu, Chen, Jia, Sharan 2024, §4 (their Def. 3.4 and reported similarities), on the probe_similarity
cube (its first d). Similarities are means over the evaluation prompts and best counts argmaxes over the iteration
grid; their intervals come from a bootstrap over groups of prompts (the same draws for both sides
of a comparison) and a t over the seeds. A best count at the grid's end is censored (the best may lie beyond it)."""

import numpy as np
import xarray as xr

from iclab.stats.claims import Claim
from iclab.stats.estimates import Estimate, bootstrapped, has, over_seeds

SOURCE = "Fu, Chen, Jia, Sharan 2024"
BASIS = "bootstrap over prompt groups (percentile, paired draws) and t over seeds"
NO_GROUPS = "per seed (t); this cube has no prompt groups, so the prompts' error is left out"


def similarity(cube: xr.Dataset, name: str, **point) -> tuple[xr.DataArray, xr.DataArray | None]:
    """``cube[name]`` at ``point`` (seed, and the grid if it has one) and its values per group of prompts (None
    where the cube has none), each with a ``grid`` axis (of one count where the algorithm has no grid)."""
    values = cube[name].sel(point)
    groups = cube[f"{name}_groups"].sel(point) if f"{name}_groups" in cube else None
    if len(values.dims) == 1:  # seed only: online GD, least squares
        values = values.expand_dims(grid=[0], axis=-1)
        groups = None if groups is None else groups.expand_dims(grid=[0], axis=-2)
    return values, groups


def statistic(values: xr.DataArray, groups: xr.DataArray | None, stat) -> Estimate:
    """``stat`` ((..., J) → (...)) of the similarities over their grid, per seed, with a bootstrap interval over
    prompt groups and seeds (over seeds only, t, where the cube has no groups)."""
    grid = values.dims[-1]
    if groups is not None:
        return bootstrapped(groups.transpose("seed", grid, "prompt_group"), stat)
    return over_seeds(xr.apply_ufunc(stat, values, input_core_dims=[[grid]]))


def best_count(values: xr.DataArray, groups: xr.DataArray | None) -> tuple[Estimate, tuple[str, ...]]:
    """The best-matching count over the grid (``values``: seed, grid), and a note where some seed's is censored."""
    grid = np.asarray(values[values.dims[-1]])
    estimate = statistic(values, groups, lambda x: grid[np.argmax(x, axis=-1)])
    censored = sum(v == grid.max() for v in estimate.per_seed)
    note = (f"censored: {censored} seed(s) best at the grid's end ({grid.max():g}), the true best may be larger",)
    return estimate, note * bool(censored)


def basis(cube: xr.Dataset) -> str:
    return BASIS if "soe_newton_groups" in cube else NO_GROUPS


def output_similarity(cube, probed: str, algorithm: str) -> Estimate:
    """The output's highest Similarity of Errors over the algorithm's grid."""
    return statistic(*similarity(cube, f"output_soe_{algorithm}", probed=probed), lambda x: np.max(x, axis=-1))


def claims(cube):
    at = cube.isel(d=0)
    last = int(at.layer.max())
    rows = []
    if has(at, probed="gpt2", layer=1):
        for name, algorithm, paper in (("Newton iteration", "newton", "paper 21 against 1"),
                                       ("GD step", "gd", "paper ~4 at layer 3, 1024–2048 at layer 9")):
            top, note = best_count(*similarity(at, f"soe_{algorithm}", probed="gpt2", layer=last))
            first, _ = best_count(*similarity(at, f"soe_{algorithm}", probed="gpt2", layer=1))
            rows.append(Claim(f"the best-matching {name} count grows with depth (GPT-2 layer {last} against layer 1; "
                              f"{paper})", f"{SOURCE}, §4, Def. 3.4", top, ">", first, basis(at), notes=note))
    if has(at, probed="gpt2"):
        rows.append(Claim(
            "GPT-2's output is more similar to Newton than to online GD (paper 0.991 against 0.806)", f"{SOURCE}, §4",
            output_similarity(at, "gpt2", "newton"), ">", output_similarity(at, "gpt2", "online_gd"), basis(at)))
    if has(at, probed="lstm"):
        rows.append(Claim(
            "the LSTM's output is more similar to online GD than to Newton (paper 0.954 against 0.920)",
            f"{SOURCE}, §4", output_similarity(at, "lstm", "online_gd"), ">",
            output_similarity(at, "lstm", "newton"), basis(at)))
    return rows
