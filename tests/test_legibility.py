"""A figure's text as shown (``iclab.report.legibility``, issue 95): font size and glyph height at the width GitHub
shows it, against the saved image and the drawn glyphs; texts drawn on top of each other. Each measure is told from its
nearest wrong version on a hand-built figure."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.image  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from iclab.report import legibility  # noqa: E402

DPI = 100


def saved(fig, tmp_path):
    """``fig`` saved as ``plots.save`` saves it (tight), and the image read back: (H, W, 4)."""
    path = tmp_path / "f.png"
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    return matplotlib.image.imread(path)


def test_the_font_size_is_measured_at_the_shown_width_from_the_saved_images_width(tmp_path):
    """A narrow figure is shown as saved (22 px for 16 pt at 100 dpi, not scaled up); a wide one shrinks to 850 px of
    its saved width (read off the image file): 8 pt on a 2000-px-wide image shows at 8/72·100·850/W px, not at the
    gallery's 1400 px."""
    narrow = plt.figure(figsize=(4, 2))
    narrow.text(0.1, 0.5, "narrow", fontsize=16)
    narrow.canvas.draw()
    assert saved(narrow, tmp_path).shape[1] < legibility.SHOWN_WIDTH
    assert legibility.smallest_font_pixels(narrow, DPI) == pytest.approx(16 / 72 * DPI)
    wide = plt.figure(figsize=(20, 2))
    wide.text(0.0, 0.5, "left edge", fontsize=11)
    wide.text(0.9, 0.5, "right", fontsize=8)
    wide.canvas.draw()
    width = saved(wide, tmp_path).shape[1]
    assert width > 1500 and legibility.saved_width(wide, DPI) == pytest.approx(width, abs=2)
    assert legibility.smallest_font_pixels(wide, DPI) == pytest.approx(8 / 72 * DPI * 850 / width, rel=6e-4)
    plt.close("all")


def test_a_glyphs_height_is_its_inks_height_in_the_drawn_image_scaled_to_the_shown_width(tmp_path):
    """An 'x' drawn at 300 pt: its ink in the saved image (rows with dark pixels) is the height measured from its
    outline, to anti-aliasing (a point's size off by 1/72 would move it 3 px); shown 850 px wide the figure's glyphs
    scale with it, mathtext is left out, and the median is of every glyph (none: not a number)."""
    fig = plt.figure(figsize=(5, 5))
    fig.text(0.2, 0.2, "x", fontsize=300)
    fig.canvas.draw()
    image = saved(fig, tmp_path)
    ink_rows = np.flatnonzero((image[..., :3].mean(axis=2) < 0.5).any(axis=1))
    drawn = ink_rows[-1] - ink_rows[0] + 1
    [height] = legibility.glyph_heights(fig, DPI)  # narrower than 850 px: as drawn
    assert height == pytest.approx(drawn, abs=1.5) and 200 < drawn < 250  # DejaVu's x-height: ~0.55 of 417 px
    wide = plt.figure(figsize=(25, 5))
    wide.text(0.95, 0.3, "$x^2$", fontsize=100)  # first: the plain text after it is still measured
    wide.text(0.0, 0.3, "x1", fontsize=100)
    wide.canvas.draw()
    heights = legibility.glyph_heights(wide, DPI)
    assert len(heights) == 2  # the mathtext's glyphs aside
    scale = legibility.shown_scale(wide, DPI)
    assert scale == pytest.approx(850 / saved(wide, tmp_path).shape[1], rel=6e-4)
    assert heights[0] == pytest.approx(height / 3 * scale, rel=1e-6) and heights[1] > heights[0]  # '1' above x-height
    assert legibility.median_glyph_pixels(wide, DPI) == pytest.approx(heights.mean())
    blank = plt.figure(figsize=(3, 3))
    blank.text(0.5, 0.5, "$x$")
    blank.canvas.draw()
    assert np.isnan(legibility.median_glyph_pixels(blank, DPI))
    plt.close("all")


def test_texts_drawn_over_each_other_are_found_and_texts_not_drawn_are_not(tmp_path):
    """Two texts at one place overlap (one pair); a panel whose x view leaves out a tick draws no label for it, though
    matplotlib keeps the label's object (visible) at the tick's place; a panel with its axes off, or its y-axis
    hidden, draws no tick labels there, a hidden panel nothing; every other text is drawn."""
    fig, (left, hidden, right) = plt.subplots(1, 3, figsize=(12, 3))
    hidden.set_title("a hidden panel's title")
    hidden.set_visible(False)
    fig.text(0.5, 0.95, "a suptitle here", ha="center")
    fig.text(0.5, 0.95, "another text here", ha="center")
    right.set_title("alone")
    right.axis("off")
    left.plot([0, 1], [0, 1])
    left.set_xticks([0, 5, 0.5, 1])
    left.set_xlim(0, 1)
    left.yaxis.set_visible(False)
    fig.canvas.draw()
    assert legibility.text_overlaps(fig) == [("a suptitle here", "another text here")]
    out_of_view = [tick.label1 for tick in left.xaxis.get_major_ticks() if tick.get_loc() == 5]
    assert out_of_view and out_of_view[0].get_visible()
    drawn = [text.get_text() for text in legibility.drawn_texts(fig)]
    assert sorted(drawn) == sorted(["0.0", "0.5", "1.0", "alone", "a suptitle here", "another text here"])
    plt.close("all")


@pytest.mark.parametrize("other, overlapping", [
    ((9.5, 0, 20, 10), False),  # 0.5 px: within the tolerance
    ((8.5, 0, 20, 10), True),  # 1.5 px
    ((10, 0, 20, 10), False),  # touching
    ((9, 0, 20, 10), False),  # exactly the tolerance across
    ((8.5, 9, 20, 20), False),  # exactly the tolerance up
    ((8.5, 9.5, 20, 20), False),  # 1.5 px across but 0.5 px up
    ((-5, -5, 15, 15), True),  # one inside the other
])
def test_two_boxes_overlap_only_by_more_than_a_pixel_both_ways(other, overlapping):
    from matplotlib.transforms import Bbox

    assert legibility.boxes_overlap(Bbox.from_extents(0, 0, 10, 10), Bbox.from_extents(*other)) is overlapping
    assert legibility.boxes_overlap(Bbox.from_extents(*other), Bbox.from_extents(0, 0, 10, 10)) is overlapping


@pytest.mark.parametrize("font, glyph, overlaps, failed", [
    (8.0, 5.0, 0, []),  # at both thresholds: passes
    (7.99, 5.0, 0, ["font"]),
    (8.5, 4.99, 0, ["glyph"]),  # the old 9 px rule would fail the font here, a 5.5 px glyph rule the glyph at 5.2
    (12.0, 5.2, 1, ["overlap"]),
    (7.1, 4.8, 2, ["font", "glyph", "overlap"]),  # zfb_figure1 as the gallery drew it, with an overlap added
])
def test_the_rules_are_8_px_of_font_and_5_px_of_glyph_as_shown_and_no_overlap(font, glyph, overlaps, failed):
    measures = {"smallest_font_px": font, "median_glyph_px": glyph, "overlaps": overlaps}
    assert legibility.rules_failed(measures) == failed


def test_the_record_of_a_figure_is_its_measures_at_the_saved_images_width(tmp_path):
    """``legibility`` (what plots.save checks): the wide figure's width, scale, font and glyph read against the saved
    image (8 pt shows at 8/72·100·850/W px; the glyphs of 'left edge' and 'right' at 11 and 8 pt scale as the font),
    and the pair of texts drawn over each other named."""
    wide = plt.figure(figsize=(20, 2))
    wide.text(0.0, 0.5, "left edge", fontsize=11)
    wide.text(0.9, 0.5, "right", fontsize=8)
    wide.text(0.9, 0.5, "over it", fontsize=11)
    measures = legibility.legibility(wide, DPI)
    width = saved(wide, tmp_path).shape[1]
    assert measures["saved_width_px"] == pytest.approx(width, abs=2)
    assert measures["shown_scale"] == pytest.approx(850 / width, abs=1e-3)
    assert measures["smallest_font_px"] == pytest.approx(8 / 72 * DPI * 850 / width, abs=0.01)
    unscaled = legibility.median_glyph_pixels(wide, DPI) / legibility.shown_scale(wide, DPI)
    assert measures["median_glyph_px"] == pytest.approx(unscaled * 850 / width, abs=0.01)
    assert measures["overlaps"] == 1 and measures["overlapping"] == [["right", "over it"]]
    narrow = plt.figure(figsize=(4, 2))
    narrow.text(0.1, 0.5, "narrow", fontsize=16)
    assert legibility.legibility(narrow, DPI)["shown_scale"] == 1.0  # shown as saved, not scaled up
    plt.close("all")


def test_a_failed_rule_says_what_it_measured_and_the_widest_the_figure_may_be_drawn():
    """By hand: saved 3000 px wide at 150 dpi with 7 px of font, 8 px are reached at 3000·7/8 = 2625 px, 17.5 inches:
    17.3 once savefig's 0.1 in pad on each side is taken off (not 17.5, nor 3000·8/7/150 = 22.9 read upside down);
    a 4 px glyph median reaches 5 px at 2400 px, 15.8 inches."""
    measures = {"saved_width_px": 3000, "shown_scale": 0.283, "smallest_font_px": 7.0, "median_glyph_px": 4.0,
                "overlaps": 1, "overlapping": [["a title", "a label"]]}
    described = legibility.describe(measures, ["font", "glyph", "overlap"], 150)
    assert described == ("its smallest text is 7.00 px at the README's 850 px (at least 8 px): draw it at most 17.3 "
                         "inches wide; its glyphs' median ink height is 4.00 px at the README's 850 px "
                         "(at least 5 px): draw it at most 15.8 inches wide; texts drawn over each other: 'a title' "
                         "and 'a label'")
    assert legibility.describe(measures, ["overlap"], 150) == "texts drawn over each other: 'a title' and 'a label'"
