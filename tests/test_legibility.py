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
    assert legibility.smallest_font_pixels(wide, DPI) == pytest.approx(8 / 72 * DPI * 850 / width, rel=2e-3)
    plt.close("all")


def test_a_glyphs_height_is_its_inks_height_in_the_drawn_image_scaled_to_the_shown_width(tmp_path):
    """An 'x' drawn at 100 pt: its ink in the saved image (rows with dark pixels) is the height measured from its
    outline, to anti-aliasing; shown 850 px wide the figure's glyphs scale with it, and mathtext is left out."""
    fig = plt.figure(figsize=(3, 3))
    fig.text(0.3, 0.3, "x", fontsize=100)
    fig.canvas.draw()
    image = saved(fig, tmp_path)
    ink_rows = np.flatnonzero((image[..., :3].mean(axis=2) < 0.5).any(axis=1))
    drawn = ink_rows[-1] - ink_rows[0] + 1
    [height] = legibility.glyph_heights(fig, DPI)  # narrower than 850 px: as drawn
    assert height == pytest.approx(drawn, abs=2.0) and 60 < drawn < 80  # DejaVu's x-height: ~0.55 of 139 px
    wide = plt.figure(figsize=(25, 3))
    wide.text(0.0, 0.3, "xx", fontsize=100)
    wide.text(0.95, 0.3, "$x^2$", fontsize=100)
    wide.canvas.draw()
    heights = legibility.glyph_heights(wide, DPI)
    assert len(heights) == 2  # the mathtext's glyphs aside
    assert heights == pytest.approx(height * legibility.shown_scale(wide, DPI), rel=1e-6)
    assert legibility.shown_scale(wide, DPI) == pytest.approx(850 / saved(wide, tmp_path).shape[1], rel=2e-3)
    plt.close("all")


def test_texts_drawn_over_each_other_are_found_and_tick_labels_out_of_view_are_not(tmp_path):
    """Two titles at one place overlap (one pair); the same two apart do not; a panel whose x view leaves out a tick
    draws no label for it, though matplotlib keeps the label's object (visible) at the tick's place."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(8, 3))
    fig.text(0.5, 0.95, "a suptitle here", ha="center")
    fig.text(0.5, 0.95, "another text here", ha="center")
    right.set_title("alone")
    fig.canvas.draw()
    assert legibility.text_overlaps(fig) == [("a suptitle here", "another text here")]
    left.plot([0, 1], [0, 1])
    left.set_xticks([0, 0.5, 1, 5])
    left.set_xlim(0, 1)
    fig.canvas.draw()
    out_of_view = [tick.label1 for tick in left.xaxis.get_major_ticks() if tick.get_loc() == 5]
    assert out_of_view and out_of_view[0].get_visible()
    assert out_of_view[0] not in legibility.drawn_texts(fig)
    assert {"0.0", "0.5", "1.0"} <= {text.get_text() for text in legibility.drawn_texts(fig)}
    plt.close("all")
