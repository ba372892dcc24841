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


def test_log_seed_bands_are_the_t_interval_of_the_log_errors_around_the_geometric_mean():
    import numpy as np
    import xarray as xr
    from scipy import stats

    from iclab.plots import log_seed_bands

    errors = np.array([[1e-1, 1e-2, 1e-3], [2.0, 2.0, 2.0]])  # (position, seed): decades apart, then equal
    frame = log_seed_bands(xr.DataArray(errors * 5, dims=("position", "seed"), coords={"position": [1, 2]}), scale=5)
    half = stats.t.ppf(0.975, 2) * np.std([-1, -2, -3], ddof=1) / np.sqrt(3)
    np.testing.assert_allclose(frame["mean"], [1e-2, 2.0])
    np.testing.assert_allclose(frame["low"], [10 ** (-2 - half), 2.0])
    np.testing.assert_allclose(frame["high"], [10 ** (-2 + half), 2.0])


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
