"""The Zhang-Frei-Bartlett page's quotes (lsa_convergence, lsa_rates, lsa_shifts, random_covariance, zfb_figure1) on
small hand-built cubes, every expected text worked out by hand in the comments, each chosen so that the nearest wrong
computation (another seed averaging, another position or N, a floor not subtracted, a ratio upside down, the
conditions in the cube's order) shows a different text."""

from __future__ import annotations

import numpy as np
import xarray as xr

from iclab.experiments import quotes


def quoted(experiment: str, cube: xr.Dataset) -> dict[str, str]:
    return {quote.name: quote.text for quote in quotes(experiment, cube)}


def lsa_convergence_cube() -> xr.Dataset:
    """Two spectra, two seeds, SGD snapshots at t = 0 and 2 (every t = 0 distance 0.5), the flow at t = 0 and 2.

    SGD's last distance: isotropic 0.0100, 0.0060; anisotropic 0.0090, 0.0110. The flow's: 2.4e-12 and 3.2e-7."""
    sgd = np.full((2, 2, 2), 0.5)  # (spectrum, seed, snapshot_time)
    sgd[:, :, -1] = [[0.0100, 0.0060], [0.0090, 0.0110]]
    flow = np.array([[1.0, 2.4e-12], [1.0, 3.2e-7]])  # (spectrum, flow_time)
    return xr.Dataset(
        {"sgd_distance": (("spectrum", "seed", "snapshot_time"), sgd),
         "flow_distance": (("spectrum", "flow_time"), flow)},
        coords={"spectrum": ["isotropic", "anisotropic"], "seed": [0, 1], "snapshot_time": [0.0, 2.0],
                "flow_time": [0.0, 2.0]})


def test_lsa_convergences_quotes_by_hand():
    found = quoted("lsa_convergence", lsa_convergence_cube())
    # arithmetic means over seeds, as the figure annotates: 0.0080 and 0.0100 (geometric: 0.0077, 0.0099; seed 0
    # alone 0.0100, 0.0090; the first snapshot 0.5)
    assert found["sgd_end_isotropic"] == "0.0080" and found["sgd_end_anisotropic"] == "0.0100"
    assert found["sgd_end"] == "0.0080–0.0100"
    # one digit, the exponent unpadded (Python's own: 3e-07); the flow's start would show 1e0
    assert found["flow_end_isotropic"] == "2e-12" and found["flow_end_anisotropic"] == "3e-7"


def lsa_rates_cube() -> xr.Dataset:
    """N = 10, 20, 40 (log N equally spaced by ln 2: a regression slope over the three is (y₄₀ − y₁₀)/(2 ln 2)), two
    seeds, M = 0–4 (the figure's small M: M ≤ max(2, 4 // 50) = 2, so M = 1, 2).

    Trained floors: seed 0 6.4, 1.6, 0.1; seed 1 1.6, 0.8, 0.3 (means 4.0, 1.2, 0.2). The limit's floor 1.0, 0.3,
    0.0625. At N = 40: the LSA's risk at M = 1, 2, 3, 4: seed 0 2.2, 1.2, 0.9, 0.9; seed 1 1.8, 0.8, 0.9, 0.9; the
    limit's error 1.0625, 0.3125, then 0.2, 0.1. Every other N's risk is 5.0 (a wrong N gives slope 0)."""
    risk = np.full((3, 1, 2, 5), 5.0)  # (n, learner, seed, position)
    risk[2, 0, :, 1:] = [[2.2, 1.2, 0.9, 0.9], [1.8, 0.8, 0.9, 0.9]]
    theory_error = np.full((3, 5), 5.0)  # (n, position)
    theory_error[2, 1:] = [1.0625, 0.3125, 0.2, 0.1]
    trained_floor = np.array([[6.4, 1.6], [1.6, 0.8], [0.1, 0.3]])  # (n, seed)
    return xr.Dataset(
        {"risk": (("n", "learner", "seed", "position"), risk),
         "theory_error": (("n", "position"), theory_error),
         "trained_theory_floor": (("n", "seed"), trained_floor),
         "theory_floor": ("n", [1.0, 0.3, 0.0625])},
        coords={"n": [10, 20, 40], "learner": ["lsa"], "seed": [0, 1], "position": np.arange(5)})


def test_lsa_rates_quotes_by_hand():
    found = quoted("lsa_rates", lsa_rates_cube())
    # per seed: ln(0.1/6.4)/(2 ln 2) = −3, ln(0.3/1.6)/(2 ln 2) = −1.2075; mean −2.104
    # (the slope of the seed means' floor: ln(0.2/4.0)/(2 ln 2) = −2.161 → −2.16)
    assert found["floor_slope"] == "−2.10"
    assert found["floor_slope_theory"] == "−2.00"  # ln(0.0625)/(2 ln 2); the middle N does not count
    # error above the floor at N = 40, M = 1, 2: means 2.0, 1.0 less the trained floors' mean 0.2: 1.8, 0.8;
    # ln(0.8/1.8)/ln 2 = −1.17 (floor not subtracted: −1.00; over M = 1–4 another slope)
    assert found["m_slope"] == "−1.17"
    assert found["m_slope_theory"] == "−2.00"  # 1.0, 0.25 above 0.0625 (not subtracted: ln(0.3125/1.0625)/ln 2 = −1.77)
    # the seed means' floors at N = 20, 40: ln(0.2/1.2)/ln 2 = −2.585 (the seeds' own slopes −4, −1.415: mean −2.71)
    assert found["floor_slope_last_two"] == "−2.58"
    assert found["floor_slope_last_two_theory"] == "−2.26"  # ln(0.0625/0.3)/ln 2 = −2.263 (the whole grid's: −2.00)


def lsa_shifts_cube() -> xr.Dataset:
    """Conditions in the cube's order c = 2, 0.5, 1 and noisy labels (no c), two seeds, M = 0–3, N = 2.

    The LSA's error at M = N = 2: c = 2 30, 34; c = 0.5 0.41, 0.4333; c = 1 5.0, 5.0; noisy labels 1e4. At M = 3
    every error is 99; GPT-2's is 7.0 everywhere. The LSA's gain: c = 0.5 0.2, 0.3; c = 1 1, 1; c = 2 4.4, 4.4."""
    risk = np.full((4, 2, 2, 4), 7.0)  # (condition, learner, seed, position)
    risk[:, 0, :, 3] = 99.0
    risk[:, 0, :, 2] = [[30.0, 34.0], [0.41, 0.4333], [5.0, 5.0], [1e4, 1e4]]
    gain = np.array([[4.4, 4.4], [0.2, 0.3], [1.0, 1.0], [np.nan, np.nan]])  # (condition, seed)
    return xr.Dataset(
        {"risk": (("condition", "learner", "seed", "position"), risk),
         "lsa_gain": (("condition", "seed"), gain),
         "covariate_scale": ("condition", [2.0, 0.5, 1.0, np.nan]),
         "train_n": ("condition", [2, 2, 2, 2])},
        coords={"condition": ["covariate c=2", "covariate c=0.5", "covariate c=1", "noisy labels"],
                "learner": ["lsa", "gpt2"], "seed": [0, 1], "position": np.arange(4)})


def test_lsa_shifts_quotes_by_hand():
    found = quoted("lsa_shifts", lsa_shifts_cube())
    # the largest c (2), not the cube's last condition (c = 1: 5) nor M = 3 (99): (30 + 34)/2
    assert found["lsa_error_top_scale"] == "32"
    assert found["lsa_error_base_scale"] == "0.422"  # c = 0.5: (0.41 + 0.4333)/2 = 0.42165 (the cube's first: 32)
    # the seed means' gains 0.25, 1, 4.4 at c = 0.5, 1, 2: ln(4.4/0.25)/(2 ln 2) = 2.069
    # (the seeds' own exponents ln 22/(2 ln 2) = 2.230 and ln(4.4/0.3)/(2 ln 2) = 1.937: mean 2.083)
    assert found["gain_exponent"] == "2.069"


def random_covariance_cube() -> xr.Dataset:
    """N = 4, two seeds, M = 0–8 (the claims' M = N = 4 and M = 8), d = 2.

    K = 0.5·I (‖K‖ = √0.5 = 0.7071); the trained u₋₁U₁₁: seed 0 K + 0.05 off the diagonal (row 0), seed 1 K + 0.1 at
    (1, 1). Prediction gap at M = 4: 0.30, 0.50; at M = 8: 0.10, 0.14; 0.9 elsewhere. The limit's gap: 0.128 at
    M = 4, 0.0641 at M = 8, 1.0 elsewhere."""
    limit = np.array([[[0.5, 0.0], [0.0, 0.5]]])  # (n, row, col)
    learned = np.array([[[[0.5, 0.05], [0.0, 0.5]], [[0.5, 0.0], [0.0, 0.6]]]])  # (n, seed, row, col)
    gap = np.full((1, 2, 9), 0.9)  # (n, seed, position)
    gap[0, :, 4] = [0.30, 0.50]
    gap[0, :, 8] = [0.10, 0.14]
    theory_gap = np.full((1, 9), 1.0)  # (n, position)
    theory_gap[0, [4, 8]] = [0.128, 0.0641]
    return xr.Dataset(
        {"product_limit": (("n", "row", "col"), limit),
         "product_learned": (("n", "seed", "row", "col"), learned),
         "prediction_gap": (("n", "seed", "position"), gap),
         "theory_gap": (("n", "position"), theory_gap)},
        coords={"n": [4], "seed": [0, 1], "position": np.arange(9), "row": [0, 1], "col": [0, 1]})


def test_random_covariances_quotes_by_hand():
    found = quoted("random_covariance", random_covariance_cube())
    # per seed 0.05/0.7071 = 0.0707 and 0.1/0.7071 = 0.1414: mean 0.106 (the mean matrix's distance 0.079; not
    # relative 0.075)
    assert found["weights_distance"] == "0.11"
    assert found["gap_early"] == "0.4"  # M = N = 4: (0.3 + 0.5)/2
    assert found["gap_last"] == "0.12"  # M = 8: (0.10 + 0.14)/2
    assert found["gap_last_theory"] == "0.064"  # at M = 8 (M = 4's: 0.13)
    # ln(0.12/0.4)/ln 2 = −1.737 (the seeds' own slopes −1.585 and −1.837: mean −1.71)
    assert found["gap_slope"] == "−1.74"


def zfb_figure1_cube() -> xr.Dataset:
    """N = 4, d = 2, tests fixed and random c = 1, 2, 3, trainings fixed and random, two seeds, M = 0–8.

    GPT-2's risk at M = N = 4 (seed 0, seed 1; trained on fixed | on random): fixed 0.2, 0.32 | 1.0, 1.0; c = 1 0.3,
    0.34 | 0.4, 0.44; c = 2 2.0, 2.4 | 2.2, 2.2; c = 3 6.0, 7.2 | 3.0, 5.4. At M = 8, fixed, trained on fixed: 0.5,
    0.7; at M = 7 every risk is 0.9, elsewhere 1.0; the zero predictor's is 10 everywhere. The LSA limit's error/d at
    M = 4: fixed 0.5; c = 1 1000 | 1000; c = 2 100.4 | 12.2; c = 3 250.6 | 30.4; elsewhere 9999."""
    risk = np.ones((1, 4, 2, 2, 2, 9))  # (n, test, train, learner, seed, position)
    risk[..., 1, :, :] = 10.0
    risk[0, :, :, 0, :, 7] = 0.9
    risk[0, :, :, 0, :, 4] = [[[0.2, 0.32], [1.0, 1.0]], [[0.3, 0.34], [0.4, 0.44]],  # (test, train, seed)
                              [[2.0, 2.4], [2.2, 2.2]], [[6.0, 7.2], [3.0, 5.4]]]
    risk[0, 0, 0, 0, :, 8] = [0.5, 0.7]
    limit = np.full((1, 4, 2, 9), 9999.0)  # (n, test, train, position)
    limit[0, :, :, 4] = [[0.5, 0.5], [1000.0, 1000.0], [100.4, 12.2], [250.6, 30.4]]
    return xr.Dataset(
        {"risk": (("n", "test", "train", "learner", "seed", "position"), risk),
         "lsa_limit_error": (("n", "test", "train", "position"), limit),
         "d": (("n", "test", "train"), np.full((1, 4, 2), 2))},
        coords={"n": [4], "test": ["fixed", "random c=1", "random c=2", "random c=3"], "train": ["fixed", "random"],
                "learner": ["gpt2", "zero"], "seed": [0, 1], "position": np.arange(9)})


def test_zfb_figure1s_quotes_by_hand():
    found = quoted("zfb_figure1", zfb_figure1_cube())
    assert found["error_fixed"] == "0.13"  # (0.2 + 0.32)/2/d (not divided by d: 0.26; seed 0: 0.1)
    assert found["error_fixed_last"] == "0.3"  # M = 8: 0.6/2 (M = 7, off by one: 0.45)
    assert found["error_random_c1"] == "0.16–0.21"  # 0.32/2 and 0.42/2
    assert found["error_random_c2"] == "1.1"  # 2.2/2 after both trainings: one value
    assert found["error_random_c3"] == "2.1–3.3"  # 4.2/2 (random) and 6.6/2 (fixed)
    # c = 3: 1 − 2.1/3.3 = 36% (upside down 3.3/2.1 − 1 = 57%; the seeds' own 1 − 3/6 and 1 − 5.4/7.2: mean 38%)
    assert found["random_helps_top"] == "36%"
    # M = N, the tests with c > 1 only (with c = 1: up to 1000; at M = 8: 9999), as the figure's titles: no decimals
    assert found["lsa_limit_scaled_fixed"] == "100–251" and found["lsa_limit_scaled_random"] == "12–30"
