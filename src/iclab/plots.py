"""Shared plotting helpers (torch-free): seaborn's theme, tidy frames of a cube's mean and band over seeds, lines
with their bands for seaborn's axes and facet grids, learner labels, atomic PNG + PDF output.

The bands are iclab's own (``iclab.intervals.band``: Student-t over seeds, with the evaluation's standard errors),
drawn explicitly: seaborn's bootstrap intervals over 2–3 seeds are not the intervals the figures promise.
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import xarray as xr

from iclab.atomic import atomic_write
from iclab.intervals import band

LEARNER_LABELS = {
    "lsa": "LSA (trained)",
    "ltb": "LTB (trained)",
    "gd_beta": "GD-β (trained)",
    "gpt2": "GPT-2 (trained)",
    "gpt2_nomlp": "GPT2-noMLP (trained)",
    "two_stage": "two-stage transformer (pretrained)",
    "krr": "kernel ridge (test prompt only)",
    "two_layer_net": "two-layer net, GD (test prompt only)",
    "bayes": "Bayes posterior mean",
    "gd_beta_optimal": "GD-β at (β*, Γ*)",
    "lsa_optimal": "LSA at the class's optimum",
    "lsa_limit": "LSA at its limit A (Γ⁻¹ or K; fixed weights)",
    "ridge": "ridge",
    "ols": "least squares",
    "zero": "zero",
    "online_gd": "online GD (step 1/‖x‖²)",
    "attention": "attention: μ and Γ jointly (trained)",
    "static": "static: min over Γ, two-timescale (trained)",
    "modified": "modified: static + birth–death + perturbation (trained)",
    "teacher_attention": "teacher features f°, Γ* (oracle; the class optimum when k = k°)",
    "random_features_ridge": "ridge on random features (test prompt only)",
    "feature_attention": "MLP features + linear attention (pretrained)",
    "basis_bayes": "Bayes posterior mean, known basis f° (oracle)",
}


# One colour per learner in every figure, from seaborn's colour-blind palette (index into it; "0.x" a grey): the
# learners that share a figure (an experiment's models and baselines) get different colours (tests/test_plots.py),
# learners that never meet may share one.
LEARNER_COLOUR_INDEX = {
    "lsa": 0, "ltb": 1, "gd_beta": 2, "gpt2": 3, "gpt2_nomlp": 4, "ridge": 5, "ols": 6, "bayes": "0.35",
    "gd_beta_optimal": 9, "lsa_optimal": 8, "lsa_limit": 8, "zero": 7, "online_gd": 9,
    "two_stage": 0, "krr": 5, "two_layer_net": 6, "random_features_ridge": 4,
    "attention": 0, "static": 2, "modified": 3, "teacher_attention": "0.35",
    "feature_attention": 0, "basis_bayes": "0.35",
}


def learner_colours(names, by_label: bool = False) -> dict:
    """Each learner's colour (``LEARNER_COLOUR_INDEX``), keyed by name or, ``by_label``, by its LEARNER_LABELS text;
    a learner not listed there gets the palette's grey."""
    palette = sns.color_palette("colorblind", 10)
    index = {name: LEARNER_COLOUR_INDEX.get(name, 7) for name in names}
    chosen = {name: i if isinstance(i, str) else palette[i] for name, i in index.items()}
    return {LEARNER_LABELS.get(name, name) if by_label else name: colour for name, colour in chosen.items()}


# One size of text in every figure (labels, ticks, legends, panel titles, notes) and one for the figure's title: read
# at the gallery's width (1400 px) the figures' 13–17 inches shrink about twice, and seaborn's paper sizes (8–9.6 pt)
# with a figure's own 6.5–7 pt legends became unreadable. ``save`` refuses any other size.
TEXT_SIZE, TITLE_SIZE = 11.0, 13.0
TEXT_ROLES = ("font.size", "axes.labelsize", "axes.titlesize", "xtick.labelsize", "ytick.labelsize",
              "legend.fontsize", "legend.title_fontsize")


def theme() -> None:
    """seaborn's paper theme: white grid, colour-blind palette, TEXT_SIZE for all text but the figure's title."""
    sizes = dict.fromkeys(TEXT_ROLES, TEXT_SIZE) | {"figure.titlesize": TITLE_SIZE}
    sns.set_theme(context="paper", style="whitegrid", palette="colorblind", rc={"lines.markeredgewidth": 1.2, **sizes})


def colours(levels, palette: str = "colorblind") -> dict:
    """One colour of seaborn's ``palette`` per level, in order (a sequential palette for ordered sweeps)."""
    levels = list(levels)
    return dict(zip(levels, sns.color_palette(palette, len(levels))))


def seed_bands(values: xr.DataArray, sems: xr.DataArray | None = None, scale: float = 1.0) -> pd.DataFrame:
    """Tidy frame of ``values``' mean over ``seed`` and its band: one row per point of the other dimensions, their
    coordinates as columns, then ``mean``, ``low``, ``high`` (``iclab.intervals.band``), each divided by ``scale``."""
    values = values.transpose(..., "seed")
    dims = values.dims[:-1]
    stats = band(values.values, None if sems is None else sems.transpose(*values.dims).values)
    frame = xr.Dataset(
        {name: (dims, stat / scale) for name, stat in zip(("mean", "low", "high"), stats)},
        coords={dim: values[dim].values for dim in dims},
    )
    return frame.to_dataframe().reset_index()


def log_seed_bands(values: xr.DataArray, scale: float = 1.0) -> pd.DataFrame:
    """``seed_bands`` for a log axis: the geometric mean of ``values / scale`` over ``seed`` and the band of its
    log₁₀ (``iclab.intervals.band`` over the seeds' logs), back on the values' scale. Where seeds differ by decades
    an arithmetic band runs below zero, off a log axis; this one stays a band around the geometric mean."""
    frame = seed_bands(np.log10(values / scale))
    frame[["mean", "low", "high"]] = 10.0 ** frame[["mean", "low", "high"]]
    return frame


def lines_with_bands(
    data: pd.DataFrame,
    x: str,
    hue: str | None = None,
    palette: dict | None = None,
    color=None,
    label: str | None = None,
    ax: plt.Axes | None = None,
    floor: float | None = None,
    alpha: float = 0.2,
    **line,
) -> None:
    """seaborn lines of ``data``'s ``mean`` against ``x``, one per ``hue`` level coloured by ``palette`` (a dict; or
    one line in ``color`` named ``label``), each over its band (``low``–``high``) in the same colour, cut at ``floor``
    on a log axis. The axes keep their labels, and no legend is drawn: ``ax.legend()`` then lists the lines. Also the
    function that ``FacetGrid.map_dataframe`` calls for each facet."""
    ax = ax or plt.gca()
    if hue is None:
        color = color or "C0"
        line |= {"color": color, "label": label}
    labels = ax.get_xlabel(), ax.get_ylabel()
    sns.lineplot(data=data, x=x, y="mean", hue=hue, palette=palette, ax=ax, estimator=None, errorbar=None,
                 sort=False, **line)
    if ax.legend_ is not None:
        ax.legend_.remove()  # its entries stay: the caller draws the legend the panel needs
    ax.set(xlabel=labels[0], ylabel=labels[1])
    for level, group in [(None, data)] if hue is None else data.groupby(hue, sort=False):
        low, high = group["low"], group["high"]
        if floor is not None:
            low, high = np.maximum(low, floor), np.maximum(high, floor)
        ax.fill_between(group[x], low, high, color=color if hue is None else palette[level], alpha=alpha, linewidth=0)


def check_text(fig: plt.Figure) -> None:
    """Every visible text of ``fig`` at TEXT_SIZE (its title at TITLE_SIZE) and in words: no config key or raw TeX
    (``_``, ``^``; matplotlib's own ``$…$`` tick labels aside), else a ValueError naming the text."""
    for text in fig.findobj(matplotlib.text.Text):
        words, size = text.get_text(), text.get_fontsize()
        if not text.get_visible() or not words.strip():
            continue
        if size not in (TEXT_SIZE, TITLE_SIZE):
            raise ValueError(f"text {words!r} at {size:g} pt: every figure's text is {TEXT_SIZE:g} pt, "
                             f"its title {TITLE_SIZE:g} pt (iclab.plots.theme); drop the fontsize argument")
        if not words.startswith("$") and ("_" in words or "^" in words):
            raise ValueError(f"text {words!r}: a config key or raw TeX on a figure; write it in words")


def shows_finite_data(ax: plt.Axes) -> bool:
    """Whether a panel draws any finite data: a line, a band or markers, a bar, or an image (heatmap)."""
    arrays = [line.get_xydata() for line in ax.get_lines()]
    arrays += [values(image) for image in ax.images]
    arrays += [collection_data(collection) for collection in ax.collections]
    arrays += [np.array([[patch.get_height()]]) for patch in ax.patches]
    return any(np.isfinite(a).all(axis=-1).any() for a in arrays if np.size(a))


def collection_data(collection: matplotlib.collections.Collection) -> np.ndarray:
    """What a collection draws: a heatmap's cell values (its mesh is finite whatever they are), a scatter's points
    (its path is the marker's), else its paths' vertices (a band's or an error bar's; NaN parts are dropped)."""
    if isinstance(collection, matplotlib.collections.QuadMesh):
        return values(collection)
    if isinstance(collection, matplotlib.collections.PathCollection):
        return np.asarray(collection.get_offsets())
    return np.concatenate([path.vertices for path in collection.get_paths()] or [np.empty((0, 2))])


def values(mappable: matplotlib.cm.ScalarMappable) -> np.ndarray:
    """A colour-mapped artist's values as a column of floats, masked ones NaN."""
    return np.ma.filled(np.ma.asarray(mappable.get_array(), dtype=float), np.nan).reshape(-1, 1)


def check_panels(fig: plt.Figure) -> None:
    """Every panel of ``fig`` (an axes with its axis on: a legend's or a note's are off; colour bars aside) draws
    finite data, else a ValueError naming the blank panels: a panel whose values are all NaN is not drawn empty."""
    panels = [ax for ax in fig.axes if ax.get_label() != "<colorbar>" and ax.axison]
    blank = [ax.get_title() or f"panel {i + 1}" for i, ax in enumerate(panels) if not shows_finite_data(ax)]
    if blank:
        raise ValueError(f"blank panels {blank}: no finite value to draw (all NaN in the cube, or nothing plotted)")


def save(fig: plt.Figure, png: str | os.PathLike) -> None:
    """Write ``png`` and the .pdf beside it, each atomically, after check_text and check_panels."""
    check_text(fig)
    check_panels(fig)
    png = Path(png)
    for path in (png, png.with_suffix(".pdf")):
        atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=150, bbox_inches="tight"))
    plt.close(fig)


def log_positions(m_max: int, count: int = 25) -> np.ndarray:
    return np.unique(np.geomspace(1, m_max, count).round().astype(int))


def loglog_slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of log y against log x."""
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])
