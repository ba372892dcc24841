"""The prepared GPU check (``iclab.compute.gpu_check``) at tiny shapes on the CPU: what it times, what it writes and
when it refuses; its FLOP counts against ``cluster``'s, its agreement errors against numpy."""

import csv
import json
import math
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import GPU_IMAGE_PRELUDE, REPO

from iclab.compute import cluster, gpu_check
from iclab.config import load
from iclab.errors import UsageError
from iclab.pipeline.plan import build_plan

PAPER = REPO / "config" / "paper.yaml"
GPU_DAY = REPO / "tests" / "data" / "gpu_shapes.yaml"  # gpu_node before issue 101: every paper shape


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def shapes():
    return gpu_check.tier_shapes(PAPER)


def test_the_tiers_shapes_are_its_distinct_sequence_model_steps(shapes):
    """Against the plan read with validation: every GPT-2 and LSTM training has its step among the shapes, each shape
    once, the models counted add up, the shares add to 1 (largest first), and each shape is at its full length."""
    plan = build_plan(load(PAPER))
    sequence = [job.to_dict() for job in plan.train.values() if job.model["name"] in cluster.ACCELERATED_MODELS]
    keys = [cluster.step_key(shape.spec) for shape in shapes]
    assert sorted(keys) == sorted({cluster.step_key(spec) for spec in sequence})
    assert sum(shape.models for shape in shapes) == len(sequence)
    assert sum(shape.share for shape in shapes) == pytest.approx(1.0)
    assert [shape.share for shape in shapes] == sorted((shape.share for shape in shapes), reverse=True)
    assert all(shape.job.train.curriculum is None and shape.job.seed == 0 for shape in shapes)
    assert shapes[0].experiment == "single_index"  # 257 points × 12 layers × 256 wide: the tier's largest step


def test_the_check_at_tiny_shapes_writes_a_row_per_timing_and_keeps_the_rows_of_a_stopped_run(tmp_path, monkeypatch,
                                                                                               shapes):
    """Every planned timing gives a row (eager for every shape, compiled for three, the old loop, TF32 for float32)
    whose FLOP count is ``cluster``'s for the shape as timed; the agreement rows cover float32, TF32 and bf16 for the
    largest GPT-2 and the LSTM. A run stopped at its third timing leaves a file of the two before it. (Compiling is a
    stand-in here: for real it takes ~15 s a shape on this CPU.)"""
    monkeypatch.setattr(torch, "compile", lambda model, backend: model)
    rates, agreement, env = gpu_check.check(PAPER, tmp_path, budget_s=600, tiny_shapes=True)
    rows = read_rows(rates)
    planned = gpu_check.planned_timings([gpu_check.tiny(shape) for shape in shapes])
    assert len(rows) == len(planned) and {row["loop"] for row in rows} == {"new", "old"}
    assert sum(row["compile"] == "true" for row in rows) == gpu_check.COMPILED
    assert sum(row["tf32"] == "true" for row in rows) == sum(s.job.train.precision == "float32" for s in shapes)
    for row, (_, job, _) in zip(rows, planned):
        assert float(row["flops_per_step"]) == cluster.model_size(job.to_dict()).flops_per_step
        assert row["key"] == cluster.step_key(job.to_dict()) and int(row["steps_timed"]) >= 1
        assert float(row["seconds_per_step"]) > 0 and row["card"] == "cpu"
    checked = read_rows(agreement)
    # the LSTM's row names what its recurrent layers ran in on this CPU (float32 on CUDA, models.lstm): wholly bf16
    # where oneDNN has bf16, bf16 gates beside float32 states where it has not (AVX2; tests/test_gpu_path.py)
    onednn = torch.backends.mkldnn.enabled and torch.ops.mkldnn._is_mkldnn_bf16_supported()
    recurrent = "bfloat16" if onednn else "bfloat16 gates, float32 states"
    assert [row["numerics"] for row in checked] == ["float32", "tf32", "bfloat16"] + [
        "float32", "tf32", f"bfloat16 (recurrent layers {recurrent})"]
    assert {json.loads(row["key"])["family"] for row in checked} == {"gpt2", "lstm"}
    assert all(row["within"] == "true" for row in checked)
    written = json.loads(env.read_text())
    assert written["torch"] == torch.__version__ and written["timings_planned"] == len(planned)
    assert written["deterministic_repeat"]["experiment"] == "single_index"  # the longest prompts: 257 points
    assert written["deterministic_repeat"]["equal_bit_for_bit"] and written["seconds"] > 0
    assert all(row["error"] == "" for row in rows)

    calls = []

    def stopped(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt  # the device machine's time limit
        return {"steps_timed": 1, "seconds_per_step": 0.5, "warmup_s": 0.1, "peak_memory_mb": 1.0, "graphs": 0}

    monkeypatch.setattr(gpu_check, "timed_steps", stopped)
    monkeypatch.setattr(gpu_check, "agreement_rows", lambda *args: [])
    with pytest.raises(KeyboardInterrupt):
        gpu_check.check(PAPER, tmp_path / "stopped", budget_s=600, tiny_shapes=True)
    kept = read_rows(tmp_path / "stopped" / "gpu_rates_cpu.csv")
    assert [row["seconds_per_step"] for row in kept] == ["0.5", "0.5"]


def test_a_timing_or_agreement_that_raises_is_its_rows_error_and_the_others_still_run(tmp_path, monkeypatch):
    """The third timing raises (as Triton without a C compiler would) and so do the LSTM's agreement rows: their rows
    name the error, and every other planned timing still writes its row."""
    calls, real = [], gpu_check.timed_steps

    def third_fails(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("Failed to find C compiler. Please specify via CC environment variable.")
        return real(*args, **kwargs)

    real_agreement = gpu_check.agreement_rows

    def lstm_fails(shape, device, card):
        if shape.job.model["name"] == "lstm":
            raise ValueError("no cuDNN")
        return real_agreement(shape, device, card)

    monkeypatch.setattr(gpu_check, "timed_steps", third_fails)
    monkeypatch.setattr(gpu_check, "agreement_rows", lstm_fails)
    monkeypatch.setattr(gpu_check, "COMPILED", 0)  # compiling is ~15 s a shape here
    rates, agreement, _ = gpu_check.check(GPU_DAY, tmp_path, budget_s=600, tiny_shapes=True)
    rows = read_rows(rates)
    planned = gpu_check.planned_timings([gpu_check.tiny(s) for s in gpu_check.tier_shapes(GPU_DAY)])
    assert len(rows) == len(planned) == len(calls)
    assert rows[2]["error"].startswith("RuntimeError: Failed to find C compiler") and rows[2]["seconds_per_step"] == ""
    assert all(row["error"] == "" and float(row["seconds_per_step"]) > 0 for i, row in enumerate(rows) if i != 2)
    checked = read_rows(agreement)
    assert [row["error"] for row in checked[:3]] == ["", "", ""] and len(checked) == 4
    assert checked[3]["error"].startswith("ValueError: no cuDNN at test_gpu_check.py:")


def test_the_estimate_of_its_own_length_by_hand_and_the_version_floor(monkeypatch, shapes):
    """Two eager timings and one compiled at a 5 s cap: 60 + 3 × (5 + 3) + 40 = 124 s. A torch older than the
    oldest whose APIs it uses is refused in one line naming the version."""
    job = shapes[0].job
    planned = [(shapes[0], job, "new"), (shapes[0], job, "old"),
               (shapes[0], gpu_check.with_train(job, compile=True), "new")]
    assert gpu_check.estimated_seconds(planned, 5.0) == 124.0
    monkeypatch.setattr(torch, "__version__", "2.3.1+cu121")
    with pytest.raises(UsageError, match=r"^gpu-check: torch 2.3.1\+cu121 is older than 2.4") as error:
        gpu_check.require_versions()
    assert "\n" not in str(error.value)


def test_the_agreement_error_is_the_gradients_relative_distance(monkeypatch, shapes):
    """A device whose step returns the CPU's gradient scaled by 1.01 has relative error 0.01 by numpy's norm: outside
    float32's tolerance, within TF32's and bf16's."""
    real, reference = gpu_check.loss_and_gradient, []

    def one_percent_off_on_the_device(job, state, prompts, device):
        if not reference:  # the CPU's float32 step comes first
            loss, gradient = real(job, state, prompts, torch.device("cpu"))
            reference.extend([loss, gradient.numpy().copy()])
            return loss, gradient
        return reference[0], torch.from_numpy(1.01 * reference[1])

    monkeypatch.setattr(gpu_check, "loss_and_gradient", one_percent_off_on_the_device)
    rows = gpu_check.agreement_rows(gpu_check.tiny(shapes[0]), torch.device("cpu"), "cpu")
    expected = np.linalg.norm(0.01 * reference[1]) / np.linalg.norm(reference[1])
    assert expected == pytest.approx(0.01)
    for row in rows:
        assert row["grad_rel_error"] == pytest.approx(expected, rel=1e-9) and row["loss_rel_error"] == 0
    assert [row["within"] for row in rows] == ["false", "true", "true"]


def test_without_cuda_the_real_check_refuses_in_one_line(monkeypatch, tmp_path):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(UsageError, match=r"^gpu-check: no CUDA device here .*--tiny") as error:
        gpu_check.check(PAPER, tmp_path, budget_s=10, tiny_shapes=False)
    assert "\n" not in str(error.value) and not list(tmp_path.iterdir())


def test_a_rates_file_drives_the_gpu_estimates(tmp_path):
    """Hand-made rates: two bf16 GPT-2 shapes at 1e12 and 3e12 FLOPs a step timed at 0.012 and 0.032 s give
    overhead 0.002 s and 1e-14 s a FLOP (worked by hand); a job of 2e12 FLOPs a step then takes 0.022 s a step on
    that card, "fitted on" it, while a float32 GPT-2, not measured, is estimated from the anchors."""
    path = tmp_path / "gpu_rates_x.csv"
    header = ",".join(cluster.RATE_COLUMNS)
    lines = [header] + [f'Card X,k{i},gpt2,bfloat16,false,false,false,new,{flops},{seconds}'
                        for i, (flops, seconds) in enumerate([(1e12, 0.012), (3e12, 0.032)])]
    lines.append("Card X,k9,gpt2,bfloat16,false,false,false,old,1e12,0.5")  # the old loop: not in the fit
    path.write_text("\n".join(lines) + "\n")
    rates = cluster.GpuRates.read(path)
    overhead, per_flop = rates.fits[json.dumps({"compile": False, "cuda_graphs": False, "family": "gpt2",
                                                "precision": "bfloat16", "tf32": False}, separators=(",", ":"))]
    assert (overhead, per_flop) == (pytest.approx(0.002), pytest.approx(1e-14))
    shapes = gpu_check.tier_shapes(GPU_DAY)
    bf16, float32 = shapes[0].spec, shapes[2].spec  # single_index's bf16 GPT-2, probe_layers' float32 one
    assert cluster.numerics(bf16)["precision"] == "bfloat16" and cluster.numerics(float32)["precision"] == "float32"
    assert rates.step_seconds(bf16, 2e12) == pytest.approx(0.022)
    assert cluster.gpu_basis(bf16, rates) == "fitted on Card X"
    assert rates.step_seconds(float32, 2e12) is None and cluster.gpu_basis(float32, rates) == "estimated (anchors)"
    for bad, message in (("", "no rows"), ("card,key\nX,k\n", "no columns")):
        (tmp_path / "bad.csv").write_text(bad)
        with pytest.raises(UsageError, match=message):
            cluster.GpuRates.read(tmp_path / "bad.csv")
    with pytest.raises(UsageError, match="does not exist"):
        cluster.GpuRates.read(tmp_path / "absent.csv")


def test_a_measured_shape_takes_its_own_rows_time_and_memory_and_other_shapes_the_family_fit(tmp_path):
    """Two bf16 GPT-2 shapes timed at 0.012 and 0.032 s (1e12 and 3e12 FLOPs: fit 0.002 s + 1e-14 s a FLOP): the
    second shape's job takes its own 0.032 s, not the fit's, and reserves 2 × (1e9 B of context + its measured
    3,716 MiB) = 9,793 MB → 10,000 MB (500 MB steps), not the model's; a third shape of the family takes the fit
    (0.022 s at 2e12 FLOPs), "fitted on" the card; a row with an error counts for nothing."""
    spec = gpu_check.tier_shapes(GPU_DAY)[0].spec  # single_index's bf16 GPT-2
    other = json.loads(json.dumps(spec))
    other["train"]["batch_size"] = 7
    fields = [*cluster.RATE_COLUMNS, "peak_memory_mb", "error"]
    rows = [["Card X", "k0", 1e12, 0.012, 100.0, ""], ["Card X", cluster.step_key(spec), 3e12, 0.032, 3716.0, ""],
            ["Card X", cluster.step_key(other), 2e12, 9.9, 1.0, "RuntimeError: planted"]]
    with open(tmp_path / "rates.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(fields)
        writer.writerows([card, key, "gpt2", "bfloat16", "false", "false", "false", "new", flops, seconds, mb, error]
                         for card, key, flops, seconds, mb, error in rows)
    rates = cluster.GpuRates.read(tmp_path / "rates.csv")
    assert rates.step_seconds(spec, 3e12) == 0.032 and cluster.gpu_basis(spec, rates) == "measured on Card X"
    assert cluster.device_memory_mb(spec, rates=rates) == 10_000
    assert cluster.device_memory_mb(spec) != 10_000  # the model's reservation, without the measurement
    assert rates.step_seconds(other, 2e12) == pytest.approx(0.022) and cluster.gpu_basis(other, rates) == (
        "fitted on Card X")
    assert cluster.device_memory_mb(other, rates=rates) == cluster.device_memory_mb(other)


GPU_IMAGE_CHECK = GPU_IMAGE_PRELUDE + """
torch.compile = lambda model, backend: model  # compiling is ~15 s a shape here
from iclab.__main__ import main
main(["gpu-check", "--tiny", "--out-dir", sys.argv[1]])
"""


def test_the_check_runs_with_only_what_the_gpu_machines_image_has(tmp_path):
    """As it will run there (``python -m iclab gpu-check``, the tier's config read without jsonschema)."""
    result = subprocess.run([sys.executable, "-c", GPU_IMAGE_CHECK, str(tmp_path)], cwd=REPO, capture_output=True,
                            text=True, env={**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"})
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == [str(tmp_path / f"gpu_{name}_cpu.{suffix}") for name, suffix in
                                     (("rates", "csv"), ("agreement", "csv"), ("env", "json"))]


def test_the_cards_peak_is_matched_by_its_longest_name_first_by_hand():
    """An H100 PCIe is not an SXM H100 (756 against 989 TFLOP/s bf16): the longer name that shares the prefix is
    matched first. TF32 and float32 take their own columns; an unlisted card is NaN; the anchors' estimate
    (cluster.CARD_PEAK_FLOPS) uses the SXM H100's row, and the H100 run's fraction of peak is its FLOP/s over it."""
    bf16 = {"precision": "bfloat16", "tf32": False}
    tf32 = {"precision": "float32", "tf32": True}
    fp32 = {"precision": "float32", "tf32": False}
    assert gpu_check.peak_flops("NVIDIA H100 PCIe", bf16) == 756e12
    assert gpu_check.peak_flops("NVIDIA H100 80GB HBM3", bf16) == 989e12
    assert gpu_check.peak_flops("NVIDIA H100 80GB HBM3", tf32) == 495e12
    assert gpu_check.peak_flops("NVIDIA H100 80GB HBM3", fp32) == 67e12
    assert gpu_check.peak_flops("NVIDIA A100-SXM4-80GB", tf32) == 156e12
    assert math.isnan(gpu_check.peak_flops("Tesla V100-SXM2-16GB", bf16))
    sxm = dict(gpu_check.PEAKS)["H100"]
    assert cluster.CARD_PEAK_FLOPS == {"bfloat16": sxm[0], "tf32": sxm[1], "float32": sxm[2]}
    rates = pd.read_csv(REPO / "benchmarks/results/gpu_h100_2026-11-28/gpu_rates_nvidia_h100_80gb_hbm3.csv")
    first = rates.iloc[0]  # single_index's bf16 GPT-2: 2.3953e12 FLOPs in 0.05333 s, 4.49e13 FLOP/s, 4.5% of 989e12
    assert first["fraction_of_peak"] == pytest.approx(first["flops_per_step"] / first["seconds_per_step"] / 989e12)
    assert first["fraction_of_peak"] == pytest.approx(0.0454, abs=5e-4)


def test_the_gpu_backlog_runs_its_rows_in_order_and_tells_the_roundings_apart_by_hand(tmp_path):
    """``gpu-backlog --tiny`` on the CPU (the emulation in the card's place), rows in the backlog's order. The rounding
    products by hand (u = 2⁻¹²): K ones plus 1 + 2u (a tie) and 1 + 3u sum to K + 5u in float32, K + 8u with ties away
    from zero (both up to 1 + 4u), K + 4u with ties to even (the tie down to 1), K truncated. The emulation rounds the
    tensor-core shape only (K + 8u) and leaves K = 17, N = 1 and M = 1 in float32 (K + 5u)."""
    from iclab.compute.gpu_backlog import ROUNDINGS, backlog

    assert {name: excess / 2**-12 for name, excess in ROUNDINGS.items()} == {
        "float32 (not rounded)": 5, "nearest, ties away (iclab.fit.tf32)": 8, "nearest, ties to even": 4,
        "truncation": 0}
    rows = json.loads(backlog(GPU_DAY, tmp_path, tiny_shapes=True).read_text())
    assert [(row["row"], row["shape"]) for row in rows] == [
        ("kernel time", "probe_layers"), ("kernel time", "zfb_figure1"), ("tf32 agreement", "probe_layers"),
        *(("tf32 rounding", shape) for shape in ("M=4 K=16 N=4", "M=4 K=17 N=4", "M=4 K=16 N=1", "M=1 K=16 N=4")),
        ("batched agreement", "probe_layers"),
        *(("batched steps", name) for name in ("single_index", "single_index", "probe_layers", "zfb_figure1",
                                                "ltb_table1", "probe_hidden_size", "ltb_table1", "probe_hidden_size",
                                                "probe_hidden_size", "probe_hidden_size", "lsa_shifts"))]
    assert not any("error" in row for row in rows)
    assert [row["excess_over_K_in_2^-12"] for row in rows[3:7]] == [8, 5, 5, 5]
    assert [row["matches"] for row in rows[3:7]] == [["nearest, ties away (iclab.fit.tf32)"]] + [
        ["float32 (not rounded)"]] * 3
    batched = rows[7]  # on the CPU: round-off apart from the models alone, and a member the same at G = 2 and 4
    assert batched["group_size"] == 4 and batched["same_in_a_group_of_two"] is True
    # alone and batched are other computations (mm against bmm): apart by round-off on every CPU capability tried
    assert 0 <= batched["loss_rel_vs_alone"] < 1e-6 and 0 < batched["gradient_rel_vs_alone"] < 4 * 2**-23
    assert [r["numerics"] for r in rows[2]["rows"]] == ["float32", "tf32", "bfloat16"]
    # gpu_node's groups, G as cluster_requests.json's (counted by hand there), the most FLOPs first
    assert [row["group_size"] for row in rows[8:]] == [4, 4, 28, 18, 7, 5, 7, 5, 5, 5, 3]
    assert all(row["group_s"] > 0 and row["alone_s"] > 0 for row in rows[8:])
    rates = cluster.GpuRates.read(tmp_path / "gpu_rates_batched_cpu.csv")  # each group and its member alone
    single_index = rows[8]  # d = 16: a key no other tiny shape shares (the tiny widths make some alike)
    assert rates.groups[single_index["key"], 4] == pytest.approx(single_index["group_s"])
    assert rates.shapes[single_index["key"]] == pytest.approx(single_index["alone_s"])


def test_the_capture_rows_time_each_batched_group_both_ways_and_repeat_bit_for_bit(tmp_path, monkeypatch):
    """``gpu-backlog --rows capture --tiny``, on gpu_node's two groups of the most FLOPs (its 11 take 15 s here)
    and its LSTM alone: each timed eager and with train.capture's step (uncaptured on the CPU), whose sequence
    repeats bit for bit, into a file of its own."""
    from iclab.compute import gpu_backlog

    every = gpu_backlog.batched_groups
    monkeypatch.setattr(gpu_backlog, "batched_groups", lambda config: every(config)[:2])
    path = gpu_backlog.backlog(GPU_DAY, tmp_path, tiny_shapes=True, rows="capture")
    rows = json.loads(path.read_text())
    assert path.name == "gpu_backlog_capture_cpu.json" and not (tmp_path / "gpu_backlog_cpu.json").exists()
    assert [(row["shape"], row["group_size"]) for row in rows] == [("single_index", 4)] * 2 + [("probe_layers", 1)]
    assert json.loads(rows[-1]["key"])["family"] == "lstm"  # the tier's LSTM last, alone
    assert all(row["row"] == "captured steps" and row["repeat_bit_for_bit"] is True for row in rows)
    assert all(row["eager_s"] > 0 and row["captured_s"] > 0 and row["captured_on"] == "uncaptured (cpu)" for row in rows)


def test_a_timed_learner_and_a_capture_row_by_hand(monkeypatch):
    """With stand-in clocks: a run told to start at epoch 103 when the clock reads 100 sleeps 3 s first; its clock
    starts at the warm-up's end (perf_counter 10 there, 16 at the end: 6 s over 3 timed steps, 2 s a step) and its
    window is the epoch clock's (100, 100). The capture row times the eager step, then the captured one twice (the
    second to repeat the first bit for bit) and reports their ratio: 0.3 s over 0.1 s is 3.0."""
    from iclab.compute import gpu_backlog
    from iclab.compute.gpu_check import tiny

    slept, ticks = [], iter([10.0, 16.0])
    monkeypatch.setattr(gpu_backlog.time, "time", lambda: 100.0)
    monkeypatch.setattr(gpu_backlog.time, "sleep", slept.append)
    monkeypatch.setattr(gpu_backlog.time, "perf_counter", lambda: next(ticks))
    shape = tiny(gpu_check.tier_shapes(GPU_DAY)[0])
    _, seconds, window, fallback = gpu_backlog.timed_learner([shape.job, shape.job], torch.device("cpu"), 3, warmup=2,
                                                             start_at=103.0)
    assert (slept, seconds, window, fallback) == ([3.0], 2.0, (100.0, 100.0), None)
    calls = []

    def timed(jobs, device, steps, warmup, captured=False):
        calls.append(captured)
        return torch.nn.Linear(1, 1), (0.1 if captured else 0.3), (0.0, 0.0), None

    monkeypatch.setattr(gpu_backlog, "timed_learner", timed)
    torch.manual_seed(0)
    row = gpu_backlog.captured_steps("x", [shape.job, shape.job], torch.device("cpu"), 3, 2)
    assert calls == [False, True, True] and row["eager_over_captured"] == pytest.approx(3.0)
    assert (row["eager_s"], row["captured_s"], row["group_size"], row["steps_timed"]) == (0.3, 0.1, 2, 3)
    assert row["repeat_bit_for_bit"] is False  # two freshly drawn Linear layers differ


def test_the_batched_agreement_is_read_by_hand():
    """Two members, by hand: losses 2 and 4 against 2.5 and 4 (relative 0.25 and 0), gradients (1, −4) and (2, 0)
    against (1.5, −4) and (2, 0.1) (0.5 of 4, 0.1 of 2: 0.125 and 0.05). The group of two, reordered, holds the same
    members bit for bit; one gradient moved by 2⁻²⁰ is not the same."""
    from iclab.compute.gpu_backlog import agreement

    member = lambda loss, grad: (torch.tensor(loss), {"w": torch.tensor(grad)})  # noqa: E731
    alone = [member(2.0, [1.0, -4.0]), member(4.0, [2.0, 0.0])]
    batched = [member(2.5, [1.5, -4.0]), member(4.0, [2.0, 0.1])]
    row = agreement(alone, batched, [batched[1], batched[0]])
    assert row == {"loss_rel_vs_alone": 0.25, "gradient_rel_vs_alone": pytest.approx(0.125),
                   "same_in_a_group_of_two": True}
    assert agreement(alone, batched, [member(4.0, [2.0, 0.1 + 2**-20]), batched[0]])["same_in_a_group_of_two"] is False
    assert agreement(alone, batched, [batched[1], member(2.5, [1.5, -4.0 + 2**-20])])["same_in_a_group_of_two"] is False
    assert agreement(alone, batched, [member(4.5, [2.0, 0.1]), batched[0]])["same_in_a_group_of_two"] is False
