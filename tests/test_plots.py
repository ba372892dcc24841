"""Figure conventions (iclab.plots): one colour per learner in every figure, distinct within a figure (a model
variant named after its sweep value, GPT-2's ``hidden_64``, is coloured by its sweep's ordered palette instead)."""

import pytest
from conftest import REPO

from iclab.config import load
from iclab.plan import build_plan
from iclab.plots import LEARNER_LABELS, learner_colours


@pytest.mark.parametrize("config", ["config.yaml", "config/paper.yaml", "tests/data/tiny.yaml"])
def test_the_learners_of_each_experiment_have_different_colours(config):
    for name, settings in build_plan(load(REPO / config)).settings.items():
        named = {learner for s in settings.values() for learner in s.labels + s.baselines}
        learners = sorted(named & set(LEARNER_LABELS))
        colours = learner_colours(learners)
        assert len({tuple(c) if not isinstance(c, str) else c for c in colours.values()}) == len(learners), (
            name, colours)


def test_every_learner_has_its_colour_by_name_and_by_label():
    by_name, by_label = learner_colours(LEARNER_LABELS), learner_colours(LEARNER_LABELS, by_label=True)
    assert list(by_label) == list(LEARNER_LABELS.values()) and list(by_name.values()) == list(by_label.values())


def test_log_bands_keep_the_arithmetic_mean_and_are_the_t_band_made_multiplicative_never_below_zero():
    import numpy as np
    import xarray as xr
    from scipy import stats

    from iclab.plots import seed_bands

    errors = np.array([[1e-1, 1e-2, 1e-3], [2.0, 2.0, 2.0]])  # (position, seed): decades apart, then equal
    frame = seed_bands(xr.DataArray(errors * 5, dims=("position", "seed"), coords={"position": [1, 2]}), scale=5,
                       log=True)
    mean = errors[0].mean()
    half = stats.t.ppf(0.975, 2) * errors[0].std(ddof=1) / np.sqrt(3)
    assert mean - half < 0  # the arithmetic band would run off a log axis
    np.testing.assert_allclose(frame["mean"], [mean, 2.0])
    np.testing.assert_allclose(frame["low"], [mean * np.exp(-half / mean), 2.0])
    np.testing.assert_allclose(frame["high"], [mean * np.exp(half / mean), 2.0])


def test_save_refuses_a_legend_entry_its_panel_does_not_draw_and_a_legend_over_data(tmp_path):
    """An entry is drawn when an artist of its colour (and dashes, for a line) is in its panel, whether the handle is
    that artist or a proxy; a legend box over a line's segment (no point of it inside) or inside a band's outline is
    refused; a legend in an empty corner passes."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    from iclab.plots import save, theme

    theme()

    def panel():
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.plot([0, 10], [0, 1], color="C0", label="drawn")
        ax.set(xlim=(0, 10), ylim=(0, 4))
        return fig, ax

    fig, ax = panel()
    ax.legend(handles=[Line2D([], [], color="C0", label="a proxy of the drawn line")], loc="upper left")
    save(fig, tmp_path / "good.png")
    fig, ax = panel()
    ax.legend(handles=[*ax.lines, Line2D([], [], color="C3", label="least squares")], loc="upper left")
    with pytest.raises(ValueError, match="legend entry 'least squares' is drawn nowhere in its panel"):
        save(fig, tmp_path / "bad.png")
    fig, ax = panel()
    ax.plot([0, 10], [4, 0], color="C0")  # one segment across the panel: its two points lie outside the box
    ax.legend(loc="center")
    with pytest.raises(ValueError, match="a legend box covers data"):
        save(fig, tmp_path / "bad.png")
    fig, ax = panel()
    ax.fill_between([0, 10], [1.5, 1.5], [3.9, 3.9], color="C0", alpha=0.2)  # a band whose outline holds the box
    ax.legend(loc="center")
    with pytest.raises(ValueError, match="a legend box covers data"):
        save(fig, tmp_path / "bad.png")
    assert not (tmp_path / "bad.png").exists()


def test_save_refuses_text_under_nine_pixels_at_the_gallery_width_naming_the_width_allowed(tmp_path):
    import matplotlib.pyplot as plt

    from iclab.plots import save, theme

    theme()
    fig, ax = plt.subplots(figsize=(40, 4))  # 11 pt at 150 dpi, the ~31 tight inches shrunk to 1400 px: ~7 px
    ax.plot([0, 1], [0, 1])
    with pytest.raises(ValueError, match=r"text of 11 pt is \d\.\d px at the gallery's 1400 px: .* at most 23\.8 in"):
        save(fig, tmp_path / "wide.png")
    fig, ax = plt.subplots(figsize=(20, 4))
    ax.plot([0, 1], [0, 1])
    save(fig, tmp_path / "narrower.png")


def test_save_refuses_a_figure_with_text_at_another_size_or_a_config_key_and_writes_nothing(tmp_path):
    import matplotlib.pyplot as plt

    from iclab.plots import TEXT_SIZE, save, theme

    theme()
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="a line")
    ax.legend()
    ax.set_title("a title")
    assert {text.get_fontsize() for text in fig.findobj(plt.Text) if text.get_text()} == {TEXT_SIZE}
    save(fig, tmp_path / "good.png")
    assert (tmp_path / "good.png").stat().st_size > 0 and (tmp_path / "good.pdf").stat().st_size > 0
    fig, ax = plt.subplots()
    ax.text(0.5, 0.5, "a note", fontsize=7)
    with pytest.raises(ValueError, match="text 'a note' at 7 pt: every figure's text is 11 pt"):
        save(fig, tmp_path / "bad.png")
    fig, ax = plt.subplots()
    ax.set_title("rank_deficient_psi")
    with pytest.raises(ValueError, match="text 'rank_deficient_psi': a config key or raw TeX on a figure"):
        save(fig, tmp_path / "bad.png")
    assert not (tmp_path / "bad.png").exists()


@pytest.mark.filterwarnings("ignore:All-NaN slice")  # seaborn's, on the all-NaN heatmap
def test_save_refuses_a_figure_with_a_blank_panel_naming_it_and_writes_nothing(tmp_path):
    """A panel whose values are all NaN (a line, a band, an image, a heatmap's cells, a scatter's points) or that draws
    nothing is named in the error; a panel with one finite value, a legend's panel (axis off) and a colour bar pass."""
    import matplotlib.pyplot as plt
    import numpy as np
    import seaborn as sns

    from iclab.plots import save, theme

    theme()
    nan = np.full(3, np.nan)
    fig, (good, line, band, image, heatmap, scatter, empty, legend) = plt.subplots(1, 8)
    good.plot([0, 1, 2], [np.nan, 1.0, np.nan])
    line.plot([0, 1, 2], nan)
    line.set_title("all NaN")
    band.fill_between([0, 1, 2], nan, nan)
    fig.colorbar(image.imshow(np.full((2, 2), np.nan)), ax=image)
    sns.heatmap(np.full((2, 2), np.nan), ax=heatmap)
    scatter.scatter(nan, nan)
    legend.axis("off")
    blank = r"blank panels \['all NaN', 'panel 3', 'panel 4', 'panel 5', 'panel 6', 'panel 7'\]"
    with pytest.raises(ValueError, match=blank):
        save(fig, tmp_path / "blank.png")
    assert not any(tmp_path.iterdir())
    fig, (line, band, image, heatmap, scatter, legend) = plt.subplots(1, 6)
    line.plot([0, 1, 2], [np.nan, 1.0, np.nan])
    band.fill_between([0, 1, 2], [np.nan, 0.0, 0.0], [np.nan, 1.0, 1.0])
    image.imshow(np.array([[np.nan, 1.0]]))
    sns.heatmap(np.array([[np.nan, 1.0]]), ax=heatmap)
    scatter.scatter([0.0, np.nan], [1.0, 1.0])
    legend.axis("off")
    save(fig, tmp_path / "good.png")
    assert (tmp_path / "good.png").stat().st_size > 0
