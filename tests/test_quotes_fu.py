"""The Fu–Chen–Jia–Sharan page's quotes (probe_layers, probe_similarity, probe_illconditioned, probe_hidden_size) on
small hand-built cubes, every expected text worked out by hand in the comments, each chosen so that the nearest wrong
computation (the mean of the seeds' best counts instead of the best count of their mean, seed 0 alone, an argmax on
a flat layer, a growth counted from layer 0, an arithmetic mean of GD's factors, a ratio upside down, κ's runs
swapped, the last layer read where a shallower model has none, positions k > d for k ≥ d, an error not divided by d)
shows a different text."""

from __future__ import annotations

import numpy as np
import xarray as xr

from iclab.experiments import quotes

NEWTON = [0, 1, 2, 3, 4, 5]
GD = [1, 2, 4, 8, 16]


def quoted(experiment: str, cube: xr.Dataset) -> dict[str, str]:
    return {quote.name: quote.text for quote in quotes(experiment, cube)}


def peaked(size: int, peaks: dict[int, float], base: float = 0.3) -> list[float]:
    """A similarity row over a grid of ``size`` counts: ``base`` but at the indices of ``peaks``."""
    row = [base] * size
    for index, value in peaks.items():
        row[index] = value
    return row


def similarity_layers(grid: int, seed_peaks: list[list[dict[int, float] | None]]) -> np.ndarray:
    """(seed, layer, count): per seed and layer a peaked row, or None for a flat one (0.5 everywhere)."""
    return np.array([[[0.5] * grid if peaks is None else peaked(grid, peaks) for peaks in layers]
                     for layers in seed_peaks])


def gpt2_similarities() -> tuple[np.ndarray, np.ndarray]:
    """soe_newton and soe_gd of a 4-layer model (seed, layer, count), seeds 0 and 1.

    Newton: layer 0 flat (no match: an argmax would say 0); layer 1 best at 1 in both seeds; layer 2 best at 2
    (0.9, and 0.8 at 4) in seed 0 and at 4 (0.9, 0.5 at 2) in seed 1: the mean is 0.70 at 2 and 0.85 at 4, so 4
    (seed 0 alone 2, the seeds' best counts averaged 3); layer 3 best at 5 in both.
    GD (1, 2, 4, 8, 16): layer 0 flat, then best at 2, 8 and 16 in both seeds."""
    newton = similarity_layers(6, [[None, {1: 0.9}, {2: 0.9, 4: 0.8}, {5: 0.9}],
                                   [None, {1: 0.9}, {4: 0.9, 2: 0.5}, {5: 0.9}]])
    gd = similarity_layers(5, [[None, {1: 0.9}, {3: 0.9}, {4: 0.9}]] * 2)
    return newton, gd


def similarity_cube() -> xr.Dataset:
    """probe_similarity at d = 5: GPT-2 (layers 0–3) and an LSTM one layer shallower (its layer 3 NaN), the same
    similarities on the layers they share. Last layer with least squares: GPT-2 0.96, 0.98 (layer 2: 0.5); the LSTM's
    layer 2 0.70, 0.72. With online GD: GPT-2 0.70, 0.80; LSTM 0.60, 0.64.
    Output: Newton [.5, .6, .7, .95, .8, .7] and [.5, .6, .7, .8, .9, .7] (mean .875 at 3; the seeds' maxima averaged:
    .925), GD [.5, .6, .9, .7, .6] both seeds, online GD 0.81, 0.83."""
    newton, gd = gpt2_similarities()  # (seed, layer, count)
    shallow = np.where(np.arange(4)[None, :, None] == 3, np.nan, 1.0)  # the LSTM has no layer 3
    ols = np.array([[[0.5, 0.5, 0.5, 0.96], [0.5, 0.5, 0.5, 0.98]],
                    [[0.5, 0.5, 0.70, np.nan], [0.5, 0.5, 0.72, np.nan]]])  # (probed, seed, layer)
    online = np.array([[[0.4, 0.4, 0.4, 0.70], [0.4, 0.4, 0.4, 0.80]],
                       [[0.4, 0.4, 0.60, np.nan], [0.4, 0.4, 0.64, np.nan]]])
    output_newton = [[0.5, 0.6, 0.7, 0.95, 0.8, 0.7], [0.5, 0.6, 0.7, 0.8, 0.9, 0.7]]  # (seed, count)
    output_gd = [[0.5, 0.6, 0.9, 0.7, 0.6]] * 2
    per_model = ("d", "probed", "seed")
    return xr.Dataset(
        {"soe_newton": ((*per_model, "layer", "newton_iterations"), np.stack([newton, newton * shallow])[None]),
         "soe_gd": ((*per_model, "layer", "gd_steps"), np.stack([gd, gd * shallow])[None]),
         "soe_ols": ((*per_model, "layer"), ols[None]),
         "soe_online_gd": ((*per_model, "layer"), online[None]),
         "output_soe_newton": ((*per_model, "newton_iterations"), np.array([[output_newton] * 2])),
         "output_soe_gd": ((*per_model, "gd_steps"), np.array([[output_gd] * 2])),
         "output_soe_online_gd": (per_model, [[[0.81, 0.83]] * 2])},
        coords={"d": [5], "probed": ["gpt2", "lstm"], "seed": [0, 1], "layer": [0, 1, 2, 3],
                "newton_iterations": NEWTON, "gd_steps": GD})


def test_probe_similarity_quotes_by_hand():
    found = quoted("probe_similarity", similarity_cube())
    # the best count of the seeds' mean similarity, "none" on the flat layer 0 (not its argmax 0; at layer 2 not seed
    # 0's 2 nor the seeds' best counts averaged, 3)
    assert found["gpt2_newton_by_layer"] == "none, 1, 4, 5"
    assert found["gpt2_newton_by_layer_seed0"] == "none, 1, 2, 5"
    assert found["gpt2_newton_by_layer_seed1"] == "none, 1, 4, 5"
    assert found["gpt2_gd_by_layer"] == "none, 2, 8, 16"
    # from layer 1 (not layer 0, which has no match): Newton 1 → 4 → 5 adds 3, 1, on average (5 − 1)/2 = 2.0; GD
    # 2 → 8 → 16 multiplies by 4, 2 (upside down 0.25, 0.5), geometric mean √(16/2) = 2.83 (arithmetic mean 3.0)
    assert found["gpt2_newton_added"] == "3, 1" and found["gpt2_newton_per_layer"] == "2.0"
    assert found["gpt2_gd_multiplied"] == "4, 2" and found["gpt2_gd_factor_per_layer"] == "2.8"
    # the last layer (3), mean over seeds: (0.96 + 0.98)/2 (seed 0 alone 0.960), (0.70 + 0.80)/2
    assert found["gpt2_last_layer_ols"] == "0.970" and found["gpt2_last_layer_online_gd"] == "0.750"
    # the output: the seeds' mean, then its best count (the seeds' maxima averaged would say 0.925)
    assert found["gpt2_output_newton"] == "0.875" and found["gpt2_output_newton_count"] == "3"
    assert found["gpt2_output_gd"] == "0.900" and found["gpt2_output_gd_count"] == "4"
    assert found["gpt2_output_online_gd"] == "0.820"
    # the LSTM on its own layers 0–2: its last layer is 2 (layer 3 is NaN), growth from layer 1 over one layer
    assert found["lstm_newton_by_layer"] == "none, 1, 4" and found["lstm_gd_by_layer"] == "none, 2, 8"
    assert found["lstm_newton_per_layer"] == "3.0" and found["lstm_gd_factor_per_layer"] == "4.0"
    assert found["lstm_last_layer_ols"] == "0.710" and found["lstm_last_layer_online_gd"] == "0.620"
    # the paper's Table 1 beside them (their d = 20 models, the same on every cube)
    assert [found[f"paper_transformer_{name}"] for name in ("newton", "gd", "online_gd")] == ["0.991", "0.957", "0.806"]
    assert [found[f"paper_lstm_{name}"] for name in ("newton", "gd", "online_gd")] == ["0.920", "0.916", "0.954"]


def illconditioned_cube() -> xr.Dataset:
    """probe_illconditioned: κ = 100 first, then the κ = 1 run; one seed, layers 0–2, Newton grid 0–3, GD 1–8.

    κ = 100: Newton best at 0, 2, 2 by layer, GD at 1, 8, 4; κ = 1: Newton 0, 1, 3, GD 1, 2, 8. Last layer with least
    squares 0.90 (κ = 100) and 0.97 (κ = 1), online GD 0.80 and 0.75. κ = 100's output: Newton [.5, .6, .9, .7], GD
    [.5, .6, .7, .95], online GD 0.8."""
    newton = [[{0: 0.9}, {2: 0.9}, {2: 0.9}], [{0: 0.9}, {1: 0.9}, {3: 0.9}]]  # (κ, layer): the peak
    gd = [[{0: 0.9}, {3: 0.9}, {2: 0.9}], [{0: 0.9}, {1: 0.9}, {3: 0.9}]]
    run = ("condition_number", "d", "probed", "seed")
    shape = (2, 1, 1, 1)
    return xr.Dataset(
        {"soe_newton": ((*run, "layer", "newton_iterations"),
                        np.array([similarity_layers(4, [peaks]) for peaks in newton]).reshape(*shape, 3, 4)),
         "soe_gd": ((*run, "layer", "gd_steps"),
                    np.array([similarity_layers(4, [peaks]) for peaks in gd]).reshape(*shape, 3, 4)),
         "soe_ols": ((*run, "layer"), np.array([[0.5, 0.5, 0.90], [0.5, 0.5, 0.97]]).reshape(*shape, 3)),
         "soe_online_gd": ((*run, "layer"), np.array([[0.4, 0.4, 0.80], [0.4, 0.4, 0.75]]).reshape(*shape, 3)),
         "output_soe_newton": ((*run, "newton_iterations"),
                               np.array([[0.5, 0.6, 0.9, 0.7], [0.1] * 4]).reshape(*shape, 4)),
         "output_soe_gd": ((*run, "gd_steps"), np.array([[0.5, 0.6, 0.7, 0.95], [0.1] * 4]).reshape(*shape, 4)),
         "output_soe_online_gd": (run, np.array([0.8, 0.1]).reshape(shape))},
        coords={"condition_number": [100.0, 1.0], "d": [5], "probed": ["gpt2"], "seed": [0], "layer": [0, 1, 2],
                "newton_iterations": [0, 1, 2, 3], "gd_steps": [1, 2, 4, 8]})


def test_probe_illconditioned_quotes_by_hand():
    found = quoted("probe_illconditioned", illconditioned_cube())
    assert found["newton_by_layer"] == "0, 2, 2" and found["well_newton_by_layer"] == "0, 1, 3"  # not swapped
    assert found["newton_last_layer"] == "2" and found["well_newton_last_layer"] == "3"
    assert found["gd_by_layer"] == "1, 8, 4" and found["well_gd_by_layer"] == "1, 2, 8"
    assert found["gd_last_layer"] == "4" and found["well_gd_last_layer"] == "8"
    # κ = 100 against κ = 1, layer by layer: Newton 0 − 0, 2 − 1, 2 − 3 (the other way: 0, −1, 1); GD 1/1, 8/2, 4/8
    # (upside down: 1, 0.25, 2), its largest 4
    assert found["newton_minus_well_by_layer"] == "0, 1, −1"
    assert found["gd_over_well_by_layer"] == "1, 4, 0.5" and found["gd_over_well_largest"] == "4"
    assert found["last_layer_ols"] == "0.900" and found["well_last_layer_ols"] == "0.970"
    assert found["last_layer_online_gd"] == "0.800" and found["well_last_layer_online_gd"] == "0.750"
    assert found["output_newton"] == "0.900" and found["output_newton_count"] == "2"  # κ = 100's, not κ = 1's 0.100
    assert found["output_gd"] == "0.950" and found["output_gd_count"] == "8"
    assert found["output_online_gd"] == "0.800"


def layers_cube() -> xr.Dataset:
    """probe_layers at d = 2, positions 0–4 (past d: 2, 3, 4), seeds 0 and 1; GPT-2 layers 0–2, the LSTM 0–1 (its
    layer 2 NaN). GPT-2's probe: layer 0 at 2.0 everywhere; layer 1 2, 1.6, 1.2, 1.0, 0.8; layer 2 2, 1, 0.2, 0.1,
    0.06 (seed 0) and 2, 1, 0.2, 0.3, 0.06 (seed 1). GPT-2's output 2, 1, 0.2, 0.1, then 0.05 and 0.07. The LSTM's
    layer 1 and output 2, 1.2, 1.0, 0.8, 0.6."""
    gpt2 = [[2.0] * 5, [2, 1.6, 1.2, 1.0, 0.8], [2, 1, 0.2, 0.1, 0.06]]  # (layer, position)
    lstm = [[2.0] * 5, [2, 1.2, 1.0, 0.8, 0.6], [np.nan] * 5]
    probe = np.array([[gpt2, gpt2], [lstm, lstm]])  # (probed, seed, layer, position)
    probe[0, 1, 2, 3] = 0.3
    risk = np.array([[[2, 1, 0.2, 0.1, 0.05], [2, 1, 0.2, 0.1, 0.07]], [lstm[1], lstm[1]]])  # (learner, seed, pos.)
    return xr.Dataset(
        {"probe_risk": (("d", "probed", "seed", "layer", "position"), probe[None]),
         "risk": (("d", "learner", "seed", "position"), risk[None])},
        coords={"d": [2], "probed": ["gpt2", "lstm"], "learner": ["gpt2", "lstm"], "seed": [0, 1],
                "layer": [0, 1, 2], "position": np.arange(5)})


def test_probe_layers_quotes_by_hand():
    found = quoted("probe_layers", layers_cube())
    # error/d, mean over seeds: layer 2's mean 2, 1, 0.2, 0.2, 0.06 → /2: 1, 0.5, 0.1, 0.1, 0.03; past d (k ≥ 2)
    # (0.1 + 0.1 + 0.03)/3 = 0.0767 (k > 2: 0.065; seed 0 alone 0.060; not /d 0.15); layer 1: (0.6 + 0.5 + 0.4)/3
    assert found["gpt2_probe_past_d"] == "1.0, 0.50, 0.077"
    assert found["gpt2_probe_last_query"] == "1.0, 0.40, 0.030" and found["gpt2_last_layer_last_query"] == "0.030"
    # the output /2: 1, 0.5, 0.1, 0.05, 0.03: past d (0.1 + 0.05 + 0.03)/3 = 0.060, last 0.030
    assert found["gpt2_output_past_d"] == "0.060" and found["gpt2_output_last_query"] == "0.030"
    # 0.0767/0.060 − 1 = 27.8% (upside down −21.7%; k > d: 62.5%)
    assert found["gpt2_last_layer_above_output"] == "27.8%"
    # the LSTM on its own layers 0–1: (0.5 + 0.4 + 0.3)/3 = 0.40, last 0.30
    assert found["lstm_probe_past_d"] == "1.0, 0.40" and found["lstm_probe_last_query"] == "1.0, 0.30"
    assert found["lstm_output_past_d"] == "0.40" and found["lstm_output_last_query"] == "0.30"


def hidden_size_cube() -> xr.Dataset:
    """probe_hidden_size at d = 2, hidden 2 and 4, seeds 0 and 1, positions 0–3. tail_risk 1.9, 2.1 (hidden 2) and
    0.1, 0.3 (hidden 4), its s.e. 0.02, 0.04 and 0.01, 0.03; the last position's risk 1.8, 2.0 and 0.04, 0.08; least
    squares at position 0: 1.96, 2.00."""
    hidden_risk = np.full((2, 2, 4), 1.0)  # (hidden, seed, position)
    hidden_risk[:, :, -1] = [[1.8, 2.0], [0.04, 0.08]]
    ols = np.zeros((1, 2, 4))  # (learner, seed, position)
    ols[0, :, 0] = [1.96, 2.00]
    return xr.Dataset(
        {"tail_risk": (("d", "hidden", "seed"), [[[1.9, 2.1], [0.1, 0.3]]]),
         "tail_risk_sem": (("d", "hidden", "seed"), [[[0.02, 0.04], [0.01, 0.03]]]),
         "hidden_risk": (("d", "hidden", "seed", "position"), hidden_risk[None]),
         "risk": (("d", "learner", "seed", "position"), ols[None])},
        coords={"d": [2], "hidden": [2, 4], "seed": [0, 1], "learner": ["ols"], "position": np.arange(4)})


def test_probe_hidden_size_quotes_by_hand():
    found = quoted("probe_hidden_size", hidden_size_cube())
    # mean over seeds /d: 2.0/2, 0.2/2 (seed 0 alone 0.950, 0.050; not /d 2.000, 0.200)
    assert found["past_d"] == "1.000, 0.100" and found["past_d_hidden4"] == "0.100"
    assert found["past_d_sem"] == "0.020"  # 0.04/2, the largest
    assert found["last_query"] == "0.950, 0.030" and found["last_query_hidden4"] == "0.030"  # 1.9/2, 0.06/2
    assert found["zero_predictor"] == "0.990"  # (1.96 + 2.00)/2/2 (seed 0 alone 0.980)
