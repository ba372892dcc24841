"""Figure conventions (iclab.report.plots): one colour per learner in every figure, distinct within a figure (a model
variant named after its sweep value, GPT-2's ``hidden_64``, is coloured by its sweep's ordered palette instead)."""

import numpy as np
import pytest
import xarray as xr
from conftest import REPO

from iclab.config import load
from iclab.pipeline.plan import build_plan
from iclab.report.plots import LEARNER_LABELS, learner_colours

NO_SEEDS = xr.Dataset()  # a cube without a seed dimension: no one-seed note


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

    from iclab.report.plots import seed_bands

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

    from iclab.report.plots import save, theme

    theme()

    def panel():
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.plot([0, 10], [0, 1], color="C0", label="drawn")
        ax.set(xlim=(0, 10), ylim=(0, 4))
        return fig, ax

    fig, ax = panel()
    ax.legend(handles=[Line2D([], [], color="C0", label="a proxy of the drawn line")], loc="upper left")
    save(fig, tmp_path / "good.png", NO_SEEDS)
    fig, ax = panel()
    ax.legend(handles=[*ax.lines, Line2D([], [], color="C3", label="least squares")], loc="upper left")
    with pytest.raises(ValueError, match="legend entry 'least squares' is drawn nowhere in its panel"):
        save(fig, tmp_path / "bad.png", NO_SEEDS)
    fig, ax = panel()
    ax.plot([0, 10], [4, 0], color="C0")  # one segment across the panel: its two points lie outside the box
    ax.legend(loc="center")
    with pytest.raises(ValueError, match="a legend box covers data"):
        save(fig, tmp_path / "bad.png", NO_SEEDS)
    fig, ax = panel()
    ax.fill_between([0, 10], [1.5, 1.5], [3.9, 3.9], color="C0", alpha=0.2)  # a band whose outline holds the box
    ax.legend(loc="center")
    with pytest.raises(ValueError, match="a legend box covers data"):
        save(fig, tmp_path / "bad.png", NO_SEEDS)
    assert not (tmp_path / "bad.png").exists()


def test_save_refuses_text_under_eight_pixels_at_the_readmes_850_px_naming_the_width_allowed(tmp_path):
    """By hand: 11 pt at 150 dpi is 22.92 px as saved; shown 850 px wide, a figure saved w px wide shows it at
    22.92 · 850 / w px (w read from the written PNG), and 8 px allows w = 2435 px: 16.0 inches once savefig's 0.1 in
    pad on each side is taken off (16.2 with the pad, 26.7 at the old 1400 px)."""
    import matplotlib.pyplot as plt
    from PIL import Image

    from iclab.report.plots import recording_layout_problems, save, theme

    theme()
    fig, ax = plt.subplots(figsize=(24, 4))
    ax.plot([0, 1], [0, 1])
    with recording_layout_problems(tmp_path / "wide.layout.txt"):
        save(fig, tmp_path / "wide.png", NO_SEEDS)
    width = Image.open(tmp_path / "wide.png").width
    problem = (tmp_path / "wide.layout.txt").read_text()
    assert f"smallest text is {11 / 72 * 150 * 850 / width:.2f} px at the README's 850 px (at least 8 px)" in problem
    assert "draw it at most 16.0 inches wide" in problem
    fig, ax = plt.subplots(figsize=(16, 4))  # its tight box about 13 inches
    ax.plot([0, 1], [0, 1])
    save(fig, tmp_path / "narrower.png", NO_SEEDS)


def test_save_refuses_two_texts_drawn_over_each_other_naming_them(tmp_path):
    import matplotlib.pyplot as plt

    from iclab.report.plots import save, theme

    theme()
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot([0, 1], [0, 1])
    ax.set_title("a panel's title")
    ax.text(0.5, 1.02, "a note on it", transform=ax.transAxes, ha="center", va="bottom")
    with pytest.raises(ValueError, match="texts drawn over each other: 'a note on it' and \"a panel's title\""):
        save(fig, tmp_path / "over.png", NO_SEEDS)
    assert not (tmp_path / "over.png").exists()


def test_save_refuses_a_figure_with_text_at_another_size_or_a_config_key_and_writes_nothing(tmp_path):
    import matplotlib.pyplot as plt

    from iclab.report.plots import TEXT_SIZE, save, theme

    theme()
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="a line")
    ax.legend()
    ax.set_title("a title")
    assert {text.get_fontsize() for text in fig.findobj(plt.Text) if text.get_text()} == {TEXT_SIZE}
    save(fig, tmp_path / "good.png", NO_SEEDS)
    assert (tmp_path / "good.png").stat().st_size > 0 and (tmp_path / "good.pdf").stat().st_size > 0
    fig, ax = plt.subplots()
    ax.text(0.5, 0.5, "a note", fontsize=7)
    with pytest.raises(ValueError, match="text 'a note' at 7 pt: every figure's text is 11 pt"):
        save(fig, tmp_path / "bad.png", NO_SEEDS)
    fig, ax = plt.subplots()
    ax.set_title("rank_deficient_psi")
    with pytest.raises(ValueError, match="text 'rank_deficient_psi': a config key or raw TeX on a figure"):
        save(fig, tmp_path / "bad.png", NO_SEEDS)
    assert not (tmp_path / "bad.png").exists()


@pytest.mark.filterwarnings("ignore:All-NaN slice")  # seaborn's, on the all-NaN heatmap
def test_save_refuses_a_figure_with_a_blank_panel_naming_it_and_writes_nothing(tmp_path):
    """A panel whose values are all NaN (a line, a band, an image, a heatmap's cells, a scatter's points) or that draws
    nothing is named in the error; a panel with one finite value, a legend's panel (axis off) and a colour bar pass."""
    import matplotlib.pyplot as plt
    import numpy as np
    import seaborn as sns

    from iclab.report.plots import declare_flat, save, theme

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
        save(fig, tmp_path / "blank.png", NO_SEEDS)
    assert not any(tmp_path.iterdir())
    fig, (line, band, image, heatmap, scatter, legend) = plt.subplots(1, 6, figsize=(15, 3),
                                                                   layout="constrained")  # its texts apart
    line.plot([0, 1, 2], [np.nan, 1.0, np.nan])
    band.fill_between([0, 1, 2], [np.nan, 0.0, 0.0], [np.nan, 1.0, 1.0])
    image.imshow(np.array([[np.nan, 1.0]]))
    sns.heatmap(np.array([[np.nan, 1.0]]), ax=heatmap, vmin=0, vmax=2)  # one value would tick 1.00 twice, over itself
    scatter.scatter([0.0, np.nan], [1.0, 1.0])
    legend.axis("off")
    for one_value in (line, scatter):
        declare_flat(one_value, "one finite value: this test's point")
    save(fig, tmp_path / "good.png", NO_SEEDS)
    assert (tmp_path / "good.png").stat().st_size > 0


def test_a_flat_panel_is_refused_unless_declared_and_panels_sharing_an_axis_count_together(tmp_path):
    """A constant line on its own axis spans 0 of it (refused, named); declared flat with a reason it passes; on a
    y-axis shared with a panel whose data vary, the two panels' data together fill the axis; a log axis's minor
    ticks (2–9 a decade) set its spacing, so data over 80% of a 1-decade axis are not flat."""
    import matplotlib.pyplot as plt

    from iclab.report.plots import LayoutProblem, declare_flat, save, theme

    theme()
    fig, ax = plt.subplots()
    ax.plot([0, 1, 2], [0.0, 0.0, 0.0])
    ax.set_title("drift")
    with pytest.raises(LayoutProblem, match=r"panel 'drift': its data span 0% of the axis, less than one tick's"):
        save(fig, tmp_path / "flat.png", NO_SEEDS)
    fig, ax = plt.subplots()
    ax.plot([0, 1, 2], [0.0, 0.0, 0.0])
    declare_flat(ax, "the drift is zero by Theorem 6.3's invariant")
    save(fig, tmp_path / "declared.png", NO_SEEDS)
    fig, (left, right) = plt.subplots(1, 2, sharey=True)
    left.plot([0, 1], [4.0, 4.0])
    right.plot([0, 1], [0.0, 16.0])
    save(fig, tmp_path / "shared.png", NO_SEEDS)
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1.2, 8.0])
    ax.set_yscale("log")
    save(fig, tmp_path / "log.png", NO_SEEDS)
    fig, ax = plt.subplots()
    ax.plot([0, 1, 2], [0.50, 0.51, 0.50])
    ax.set_ylim(0, 1)  # ticks every 0.2: a span of 0.01 is less
    with pytest.raises(LayoutProblem, match="its data span 1% of the axis"):
        save(fig, tmp_path / "zoomed_out.png", NO_SEEDS)


def test_twin_axes_need_a_reason(tmp_path):
    import matplotlib.pyplot as plt

    from iclab.report.plots import LayoutProblem, save, theme, twin_axis

    theme()
    for reason in (None, "GD's steps grow by powers of 2, Newton's count by one"):
        fig, ax = plt.subplots()
        ax.plot([0, 1, 2], [0, 1, 2])
        ax.set_title("counts")
        twin = ax.twinx() if reason is None else twin_axis(ax, reason)
        twin.plot([0, 1, 2], [1, 4, 16], color="C1")
        if reason is None:
            with pytest.raises(LayoutProblem, match="panel 'counts' has a twin y-axis with no reason"):
                save(fig, tmp_path / "twin.png", NO_SEEDS)
        else:
            save(fig, tmp_path / "twin.png", NO_SEEDS)


def test_a_figure_of_one_seed_says_so_read_from_its_cube(tmp_path):
    """The note is added below the figure where the cube's seed dimension has one entry, and not for three seeds or a
    cube without seeds."""
    import matplotlib.pyplot as plt
    import numpy as np

    from iclab.report.plots import ONE_SEED_NOTE, save, theme

    theme()
    for seeds, noted in ((1, True), (3, False), (None, False)):
        cube = xr.Dataset() if seeds is None else xr.Dataset({"risk": ("seed", np.ones(seeds))})
        fig, ax = plt.subplots()
        ax.plot([0, 1], [0, 1])
        texts = []
        fig.savefig = lambda *args, **kwargs: texts.extend(t.get_text() for t in fig.findobj(plt.Text))
        save(fig, tmp_path / f"seeds{seeds}.png", cube)
        assert (ONE_SEED_NOTE in texts) is noted, seeds


def test_a_figure_legend_stays_above_the_one_seed_note_in_the_saved_image(tmp_path):
    """Read from the written PNG: the rows holding ink at the image's foot are the legend's, a blank gap, then the
    note's. Saved with bbox_inches="tight" and not pinned (``pin_figure_legends``), the legend moves to the foot of
    the box around everything drawn, onto the note: one band of ink, and the checks measured another layout."""
    import matplotlib.pyplot as plt
    import numpy as np
    from PIL import Image

    from iclab.report.plots import save, theme

    theme()
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.plot([0, 1], [0, 1], label="a line")
    fig.legend(loc="lower center", frameon=False)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    save(fig, tmp_path / "legend.png", xr.Dataset({"risk": ("seed", np.ones(1))}))
    image = np.asarray(Image.open(tmp_path / "legend.png").convert("L"))
    foot = image[-int(0.6 * 150):]  # the bottom 0.6 inch: the legend, then the note
    inked = (foot < 128).any(axis=1)
    bands = np.count_nonzero(np.diff(inked.astype(int)) == 1) + int(inked[0])  # runs of inked rows
    assert bands == 2


def test_a_workflow_run_records_a_layout_problem_draws_the_figure_and_a_test_still_fails(tmp_path):
    """Under recording_layout_problems a legend over data is written to the problems file, the figure still drawn;
    a figure without problems writes an empty file; without it the same figure raises and writes nothing; a blank
    panel (a data problem) raises either way."""
    import matplotlib.pyplot as plt
    import numpy as np

    from iclab.report.plots import LayoutProblem, recording_layout_problems, save, theme

    theme()

    def covered():
        fig, ax = plt.subplots()
        ax.plot([0, 10], [4, 0], label="a line")
        ax.legend(loc="center")
        return fig

    with recording_layout_problems(tmp_path / "covered.layout.txt"):
        save(covered(), tmp_path / "covered.png", NO_SEEDS)
    assert (tmp_path / "covered.png").stat().st_size > 0
    assert (tmp_path / "covered.layout.txt").read_text().startswith("covered: a legend box covers data of 'a panel'")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    with recording_layout_problems(tmp_path / "fine.layout.txt"):
        save(fig, tmp_path / "fine.png", NO_SEEDS)
    assert (tmp_path / "fine.layout.txt").read_text() == ""
    with pytest.raises(LayoutProblem, match="a legend box covers data"):
        save(covered(), tmp_path / "strict.png", NO_SEEDS)
    assert not (tmp_path / "strict.png").exists()
    fig, ax = plt.subplots()
    ax.plot([0, 1], [np.nan, np.nan])
    with pytest.raises(ValueError, match="blank panels"), recording_layout_problems(tmp_path / "blank.layout.txt"):
        save(fig, tmp_path / "blank.png", NO_SEEDS)


def test_claim_intervals_draws_each_rows_interval_its_prompts_part_and_region_by_hand():
    """A ≈ row with seeds 0.1, 0.3 (mean 0.2, seed s.e. 0.1) and prompt s.e. 0.05 at look 1 (96%): the thick bar is
    0.2 ± hypot(t₁·0.1, z·0.05) with t₁ = 15.89 (one degree of freedom), z = 2.054, the thin one 0.2 ± z·0.05, the
    grey region ±0.25 (the margin); a > row gets a dashed line at its margin, and each label carries the verdict."""
    import matplotlib.pyplot as plt
    from matplotlib.collections import PolyCollection

    from iclab.stats.claims import Claim
    from iclab.stats.estimates import Estimate, exact
    from iclab.report.plots import claim_intervals

    measured = Estimate((0.1, 0.3), mc_se=0.05, trained=True)
    near = Claim("near", "hand", measured, "≈", exact(0.0), "hand", 0.25, "hand")
    above = Claim("above", "hand", measured, ">", exact(0.0), "hand", 0.05, "hand")
    fig, ax = plt.subplots()
    claim_intervals(ax, [near, above], ["a", "b"])
    t, z = 15.8945, 2.05375
    thick = np.hypot(t * 0.1, z * 0.05)
    lines = [line.get_xdata() for line in ax.get_lines()]
    np.testing.assert_allclose(lines[0], [0.2 - thick, 0.2 + thick], rtol=1e-4)
    np.testing.assert_allclose(lines[1], [0.2 - z * 0.05, 0.2 + z * 0.05], rtol=1e-4)
    region = [c for c in ax.collections if isinstance(c, PolyCollection)][0].get_paths()[0].vertices[:, 0]
    assert (region.min(), region.max()) == (-0.25, 0.25)
    assert [0.05, 0.05] in [list(line.get_xdata()) for line in ax.get_lines()]  # the > row's margin line
    assert [label.get_text() for label in ax.get_yticklabels()] == ["a: inconclusive", "b: inconclusive"]
    plt.close(fig)


def lsa_convergence_cube(flow_end: float) -> xr.Dataset:
    """One isotropic spectrum, 2 seeds, the ODE's distance from 0.994 to ``flow_end`` and SGD beside it."""
    times = np.linspace(0, 0.02, 50)
    flow = 0.994 + (flow_end - 0.994) * times / times[-1]  # (flow_time,)
    sgd = np.stack([flow[[0, -1]], flow[[0, -1]] * 1.0001])  # (seed, snapshot_time)
    return xr.Dataset(
        {"flow_distance": (("spectrum", "flow_time"), flow[None]),
         "sgd_distance": (("spectrum", "seed", "snapshot_time"), sgd[None]),
         "covariance": (("spectrum", "row"), [[1.0, 1.0]]), "n_train": ("spectrum", [20]),
         "gamma_inverse": (("spectrum", "row", "col"), [[[0.9, 0.0], [0.0, 0.9]]]),
         "product_learned": (("spectrum", "seed", "row", "col"), [[[[0.1, 0.0], [0.0, 0.1]]] * 2])},
        coords={"spectrum": ["isotropic"], "seed": [0, 1], "flow_time": times, "snapshot_time": [0.0, 0.02],
                "row": [0, 1], "col": [0, 1]})


def test_lsa_convergence_declares_its_distance_panel_flat_only_where_the_ode_itself_has_not_moved(monkeypatch):
    """A smoke run's 2 steps: the ODE moves 0.994 → 0.993, the panel is declared flat (with the ODE's path as the
    reason); a run where the ODE halves the distance is not declared, so the flat rule still judges it."""
    import matplotlib.pyplot as plt

    from iclab.experiments.lsa_convergence import figure as module
    from iclab.report.plots import FLAT_REASON

    drawn = []
    monkeypatch.setattr(module, "save", lambda fig, png, cube: drawn.append(fig))
    module.figure(lsa_convergence_cube(0.993), "unused.png")
    module.figure(lsa_convergence_cube(0.4), "unused.png")
    short, converging = (fig.axes[0] for fig in drawn)
    assert getattr(short, FLAT_REASON) == "trained for t = 0.02 only: the ODE itself moves from 0.994 to 0.993"
    assert getattr(converging, FLAT_REASON, None) is None
    for fig in drawn:
        plt.close(fig)
