"""Shared plotting helpers (torch-free): seaborn's theme, tidy frames of a cube's mean and band over seeds, lines
with their bands for seaborn's axes and facet grids, learner labels, atomic PNG + PDF output.

The bands are iclab's own (``iclab.stats.intervals.band``: Student-t over seeds, with the evaluation's standard errors),
drawn explicitly: seaborn's bootstrap intervals over 2–3 seeds are not the intervals the figures promise.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import xarray as xr

from iclab.atomic import atomic_write, write_text
from iclab.report import legibility
from iclab.stats.intervals import band

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


# One size of text in every figure (labels, ticks, legends, panel titles, notes) and one for the figure's title:
# seaborn's paper sizes (8–9.6 pt) with a figure's own 6.5–7 pt legends became unreadable once shrunk to the width a
# page shows. ``save`` refuses any other size, and a figure whose text is too small at that width
# (``check_legibility``): at 11 pt and 150 dpi, a figure at most about 16 inches wide.
TEXT_SIZE, TITLE_SIZE = 11.0, 13.0
# the gallery's images (iclab.publish.gallery), pixels: GitHub shows a README image at most ~850 px wide
# (legibility.SHOWN_WIDTH, where the figures' text is measured); 1400 keeps it sharp when zoomed
GALLERY_WIDTH = 1400
DPI = 150
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


def colour_scale(ax: plt.Axes, palette: dict, label: str, most_ticks: int = 8) -> None:
    """A colour bar beside ``ax`` for an ordered ``palette`` (level → colour, as ``colours`` makes): one cell a
    level, labelled with the levels (at most ``most_ticks`` of them, evenly)."""
    levels = list(palette)
    cells = matplotlib.colors.ListedColormap([palette[level] for level in levels])
    norm = matplotlib.colors.BoundaryNorm(np.arange(len(levels) + 1) - 0.5, len(levels))
    ticks = np.unique(np.linspace(0, len(levels) - 1, min(most_ticks, len(levels))).round().astype(int))
    bar = ax.figure.colorbar(matplotlib.cm.ScalarMappable(norm=norm, cmap=cells), ax=ax, ticks=ticks, pad=0.02)
    bar.ax.set_yticklabels([f"{levels[i]:g}" if isinstance(levels[i], (int, float, np.number)) else str(levels[i])
                            for i in ticks])
    bar.set_label(label)


def tight_layout_above(fig: plt.Figure, legend: matplotlib.legend.Legend) -> None:
    """``fig.tight_layout`` over the part of the figure above ``legend`` (a figure legend at its foot), so that no
    axis label runs into the legend however many rows it takes."""
    fig.canvas.draw()
    fig.tight_layout(rect=(0, legend.get_window_extent().height / fig.bbox.height + 0.01, 1, 1))


def seed_bands(values: xr.DataArray, sems: xr.DataArray | None = None, scale: float = 1.0,
               log: bool = False) -> pd.DataFrame:
    """Tidy frame of ``values``' mean over ``seed`` and its band: one row per point of the other dimensions, their
    coordinates as columns, then ``mean``, ``low``, ``high`` (``iclab.stats.intervals.band``), each divided by
    ``scale``.

    ``log``, for a log axis: the line stays the arithmetic mean m and the band is multiplicative,
    m·exp(±h/m) with h the band's half-width (the delta method: s.e.(log m) ≈ s.e.(m)/m), so it never runs
    below zero where seeds differ by decades; its width on the log axis is the band's at first order."""
    values = values.transpose(..., "seed")
    dims = values.dims[:-1]
    mean, low, high = band(values.values, None if sems is None else sems.transpose(*values.dims).values)
    if log:
        factor = np.exp((high - mean) / np.abs(mean))  # (...): exp(h / m)
        low, high = mean / factor, mean * factor
    frame = xr.Dataset(
        {name: (dims, stat / scale) for name, stat in zip(("mean", "low", "high"), (mean, low, high))},
        coords={dim: values[dim].values for dim in dims},
    )
    return frame.to_dataframe().reset_index()


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
                             f"its title {TITLE_SIZE:g} pt (iclab.report.plots.theme); drop the fontsize argument")
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
    panels = panels_of(fig)
    blank = [ax.get_title() or f"panel {i + 1}" for i, ax in enumerate(panels) if not shows_finite_data(ax)]
    if blank:
        raise ValueError(f"blank panels {blank}: no finite value to draw (all NaN in the cube, or nothing plotted)")


def legends(fig: plt.Figure) -> list[tuple[matplotlib.legend.Legend, list[plt.Axes]]]:
    """Each legend of ``fig`` with the panels whose artists it lists: its own axes and their twins, or every panel
    for a figure's or one in a panel of its own (axis off)."""
    panels = panels_of(fig)
    found = [(ax.get_legend(), twins(ax, panels) if ax.axison else panels)  # an axis-off panel: a legend's place
             for ax in fig.axes if ax.get_legend() is not None]
    return found + [(legend, panels) for legend in fig.legends]


def twins(ax: plt.Axes, panels: list[plt.Axes]) -> list[plt.Axes]:
    """``ax`` and the panels drawn over it (a twin axis: the same place on the figure)."""
    place = ax.get_position().bounds
    return [ax] + [other for other in panels if other is not ax and other.get_position().bounds == place]


def styles_of(artist: matplotlib.artist.Artist) -> set[tuple]:
    """What a legend entry can show of an artist: its colours (RGB, alpha aside; every point's for a scatter) with
    its dashes (a line's; None for a marker, a band or a bar)."""
    if isinstance(artist, matplotlib.lines.Line2D):
        dashes = artist.get_linestyle() if artist.get_linestyle() not in ("None", "") else None
        colour = artist.get_color() if dashes else artist.get_markerfacecolor()
        if matplotlib.colors.to_rgba(colour)[3] == 0:  # an unfilled marker: its edge
            colour = artist.get_markeredgecolor()
        return {(tuple(np.round(matplotlib.colors.to_rgb(colour), 3)), dashes)}
    colours = np.atleast_2d(artist.get_facecolor())
    if not len(colours) or (colours[:, 3] == 0).all():  # unfilled markers or an outline: the edges
        colours = np.atleast_2d(artist.get_edgecolor())
    return {(tuple(np.round(colour[:3], 3)), None) for colour in colours}


def entry_drawn(handle: matplotlib.artist.Artist, styles: set[tuple]) -> bool:
    """Whether a legend entry's ``handle`` is drawn among ``styles`` (``styles_of`` the panel's artists): an artist of
    its colour; a neutral (grey) entry, a key to line styles, by its dashes, or as a marker by any marker."""
    [(colour, dashes), *_] = styles_of(handle)
    if len(set(colour)) > 1:
        return any(drawn == colour for drawn, _ in styles)
    return any(drawn == colour or (dashes is not None and drawn_dashes == dashes) or (dashes is drawn_dashes is None)
               for drawn, drawn_dashes in styles)


def data_artists(ax: plt.Axes) -> list[matplotlib.artist.Artist]:
    """The visible lines, collections and patches of a panel that draw finite data."""
    artists = [*ax.lines, *ax.collections, *ax.patches]
    return [artist for artist in artists if artist.get_visible() and np.size(artist_points(artist))]


def artist_points(artist: matplotlib.artist.Artist) -> np.ndarray:
    """An artist's finite points in display pixels (N, 2): a line's points and 16 between each two (its segments are
    straight on the display), a collection's offsets or vertices, a patch's corners."""
    if isinstance(artist, matplotlib.lines.Line2D):
        xy = artist.get_transform().transform(artist.get_xydata())
        xy = xy[np.isfinite(xy).all(axis=1)]
        if len(xy) > 1 and artist.get_linestyle() not in ("None", ""):
            t = np.linspace(0, 1, 17)[:-1, None, None]  # (16, 1, 1)
            xy = np.concatenate([(xy[:-1] + t * (xy[1:] - xy[:-1])).reshape(-1, 2), xy[-1:]])
        return xy
    if isinstance(artist, matplotlib.collections.PathCollection):
        xy = artist.get_offset_transform().transform(np.asarray(artist.get_offsets()))
    elif isinstance(artist, matplotlib.collections.Collection):
        xy = np.concatenate([artist.get_transform().transform(path.vertices) for path in artist.get_paths()]
                            or [np.empty((0, 2))])
    else:
        xy = artist.get_transform().transform(artist.get_path().vertices)
    return xy[np.isfinite(xy).all(axis=1)]


def check_legends(fig: plt.Figure) -> None:
    """Every legend entry of ``fig`` drawn in its panel (an artist there of the entry's colour, and dashes for a
    line), and no legend box over a panel's data (a line, marker, band, bar inside the box; a band whose outline
    encloses it), else a ValueError naming the entry or legend."""
    renderer = fig.canvas.get_renderer()
    for legend, panels in legends(fig):
        artists = {ax: data_artists(ax) for ax in panels}  # each panel's once, for both checks
        drawn = set().union(*(styles_of(artist) for found in artists.values() for artist in found))
        for handle, text in zip(legend.legend_handles, legend.get_texts()):
            if handle is not None and not entry_drawn(handle, drawn):
                raise LayoutProblem(f"legend entry {text.get_text()!r} is drawn nowhere in its panel: list only what "
                                 f"the panel shows")
        box = legend.get_window_extent(renderer).shrunk(0.98, 0.98)
        for ax, found in artists.items():
            inside = box.intersection(box, ax.get_window_extent(renderer))
            for artist in found if inside is not None else []:
                if overlaps(artist, inside):
                    label = ax.get_title() or ax.get_ylabel() or "a panel"
                    raise LayoutProblem(f"a legend box covers data of {label!r} ({artist.get_label() or artist}): "
                                     f"move it (loc=, bbox_to_anchor=) or outside the panels")


def overlaps(artist: matplotlib.artist.Artist, box: matplotlib.transforms.Bbox) -> bool:
    """Whether ``artist`` draws inside ``box`` (display pixels): a point of it there, or a band around the box."""
    points = artist_points(artist)
    if ((points > box.min) & (points < box.max)).all(axis=1).any():
        return True
    if isinstance(artist, matplotlib.collections.PolyCollection):
        corners = np.array([box.min, box.max, [box.x0, box.y1], [box.x1, box.y0]])
        return any(matplotlib.path.Path(path_xy).contains_points(corners).any()
                   for path_xy in (artist.get_transform().transform(path.vertices) for path in artist.get_paths()))
    return False


def check_legibility(fig: plt.Figure, dpi: float = DPI) -> None:
    """``fig`` saved at ``dpi`` legible where GitHub shows it (``iclab.report.legibility``, ``SHOWN_WIDTH`` px wide):
    its smallest font and the median height of its glyphs at least their thresholds there, and no text drawn over
    another, else a LayoutProblem saying which rule fails and by how much."""
    measures = legibility.legibility(fig, dpi)
    failed = legibility.rules_failed(measures)
    if failed:
        raise LayoutProblem(legibility.describe(measures, failed, dpi))


class LayoutProblem(ValueError):
    """A figure that draws its data but reads badly (a legend over data, text too small or drawn over other text at
    the width a page shows it, a flat panel, twin axes without a reason): an error where the figures are tested; in a workflow run
    (``recording_layout_problems``) written beside the figure, which is still drawn."""


PROBLEMS: list[Path] = []  # where save records layout problems instead of raising them (recording_layout_problems)


@contextmanager
def recording_layout_problems(path: Path) -> Iterator[None]:
    """Within it, ``save`` draws a figure whatever its layout problems and writes them to ``path`` (empty when none):
    a workflow run logs them and goes on to the claims table (the Snakefile's closing summary lists them)."""
    PROBLEMS.append(Path(path))
    try:
        yield
    finally:
        PROBLEMS.pop()


FLAT_REASON = "_iclab_flat_reason"  # an axes attribute: why a panel's data may be flat (declare_flat)
TWIN_REASON = "_iclab_twin_reason"


def declare_flat(ax: plt.Axes, reason: str) -> None:
    """Let ``ax`` draw data that span less than its ticks' spacing: ``reason`` says why the flat line is the point."""
    setattr(ax, FLAT_REASON, reason)


def twin_axis(ax: plt.Axes, reason: str) -> plt.Axes:
    """``ax.twinx()`` with the reason a second y-axis is needed (two units on one x); save refuses a twin without."""
    twin = ax.twinx()
    setattr(twin, TWIN_REASON, reason)
    return twin


def data_span(axes: list[plt.Axes]) -> float | None:
    """The height of the data of ``axes`` (panels sharing one y-axis: every line, band, marker and bar together) as a
    fraction of that axis, or None for panels of images, heatmaps or nothing."""
    if any(ax.images or any(isinstance(c, matplotlib.collections.QuadMesh) for c in ax.collections) for ax in axes):
        return None
    fractions = [ax.transAxes.inverted().transform(artist_points(artist))[:, 1]
                 for ax in axes for artist in data_artists(ax)]
    if not fractions:
        return None
    y = np.concatenate(fractions)
    return float(y.max() - y.min())


def tick_spacing(ax: plt.Axes) -> float:
    """The smallest gap between the y-axis's ticks (major and minor: a log axis's 2–9) inside the panel, as a
    fraction of its height (1 with fewer than two)."""
    low, high = sorted(ax.get_ylim())
    ticks = np.unique([t for t in [*ax.yaxis.get_majorticklocs(), *ax.yaxis.get_minorticklocs()] if low <= t <= high])
    if len(ticks) < 2:
        return 1.0
    fractions = ax.transAxes.inverted().transform(ax.transData.transform(np.c_[np.zeros_like(ticks), ticks]))[:, 1]
    return float(np.diff(np.sort(fractions)).min())


def check_flat_panels(fig: plt.Figure) -> None:
    """No panel whose data span less than its y-axis's tick spacing (a flat line on a zoomed axis reads as an effect,
    or as nothing), the data of the panels that share its y-axis counted together, unless the figure declared it
    flat with a reason (``declare_flat``), else a LayoutProblem naming it."""
    for ax in panels_of(fig):
        shared = [ax] + [other for other in panels_of(fig)
                         if other is not ax and ax.get_shared_y_axes().joined(ax, other)]
        span = data_span(shared)
        if span is not None and span < tick_spacing(ax) and not getattr(ax, FLAT_REASON, None):
            raise LayoutProblem(f"panel {ax.get_title() or ax.get_ylabel() or 'untitled'!r}: its data span "
                                f"{span:.0%} of the axis, less than one tick's spacing: drop the panel, say it in the "
                                "caption, or plots.declare_flat(ax, reason)")


def check_twins(fig: plt.Figure) -> None:
    """Every twin axis made by ``twin_axis`` with its reason, else a LayoutProblem: two y scales over one panel can
    make any two lines overlap."""
    panels = panels_of(fig)
    for ax in panels:
        others = twins(ax, panels)[1:]
        if others and not any(getattr(other, TWIN_REASON, None) for other in [ax, *others]):
            raise LayoutProblem(f"panel {ax.get_title() or ax.get_ylabel() or 'untitled'!r} has a twin y-axis with no "
                                "reason: plots.twin_axis(ax, reason), or two panels")


def panels_of(fig: plt.Figure) -> list[plt.Axes]:
    """The figure's data panels: axes with their axis on (a legend's or a note's are off), colour bars aside."""
    return [ax for ax in fig.axes if ax.get_label() != "<colorbar>" and ax.axison]


ONE_SEED_NOTE = ("One training seed: no seed-to-seed spread is drawn; a band, where drawn, is the evaluation prompts' "
                 "error only.")


def note_one_seed(fig: plt.Figure, cube: xr.Dataset) -> None:
    """Below a figure drawn from a cube of one training seed, ``ONE_SEED_NOTE`` (the seed count read from the cube):
    its bands then hold no seed-to-seed spread, and the reader must know."""
    if cube.sizes.get("seed") != 1:
        return
    renderer = fig.canvas.get_renderer()
    bottom = fig.get_tightbbox(renderer).y0 / fig.get_figheight()  # figure fraction below every drawn thing
    fig.text(0.5, bottom - 0.02, ONE_SEED_NOTE, ha="center", va="top", fontsize=TEXT_SIZE)


LAYOUT_CHECKS = (check_legends, check_legibility, check_flat_panels, check_twins)  # a workflow run records these


def pin_figure_legends(fig: plt.Figure) -> None:
    """Anchor each legend of ``fig`` placed against the figure's box (``fig.legend(loc=...)``) to the figure itself.
    Saved with ``bbox_inches="tight"``, the figure's box becomes the box around everything drawn, so such a legend
    moves to its edge: onto the one-seed note below it, in a saved image that the checks never measured."""
    for legend in fig.legends:
        if legend.get_bbox_to_anchor() is fig.bbox:
            legend.set_bbox_to_anchor((0, 0, 1, 1), transform=fig.transFigure)


def prepare(fig: plt.Figure, cube: xr.Dataset) -> None:
    """``fig`` as ``save`` writes it, before the layout checks: check_text and check_panels (errors always), its
    legends pinned (``pin_figure_legends``), drawn, then the one-seed note where ``cube`` has one seed."""
    check_text(fig)
    check_panels(fig)
    pin_figure_legends(fig)
    fig.canvas.draw()  # the layout the note and the checks measure
    note_one_seed(fig, cube)


def save(fig: plt.Figure, png: str | os.PathLike, cube: xr.Dataset) -> None:
    """Write ``png`` and the .pdf beside it, each atomically, from ``cube``'s figure: ``prepare``d, then the layout
    checks (``LAYOUT_CHECKS``), whose problems are errors unless ``recording_layout_problems`` is on."""
    prepare(fig, cube)
    problems = []
    for check in LAYOUT_CHECKS:
        try:
            check(fig)
        except LayoutProblem as problem:
            if not PROBLEMS:
                raise
            problems.append(f"{Path(png).stem}: {problem}")
    png = Path(png)
    for path in (png, png.with_suffix(".pdf")):
        atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=DPI, bbox_inches="tight"))
    plt.close(fig)
    if PROBLEMS:
        write_text(PROBLEMS[-1], "".join(f"{problem}\n" for problem in problems))


def claim_intervals(ax: plt.Axes, claims: list, labels: list[str]) -> None:
    """Claims of the table (``iclab.stats.claims.Claim``) as the table judges them: each row's difference (measured −
    expected) with its interval at the row's level (thick: seeds and prompts; thin: the prompts' part alone), over the
    region where the claim holds (grey: ±margin for ≈; the line at ±margin for < and >), the verdict beside the
    label. A reader sees whether the interval is wide for lack of seeds or of prompts."""
    for row, (claim, label) in enumerate(zip(claims, labels)):
        difference = claim.difference
        low, high = difference.interval(claim.level)
        prompts = difference.mc_quantile(claim.level) * difference.prompt_se
        ax.plot([low, high], [row, row], color="C0", linewidth=5, alpha=0.45, solid_capstyle="butt")
        ax.plot([difference.value - prompts, difference.value + prompts], [row, row], color="C0", linewidth=1.5)
        ax.plot([difference.value], [row], "o", color="C0")
        if claim.relation == "≈":
            ax.fill_betweenx([row - 0.4, row + 0.4], -claim.margin, claim.margin, color="0.8", linewidth=0)
        elif claim.relation in "<>≤≥":
            edge = claim.margin if claim.relation in ">≥" else -claim.margin
            ax.plot([edge, edge], [row - 0.4, row + 0.4], color="0.3", linestyle="--")
    ax.axvline(0.0, color="0.5", linewidth=0.8)
    ax.set_yticks(range(len(claims)), [f"{label}: {claim.verdict}" for claim, label in zip(claims, labels)])
    ax.set_ylim(len(claims) - 0.5, -0.5)


def log_positions(m_max: int, count: int = 25) -> np.ndarray:
    return np.unique(np.geomspace(1, m_max, count).round().astype(int))


def loglog_slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of log y against log x."""
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])
