"""The prepared packing check (``iclab.compute.gpu_pack``) at a tiny shape on the CPU, in this process: a training's
weights digest repeats bit for bit and changes with the seed; the result file compares k copies against the lone
runs."""

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from conftest import GPU_IMAGE_PRELUDE

from iclab.compute import gpu_pack
from iclab.compute.gpu_check import tiny

GPU_DAY = Path(__file__).resolve().parents[1] / "tests" / "data" / "gpu_shapes.yaml"  # gpu_node before 101


def test_weights_digest_repeats_bit_for_bit_and_changes_with_the_seed():
    job = tiny(gpu_pack.busiest_shape(GPU_DAY)).job
    first, again = (gpu_pack.train_and_time(job, torch.device("cpu"), 7) for _ in range(2))
    other = gpu_pack.train_and_time(replace(job, seed=1), torch.device("cpu"), 7)
    assert first["sha256"] == again["sha256"] != other["sha256"]
    assert first["seconds_per_step"] > 0 and first["window"][0] < first["window"][1]


def test_pack_compares_every_packed_copy_with_the_lone_runs(tmp_path, monkeypatch):
    """Workers run in this process (the CLI starts them as processes): two lone runs, then k = 3 copies; a copy
    whose digest differs (planted) makes packed_equal_alone false."""
    runs = []

    def in_process(spec, device, steps, copies, scratch):
        job = gpu_pack.TrainJob.from_dict(spec)
        out = [gpu_pack.train_and_time(job, torch.device(device), steps) for _ in range(copies)]
        runs.append(copies)
        return out

    monkeypatch.setattr(gpu_pack, "launch", in_process)
    result = json.loads(gpu_pack.pack(GPU_DAY, tmp_path, k=3, steps=7, tiny_shape=True).read_text())
    assert runs == [1, 1, 3] and len(result["packed"]) == 3
    assert result["alone_bit_for_bit"] and result["packed_equal_alone"]
    assert result["experiment"] == "probe_layers" and result["models_at_this_shape"] == 28  # 14 seeds at κ = 1 and 100
    mean_packed = sum(run["seconds_per_step"] for run in result["packed"]) / 3
    assert result["slowdown"] == pytest.approx(mean_packed / min(run["seconds_per_step"] for run in result["alone"]))

    def one_differs(spec, device, steps, copies, scratch):
        out = in_process(spec, device, steps, copies, scratch)
        return out[:-1] + [out[-1] | {"sha256": "0" * 64}] if copies > 1 else out

    monkeypatch.setattr(gpu_pack, "launch", one_differs)
    assert not json.loads(gpu_pack.pack(GPU_DAY, tmp_path, k=2, steps=7, tiny_shape=True).read_text())[
        "packed_equal_alone"]
    with pytest.raises(gpu_pack.UsageError, match="--steps 5; allowed: more than the 5 warm-up steps"):
        gpu_pack.pack(GPU_DAY, tmp_path, k=2, steps=5, tiny_shape=True)


def test_the_shapes_gpu_pack_can_pack():
    """The busiest (probe_layers' 82-token GPT-2, 28 models), the longest (single_index's 514 tokens) and the LSTM."""
    chosen = {which: gpu_pack.chosen_shape(GPU_DAY, which) for which in gpu_pack.SHAPES}
    assert chosen["busiest"].experiment == "probe_layers" and chosen["busiest"].job.model["name"] == "gpt2"
    assert chosen["longest"].experiment == "single_index" and chosen["longest"].job.task["n_points"] == 257
    assert chosen["lstm"].job.model["name"] == "lstm"
    with pytest.raises(gpu_pack.UsageError, match="--shape widest; allowed: busiest, longest, lstm, batched"):
        gpu_pack.chosen_shape(GPU_DAY, "widest")


def test_the_batched_group_gpu_pack_packs_is_the_largest_two_of_which_fit_the_card(monkeypatch):
    """gpu_node's groups: zfb_figure1's 18 (9 seeds × 2 training covariances) at ~27.5 GB each fit twice on 80 GB;
    the probe group of 28 (72,000 MB requested) does not; on a card twice as large it is the one."""
    experiment, jobs = gpu_pack.batched_group(GPU_DAY)
    assert experiment == "zfb_figure1" and len(jobs) == 18
    assert {job.seed for job in jobs} == set(range(18)) and all(job.train.batched for job in jobs)
    monkeypatch.setattr(gpu_pack, "PACK_CARD_MB", 2 * 27_500)  # exactly two of its requests: still fits
    assert gpu_pack.batched_group(GPU_DAY)[0] == "zfb_figure1"
    monkeypatch.setattr(gpu_pack, "PACK_CARD_MB", 160_000)
    experiment, jobs = gpu_pack.batched_group(GPU_DAY)
    assert experiment == "probe_layers" and len(jobs) == 28
    monkeypatch.setattr(gpu_pack, "PACK_CARD_MB", 1_000)
    with pytest.raises(gpu_pack.UsageError, match="no batched group of config .* fits twice on a 1000 MB card"):
        gpu_pack.batched_group(GPU_DAY)


def in_process_launch(log: list):
    """``gpu_pack.launch`` in this process: each call's copies and the MPS pipe folder its workers would see."""
    def launch(spec, device, steps, copies, scratch):
        pipe = os.environ.get("CUDA_MPS_PIPE_DIRECTORY")
        log.append((copies, pipe if pipe is None or os.path.isdir(pipe) else "no such folder"))
        return [gpu_pack.worker_result(spec, torch.device(device), steps) for _ in range(copies)]
    return launch


def test_a_batched_group_packs_twice_and_its_gain_is_the_batched_familys(tmp_path, monkeypatch):
    """A tiny zfb_figure1 group of 18, alone twice and two copies at once: equal bit for bit; its gain goes to the
    family "gpt2 batched", not "gpt2"; another seed order changes the group's digest."""
    from iclab.compute.packing import Gain

    log = []
    monkeypatch.setattr(gpu_pack, "launch", in_process_launch(log))
    result = json.loads(gpu_pack.pack(GPU_DAY, tmp_path, k=2, steps=7, tiny_shape=True, which="batched").read_text())
    assert [copies for copies, _ in log] == [1, 1, 2] and result["models_at_this_shape"] == 18
    assert result["alone_bit_for_bit"] and result["packed_equal_alone"] and not result["mps"]
    assert Gain.of(result).family == "gpt2 batched" and Gain.of(result).k == 2
    swapped = result["spec"][1::-1] + result["spec"][2:]
    assert gpu_pack.worker_result(swapped, torch.device("cpu"), 6)["sha256"] != \
        gpu_pack.worker_result(result["spec"], torch.device("cpu"), 6)["sha256"]


MPS_CONTROL = """#!/bin/sh
echo "$* $(cat)" >> {log}
"""


def test_mps_packs_the_copies_under_the_daemon_and_the_lone_runs_outside_it(tmp_path, monkeypatch):
    """A stand-in nvidia-cuda-mps-control on PATH (it logs its arguments and input): started with -d before the k
    copies, which see its pipe folder, and told quit after; the lone runs see none; the environment is restored.
    Without one on PATH, the result says so and nothing trains."""
    log, calls = [], tmp_path / "calls.txt"
    monkeypatch.setattr(gpu_pack, "launch", in_process_launch(log))
    monkeypatch.delenv("CUDA_MPS_PIPE_DIRECTORY", raising=False)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    control = bin_dir / gpu_pack.MPS_CONTROL
    control.write_text(MPS_CONTROL.format(log=calls))
    control.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    path = gpu_pack.pack(GPU_DAY, tmp_path, k=2, steps=6, tiny_shape=True, which="lstm", mps=True)
    assert path.name == "gpu_pack_lstm_mps_cpu.json" and json.loads(path.read_text())["packed_equal_alone"]
    assert [copies for copies, _ in log] == [1, 1, 2] and log[0][1] is None and log[1][1] is None
    assert log[2][1] is not None and log[2][1].endswith("mps_pipe")
    assert calls.read_text().split("\n")[:2] == ["-d ", " quit"]
    assert "CUDA_MPS_PIPE_DIRECTORY" not in os.environ
    control.write_text(MPS_CONTROL.format(log=calls) + '[ "$1" = -d ] && exit 1\n')  # a daemon that cannot start
    with pytest.raises(subprocess.CalledProcessError):
        gpu_pack.pack(GPU_DAY, tmp_path / "refused", k=2, steps=6, tiny_shape=True, which="lstm", mps=True)
    control.write_text(MPS_CONTROL.format(log=calls) + '[ "$1" = -d ] || exit 1\n')  # one that fails to quit
    again = gpu_pack.pack(GPU_DAY, tmp_path, k=2, steps=6, tiny_shape=True, which="lstm", mps=True)
    assert json.loads(again.read_text())["packed_equal_alone"]  # its result kept: the stop is best effort
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    missing = json.loads(gpu_pack.pack(GPU_DAY, tmp_path, k=2, steps=6, tiny_shape=True, which="lstm",
                                       mps=True).read_text())
    assert "no MPS daemon in this image" in missing["not_run"] and "packed" not in missing and len(log) == 8


def test_the_pack_result_by_hand(tmp_path, monkeypatch):
    """Lone runs of 0.25 and 0.2 s a step, three packed of 0.3, 0.4, 0.5 s: the slowdown is their mean over the
    faster lone run, 0.4 / 0.2 = 2, the gain k over it, 3 × 0.2 / 0.4 = 1.5; weights "a" twice alone and "a", "a",
    "b" packed: alone bit for bit, packed not all equal. Two lone runs then one launch of k, each of 6 steps."""
    calls, runs = [], iter([[0.25], [0.2], [0.3, 0.4, 0.5]])
    digests = iter([["a"], ["a"], ["a", "a", "b"]])

    def fake(spec, device, steps, copies, scratch):
        calls.append((copies, steps))
        return [{"sha256": d, "seconds_per_step": t, "window": [0, 1]} for d, t in zip(next(digests), next(runs))]

    monkeypatch.setattr(gpu_pack, "launch", fake)
    result = json.loads(gpu_pack.pack(GPU_DAY, tmp_path, k=3, steps=6, tiny_shape=True).read_text())
    assert calls == [(1, 6), (1, 6), (3, 6)]
    assert result["slowdown"] == pytest.approx(2.0) and result["throughput_gain"] == pytest.approx(1.5)
    assert result["alone_bit_for_bit"] is True and result["packed_equal_alone"] is False
    with pytest.raises(gpu_pack.UsageError, match="--steps 4; allowed: more than the 5 warm-up steps"):
        gpu_pack.pack(GPU_DAY, tmp_path, k=2, steps=4, tiny_shape=True)


def test_a_batched_workers_steps_count_its_warm_up():
    """A group's worker trains ``steps`` in all, the first 5 its warm-up: its weights are timed_learner's at 2 + 5."""
    from iclab.compute.gpu_backlog import timed_learner
    from iclab.compute.gpu_check import weights_digest

    _, spec, _ = gpu_pack.packed_training(GPU_DAY, "batched", tiny_shape=True)
    spec = spec[:2]
    jobs = [gpu_pack.TrainJob.from_dict(job) for job in spec]
    assert gpu_pack.worker_result(spec, torch.device("cpu"), 7)["sha256"] == weights_digest(
        timed_learner(jobs, torch.device("cpu"), 2, 5)[0])


def test_overlap_of_timed_windows_by_hand():
    assert gpu_pack.overlap([[0, 10], [2, 12]]) == pytest.approx(0.8)
    assert gpu_pack.overlap([[0, 4], [5, 9]]) == 0.0


GPU_IMAGE_WORKER = GPU_IMAGE_PRELUDE + """
from iclab.compute import gpu_pack
from iclab.compute.gpu_check import tiny
job = tiny(gpu_pack.busiest_shape(gpu_pack.Path(sys.argv[1]))).job
print(gpu_pack.train_and_time(job, torch.device("cpu"), 6)["sha256"])
"""


def test_a_worker_runs_with_only_what_the_gpu_machines_image_has():
    result = subprocess.run([sys.executable, "-c", GPU_IMAGE_WORKER, str(GPU_DAY)], capture_output=True, text=True,
                            env={**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"})
    assert result.returncode == 0, result.stderr[-2000:]
    assert len(result.stdout.split()[-1]) == 64
