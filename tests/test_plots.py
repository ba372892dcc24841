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
        learners = sorted({learner for s in settings.values() for learner in s.labels + s.baselines} & set(LEARNER_LABELS))
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
