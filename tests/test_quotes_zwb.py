"""The Zhang-Wu-Bartlett page's quotes (ltb_training, ltb_bayes_gap, gdbeta_flow, ltb_table1) on small hand-built
cubes, every expected text worked out by hand in the comments, each chosen so that the nearest wrong computation
(another step, seed averaging, n = 0, a ratio upside down, another reference) shows a different text."""

from __future__ import annotations

import numpy as np
import xarray as xr

from iclab.experiments import quotes


def quoted(experiment: str, cube: xr.Dataset) -> dict[str, str]:
    return {quote.name: quote.text for quote in quotes(experiment, cube)}


def ltb_training_cube() -> xr.Dataset:
    """‖β*‖ = 0 and 2, two seeds, snapshots at steps 0 and 100 (every step-0 risk 5.0, never quoted).

    Step 100: LTB 1.3907, 1.3914 (‖β*‖ = 0) and 1.4021, 1.4004 (‖β*‖ = 2); GD-β 1.3903, 1.3910 and 1.4028, 1.4002;
    LSA 1.3914, 1.3928 and 2.1063, 2.1021. Baselines on the prompts: GD-β's optimum 1.3900 (s.e. 0.03) and 1.4000
    (s.e. 0.02), the LSA class's 1.3900 and 2.1000. Closed forms: GD-β 1.44, the LSA class 1.44 and 2.16."""
    last = np.array([[[1.3914, 1.3928], [1.3907, 1.3914], [1.3903, 1.3910]],  # (beta_star_norm, trained, seed)
                     [[2.1063, 2.1021], [1.4021, 1.4004], [1.4028, 1.4002]]])
    training = np.stack([np.full_like(last, 5.0), last], axis=-1)  # (beta_star_norm, trained, seed, step)
    baselines = np.array([[[1.39, 1.39], [1.39, 1.39]], [[1.40, 1.40], [2.10, 2.10]]])  # (norm, learner, seed)
    sems = np.array([[[0.03, 0.03], [0.03, 0.03]], [[0.02, 0.02], [0.02, 0.02]]])
    theory = np.array([[1.44, 1.44], [1.44, 2.16]])  # (beta_star_norm, theory)
    return xr.Dataset(
        {"training_risk": (("beta_star_norm", "trained", "seed", "step"), training),
         "query_risk": (("beta_star_norm", "learner", "seed"), baselines),
         "query_risk_sem": (("beta_star_norm", "learner", "seed"), sems),
         "theory_risk": (("beta_star_norm", "theory"), theory)},
        coords={"beta_star_norm": [0.0, 2.0], "trained": ["lsa", "ltb", "gd_beta"], "seed": [0, 1],
                "step": [0, 100], "learner": ["gd_beta_optimal", "lsa_optimal"],
                "theory": ["gd_beta_optimum", "lsa_optimum"]})


def test_ltb_trainings_quotes_by_hand():
    found = quoted("ltb_training", ltb_training_cube())
    assert found["ltb_gd_beta_ends"] == "1.3903–1.4028"  # the last snapshot (step 0's 5.0 would show), every seed
    # each seed over its own ‖β*‖'s baseline: smallest 1.4002/1.40 - 1 = 0.014%, largest 1.4028/1.40 - 1 = 0.20%
    # (over ‖β*‖ = 2's 1.40 alone ‖β*‖ = 0's 1.3903 would be −0.7%; over seed means the smallest is 0.05%)
    assert found["ltb_gd_beta_above_optimal"] == "0.01%–0.20%"
    assert found["gd_beta_on_prompts"] == "1.4000"  # at the largest ‖β*‖ (‖β*‖ = 0's is 1.3900)
    assert found["gd_beta_exact"] == "1.4400"
    assert found["gd_beta_exact_se"] == "2.0"  # (1.44 − 1.40) / 0.02; ‖β*‖ = 0's s.e. would give 1.3 or 1.7
    assert found["gd_beta_prompts_off"] == "2.8%"  # 1 − 1.40/1.44 = 2.78%; upside down 1.44/1.40 − 1 = 2.86% → 2.9%
    # per seed: 1.3914/1.39 − 1 = 0.10%, 1.3928/1.39 − 1 = 0.20%, 2.1063/2.1 − 1 = 0.30%, 2.1021/2.1 − 1 = 0.10%
    # (seed means: 0.15%–0.20%)
    assert found["lsa_above_optimal"] == "0.10%–0.30%"
    # ‖β*‖ = 2 only: the seeds' mean 2.1042 over the optimum on the prompts 1.40, minus 1 (over the exact 1.44: 46.1%)
    assert found["lsa_above_gd_beta"] == "50.3%"
    assert found["lsa_gap_exact"] == "50.0%"  # 2.16 / 1.44 − 1, at ‖β*‖ = 2 only (with ‖β*‖ = 0: "0.0%, 50.0%")


def ltb_bayes_gap_cube() -> xr.Dataset:
    """SNR 1 and 4, n = 0–3. Closed forms (GD-β optimum / Bayes): SNR 1: 20/10, 6/5, 6.5/5, 4.5/4, ratios 2 (n = 0,
    never quoted), 1.2, 1.3, 1.125; SNR 4: 7/7, 4/2.5, 3/2, 2.4/2, ratios 1, 1.6, 1.5, 1.2.

    Monte Carlo equals the closed forms but at SNR 1, n = 0 for GD-β (off by 1.0, s.e. 0.1: 10 s.e., not an n ≥ 1)
    and at SNR 4, n = 2 for Bayes (off by 0.3; Monte-Carlo s.e. 0.1, the Bayes integral's 0.1: 2.12 joint s.e.)."""
    gd = np.array([[20.0, 6.0, 6.5, 4.5], [7.0, 4.0, 3.0, 2.4]])  # (snr, position)
    bayes = np.array([[10.0, 5.0, 5.0, 4.0], [7.0, 2.5, 2.0, 2.0]])
    theory = np.stack([gd, bayes], axis=1)  # (snr, predictor, position)
    mc = theory.copy()
    mc[0, 0, 0] += 1.0
    mc[1, 1, 2] += 0.3
    theory_sem = np.zeros_like(theory)
    theory_sem[1, 1, 2] = 0.1
    dims = ("snr", "predictor", "position")
    return xr.Dataset(
        {"theory_risk": (dims, theory), "theory_risk_sem": (dims, theory_sem), "mc_risk": (dims, mc),
         "mc_risk_sem": (dims, np.full_like(theory, 0.1))},
        coords={"snr": [1.0, 4.0], "predictor": ["gd_beta_optimum", "bayes"], "position": [0, 1, 2, 3]})


def test_ltb_bayes_gaps_quotes_by_hand():
    found = quoted("ltb_bayes_gap", ltb_bayes_gap_cube())
    assert found["ratio_peak"] == "1.300, 1.600"  # n ≥ 1: SNR 1's n = 0 ratio 2 is not a peak
    assert found["ratio_peak_n"] == "2, 1"
    assert found["ratio_at_n_max"] == "1.125, 1.200"  # 4.5/4 and 2.4/2 (upside down: 0.889, 0.833)
    assert found["ratio_peak_high_snr"] == "1.6" and found["ratio_peak_low_snr"] == "1.3"
    assert found["mc_points"] == "12"  # 2 SNR × 2 predictors × n = 1–3 (with n = 0: 16)
    # 0.3 / √(0.1² + 0.1²) = 2.12; the Monte-Carlo s.e. alone: 3.0; with n = 0: 10.0
    assert found["mc_largest_deviation"] == "2.1"


def gdbeta_flow_cube() -> xr.Dataset:
    """Cases a (rank H = 2 = d) and b (rank H = 1: a kernel part), two seeds, flow times 0 and 1, SGD snapshots at
    t = 0, 2, 4, 6 (the second half: t = 4 and 6).

    Flow's end distance: a 1e-14 and 3e-14, b 2e-12 and 1e-12. SGD's distance, mean over seeds: a 1.0, 0.4, 0.11,
    0.13 (floor 0.12), b 1, 1, 0.2, 0.3 (floor 0.25); excess, mean over seeds: a 5, 0.3, 0.03, 0.03 (floor 0.03,
    reached at t = 4), b 5, 0.01, 0.02, 0.06 (floor 0.04, reached at t = 2). Last snapshot's excess: a 0.04, 0.02,
    b 0.06, 0.06 against risks 1.04, 1.02 and 2.06, 1.06 (R* = 1, 1 and 2, 1). Drift: case a's flow 0.5 (no kernel
    part: not read), case b's SGD 3e-17 at one snapshot."""
    flow_distance = np.ones((2, 2, 2))  # (case, seed, flow_time)
    flow_distance[:, :, -1] = [[1e-14, 3e-14], [2e-12, 1e-12]]
    sgd_distance = np.array([[[1.0, 0.5, 0.10, 0.14], [1.0, 0.3, 0.12, 0.12]],  # (case, seed, snapshot_time)
                             [[1.0, 1.0, 0.2, 0.3], [1.0, 1.0, 0.2, 0.3]]])
    sgd_excess = np.array([[[5.0, 0.5, 0.02, 0.04], [5.0, 0.1, 0.04, 0.02]],
                           [[5.0, 0.01, 0.02, 0.06], [5.0, 0.01, 0.02, 0.06]]])
    flow_drift = np.zeros((2, 2, 2))
    flow_drift[0] = 0.5
    sgd_drift = np.zeros((2, 2, 4))
    sgd_drift[1, 0, 2] = -3e-17
    return xr.Dataset(
        {"flow_distance": (("case", "seed", "flow_time"), flow_distance),
         "flow_drift": (("case", "seed", "flow_time"), flow_drift),
         "sgd_distance": (("case", "seed", "snapshot_time"), sgd_distance),
         "sgd_excess": (("case", "seed", "snapshot_time"), sgd_excess),
         "sgd_drift": (("case", "seed", "snapshot_time"), sgd_drift),
         "query_risk": (("case", "learner", "seed"), np.array([[[1.04, 1.02]], [[2.06, 1.06]]])),
         "image_rank": ("case", [2, 1]), "dimension": ("case", [2, 2])},
        coords={"case": ["a", "b"], "seed": [0, 1], "flow_time": [0.0, 1.0], "snapshot_time": [0.0, 2.0, 4.0, 6.0],
                "learner": ["gd_beta"]})


def test_gdbeta_flows_quotes_by_hand():
    found = quoted("gdbeta_flow", gdbeta_flow_cube())
    assert found["flow_distance_end"] == "3e-14, 2e-12"  # the farther seed (the means: 2e-14, 1.5e-12)
    assert found["flow_distance_largest"] == "2e-12"
    assert found["sgd_distance_floor"] == "0.12–0.25"  # the second half's mean (all four snapshots: 0.41, 0.625)
    assert found["sgd_excess_floor"] == "0.03–0.04"
    assert found["sgd_floor_reached"] == "2–4"  # the first t at or below the floor: b at 2, a at 4
    # per seed, the larger case: seed 0 max(0.04/1, 0.06/2) = 0.04, seed 1 max(0.02/1, 0.06/1) = 0.06; mean 5.0%
    # (the largest over seeds 6.0%; the cases' means first 4.5%; over the risk, not R*: 4.8%)
    assert found["sgd_end_over_minimum"] == "5.0%"
    assert found["kernel_drift"] == "3e-17"  # case b only (with case a's flow: 0.5), its absolute value


def ltb_table1_cube() -> xr.Dataset:
    """β* = 0 and ‖β*‖ = 5, three seeds. Query losses (s.e. of the prompts): β* = 0: GPT2 0.10, 0.12, 0.14 (0), noMLP
    0.10, 0.20, 0.30 (0.03); ‖β*‖ = 5: GPT2 0.25 on every seed (0.01), noMLP 0.3, 0.5, 1.0 (0). GD-β optimum 1.165325,
    Bayes 0.0125 and 0.05."""
    risk = np.array([[[0.10, 0.12, 0.14], [0.10, 0.20, 0.30]],  # (beta_star_norm, learner, seed)
                     [[0.25, 0.25, 0.25], [0.3, 0.5, 1.0]]])  # 0.25, exact in binary: a seed variance of 0
    sem = np.array([[[0.0] * 3, [0.03] * 3], [[0.01] * 3, [0.0] * 3]])
    theory = np.array([[1.165325, 0.0125], [1.165325, 0.05]])  # (beta_star_norm, theory)
    return xr.Dataset(
        {"query_risk": (("beta_star_norm", "learner", "seed"), risk),
         "query_risk_sem": (("beta_star_norm", "learner", "seed"), sem),
         "theory_risk": (("beta_star_norm", "theory"), theory)},
        coords={"beta_star_norm": [0.0, 5.0], "learner": ["gpt2", "gpt2_nomlp"], "seed": [0, 1, 2],
                "theory": ["gd_beta_optimum", "bayes"]})


def test_ltb_table1s_quotes_by_hand():
    found = quoted("ltb_table1", ltb_table1_cube())
    # t(2 d.f.) 97.5% = 4.3027; s.e. = √(var/3 + mean sem²)
    assert found["gpt2_beta0"] == "0.120 ± 0.050"  # √(0.0004/3) = 0.01155 → 0.0497
    assert found["gpt2_nomlp_beta0"] == "0.200 ± 0.280"  # √(0.01/3 + 0.0009) = 0.06506 → 0.2800 (without it 0.248)
    assert found["gpt2_beta5"] == "0.250 ± 0.020"  # equal seeds: the normal 1.96 × 0.01 (t's would be 0.043)
    assert found["gpt2_nomlp_beta5"] == "0.600 ± 0.896"  # √(0.13/3) = 0.2082 → 0.8957
    assert found["nomlp_over_gpt2_beta0"] == "1.67" and found["nomlp_over_gpt2_beta5"] == "2.40"  # not 0.60, 0.42
    assert found["gd_beta_optimum_beta5"] == "1.165" and found["bayes_beta0"] == "0.0125"
    assert found["bayes_beta5"] == "0.0500"
    # over Bayes (the lower reference): 0.12/0.0125 = 9.6, 0.2/0.0125 = 16, 0.25/0.05 = 5, 0.6/0.05 = 12
    assert found["over_best"] == "5–16"
    # largest over smallest seed: 1.4, 3.0 (β* = 0), 1.0, 3.33 (‖β*‖ = 5): noMLP at ‖β*‖ = 5
    assert found["widest_seeds_at"] == "GPT2-noMLP at ‖β*‖ = 5"
    assert found["widest_seeds"] == "0.30–1.00" and found["widest_seeds_ratio"] == "3.3"
