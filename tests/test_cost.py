"""The cost table (iclab.compute.cost): a tier's jobs projected from hand-built smoke-run logs and benchmarks."""

import json
import math

import pandas as pd
import pytest
from conftest import REPO

from iclab.compute import cluster
from iclab.__main__ import main
from iclab.config import validate
from iclab.compute.cost import Smoke, cost_table, markdown, packed_range, totals
from iclab.pipeline.plan import build_plan
from iclab.pipeline.smoke import SMOKE_PROMPTS, smoke_config

STEPS, FULL_STEPS, FULL_PROMPTS = 2, 1000, 1000
PREFIX = "2026-11-26 09:00:00,000 INFO iclab.progress: "


@pytest.fixture()
def tier():
    """ltb_gap at two β*, three seeds: 2 groups of 9 models (3 in the smoke run), 2 evaluation sets."""
    return validate({
        "seeds": [0, 1, 2],
        "evaluation": {"n_prompts": FULL_PROMPTS, "seed": 1},
        "experiments": {"ltb_gap": {
            "d": 3, "n": [6], "beta_star_norm": [0.0, 1.0], "psi": 1.0, "sigma": 0.5, "init_scale": 0.1,
            "models": ["lsa", "ltb", "gd_beta"], "baselines": ["zero"],
            "train": {"steps": FULL_STEPS, "batch_size": 8, "lr": 0.01},
        }},
    })


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def benchmark(results, relative, seconds, max_rss):
    write(results / "benchmarks" / f"{relative}.tsv", f"s\th:m:s\tmax_rss\n{seconds}\t0:00:00\t{max_rss}\n")


def smoke_run(tmp_path, tier):
    """Logs and benchmarks of a smoke run as its jobs write them: every model 0.5 s for step 1, then 0.2 s a step;
    the training job 10 s (peak 900 MB; the benchmark's sampled 500 MB is below it); data jobs 3 s and 4 s; one
    evaluation of 5 s whose learners predicted in 0.64 s (each trained model) and 0.064 s (the zero baseline, built
    in 0.3 s)."""
    smoked = build_plan(smoke_config(tier | {"smoke": STEPS}))
    for group, members in smoked.groups.items():
        lines = [f"{PREFIX}[{h}] {k}/2 steps ({50 * k:3.0f}%) loss 1 lr 0.01 2 steps/s eta 0s elapsed {t:.3f}s"
                 for h in members for k, t in ((1, 0.5), (2, 0.7))]
        write(tmp_path / "logs" / "train" / f"{group}.log",
              "\n".join(lines + ["x INFO iclab: peak memory: host 900 MB, device 0 MB"]))
        benchmark(tmp_path, f"train/{group}", 10.0, 500.0)
    for (job_hash, job), seconds in zip(smoked.data.items(), (3.0, 4.0), strict=True):
        write(tmp_path / "logs" / "data" / f"{job_hash}.log", "x INFO iclab: peak memory: host 300 MB, device 0 MB")
        write(tmp_path / "data" / f"{job_hash}.nc", "x" * 100 * SMOKE_PROMPTS)  # 100 bytes a prompt
        benchmark(tmp_path, f"data/{job_hash}", seconds, 300.0)
    setting = next(iter(smoked.settings["ltb_gap"].values()))
    lines = [f"predicted: {label} seed 0 on 16 prompts in 0.640 s" for label in ("lsa", "ltb", "gd_beta")]
    lines += ["built: zero in 0.300 s", "predicted: zero seed - on 16 prompts in 0.064 s"]
    lines += ["evaluated: 16 prompts read in 2.500 s"]
    write(tmp_path / "logs" / "evaluate" / "ltb_gap" / f"{setting.hash}.log", "\n".join(lines))
    benchmark(tmp_path, f"evaluate/ltb_gap/{setting.hash}", 5.0, 800.0)
    return Smoke.read(smoked, tmp_path), setting


def test_training_job_is_its_models_steps_at_the_smoke_rate_plus_each_models_rest(tmp_path, tier):
    smoke, _ = smoke_run(tmp_path, tier)
    table = cost_table(build_plan(tier), smoke, {"ltb_gap": []})
    train = table[table["rule"] == "train"]
    assert len(train) == 2 and (train["what"] == "gd_beta+lsa+ltb ×9").all()
    rest = (10.0 - 3.0) / 3 - 0.7  # a smoke model's share of its job, less its measured steps
    for _, job in train.iterrows():
        assert job["seconds_per_unit"] == pytest.approx(0.2)  # after the first step's warm-up
        assert job["cpu_seconds"] == pytest.approx(3.0 + 9 * (FULL_STEPS * 0.2 + rest))
        assert job["peak_host_mb"] == 900.0 and math.isnan(job["gpu_seconds"])


def test_evaluation_scales_learners_by_prompts_and_seeds_analyses_by_prompts_and_not_the_baselines_build(tmp_path, tier):
    smoke, setting = smoke_run(tmp_path, tier)
    table = cost_table(build_plan(tier), smoke, {"ltb_gap": []})
    measured = table[table["rule"] == "evaluate"].set_index("job")
    full = {s.coords["beta_star_norm"]: s for s in build_plan(tier).settings["ltb_gap"].values()}
    job = measured.loc[full[setting.coords["beta_star_norm"]].hash]
    ratio = FULL_PROMPTS / SMOKE_PROMPTS
    predictions = 3 * (0.64 * ratio * 3) + 0.064 * ratio  # three seeds of each trained model, one zero baseline
    analyses = (2.5 - 3 * 0.64 - 0.064 - 0.3) * ratio
    assert job["cpu_seconds"] == pytest.approx((5.0 - 2.5) + 0.3 + predictions + analyses)
    grown = (FULL_PROMPTS - SMOKE_PROMPTS) * (100 + 2 * 8 * 7 * (9 + 1)) / 1e6  # stored set; 10 learners' arrays
    assert job["peak_host_mb"] == pytest.approx(800.0 + grown)
    other = measured.drop(index=job.name).iloc[0]
    assert other["basis"] == "not measured" and math.isnan(other["cpu_seconds"])


def test_a_tuned_baselines_construction_scales_with_its_held_out_prompts(tmp_path, tier, monkeypatch):
    """The zero baseline taken as tuned (tuning.TUNED): the smoke run tunes it on SMOKE_PROMPTS held-out
    prompts, the tier on HOLDOUT_PROMPTS, so its 0.3 s of construction count HOLDOUT_PROMPTS / SMOKE_PROMPTS times."""
    from iclab.compute import cost
    from iclab.pipeline import plan
    from iclab.learners.tuning import HOLDOUT_PROMPTS

    monkeypatch.setattr(plan, "TUNED", ("zero",))
    monkeypatch.setattr(cost, "TUNED", ("zero",))
    smoke, setting = smoke_run(tmp_path, tier)
    assert setting.analysis["baseline_options"] == {"zero": {"holdout_prompts": SMOKE_PROMPTS}}
    table = cost_table(build_plan(tier), smoke, {"ltb_gap": []})
    job = table[(table["rule"] == "evaluate") & table["smoke_seconds"].notna()].iloc[0]
    ratio = FULL_PROMPTS / SMOKE_PROMPTS
    predictions = 3 * (0.64 * ratio * 3) + 0.064 * ratio
    analyses = (2.5 - 3 * 0.64 - 0.064 - 0.3) * ratio
    built = 0.3 * HOLDOUT_PROMPTS / SMOKE_PROMPTS
    assert job["cpu_seconds"] == pytest.approx((5.0 - 2.5) + built + predictions + analyses)


def test_data_jobs_pay_the_start_up_once_and_sample_in_proportion(tmp_path, tier):
    smoke, _ = smoke_run(tmp_path, tier)
    data = cost_table(build_plan(tier), smoke, {"ltb_gap": []}).query("rule == 'data'")
    assert sorted(data["cpu_seconds"]) == pytest.approx([3.0, 3.0 + 1.0 * FULL_PROMPTS / SMOKE_PROMPTS])


def test_without_a_smoke_run_training_is_estimated_and_the_rest_unknown(tier):
    table = cost_table(build_plan(tier), None, {"ltb_gap": ["aggregate"]})
    train = table[table["rule"] == "train"]
    assert train["basis"].str.startswith("cluster.py's estimate").all() and (train["cpu_seconds"] > 0).all()
    assert table[table["rule"] != "train"]["cpu_seconds"].isna().all()
    tier_total = totals(table).loc["tier"]
    assert tier_total["cpu_hours"] == pytest.approx(train["cpu_seconds"].sum() / 3600)
    assert tier_total["unknown"] == len(table) - len(train)


def test_cost_command_prints_the_paper_tiers_totals_without_training(capsys, caplog):
    main(["cost", "--config", str(REPO / "config" / "paper.yaml")])
    printed = capsys.readouterr().out
    assert "# Cost of" in printed and "| tier" in printed and "GPU-hours" in printed
    with pytest.raises(SystemExit):
        main(["cost", "--config", str(REPO / "config" / "paper.yaml"), "--smoke", "2", "--smoke-dir", "/nonexistent"])
    assert "--smoke 2: no smoke run's benchmarks in /nonexistent/" in caplog.text


def test_an_lsa_optimum_is_one_job_a_task_costed_as_its_smoke_run_measured_it(tmp_path, tier):
    """ltb_gap reads the optima of its two tasks, ltb_training (β* = 1 only) the one it shares with ltb_gap: two
    jobs, each the same BFGS in the smoke run (same task, same hash), so costed as measured."""
    gap = tier["experiments"]["ltb_gap"] | {"baselines": ["lsa_optimal"]}
    training = {key: gap[key] for key in ("d", "psi", "sigma", "init_scale", "models", "train")}
    training |= {"n": 6, "beta_star_norm": [1.0], "baselines": [], "snapshot_every": 500}
    full = build_plan(validate(tier | {"experiments": {"ltb_gap": gap, "ltb_training": training}}))
    smoked = build_plan(smoke_config(validate(tier | {"experiments": {"ltb_gap": gap, "ltb_training": training},
                                                      "smoke": STEPS})))
    assert set(smoked.optima) == set(full.optima) and len(full.optima) == 2
    measured = sorted(full.optima)[0]
    write(tmp_path / "logs" / "lsa_optimum" / f"{measured}.log", "x INFO iclab: peak memory: host 400 MB, device 0 MB")
    benchmark(tmp_path, f"lsa_optimum/{measured}", 7.0, 350.0)
    table = cost_table(full, Smoke.read(smoked, tmp_path), {"ltb_gap": [], "ltb_training": []})
    optima = table[table["rule"] == "lsa_optimum"].set_index("job")
    assert sorted(optima.index) == sorted(full.optima) and set(optima["experiment"]) == {"ltb_gap"}
    assert optima.loc[measured, "cpu_seconds"] == 7.0 and optima.loc[measured, "peak_host_mb"] == 400.0
    assert optima.drop(index=measured).iloc[0]["basis"] == "not measured"


# GPU seconds pinned by hand (issue 69): ltb_gap's CPU models beside ltb_table1's bf16 GPT-2s (with and without MLP,
# two seeds: four jobs that each ask for a GPU). The GPT-2s: 1 layer, width 8, batch 8, token-matrix prompts of
# T = 7 tokens read at the last: dense = 2T + (per_token - 2) = 24 (MLP, per_token 12) or 16 (without, 4) E²
# multiply-adds, attention 7 query-key pairs, so 8 · (6 · 24 · 64 + 12 · 7 · 8) = 79,104 and 8 · (6 · 16 · 64 +
# 12 · 7 · 8) = 54,528 FLOPs a step.
GPT2_FLOPS = {"gpt2": 79_104, "gpt2_nomlp": 54_528}


@pytest.fixture()
def gpu_tier(tier):
    table1 = {"d": 3, "n": 6, "beta_star_norm": [0.0], "psi": 1.0, "sigma": 0.5, "seeds": [0, 1],
              "model": {"n_embd": 8, "n_layer": 1, "n_head": 1},
              "train": {"steps": FULL_STEPS, "batch_size": 8, "lr": 0.001, "precision": "bfloat16"}}
    return validate(tier | {"experiments": tier["experiments"] | {"ltb_table1": table1}})


def rates_file(path, rows):
    """A gpu-check rates file of bf16 GPT-2 rows (FLOPs a step, seconds a step) measured on "Card X"."""
    lines = [",".join(cluster.RATE_COLUMNS)] + [f"Card X,k{i},gpt2,bfloat16,false,false,false,new,{flops},{seconds}"
                                                for i, (flops, seconds) in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n")
    return cluster.GpuRates.read(path)


def gpu_smoke_run(tmp_path, tier, progress=((1, 0.5), (2, 0.7)), gpt2_device_mb=0):
    """Every smoke model 0.5 s for step 1 and 0.7 s at step 2 (or the ``progress`` lines given), each training job
    10 s with a peak of 900 MB (ltb_gap) or 1,500 MB (a GPT-2; on its device ``gpt2_device_mb``); every data job 3 s
    (the start-up); evaluations not measured."""
    smoked = build_plan(smoke_config(tier | {"smoke": STEPS}))
    last = progress[-1][0]
    for group, members in smoked.groups.items():
        lines = [f"{PREFIX}[{h}] {k}/{last} steps (50%) loss 1 lr 0.01 2 steps/s eta 0s elapsed {t:.3f}s"
                 for h in members for k, t in progress]
        gpt2 = smoked.train[members[0]].model["name"] == "gpt2"
        peak = f"host {1500 if gpt2 else 900} MB, device {gpt2_device_mb if gpt2 else 0} MB"
        write(tmp_path / "logs" / "train" / f"{group}.log",
              "\n".join(lines + [f"x INFO iclab: peak memory: {peak}"]))
        benchmark(tmp_path, f"train/{group}", 10.0, 500.0)
    for job_hash in smoked.data:
        write(tmp_path / "logs" / "data" / f"{job_hash}.log", "x INFO iclab: peak memory: host 300 MB, device 0 MB")
        write(tmp_path / "data" / f"{job_hash}.nc", "x" * 100 * SMOKE_PROMPTS)
        benchmark(tmp_path, f"data/{job_hash}", 3.0, 300.0)
    return Smoke.read(smoked, tmp_path)


def test_gpu_seconds_host_memory_runtimes_and_totals_match_the_hand_worked_values(tmp_path, gpu_tier):
    """Rates at 1e6 and 3e6 FLOPs of 0.011 and 0.013 s fit 0.01 s + 1e-9 s a FLOP: a GPT-2 job takes the start-up
    (300 s) + 1000 steps × (0.01 + FLOPs × 1e-9) on the GPU. On the CPU each job is one start-up (3 s) + 1000 × 0.2 s
    + the model's rest (10 − 3 − 0.7 s); ltb_gap's groups of 9 models pay one start-up: 3 + 9 × (200 + 7/3 − 0.7)."""
    rates = rates_file(tmp_path / "rates.csv", [(1e6, 0.011), (3e6, 0.013)])
    table = cost_table(build_plan(gpu_tier), gpu_smoke_run(tmp_path / "smoke", gpu_tier),
                       {"ltb_gap": [], "ltb_table1": []}, rates)
    train = table[table["rule"] == "train"]
    gpt2 = train[train["experiment"] == "ltb_table1"]
    assert sorted(gpt2["what"]) == ["gpt2 ×1", "gpt2 ×1", "gpt2_nomlp ×1", "gpt2_nomlp ×1"]
    for _, job in gpt2.iterrows():
        assert job["gpu_seconds"] == pytest.approx(300 + 1000 * (0.01 + GPT2_FLOPS[job["what"][:-3]] * 1e-9))
        assert job["cpu_seconds"] == pytest.approx(3 + 1000 * 0.2 + (10 - 3 - 0.7))
        assert job["peak_host_mb"] == 1500 and job["basis"] == "measured; GPU fitted on Card X"  # its shape untimed
    gap = train[train["experiment"] == "ltb_gap"]
    assert gap["cpu_seconds"].tolist() == pytest.approx([3 + 9 * (200 + 7 / 3 - 0.7)] * 2)
    assert gap["gpu_seconds"].isna().all() and (gap["basis"] == "measured").all()
    gpu_hours = 2 * (300 + 1000 * (0.01 + 79_104e-9) + 300 + 1000 * (0.01 + 54_528e-9)) / 3600
    total = totals(table)
    assert total.loc["ltb_table1", "gpu_hours"] == pytest.approx(gpu_hours)
    assert total.loc["ltb_gap", "gpu_hours"] == 0 and total.loc["tier", "gpu_hours"] == pytest.approx(gpu_hours)
    assert total.loc["ltb_table1", "peak_host_gb"] == 1.5 and total.loc["tier", "peak_host_gb"] == 1.5
    assert total.loc["ltb_gap", "cpu_hours"] >= 2 * (3 + 9 * (200 + 7 / 3 - 0.7)) / 3600  # and its data jobs
    assert "Card X: 4 jobs" in markdown(table, "tier", "smoke")


def test_every_gpu_number_says_whether_it_was_measured_or_estimated(tmp_path, gpu_tier):
    """Without a rates file, or with one that measured another family (the LSTM), every GPT-2 row's GPU seconds are
    labelled estimated from anchors: a 1-layer GPT-2's step is the host's 7 ms + 3.76 ms (its device time, 79,104 FLOPs
    and a few kB, is nanoseconds): 300 + 1000 · 0.01076 s; no CPU row has a GPU label."""
    lstm_only = tmp_path / "lstm.csv"
    lstm_only.write_text(",".join(cluster.RATE_COLUMNS) + "\nCard X,k,lstm,float32,false,false,false,new,1e6,0.011\n")
    for rates in (None, cluster.GpuRates.read(lstm_only)):
        table = cost_table(build_plan(gpu_tier), None, {"ltb_gap": [], "ltb_table1": []}, rates)
        gpt2 = table[table["gpu_seconds"].notna()]
        assert len(gpt2) == 4 and gpt2["basis"].str.endswith("; GPU estimated (anchors)").all()
        assert gpt2["gpu_seconds"].tolist() == pytest.approx([300 + 1000 * 0.01076] * 4, rel=1e-6)
        assert not table.loc[table["gpu_seconds"].isna(), "basis"].str.contains("GPU").any()


def test_a_rates_file_replaces_the_anchors_estimate_for_the_shapes_and_family_it_timed(tmp_path, tier):
    """Table 1's GPT-2s at the paper's size (d = 20, n = 40, width 128, 6 layers, 4 heads, batch 64, 500k steps):
    T = 41 token-matrix tokens read at the last; dense = 5 · 12 · 41 + 2 · 41 + 10 = 2,552 E² with the MLP and
    5 · 4 · 41 + 2 · 41 + 2 = 904 without, attention 5 · 41² + 41 = 8,446 pairs: F = 64 · (6 · 2552 · 128² + 12 ·
    8446 · 128) = 16,886,071,296 and 64 · (6 · 904 · 128² + 12 · 8446 · 128) = 6,517,751,808 FLOPs a step. By the
    anchors each is host-bound, 7 ms + 6 · 3.76 ms = 29.56 ms a step (its device time: F at 9% of 989e12 is 190 and
    73 µs); a file fitted on two shapes at 0.01 s + F / 5e13 makes each 0.01 + F / 5e13 s a step: the hours' ratio is
    2 · (300 + 5e5 · 0.02956) = 30,160 over (300 + 5,168.9) + (300 + 5,065.2) = 10,834.1: 2.7838."""
    paper_size = {"d": 20, "n": 40, "beta_star_norm": [0.0], "psi": 1.0, "sigma": 0.05, "seeds": [0],
                  "model": {"n_embd": 128, "n_layer": 6, "n_head": 4},
                  "train": {"steps": 500_000, "batch_size": 64, "lr": 1e-4, "precision": "bfloat16"}}
    plan = build_plan(validate(tier | {"experiments": {"ltb_table1": paper_size}}))
    flops = (16_886_071_296, 6_517_751_808)
    fitted = rates_file(tmp_path / "rates.csv", [(1e9, 0.01 + 1e9 / 5e13), (1e10, 0.01 + 1e10 / 5e13)])
    hours = {}
    for name, rates in (("anchors", None), ("measured", fitted)):
        table = cost_table(plan, None, {"ltb_table1": []}, rates)
        hours[name] = totals(table).loc["tier", "gpu_hours"]
    factor = 2 * (300 + 5e5 * 0.02956) / sum(300 + 5e5 * (0.01 + f / 5e13) for f in flops)
    assert hours["anchors"] / hours["measured"] == pytest.approx(factor, rel=1e-9)
    assert factor == pytest.approx(2.7838, abs=5e-4)


def test_cost_command_adds_the_one_gpu_node_and_a_row_per_effect(capsys, tmp_path):
    """gpu_node's cost on one node: its GPT-2s in batched groups, not packed at the gain the H100 measured for GPT-2s
    alone (k = 2), and their packed hours a range; none measured for the LSTM; against a day; then a row per effect
    of the day in its power file with its experiment's GPU-hours, and the effects not in the day named."""
    power = REPO / "benchmarks" / "results" / "gpu_node_power.json"
    pack = REPO / "benchmarks" / "results" / "gpu_h100_2026-11-28" / "gpu_pack_longest_nvidia_h100_80gb_hbm3.json"
    main(["cost", "--config", str(REPO / "config" / "gpu_node.yaml"), "--node-cores", "16", "--power", str(power),
          "--pack", str(pack), "--out", str(tmp_path / "cost")])
    printed = capsys.readouterr().out
    assert "## One GPU node (16 cores, a 80 GB card)" in printed and "A day: **" in printed
    assert "| gpt2 batched |" in printed and "at single_index's shape" not in printed
    assert printed.count("not measured: one at a time") == 2  # the batched GPT-2s and the LSTM
    assert "packed hours conservative **" in printed and ", central **" in printed and ", optimistic **" in printed
    table = pd.read_csv(tmp_path / "cost.csv")
    effects = printed.split("## The effects")[1]
    rows = json.loads(power.read_text())["effects"]
    for row in rows:
        lines = [line for line in effects.splitlines() if line.startswith(f"| {row['effect']} ")]
        if row["as_run"] is None:  # not in the day: named, no row
            assert not lines and row["effect"] in effects.split("Not in the day")[1].split("\n")[0]
            continue
        hours = table.loc[table["experiment"] == row["experiment"], "gpu_seconds"].sum() / 3600
        assert f"{hours:,.3g}" in lines[0], (lines[0], hours)
    assert sum(row["as_run"] is not None for row in rows) == 3  # the day's: ltb_table1's one, zfb_figure1's two
    assert (tmp_path / "cost.md").read_text().rstrip().endswith(effects.rstrip())


def test_cost_refuses_a_pack_result_that_measured_nothing(tmp_path, caplog):
    """gpu-pack --mps where the image has no daemon writes a result without a gain: named, refused before any work."""
    empty = tmp_path / "gpu_pack_lstm_mps_x.json"
    empty.write_text(json.dumps({"k": 4, "not_run": "nvidia-cuda-mps-control is not on PATH"}))
    with pytest.raises(SystemExit):
        main(["cost", "--config", str(REPO / "config" / "gpu_node.yaml"), "--node-cores", "16", "--pack", str(empty),
              "--out", str(tmp_path / "cost")])
    assert (f"--pack {empty}: a gpu-pack result that measured nothing (nvidia-cuda-mps-control is not on PATH)"
            in caplog.text) and not (tmp_path / "cost.csv").exists()


def test_the_cards_peak_caps_what_a_day_needs_by_hand():
    """A day against the packed hours and the floor of the card's peak: 25 h of FLOPs at the peak cannot fit at any
    rate, however few the packed hours; 48 packed hours over a 2-hour floor need 48 / 20 = 2.4× faster steps, which
    the peak allows up to 24×; 20 packed hours fit."""
    from iclab.compute import packing

    hour = 3600.0
    assert packing.day_verdict(30 * hour, 25 * hour) == (
        "cannot fit at any rate: their FLOPs alone take 25.0 h at the card's peak, a day's design 20")
    assert packing.day_verdict(48 * hour, 2 * hour) == (
        "2.4× over: their steps would have to run 2.4× faster (the card's peak allows up to 24×)")
    assert packing.day_verdict(20 * hour, 2 * hour) == "fits: 20.0 h of a day's 20"


def test_a_day_is_20_packed_hours_everywhere_by_hand():
    """One day for the code and the docs (issue 101): the card's 24 hours less 4 kept for start-up, the captures, the
    CPU jobs' tail and a retry. 21 packed hours fit a 24-hour card but not a day's design (1.05×, printed 1.1×: two
    digits); a floor of 21 h cannot fit at any rate though it is under 24; exactly 20 of either still fits."""
    from iclab.compute import packing

    hour = 3600.0
    assert (packing.DAY_S, packing.MARGIN_S, packing.PACKED_DAY_S) == (24 * hour, 4 * hour, 20 * hour)
    assert packing.day_verdict(21 * hour, 2 * hour).startswith("1.1× over: their steps would have to run 1.1× faster")
    assert packing.day_verdict(21 * hour, 21 * hour).startswith("cannot fit at any rate")
    assert packing.day_verdict(20 * hour, 20 * hour) == "fits: 20.0 h of a day's 20"
    assert packing.day_verdict(17.1 * hour, 1.4 * hour) == "fits: 17.1 h of a day's 20"  # gpu_node's, issue 101


def test_the_day_verdicts_bounds_are_inclusive_and_its_hours_exact_by_hand():
    """A floor of exactly the day can still fit; packed hours of exactly the day fit; at 1,000-hour scales the hours
    are printed to the tenth (an hour of 3,601 s would print 999.7)."""
    from iclab.compute import packing

    hour = 3600.0
    assert packing.day_verdict(24 * hour, 24 * hour, day_s=24 * hour) == "fits: 24.0 h of a day's 24"
    assert packing.day_verdict(1000 * hour, 2 * hour, day_s=1000 * hour) == "fits: 1,000.0 h of a day's 1000"
    assert packing.day_verdict(2000 * hour, 1000 * hour, day_s=500 * hour) == (
        "cannot fit at any rate: their FLOPs alone take 1,000.0 h at the card's peak, a day's design 500")


def test_the_smallest_gain_and_the_cards_room_at_its_bounds_by_hand():
    """The smaller of two gains whichever comes first; the tiny GPT-2 reserves 2 × (1e9 B of CUDA context + a few kB)
    → 2,500 MB, so an 80,000 MB card holds exactly 32; a card of exactly 2 × 2,500 MB holds the measured k = 2 (it
    packs), one of 6,000 MB holds 2 (80,000 // 2,500 and 6,000 // 2,500: floors), and one smaller than a reservation
    still runs one at a time (room 1, not 0)."""
    from iclab.compute import packing

    gpt2 = {"model": {"name": "gpt2", "n_embd": 8, "n_layer": 1, "n_head": 1}, "task": {"d": 3, "n_points": 6},
            "train": {"steps": 10, "batch_size": 8}}
    results = [{"spec": {"model": {"name": "gpt2"}}, "k": 4, "throughput_gain": 1.9, "card": "Card X",
                "experiment": "zfb_figure1"},
               {"spec": {"model": {"name": "gpt2"}}, "k": 2, "throughput_gain": 1.5, "card": "Card X",
                "experiment": "single_index"}]
    assert packing.gains(results)["gpt2"].gain == packing.gains(results[::-1])["gpt2"].gain == 1.5
    measured = packing.gains(results)
    assert cluster.device_memory_mb(gpt2) == 2_500
    assert packing.family_packing([[gpt2]], [3600.0], measured)[0].by_memory == 32
    exact = packing.family_packing([[gpt2], [gpt2]], [3600.0, 3600.0], measured, device_mb=5_000)[0]
    assert (exact.by_memory, exact.packs, exact.k, exact.packed_s) == (2, True, 2, 7200.0 / 1.5)
    assert packing.family_packing([[gpt2]], [3600.0], measured, device_mb=6_000)[0].by_memory == 2
    small = packing.family_packing([[gpt2]], [3600.0], measured, device_mb=2_000)[0]
    assert (small.by_memory, small.packs, small.packed_s) == (1, False, 3600.0)


def test_packed_hours_at_each_familys_measured_gain_by_hand():
    """Two GPT-2 jobs of 10 h and 38 h packed at a measured gain of 1.5 (k = 2) take 32 h of the card; an LSTM job
    of 4 h, its family not measured, runs alone: 36 h. A gain measured at k = 2 does not apply where the card holds
    only one of the family's largest reservation: 48 h."""
    from iclab.compute import packing

    gpt2 = {"model": {"name": "gpt2", "n_embd": 8, "n_layer": 1, "n_head": 1}, "task": {"d": 3, "n_points": 6},
            "train": {"steps": 10, "batch_size": 8}}
    lstm = {"model": {"name": "lstm", "hidden": 8, "n_layer": 1}, "task": {"d": 3, "n_points": 6},
            "train": {"steps": 10, "batch_size": 8}}
    measured = packing.gains([{"spec": {"model": {"name": "gpt2"}}, "k": 2, "throughput_gain": 1.5,
                               "card": "Card X", "experiment": "single_index"},
                              {"spec": {"model": {"name": "gpt2"}}, "k": 4, "throughput_gain": 1.9,
                               "card": "Card X", "experiment": "zfb_figure1"}])
    assert measured["gpt2"].gain == 1.5  # the smaller of two measured
    families = packing.family_packing([[gpt2], [gpt2], [lstm]], [10 * 3600, 38 * 3600, 4 * 3600], measured)
    assert [(f.family, f.k, f.gain, f.packed_s / 3600) for f in families] == [("gpt2", 2, 1.5, 32), ("lstm", 1, 1, 4)]
    assert packing.packed_seconds(families) / 3600 == 36
    assert families[1].basis == "not measured: one at a time"
    crowded = packing.family_packing([[gpt2], [gpt2]], [10 * 3600, 38 * 3600], measured,
                                     device_mb=cluster.device_memory_mb(gpt2) + 1)  # holds one
    assert (crowded[0].by_memory, crowded[0].k, crowded[0].packed_s / 3600) == (1, 1, 48)
    assert crowded[0].basis == "k = 2 measured does not fit the card: one at a time"


def test_batched_groups_pack_as_a_family_of_their_own_by_hand():
    """Two GPT-2 jobs alone (10 h and 38 h) pack at the measured 1.5 (32 h); two batched groups of two (6 h and 8 h)
    do not take that gain: they run one at a time (14 h), 46 h in all, until a gain is measured for batched groups
    (then theirs, 2.0: 7 h, and not the models alone's)."""
    from iclab.compute import packing

    gpt2 = {"model": {"name": "gpt2", "n_embd": 8, "n_layer": 1, "n_head": 1}, "task": {"d": 3, "n_points": 6},
            "train": {"steps": 10, "batch_size": 8}}
    member = gpt2 | {"train": gpt2["train"] | {"batched": True}}
    alone = {"spec": {"model": {"name": "gpt2"}}, "k": 2, "throughput_gain": 1.5, "card": "Card X",
             "experiment": "single_index"}
    jobs = [[gpt2], [gpt2], [member, member | {"seed": 1}], [member, member | {"seed": 1}]]
    families = packing.family_packing(jobs, [10 * 3600, 38 * 3600, 6 * 3600, 8 * 3600], packing.gains([alone]))
    assert [(f.family, f.jobs, f.k, f.packed_s / 3600) for f in families] == [("gpt2", 2, 2, 32),
                                                                              ("gpt2 batched", 2, 1, 14)]
    assert packing.packed_seconds(families) / 3600 == 46
    grouped = {"spec": member, "k": 2, "throughput_gain": 2.0, "card": "Card X", "experiment": "probe_layers"}
    measured = packing.gains([alone, grouped])
    assert (measured["gpt2"].gain, measured["gpt2 batched"].gain) == (1.5, 2.0)
    families = packing.family_packing(jobs, [10 * 3600, 38 * 3600, 6 * 3600, 8 * 3600], measured)
    assert [f.packed_s / 3600 for f in families] == [32, 7]


def test_a_batched_group_is_costed_once_from_its_smoke_twins_group_by_hand(tmp_path, gpu_tier):
    """Under batched_training ltb_table1's two seeds of each GPT-2 are one group of 2; the smoke run keeps seed 0, a
    group of one that trains beside a copy (2 members too). CPU: the start-up 3 s + (1000 steps × 0.2 s + the
    job's rest 10 − 3 − 0.7 s) × 2/2 = 209.3 s (its members counted one by one: 415.6). GPU, the rates' fit 0.01 s +
    1e-9 s a FLOP for one member alone, host-bound: conservative 300 + 1000 × 2.0 × (0.01 + FLOPs × 1e-9), central
    and optimistic 1.72× (the device's 2 members at the peak shares take microseconds)."""
    tier = validate(gpu_tier | {"batched_training": True})
    rates = rates_file(tmp_path / "rates.csv", [(1e6, 0.011), (3e6, 0.013)])
    table = cost_table(build_plan(tier), gpu_smoke_run(tmp_path / "smoke", tier), {"ltb_gap": [], "ltb_table1": []},
                       rates)
    gpt2 = table[(table["rule"] == "train") & (table["experiment"] == "ltb_table1")]
    assert sorted(gpt2["what"]) == ["gpt2 ×2 batched", "gpt2_nomlp ×2 batched"]
    for _, job in gpt2.iterrows():
        alone = 0.01 + GPT2_FLOPS[job["what"].split(" ")[0]] * 1e-9
        assert job["cpu_seconds"] == pytest.approx(3 + 1000 * 0.2 + (10 - 3 - 0.7))
        assert job["gpu_seconds"] == pytest.approx(300 + 1000 * 2.0 * alone)
        assert job["gpu_seconds_central"] == job["gpu_seconds_optimistic"] == pytest.approx(300 + 1000 * 1.72 * alone)
        assert job["basis"] == ("measured; GPU batched: estimated from one member's step (fitted on Card X) "
                                "and peak shares")
        assert job["peak_host_mb"] == 1500  # the smoke group's peak × 2/2 members
    total = totals(table).loc["ltb_table1"]
    assert total["gpu_hours"] > total["gpu_hours_central"] == pytest.approx(total["gpu_hours_optimistic"])


THREE_LINES = ((1, 0.5), (2, 0.7), (4, 1.1))  # a step 0.2 s after the first: (1.1 − 0.5) / (4 − 1)


def test_a_training_rows_every_column_from_three_progress_lines_by_hand(tmp_path, gpu_tier):
    """Smoke logs of three progress lines (the last, step 4 at 1.1 s, is what a model measured): a GPT-2 job is the
    start-up 3 s + 1000 × 0.2 s + its rest 10 − 3 − 1.1 s; ltb_gap's group of 9 (3 in the smoke job) pays one
    start-up: 3 + 9 × (200 + 7/3 − 1.1). Its smoke work is its twins' 4 steps for each model (36 for 9), its device
    peak the GPT-2's 250 MB (none for the CPU models). Totals: experiments in the config's order, then the claims;
    CPU-hours on a cluster are the jobs' that ask for no GPU; packed on one card with no gain measured, the GPU jobs'
    hours one after another in each scenario."""
    full = build_plan(gpu_tier)
    table = cost_table(full, gpu_smoke_run(tmp_path / "smoke", gpu_tier, THREE_LINES, gpt2_device_mb=250),
                       {"ltb_gap": [], "ltb_table1": []})
    train = table[table["rule"] == "train"].set_index("experiment")
    gpt2 = train.loc["ltb_table1"]
    assert (gpt2["smoke_work"] == 4).all() and gpt2["seconds_per_unit"].tolist() == pytest.approx([0.2] * 4)
    assert gpt2["cpu_seconds"].tolist() == pytest.approx([3 + 1000 * 0.2 + (10 - 3 - 1.1)] * 4)
    assert (gpt2["smoke_seconds"] == 10).all() and (gpt2["peak_device_mb"] == 250).all()
    assert (gpt2["peak_host_mb"] == 1500).all() and (gpt2["unit"] == "steps").all()
    gap = train.loc["ltb_gap"]
    assert (gap["smoke_work"] == 36).all() and gap["peak_device_mb"].isna().all()
    assert gap["cpu_seconds"].tolist() == pytest.approx([3 + 9 * (200 + 7 / 3 - 1.1)] * 2)
    total = totals(table)
    assert list(total.index) == ["ltb_gap", "ltb_table1", "(claims)", "tier"]
    off_gpu = table.loc[table["gpu_seconds"].isna(), "cpu_seconds"].sum()
    assert total.loc["tier", "cluster_cpu_hours"] == pytest.approx(off_gpu / 3600)
    assert total.loc["ltb_table1", "cluster_cpu_hours"] == 0  # its four trainings ask for a GPU, its rest unmeasured
    assert packed_range(table, full, {}, None) == pytest.approx(
        {name: table[column].sum() / 3600 for name, column in
         (("conservative", "gpu_seconds"), ("central", "gpu_seconds_central"),
          ("optimistic", "gpu_seconds_optimistic"))})


def test_a_batched_group_larger_than_its_smoke_twins_scales_its_cpu_and_memory_by_hand(tmp_path, gpu_tier):
    """Three seeds batched: a group of 3 trained members whose smoke twin (seed 0, a group of one beside its copy)
    trained 2. CPU: 3 + (1000 × 0.2 + (10 − 3 − 1.1)) × 3/2; host memory 1,500 MB × 3/2 (every member at once),
    the smoke's 1,500 beside it; its device peak and smoke columns as the smoke job's."""
    tier = validate(gpu_tier | {"batched_training": True, "experiments": gpu_tier["experiments"] | {
        "ltb_table1": gpu_tier["experiments"]["ltb_table1"] | {"seeds": [0, 1, 2]}}})
    table = cost_table(build_plan(tier), gpu_smoke_run(tmp_path / "smoke", tier, THREE_LINES, gpt2_device_mb=250),
                       {"ltb_gap": [], "ltb_table1": []})
    gpt2 = table[(table["rule"] == "train") & (table["experiment"] == "ltb_table1")]
    assert sorted(gpt2["what"]) == ["gpt2 ×3 batched", "gpt2_nomlp ×3 batched"]
    assert gpt2["cpu_seconds"].tolist() == pytest.approx([3 + (1000 * 0.2 + (10 - 3 - 1.1)) * 1.5] * 2)
    assert (gpt2["peak_host_mb"] == 2250).all() and (gpt2["peak_host_mb_smoke"] == 1500).all()
    assert (gpt2["smoke_work"] == 4).all() and gpt2["seconds_per_unit"].tolist() == pytest.approx([0.2] * 2)
    assert (gpt2["smoke_seconds"] == 10).all() and (gpt2["peak_device_mb"] == 250).all()


def test_without_a_smoke_run_a_two_stage_fit_counts_prompts_and_a_gpt2_steps():
    """single_index as config.yaml runs it, no smoke run: its two-stage fits' work is prompts, its GPT-2s' steps; each
    job's CPU seconds and host memory are cluster.py's estimates on a CPU."""
    from iclab.config import load

    config = load(REPO / "config.yaml")
    config["experiments"] = {"single_index": config["experiments"]["single_index"]}
    full = build_plan(config)
    table = cost_table(full, None, {"single_index": []})
    train = table[table["rule"] == "train"]
    units = dict(zip(train["what"].str.split(" ").str[0], train["unit"]))
    assert units["two_stage"] == "prompts" and units["gpt2"] == "steps"
    for _, job in train.iterrows():
        specs = [full.train[h].to_dict() for h in full.groups[job["job"]]]
        assert job["cpu_seconds"] == cluster.group_seconds(specs, gpus_allowed=False)
        assert job["peak_host_mb"] == max(cluster.host_bytes(spec, "cpu") for spec in specs) / 1e6


def test_the_cpu_jobs_get_the_cores_the_gpus_trainings_leave_by_hand():
    """gpu_node on 16 cores: its LSTMs pack 4 at once (the H100's gain at k = 4), a core each; its batched groups run
    one at a time, each on 1 + loop.producers cores. With 2 producers the LSTMs hold the most, 4 cores: (16 − 4) // 4
    = 3 job slots of 4 threads; with 5 a group holds 6: 2 slots; with 13 a group holds 14: 1 slot, the least."""
    from iclab.compute.cost import one_gpu
    from iclab.config import load

    config = load(REPO / "config" / "gpu_node.yaml")
    full = build_plan(config)
    table = cost_table(full, None, {name: [] for name in config["experiments"]})
    lstm = REPO / "benchmarks" / "results" / "gpu_h100_2026-11-28" / "gpu_pack_lstm_nvidia_h100_80gb_hbm3.json"
    for producers, slots, held in ((2, "3 job slots", 4), (5, "2 job slots", 6), (13, "1 job slot", 14)):
        text = one_gpu(table, full, 16, 1, 4, [json.loads(lstm.read_text())], None, producers)
        assert f"on the {slots} of 4 threads left beside the {held} cores of the GPU's trainings" in text, producers
    # its hours from the table by hand: every GPU job one at a time; packed, the LSTMs' at their gain; the CPU jobs'
    # (the trainings: without a smoke run the rest is unmeasured) over 3 slots; the family rows in hours
    gain = json.loads(lstm.read_text())["throughput_gain"]
    gpu = table[table["gpu_seconds"].notna()]
    lstm_s = gpu.loc[gpu["what"].str.startswith("lstm"), "gpu_seconds"].sum()
    alone_h, packed_h = gpu["gpu_seconds"].sum() / 3600, (gpu["gpu_seconds"].sum() - lstm_s + lstm_s / gain) / 3600
    cpu_h = table.loc[table["gpu_seconds"].isna(), "cpu_seconds"].sum() / 3600
    text = one_gpu(table, full, 16, 1, 4, [json.loads(lstm.read_text())], None, 2)
    assert f"**{alone_h:,.0f} GPU-hours one at a time ({alone_h / 24:,.1f} days)**" in text
    assert f"**{packed_h:,.0f} hours ({packed_h / 24:,.1f} days)**" in text
    assert f"The CPU jobs: {cpu_h:,.0f} hours" in text and f"(~{cpu_h / 3:,.1f} hours if they spread evenly)" in text
    assert "## One GPU node (16 cores, a 80 GB card)" in text
    row = next(line for line in text.splitlines() if line.startswith("| lstm "))
    family = [cell.strip() for cell in row.split("|")]
    assert f"{lstm_s / 3600:,.3g}" in family and f"{lstm_s / gain / 3600:,.3g}" in family
