"""The Suzuki-talk page's quotes (nonparametric_icl, single_index, single_index_subspace, mean_field) on small
hand-built cubes, every expected text worked out by hand in the comments, each chosen so that the nearest wrong
computation (another seed averaging, another bin, T or case, the noise not subtracted, a risk not divided by the zero
predictor's, a ratio upside down, the cases in the cube's order) shows a different text."""

from __future__ import annotations

import numpy as np
import xarray as xr

from iclab.experiments import quotes


def quoted(experiment: str, cube: xr.Dataset) -> dict[str, str]:
    return {quote.name: quote.text for quote in quotes(experiment, cube)}


NONPARAMETRIC_LEARNERS = ["feature_attention", "basis_bayes", "krr", "zero"]


def nonparametric_binned() -> np.ndarray:
    """binned_risk (T, learner, seed, bin) over T = 2, 128, 1024 and bins of n [1, 1], [2, 2], [4, 16] (centres 1, 2,
    8; fit from n = 2: the last two, log-centres ln 4 apart), σ² = 0.25.

    The model at T = 1024: excess 0.4 then 0.1 (seed 0) and 0.2 (seed 1); its last bin at T = 2: 9.0, 21.0; at T = 128:
    0.5, 0.6. Baselines on every T and seed: Bayes excess 0.2 then 0.03, kernel ridge 0.8 then 0.4, zero 1.25."""
    risk = np.full((3, 4, 2, 3), 3.0)  # the model's bins that no quote reads: 3.0
    risk[:, 0, :, 2] = [[9.0, 21.0], [0.5, 0.6], [0.35, 0.45]]
    risk[2, 0, :, 1] = 0.65
    risk[:, 1, :, 1:] = [0.45, 0.28]
    risk[:, 2, :, 1:] = [1.05, 0.65]
    risk[:, 3] = 1.25
    return risk


def nonparametric_cube() -> xr.Dataset:
    """The closed forms on positions 0–16 (the last bin's window 4–16): Bayes 0.25 + 0.06 at n = 4–9 and + 0.04 at
    10–16, the best single Γ 0.25 + 0.12 and + 0.10; the model's risk at position 0 1.2, 1.3, 1.4 over T (mean 1.3)."""
    binned = nonparametric_binned()
    positions = np.arange(17)
    bayes = np.where(positions < 10, 0.31, 0.29) * np.ones((3, 1))  # (T, position)
    single = np.where(positions < 10, 0.37, 0.35) * np.ones((3, 1))
    risk = np.full((3, 4, 2, 17), 0.5)  # (T, learner, seed, position)
    risk[:, 0, :, 0] = [[1.2], [1.3], [1.4]]
    return xr.Dataset(
        {"binned_risk": (("pretraining_tasks", "learner", "seed", "position_bin"), binned),
         "binned_risk_groups": (("pretraining_tasks", "learner", "seed", "position_bin", "prompt_group"),
                                np.repeat(binned[..., None], 2, axis=-1)),
         "risk": (("pretraining_tasks", "learner", "seed", "position"), risk),
         "bayes_risk": (("pretraining_tasks", "position"), bayes),
         "single_gamma_risk": (("pretraining_tasks", "position"), single),
         "pretraining_risk": (("pretraining_tasks", "seed"), [[0.0123, 0.0004], [0.5, 0.55], [0.38, 0.42]]),
         "feature_residual": (("pretraining_tasks", "seed"), [[0.7, 0.9], [0.031, 0.052], [0.066, 0.1]]),
         "principal_angle": (("pretraining_tasks", "seed"), [[70.4, 80.2], [33.0, 36.0], [30.2, 39.6]]),
         "noise_variance": ("pretraining_tasks", [0.25] * 3),
         "fit_from": ("pretraining_tasks", [2] * 3)},
        coords={"pretraining_tasks": [2, 128, 1024], "learner": NONPARAMETRIC_LEARNERS, "seed": [0, 1],
                "position": positions, "position_bin": [0, 1, 2],
                "bin_first": ("position_bin", [1, 2, 4]), "bin_last": ("position_bin", [1, 2, 16])})


def test_nonparametric_icl_quotes_by_hand():
    found = quoted("nonparametric_icl", nonparametric_cube())
    # per seed, 3 significant digits, the last bin (the bin before it: 3.0, 0.65)
    assert found["new_T2"] == "9.00, 21.0" and found["new_T1024"] == "0.350, 0.450"
    assert found["pretraining_T2"] == "0.012, 0.000" and found["pretraining_small_span"] == "0.000–0.012"
    assert found["outside_T1024"] == "0.066–0.10"  # two digits, the trailing zero kept
    assert found["angle_T2"] == "70–80" and found["angle_small"] == "75"  # mean 75.3 (T = 1024's: 34.9 → 35)
    assert found["angle_large"] == "35"
    # slopes per seed over the bins from n = 2: ln(0.1/0.4)/ln 4 = −1, ln(0.2/0.4)/ln 4 = −0.5, mean −0.75 (the slope
    # of the seeds' mean excess: ln(0.15/0.4)/ln 4 = −0.71; the noise not subtracted: −0.45 and −0.26)
    assert found["slope_model"] == "−0.75"
    assert found["slope_krr"] == "−0.50"  # ln(0.4/0.8)/ln 4
    assert found["slope_bayes"] == "−1.37"  # ln(0.03/0.2)/ln 4 = −1.897/1.386
    assert found["model_excess"] == "0.150"  # (0.35 + 0.45)/2 − 0.25 (T = 2's: 14.75)
    assert found["new_large"] == "0.40" and found["new_small_span"] == "9.0–21"
    # the closed forms averaged over n = 4–16: Bayes (6·0.06 + 7·0.04)/13 = 0.0492 (n = 16 alone: 0.040), the best
    # single Γ (6·0.12 + 7·0.10)/13 = 0.1092; its bound 1.5× 0.1638; the class gap 0.1092/0.0492 = 2.22 (upside
    # down 0.45)
    assert found["bayes_excess"] == "0.049" and found["bayes_theory"] == "0.299"
    assert found["known_excess"] == "0.109" and found["single_gamma_theory"] == "0.359"
    assert found["known_excess_bound"] == "0.164" and found["class_gap"] == "2.2×"
    assert (found["bayes_prompts"], found["krr"], found["zero"]) == ("0.28", "0.65", "1.25")  # the last bin
    assert found["zero_margin"] == "0.065"  # 5% of the model's mean risk at position 0, 1.3 (T = 1024 alone: 0.070)
    # T ≥ 128: 0.031–0.1 as whole percents (with T = 2: 3%–90%)
    assert found["outside_covered"] == "3%–10%"
    assert found["outside_large"] == "0.083"  # (0.066 + 0.1)/2


SINGLE_INDEX_CASES = ["d=8, r=2", "d=32, r=2", "d=16, r=2", "d=16, r=1"]  # not in d's order
SINGLE_INDEX_LEARNERS = ["two_stage", "gpt2", "krr", "two_layer_net", "zero"]


def single_index_binned() -> np.ndarray:
    """binned_risk (case, learner, seed, bin) over bins of n* [4, 9], [10, 19], [20, 39], [40, 63], [64, 99],
    [100, 128]; the zero predictor's 2.0, 4.0, 2.0, 1.0 per case (every bin); 1.0 where no quote reads.

    Over the zero predictor's, at the last bin: two-stage d = 8 0.5, 0.6; d = 32 0.4, 0.6; d = 16 0.4, 0.5; r = 1 0.2,
    0.3. Kernel ridge (both seeds) 0.40, 0.99, 0.90, 0.90. GPT-2 0.75, 0.85; 0.75, 0.95; 0.7, 0.9; 0.5, 0.6. GPT-2 at
    [64, 99]: 0.6, 0.7; 0.7, 0.8; 0.85, 0.95; 0.4, 0.5. Two-stage means in the short bins (start below 32): d = 8 2.0,
    1.0, 0.8; d = 32 2.4, 1.1, 1.0; d = 16 1.5, 1.2, 0.5."""
    zero = np.array([2.0, 4.0, 2.0, 1.0])
    relative = np.full((4, 5, 2, 6), 1.0)  # (case, learner, seed, bin), over the zero predictor's
    relative[:, 0, :, 5] = [[0.5, 0.6], [0.4, 0.6], [0.4, 0.5], [0.2, 0.3]]
    relative[:, 2, :, 5] = [[0.40], [0.99], [0.90], [0.90]]
    relative[:, 1, :, 5] = [[0.75, 0.85], [0.75, 0.95], [0.7, 0.9], [0.5, 0.6]]
    relative[:, 1, :, 4] = [[0.6, 0.7], [0.7, 0.8], [0.85, 0.95], [0.4, 0.5]]
    short = np.array([[2.0, 1.0, 0.8], [2.4, 1.1, 1.0], [1.5, 1.2, 0.5], [9.0, 9.0, 9.0]])  # (case, bin)
    relative[:, 0, :, :3] = short[:, None, :] + np.array([-0.05, 0.05])[:, None]  # seeds ± 0.05
    return relative * zero[:, None, None, None]


def single_index_cube() -> xr.Dataset:
    """At the final query (n* = 128) every learner 3.0 but the two-layer net: 1.2, 3.3, 2.4, 1.5 (over the zero
    predictor's 3.0 there: 0.40, 1.10, 0.80, 0.50). Stage 1's row energy: 0.6, 0.7; 0.5, 0.56; 0.7, 0.8; 0.55, 0.65."""
    binned = single_index_binned()
    query = np.full((4, 5, 2), 3.0)  # (case, learner, seed)
    query[:, 3] = np.array([[1.2], [3.3], [2.4], [1.5]])
    return xr.Dataset(
        {"binned_risk": (("case", "learner", "seed", "position_bin"), binned),
         "binned_risk_sem": (("case", "learner", "seed", "position_bin"), np.full(binned.shape, 0.01)),
         "query_risk": (("case", "learner", "seed"), query),
         "query_risk_sem": (("case", "learner", "seed"), np.full(query.shape, 0.01)),
         "subspace_energy": (("case", "seed"), [[0.6, 0.7], [0.5, 0.56], [0.7, 0.8], [0.55, 0.65]]),
         "d": ("case", [8, 32, 16, 16]), "r": ("case", [2, 2, 2, 1])},
        coords={"case": SINGLE_INDEX_CASES, "learner": SINGLE_INDEX_LEARNERS, "seed": [0, 1],
                "learner_kind": ("learner", ["trained", "trained", "baseline", "baseline", "baseline"]),
                "position": [0, 64, 128], "position_bin": np.arange(6),
                "bin_first": ("position_bin", [4, 10, 20, 40, 64, 100]),
                "bin_last": ("position_bin", [9, 19, 39, 63, 99, 128])})


def test_single_index_quotes_by_hand():
    found = quoted("single_index", single_index_cube())
    # over the zero predictor's, last bin, mean over seeds (not divided: 1.10, 2.00)
    assert found["two_stage_d8_r2"] == "0.55" and found["two_stage_d32_r2"] == "0.50"
    # in increasing d (the cube's order: 0.55, 0.50, 0.45)
    assert found["two_stage_over_d"] == "0.55, 0.45, 0.50"
    assert found["two_stage_over_r"] == "0.25, 0.45"  # r = 1, 2 at d = 16
    assert found["krr_over_d"] == "0.40, 0.90, 0.99"
    assert found["two_layer_net_d32_r2"] == "1.10"  # at the final query over the zero predictor's there, 3.0 (not 4.0)
    assert found["gpt2_d32_r2"] == "0.85" and found["gpt2_seeds_d32_r2"] == "0.750, 0.950"
    assert found["gpt2_mid_d32_r2"] == "0.75"  # the bin that holds n* = 64 (the one before it: 1.00)
    assert found["gpt2_mid_over_d"] == "0.65, 0.90, 0.75"
    assert found["gpt2_over_r"] == "0.55, 0.80"
    # every seed of the r = 2 cases (with r = 1's: 0.50–0.95)
    assert found["gpt2_seeds_span_over_d"] == "0.70–0.95"
    # d = 32 above d = 8 and d = 16 in the first and third short bins (not divided by the zero predictor's, in all 3)
    assert found["short_bins_largest_d_highest"] == "2 of 3"
    assert found["energy_d8_r2"] == "0.65" and found["energy_d32_r2"] == "0.53"


def subspace_cube() -> xr.Dataset:
    """d = 8, 32; T₁ = 128, 512, 2048 (the claims' middle: 512); two seeds, two principal cosines each.

    Smallest cosine per seed, then its mean: d = 8 0.90, 0.80 → 0.850; 0.97, 0.95 → 0.960; 0.995, 0.993 → 0.994;
    d = 32 0.70, 0.75 → 0.725; 0.85, 0.80 → 0.825; 0.97, 0.96 → 0.965. Energy means: d = 8 0.55, 0.72, 0.85; d = 32
    0.25, 0.45, 0.63."""
    cosines = np.array([[[[0.95, 0.90], [0.99, 0.80]], [[0.97, 0.99], [0.95, 0.96]], [[0.999, 0.995], [0.997, 0.993]]],
                        [[[0.70, 0.88], [0.75, 0.86]], [[0.90, 0.85], [0.80, 0.95]], [[0.99, 0.97], [0.96, 0.98]]]])
    energy = np.array([[[0.5, 0.6], [0.7, 0.74], [0.8, 0.9]], [[0.2, 0.3], [0.4, 0.5], [0.6, 0.66]]])
    return xr.Dataset(
        {"principal_cosines": (("d", "t1", "seed", "principal_angle"), cosines),
         "subspace_energy": (("d", "t1", "seed"), energy)},
        coords={"d": [8, 32], "t1": [128, 512, 2048], "seed": [0, 1], "principal_angle": [1, 2]})


def test_single_index_subspace_quotes_by_hand():
    found = quoted("single_index_subspace", subspace_cube())
    # the smallest cosine per seed, then the mean (the mean over both cosines: 0.7975–0.996; the smallest over seeds
    # too: 0.70–0.993)
    assert found["cosine_span"] == "0.725–0.994"
    assert found["cosine_largest"] == "0.965"  # d = 32, T₁ = 2048
    assert found["energy_span"] == "0.25–0.85"
    assert found["energy_d32_t128"] == "0.25" and found["energy_d32_t2048"] == "0.63"
    assert found["energy_d8_t512"] == "0.72" and found["energy_d32_t512"] == "0.45"


MEAN_FIELD_CASES = ["realisable", "misaligned", "max", "norm_sq"]
MEAN_FIELD_LEARNERS = ["attention", "static", "modified", "teacher_attention", "random_features_ridge", "krr", "zero"]


def mean_field_query() -> np.ndarray:
    """query_risk (case, learner, seed). The zero predictor's: 2.0 realisable, 1.0 otherwise. Realisable: attention
    0.08, 0.10; static 0.06, 0.064; modified 0.10, 0.12; teacher 0.05; random features 0.2; kernel ridge 0.14.
    Misaligned: random features 0.12, kernel ridge 0.05. ‖f°‖²: attention 1.04, 1.10. Elsewhere 0.5."""
    query = np.full((4, 7, 2), 0.5)
    query[:, 6] = [[2.0], [1.0], [1.0], [1.0]]
    query[0, :6] = [[0.08, 0.10], [0.06, 0.064], [0.10, 0.12], [0.05, 0.05], [0.2, 0.2], [0.14, 0.14]]
    query[1, 4:6] = [[0.12], [0.05]]
    query[3, 0] = [1.04, 1.10]
    return query


def mean_field_training() -> tuple[np.ndarray, np.ndarray]:
    """training_risk and population_risk (case, trained, seed, step) at steps 0–400. Realisable training, seed means
    (seeds ± 0.002): attention 2.0, 0.6, 0.3, 0.2, 0.09; static 1.6, 0.08, 0.07, 0.062, 0.062; modified 1.6 then
    0.1. Population at step 400: realisable attention 0.012, 0.016; static 0.005, 0.007; modified 0.02, 0.03;
    misaligned attention 0.30, 0.31; static 0.296, 0.300; modified 0.31, 0.33; 0.5 at step 0 and elsewhere."""
    training = np.full((4, 3, 2, 5), 0.5)
    means = np.array([[2.0, 0.6, 0.3, 0.2, 0.09], [1.6, 0.08, 0.07, 0.062, 0.062], [1.6, 0.1, 0.1, 0.1, 0.1]])
    training[0] = means[:, None, :] + np.array([-0.002, 0.002])[:, None]
    population = np.full((4, 3, 2, 5), 0.5)
    population[0, :, :, -1] = [[0.012, 0.016], [0.005, 0.007], [0.02, 0.03]]
    population[1, :, :, -1] = [[0.30, 0.31], [0.296, 0.300], [0.31, 0.33]]
    return training, population


def mean_field_cube() -> xr.Dataset:
    """Principal angles (realisable): attention 8.4, 11.6; static 5.6, 7.4; modified 9.6, 16.2; 40 elsewhere. The
    global minima 0, 0.28, 0.45, 0.99."""
    query = mean_field_query()
    training, population = mean_field_training()
    angles = np.full((4, 3, 2), 40.0)
    angles[0] = [[8.4, 11.6], [5.6, 7.4], [9.6, 16.2]]
    trained = ("case", "trained", "seed", "step")
    return xr.Dataset(
        {"query_risk": (("case", "learner", "seed"), query),
         "training_risk": (trained, training), "population_risk": (trained, population),
         "principal_angle": (("case", "trained", "seed"), angles),
         "global_minimum_risk": ("case", [0.0, 0.28, 0.45, 0.99])},
        coords={"case": MEAN_FIELD_CASES, "learner": MEAN_FIELD_LEARNERS, "seed": [0, 1],
                "trained": ["attention", "static", "modified"], "step": [0, 100, 200, 300, 400]})


def test_mean_field_quotes_by_hand():
    found = quoted("mean_field", mean_field_cube())
    # over the zero predictor's (2.0), mean over seeds: 0.045, 0.031, 0.055, 0.025, 0.10, 0.070 (not divided: 0.090…)
    assert [found[f"realisable_{learner}"] for learner in MEAN_FIELD_LEARNERS[:6]] == [
        "0.045", "0.031", "0.055", "0.025", "0.10", "0.070"]
    assert found["realisable_attention_seeds"] == "0.040, 0.050"
    assert found["norm_sq_attention"] == "1.07"  # from 1 on two decimals
    assert found["misaligned_prompt_only"] == "0.050–0.12"
    # L(μ) at the last step (the first: 0.50), mean over seeds
    assert [found[f"population_realisable_{d}"] for d in ("attention", "static", "modified")] == [
        "0.014", "0.0060", "0.025"]
    assert found["population_misaligned_static"] == "0.298"
    assert found["population_misaligned_span"] == "0.298–0.320"
    assert (found["minimum_misaligned"], found["minimum_max"], found["minimum_norm_sq"]) == ("0.280", "0.450", "0.990")
    assert "minimum_realisable" not in found  # 0: the theory's, not quoted
    # along training over the zero predictor's (2.0): static at step 300 0.062/2 = 3.1%, attention 0.2/2 = 10.0%
    assert found["static_at_step_300"] == "3.1%" and found["attention_at_step_300"] == "10.0%"
    # within 2× the teacher's 0.025: static 0.04 at step 100; attention 0.045 at step 400 (the teacher not divided
    # by the zero predictor's, 2× 0.05: attention's 0.1 at step 300)
    assert found["static_within_teacher_step"] == "100" and found["attention_within_teacher_step"] == "400"
    assert found["end_over_teacher"] == "1.8×"  # attention's 0.045/0.025 (static's: 1.2×; upside down 0.6×)
    assert (found["angle_attention"], found["angle_static"], found["angle_modified"]) == ("8–12", "6–7", "10–16")
