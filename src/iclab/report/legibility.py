"""How a figure reads at the width it is shown (issue 95): its text measured at the narrowest column that shows it,
and the texts it draws on top of each other.

GitHub shows an image at most its page's column wide: ~830–900 px on a repository's front page, ~950 px on a docs
page. A figure saved wider is shrunk to that, and its text with it. Three measures, all in the pixels a reader sees
there (``SHOWN_WIDTH``):

- ``smallest_font_pixels``: the smallest font size of the text it draws (the measure the layout rule has used);
- ``median_glyph_pixels``: the median ink height of the letters and digits of its plain text (mathtext such as a log
  axis's 10ᵏ aside), from the glyphs' outlines in the figure's own fonts and sizes: what a reader's eye resolves;
- ``text_overlaps``: each pair of drawn texts (titles, axis and tick labels, colour-bar labels, legends, notes) whose
  boxes overlap by more than a pixel.

``plots.save`` refuses a figure that fails a rule (``plots.check_legibility``; in a workflow run, written to the
figure's .layout.txt); benchmarks/figure_legibility.py records every figure's measures.
"""

from __future__ import annotations

import functools
from itertools import combinations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.font_manager import FontProperties, findfont
from matplotlib.text import Text
from matplotlib.transforms import Bbox
from matplotlib.textpath import TextPath

SHOWN_WIDTH = 850  # px: the README's column on GitHub, the narrowest page a figure is shown on
MIN_FONT_PIXELS = 8.0  # the smallest font size there
MIN_GLYPH_PIXELS = 5.0  # the median ink height of its glyphs there: a lower-case letter of fewer pixels runs into
# its neighbours. The figures' mix of lower case, capitals and digits in DejaVu Sans has a median about 0.68 of the
# font size, so this sits a little below the font rule; zfb_figure1 as the gallery drew it (4.8 px) fails it.
OVERLAP_TOLERANCE = 1.0  # px (as saved) by which two text boxes may touch


def tick_labels_in_view(fig: plt.Figure) -> tuple[set[int], set[int]]:
    """The ids of every tick label of ``fig`` and of those its axes draw (ticks inside the view; matplotlib keeps
    label objects for ticks outside it, visible but not drawn)."""
    every, drawn = set(), set()
    for ax in fig.axes:
        for axis in ax._axis_map.values():
            every |= {id(label) for tick in axis.majorTicks + axis.minorTicks for label in (tick.label1, tick.label2)}
            if ax.axison and ax.get_visible() and axis.get_visible():
                drawn |= {id(label) for tick in axis._update_ticks() for label in (tick.label1, tick.label2)}
    return every, drawn


def drawn_texts(fig: plt.Figure) -> list[Text]:
    """Every non-empty text ``fig`` draws: its own texts (title, notes), each panel's titles, axis labels, tick labels
    in view, annotations, legends and colour-bar labels."""
    every_tick, drawn_ticks = tick_labels_in_view(fig)
    texts = []
    for text in fig.findobj(Text):
        if not (text.get_visible() and text.get_text().strip()):
            continue
        if id(text) in every_tick and id(text) not in drawn_ticks:
            continue
        axes = text.axes
        if axes is not None and not axes.get_visible():
            continue
        texts.append(text)
    return texts


def saved_width(fig: plt.Figure, dpi: float) -> float:
    """The width in pixels of ``fig`` saved at ``dpi`` with ``bbox_inches="tight"`` (as ``plots.save`` saves it): its
    tight box and the padding savefig puts around it."""
    pad = matplotlib.rcParams["savefig.pad_inches"]
    return (fig.get_tightbbox(fig.canvas.get_renderer()).width + 2 * pad) * dpi


def shown_scale(fig: plt.Figure, dpi: float) -> float:
    """How much ``fig``, saved at ``dpi``, shrinks to be shown ``SHOWN_WIDTH`` wide (1 when narrower)."""
    return scale_of(saved_width(fig, dpi))


def scale_of(width: float) -> float:
    """How much an image ``width`` px wide shrinks to be shown ``SHOWN_WIDTH`` wide (1 when narrower)."""
    return min(1.0, SHOWN_WIDTH / width)


def smallest_font_pixels(fig: plt.Figure, dpi: float) -> float:
    """The smallest font size of the drawn text, in pixels as shown."""
    return font_pixels(drawn_texts(fig), shown_scale(fig, dpi), dpi)


def font_pixels(texts: list[Text], scale: float, dpi: float) -> float:
    """The smallest font size of ``texts`` in pixels, drawn at ``dpi`` and shown shrunk by ``scale``."""
    return min(text.get_fontsize() for text in texts) / 72 * dpi * scale


@functools.lru_cache(maxsize=4096)
def ink_height(character: str, size: float, font_file: str) -> float:
    """The height of ``character``'s outline at font ``size`` (in the units of ``size``): from its lowest to its
    highest point, so an 'x' is its x-height and an 'l' its ascender."""
    return TextPath((0, 0), character, size=size, prop=FontProperties(fname=font_file)).get_extents().height


def glyph_heights(fig: plt.Figure, dpi: float) -> np.ndarray:
    """The ink height, in pixels as shown, of every letter and digit of ``fig``'s drawn plain text (one per
    occurrence; mathtext, between $ signs, aside)."""
    return heights_of(drawn_texts(fig), shown_scale(fig, dpi), dpi)


def heights_of(texts: list[Text], scale: float, dpi: float) -> np.ndarray:
    """``glyph_heights`` of ``texts`` drawn at ``dpi`` and shown shrunk by ``scale``."""
    heights = []
    for text in texts:
        content = text.get_text()
        if "$" in content:
            continue
        size, font_file = text.get_fontsize() / 72 * dpi, findfont(text.get_fontproperties())
        heights += [ink_height(c, size, font_file) * scale for c in content if c.isalnum()]
    return np.asarray(heights)


def median_glyph_pixels(fig: plt.Figure, dpi: float) -> float:
    return median(glyph_heights(fig, dpi))


def median(heights: np.ndarray) -> float:
    """The median of ``heights``, NaN for none (a figure with no plain text)."""
    return float(np.median(heights)) if heights.size else float("nan")


def boxes_overlap(a: Bbox, b: Bbox) -> bool:
    """Whether two boxes overlap by more than ``OVERLAP_TOLERANCE`` in both directions (boxes that touch do not)."""
    across = min(a.x1, b.x1) - max(a.x0, b.x0)
    up = min(a.y1, b.y1) - max(a.y0, b.y0)
    return bool(across > OVERLAP_TOLERANCE and up > OVERLAP_TOLERANCE)


def text_overlaps(fig: plt.Figure) -> list[tuple[str, str]]:
    """Each pair of drawn texts whose boxes overlap (``boxes_overlap``), as their strings."""
    return overlaps_of(drawn_texts(fig), fig.canvas.get_renderer())


def overlaps_of(texts: list[Text], renderer) -> list[tuple[str, str]]:
    """``text_overlaps`` among ``texts``, measured by ``renderer``."""
    boxes = [(text.get_text(), text.get_window_extent(renderer)) for text in texts]
    return [(a, b) for (a, box_a), (b, box_b) in combinations(boxes, 2) if boxes_overlap(box_a, box_b)]


def rules_failed(measures: dict) -> list[str]:
    """The rules that ``legibility``'s ``measures`` fail: "font" under ``MIN_FONT_PIXELS``, "glyph" under
    ``MIN_GLYPH_PIXELS``, "overlap" for any texts over each other."""
    failed = {"font": measures["smallest_font_px"] < MIN_FONT_PIXELS,
              "glyph": measures["median_glyph_px"] < MIN_GLYPH_PIXELS, "overlap": measures["overlaps"] > 0}
    return [rule for rule, fails in failed.items() if fails]


def legibility(fig: plt.Figure, dpi: float) -> dict:
    """``fig``'s measures as shown (``SHOWN_WIDTH``), drawn first so that its layout is final; its texts and width
    found once."""
    fig.canvas.draw()
    texts, width = drawn_texts(fig), saved_width(fig, dpi)
    scale = scale_of(width)
    overlapping = overlaps_of(texts, fig.canvas.get_renderer())
    return {"saved_width_px": round(width), "shown_scale": round(scale, 3),
            "smallest_font_px": round(font_pixels(texts, scale, dpi), 2),
            "median_glyph_px": round(median(heights_of(texts, scale, dpi)), 2),
            "overlaps": len(overlapping), "overlapping": [list(pair) for pair in overlapping]}


def describe(measures: dict, failed: list[str], dpi: float) -> str:
    """What each ``failed`` rule found in ``measures`` (``legibility``'s, of a figure saved at ``dpi``) and what it
    allows: for a size rule, the widest the figure may be drawn (its text shrinks in proportion to its saved width)."""
    def widest(measured: float, least: float) -> str:
        inches = measures["saved_width_px"] * measured / least / dpi - 2 * matplotlib.rcParams["savefig.pad_inches"]
        return f"draw it at most {inches:.1f} inches wide"
    found = {
        "font": f"its smallest text is {measures['smallest_font_px']:.2f} px at the README's {SHOWN_WIDTH} px (at "
                f"least {MIN_FONT_PIXELS:g} px): {widest(measures['smallest_font_px'], MIN_FONT_PIXELS)}",
        "glyph": f"its glyphs' median ink height is {measures['median_glyph_px']:.2f} px at the README's "
                 f"{SHOWN_WIDTH} px (at least {MIN_GLYPH_PIXELS:g} px): "
                 f"{widest(measures['median_glyph_px'], MIN_GLYPH_PIXELS)}",
        "overlap": "texts drawn over each other: " + "; ".join(f"{a!r} and {b!r}" for a, b in measures["overlapping"]),
    }
    return "; ".join(found[rule] for rule in failed)
