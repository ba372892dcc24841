"""Risks pooled over bins of prompt positions (evaluate.bin_means, experiments.base.log_position_bins)."""

import math

import numpy as np
import pytest

from iclab.pipeline.evaluate import bin_means
from iclab.stats.intervals import mean_and_sem
from iclab.experiments.base import log_position_bins


@pytest.mark.parametrize(("first", "last", "per_octave"), [(4, 128, 3), (1, 1, 2), (2, 8, 2), (3, 100, 1), (5, 6, 4)])
def test_log_position_bins_partition_the_positions_into_doublings(first, last, per_octave):
    bins = log_position_bins(first, last, per_octave)
    covered = [k for lo, hi in bins for k in range(lo, hi + 1)]
    assert covered == list(range(first, last + 1))  # every position once, in order
    # each bin spans at most a factor 2^(1/per_octave), up to rounding and the merged last bin
    for lo, hi in bins[:-1]:
        assert (hi + 1) / lo <= 2 ** (1 / per_octave) * (1 + 1 / lo) + 1e-12
    assert len(bins) <= math.ceil(math.log2(last / first) * per_octave) + 1
    with pytest.raises(ValueError, match="first=9, last=4"):
        log_position_bins(9, 4, per_octave)


def binned_stats(errors: np.ndarray, bins: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """What the evaluation stores per bin: the mean and sem over prompts of each prompt's bin mean."""
    return mean_and_sem(bin_means(errors, bins))


def test_binned_stats_average_each_prompt_over_the_bin_before_the_prompts():
    rng = np.random.default_rng(0)
    errors = rng.exponential(size=(50, 9))  # (B, K)
    bins = [(0, 0), (1, 3), (4, 8)]
    mean, sem = binned_stats(errors, bins)
    for b, (lo, hi) in enumerate(bins):
        per_prompt = [row[lo : hi + 1].sum() / (hi + 1 - lo) for row in errors]  # a plain loop
        assert mean[b] == pytest.approx(np.mean(per_prompt), rel=1e-12)
        assert sem[b] == pytest.approx(np.std(per_prompt, ddof=1) / math.sqrt(50), rel=1e-12)
    errors[3, 5] = np.nan  # a missing position leaves its whole bin missing
    assert np.isnan(binned_stats(errors, bins)[0][2]) and np.isfinite(binned_stats(errors, bins)[0][:2]).all()


def test_binned_standard_error_counts_the_correlation_within_a_prompt():
    """Monte Carlo: the sem of a bin of w positions is the per-position sem / √w for independent
    positions, and the per-position sem for positions that repeat one value."""
    rng = np.random.default_rng(1)
    independent = rng.normal(size=(20_000, 16))
    repeated = np.repeat(rng.normal(size=(20_000, 1)), 16, axis=1)
    for errors, expected_ratio in ((independent, 1 / 4), (repeated, 1.0)):
        _, pointwise = mean_and_sem(errors)
        _, pooled = binned_stats(errors, [(0, 15)])
        assert pooled[0] / pointwise.mean() == pytest.approx(expected_ratio, rel=0.03)


def test_the_risk_cube_keeps_group_means_of_each_learners_errors_per_prompt_group():
    """risk_groups: a baseline's repeat along seed; each group is the plain mean of its prompts' errors."""
    from iclab.pipeline.evaluate import risk_dataset

    rng = np.random.default_rng(1)
    errors = {(0, 0): rng.exponential(size=(64, 3)), (0, 1): rng.exponential(size=(64, 3)),
              (1, None): rng.exponential(size=(64, 3))}
    ds = risk_dataset(errors, ["model", "baseline"], 1, [0, 1], 3)
    assert ds.risk_groups.dims == ("learner", "seed", "position", "prompt_group") and ds.sizes["prompt_group"] == 32
    np.testing.assert_allclose(ds.risk_groups.sel(learner="model", seed=1).isel(prompt_group=5),
                               errors[0, 1][10:12].mean(axis=0), rtol=1e-6)  # 64 prompts: groups of 2
    np.testing.assert_allclose(ds.risk_groups.mean("prompt_group"), ds.risk, rtol=1e-6)
    np.testing.assert_array_equal(ds.risk_groups.sel(learner="baseline", seed=0),
                                  ds.risk_groups.sel(learner="baseline", seed=1))


def test_a_setting_caps_the_positions_a_learner_predicts():
    """analysis["predicted_points"] = {label: n}: that learner's positions from n on are NaN (lsa_shifts compares GPT-2
    at M ≤ N only); a model's own position table still caps it, and other labels predict every position."""
    import torch
    from types import SimpleNamespace

    from iclab.pipeline.evaluate import all_predictions
    from iclab.experiments.base import Setting
    from iclab.tasks import Batch

    class Sum(torch.nn.Module):  # ŷ_k = Σ_j x_kj: a predictor whose every value is checkable by hand
        def __init__(self, max_points=None):
            super().__init__()
            self.unused = torch.nn.Parameter(torch.zeros(1))
            if max_points is not None:
                self.max_points = max_points

        def forward(self, xs, ys):
            return xs.sum(-1)

    xs = np.random.default_rng(0).normal(size=(4, 6, 2))
    batch = Batch(xs=xs, ys=np.zeros((4, 6)), betas=np.zeros((4, 2)), covariances=np.ones((4, 2)))
    setting = Setting(experiment="x", coords={}, data={}, task={}, models=[], baselines=[],
                      analysis={"predicted_points": {"gpt2": 3}})
    models = {("gpt2", 0): SimpleNamespace(module=Sum(max_points=5)), ("gpt2", 1): SimpleNamespace(module=Sum(2)),
              ("lsa", 0): SimpleNamespace(module=Sum())}
    out = all_predictions(setting, batch, models, chunk_size=3)
    for key, shown in ((("gpt2", 0), 3), (("gpt2", 1), 2), (("lsa", 0), 6)):
        np.testing.assert_allclose(out[key][:, :shown], xs[:, :shown].sum(-1), rtol=1e-5, err_msg=str(key))  # float32
        assert np.isnan(out[key][:, shown:]).all(), key
