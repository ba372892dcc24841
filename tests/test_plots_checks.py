"""The pieces of plots.save's layout checks, each by hand on a small figure: the points a legend may not cover, the tick
spacing a flat panel is measured against, which legend entries count as drawn, and where the one-seed note goes."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import xarray as xr  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from iclab.report import plots  # noqa: E402


@pytest.fixture
def axes():
    fig, ax = plt.subplots(figsize=(4, 3))
    yield fig, ax
    plt.close(fig)


def test_a_lines_points_are_its_ends_and_sixteen_steps_on_each_segment_a_markers_its_finite_points(axes):
    """A line (0, 0)–(1, 1): its two ends and 15 evenly spaced points between, in display pixels (17 in all; a legend
    over the segment's middle covers it); a marker-only series: its two finite points only; a scatter: its offset."""
    fig, ax = axes
    line, = ax.plot([0, 1], [0, 1])
    markers, = ax.plot([0, 1, np.nan], [1, 0, 2], "o")
    dot = ax.scatter([0.25], [0.75])
    fig.canvas.draw()
    start, end = ax.transData.transform([[0, 0], [1, 1]])
    expected = start + np.arange(17)[:, None] / 16 * (end - start)  # (17, 2)
    points = plots.artist_points(line)
    assert points.shape == (17, 2)
    assert np.allclose(points[np.argsort(points[:, 0])], expected)
    assert np.allclose(plots.artist_points(markers), ax.transData.transform([[0, 1], [1, 0]]))
    assert np.allclose(plots.artist_points(dot), ax.transData.transform([[0.25, 0.75]]))


def test_tick_spacing_is_the_smallest_gap_between_ticks_inside_the_panel_as_a_fraction_of_its_height(axes):
    """Linear 0–1 with ticks 0, 0.25, 1: 0.25; ticks on the limits count (0 and 0.25, 0.75 and 1: 0.25); one tick
    inside (0.5; 2 lies outside): 1.0; a log axis 1–100 with its minor ticks 2–9: the gap 90–100,
    log10(100/90) / 2 = 0.0229."""
    fig, ax = axes
    ax.set_ylim(0, 1)
    ax.set_yticks([0, 0.25, 1.0])
    assert plots.tick_spacing(ax) == pytest.approx(0.25)
    for on_a_limit in ([0, 0.25], [0.75, 1.0]):  # two ticks, one on a limit: both count
        ax.set_yticks(on_a_limit)
        assert plots.tick_spacing(ax) == pytest.approx(0.25)
    ax.set_yticks([0.5, 2.0])
    ax.set_ylim(0, 1)
    assert plots.tick_spacing(ax) == 1.0
    ax.set_yscale("log")
    ax.set_ylim(1, 100)
    assert plots.tick_spacing(ax) == pytest.approx(np.log10(100 / 90) / 2, rel=1e-6)


def test_a_legend_entry_counts_as_drawn_by_its_colour_or_for_a_grey_key_by_its_dashes_or_marker(axes):
    """Drawn: a red dashed line and a green marker. A red entry (solid) is drawn, by colour; a blue one is not; a grey
    key (no colour of its own) is drawn by the dashes it shows (dashed: yes; dotted: no) or, a marker key, by any
    marker drawn; black counts as grey."""
    fig, ax = axes
    red, = ax.plot([0, 1], [0, 1], color="red", linestyle="--")
    green, = ax.plot([0], [0], "o", color="green")
    lines_only = plots.styles_of(red)
    drawn = lines_only | plots.styles_of(green)

    def entry(**style):
        return plots.entry_drawn(Line2D([], [], **style), drawn)

    assert entry(color="red", linestyle="-") and not entry(color="blue", linestyle="--")
    assert entry(color="0.5", linestyle="--") and not entry(color="0.5", linestyle=":")
    assert entry(color="black", linestyle="--") and not entry(color="black", linestyle=":")
    assert entry(color="0.5", linestyle="None", marker="s")
    assert not plots.entry_drawn(Line2D([], [], color="0.5", linestyle="None", marker="s"), lines_only)


def test_the_one_seed_note_sits_just_below_everything_else_the_figure_draws(axes):
    """Its top lies below the lowest drawn thing (the x label), by 0.02 of the figure's height, and centred."""
    fig, ax = axes
    ax.plot([0, 1], [0, 1])
    ax.set_xlabel("n")
    renderer = fig.canvas.get_renderer()
    lowest = fig.get_tightbbox(renderer).y0 * fig.dpi  # inches → display pixels
    plots.note_one_seed(fig, xr.Dataset({"risk": ("seed", [1.0])}))
    [note] = [text for text in fig.texts if text.get_text() == plots.ONE_SEED_NOTE]
    box = note.get_window_extent(renderer)
    assert box.y1 == pytest.approx(lowest - 0.02 * fig.bbox.height, abs=1.0)
    assert (box.x0 + box.x1) / 2 == pytest.approx(fig.bbox.width / 2, abs=1.0)
