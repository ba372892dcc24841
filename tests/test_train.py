"""Training: learns the optimum, resumes after a kill to the identical cube, is deterministic,
and stops with a clear error on divergence."""

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch
import xarray as xr
from conftest import GPU_IMAGE_PRELUDE, REPO, hand_theorem8_limit, run_cli
from torch.optim.optimizer import register_optimizer_step_post_hook

from iclab import theory
from iclab.store.cubes import read_cube
from iclab.errors import CheckpointError
from iclab.fit import TrainingDiverged
from iclab.fit.sgd import train
from iclab.hashing import canonical_json
from iclab.store.jobs import TrainJob
from iclab.models import build_model
from iclab.tasks import LinearTask
from iclab.tasks.samplers import eval_set
from iclab.store.trained import TrainedModel

TASK = LinearTask(d=3, n_points=9, beta_star=(1.0, 0.0, -1.0), psi=1.0, sigma=0.5)


def job(name="gd_beta", steps=300, lr=0.02, seed=0, **train_kw):
    return TrainJob.from_dict(
        {
            "model": {"name": name, "init_scale": 0.0 if name == "gd_beta" else 0.1},
            "task": TASK.to_dict(),
            "train": {"steps": steps, "batch_size": 256, "lr": lr, **train_kw},
            "seed": seed,
        }
    )


def test_gd_beta_training_reaches_the_closed_form_optimum():
    model, losses, _ = train(job(steps=1500))
    opt = theory.gd_beta_optimum(
        beta_star=np.asarray(TASK.beta_star), psi=TASK.psi_matrix, h=TASK.h_matrix, sigma=TASK.sigma, n=8
    )
    beta0, gamma = model.beta0.detach().numpy(), model.gamma.detach().numpy()
    risk = theory.gd_beta_risk(
        beta0, gamma, beta_star=np.asarray(TASK.beta_star), psi=TASK.psi_matrix, h=TASK.h_matrix, sigma=TASK.sigma, n=8
    )
    assert risk == pytest.approx(opt.risk, rel=0.01)
    np.testing.assert_allclose(beta0, opt.beta0, atol=0.1)
    assert losses[-200:].mean() == pytest.approx(opt.risk, rel=0.05)


@pytest.mark.parametrize("name, read_out", [("gpt2", torch.float32), ("lstm", torch.bfloat16)])
def test_bfloat16_precision_runs_the_body_in_bfloat16_and_gpt2s_read_out_and_loss_in_float32(monkeypatch, name,
                                                                                            read_out):
    """train.precision bfloat16: a forward hook on the model's read-in sees bfloat16 outputs in training, on GPT-2's
    read-out float32 ones (the prediction is not rounded to bfloat16's 8 bits; the LSTM's stays as the default's
    cubes were made), the loss is float32 and the weights stay float32; at float32 (the default) every one is
    float32, and the spec leaves the field out (the hashes of models trained before it existed stand)."""
    from iclab.fit import sgd

    seen = {"read_in": [], "read_out": []}

    def hooked(spec, d):
        model = build_model(spec, d)
        for layer, dtypes in seen.items():
            getattr(model, layer).register_forward_hook(lambda _, args, out, dtypes=dtypes: dtypes.append(out.dtype))
        return model

    losses_seen = []
    original_loss = sgd.prompt_loss
    monkeypatch.setattr(sgd, "build_model", hooked)
    monkeypatch.setattr(sgd, "prompt_loss", lambda *a: losses_seen.append(original_loss(*a)) or losses_seen[-1])
    model_spec = {"lstm": {"name": "lstm", "hidden": 8, "n_layer": 2},
                  "gpt2": {"name": "gpt2", "n_embd": 8, "n_layer": 1, "n_head": 1, "n_points": TASK.n_points}}[name]
    specs = {}
    for precision, body in (("bfloat16", torch.bfloat16), ("float32", torch.float32)):
        for dtypes in (*seen.values(), losses_seen):
            dtypes.clear()
        spec = {"model": model_spec, "task": TASK.to_dict(), "seed": 0,
                "train": {"steps": 3, "batch_size": 16, "lr": 1e-3, "precision": precision}}
        model, losses, _ = train(TrainJob.from_dict(spec))
        assert set(seen["read_in"]) == {body} and set(seen["read_out"]) == {read_out if body != torch.float32 else body}
        assert {loss.dtype for loss in losses_seen} == {torch.float32}
        assert all(p.dtype == torch.float32 for p in model.parameters()) and np.isfinite(losses).all()
        specs[precision] = TrainJob.from_dict(spec)
    assert "precision" not in specs["float32"].to_dict()["train"]
    assert specs["bfloat16"].to_dict()["train"]["precision"] == "bfloat16"
    assert specs["bfloat16"].hash != specs["float32"].hash


@pytest.mark.parametrize("onednn", [True, False], ids=["oneDNN-on", "oneDNN-off"])
def test_bfloat16_training_warns_on_a_cpu_without_onednns_bfloat16_and_float32_never(monkeypatch, caplog, onednn):
    """Where oneDNN's bf16 is missing (AVX2; forced here by switching oneDNN off) a bf16 training warns once, naming
    the key and the CPU's capability; where it is there, and for float32 anywhere, nothing is said."""
    monkeypatch.setattr(torch.backends.mkldnn, "enabled", onednn)
    missing = not (onednn and torch.ops.mkldnn._is_mkldnn_bf16_supported())  # torch's own test, as ATen's RNN.cpp
    for precision in ("bfloat16", "float32"):
        caplog.clear()
        spec = {"model": {"name": "lstm", "hidden": 4, "n_layer": 1}, "task": TASK.to_dict(), "seed": 0,
                "train": {"steps": 1, "batch_size": 4, "lr": 1e-3, "precision": precision}}
        with caplog.at_level(logging.WARNING, logger="iclab.fit.sgd"):
            train(TrainJob.from_dict(spec))
        warned = [r.getMessage() for r in caplog.records if "train.precision bfloat16" in r.getMessage()]
        expected = missing and precision == "bfloat16"
        assert len(warned) == expected, warned
        assert not expected or torch.backends.cpu.get_cpu_capability() in warned[0]


def test_divergence_is_a_clear_error():
    with pytest.raises(TrainingDiverged, match=r"lower train\.lr"):
        train(job(name="lsa", steps=200, lr=50.0, optimizer="sgd", schedule="constant"))


def test_a_diverged_run_stops_at_the_first_read_after_it_with_the_message_of_the_step_it_diverged_at():
    """Losses are read every ``log_every`` steps, not after each: read every step, the run stops at the step whose
    loss diverged; read every 7, it stops at the end of that step's window of 7, with the same message."""
    spec = job(name="lsa", steps=200, lr=50.0, optimizer="sgd", schedule="constant")
    messages, taken = {}, {}
    for every in (1, 7):
        steps = []
        hook = register_optimizer_step_post_hook(lambda *_: steps.append(1))
        try:
            with pytest.raises(TrainingDiverged) as error:
                train(spec, log_every=every)
        finally:
            hook.remove()
        messages[every], taken[every] = str(error.value), len(steps)
    assert messages[7] == messages[1]
    diverged = int(messages[1].split(" at step ")[1].split()[0].rstrip(":"))
    assert taken[1] == diverged + 1
    assert taken[7] == -(-(diverged + 1) // 7) * 7  # the window's end


def test_batches_made_ahead_are_the_batches_made_in_turn_from_any_start():
    from iclab.fit.prefetch import BatchFeed
    from iclab.fit.sgd import batch_at

    spec = job(steps=40, curriculum={"dims": [1, 1], "points": [3, 2], "every": 5})
    make = lambda step: batch_at(spec.train, TASK, 0, step, None)  # noqa: E731
    for start in (0, 13):
        with BatchFeed(make, start, 40, torch.device("cpu"), ahead=True) as ahead:
            made = list(ahead)
        with BatchFeed(make, start, 40, torch.device("cpu"), ahead=False) as in_turn:
            for (xs, ys), (xs_turn, ys_turn) in zip(made, in_turn, strict=True):
                assert torch.equal(xs, xs_turn) and torch.equal(ys, ys_turn)
    with BatchFeed(make, 0, 40, torch.device("cpu"), ahead=True) as stopped_early:
        next(stopped_early)
    assert not stopped_early.thread.is_alive()  # leaving the feed mid-way stops its producer


def test_batches_from_producer_processes_are_the_batches_made_in_turn():
    """Two producer processes (``loop.producers``) make a batched group's batches from a resumed step, in step order,
    the same numbers as made in turn; leaving the feed stops its processes."""
    from iclab.fit.prefetch import BatchFeed
    from iclab.fit.sgd import BatchMaker

    spec = job(steps=40, curriculum={"dims": [1, 1], "points": [3, 2], "every": 5})
    make = BatchMaker(spec.train, (TASK, TASK), (0, 1), (None, None), batched=True)
    with BatchFeed(make, 13, 40, torch.device("cpu"), ahead=True, producers=2) as produced:
        made = list(produced)
    assert produced.pool._shutdown_thread and not produced.thread.is_alive()
    with BatchFeed(make, 13, 40, torch.device("cpu"), ahead=False) as in_turn:
        for (xs, ys), (xs_turn, ys_turn) in zip(made, in_turn, strict=True):  # (2, B, K, d), (2, B, K)
            assert xs.shape[0] == 2 and torch.equal(xs, xs_turn) and torch.equal(ys, ys_turn)
    with pytest.raises(ValueError, match="producers=2 make batches ahead; ahead is False"):
        BatchFeed(make, 0, 40, torch.device("cpu"), ahead=False, producers=2)


def test_producers_keep_depth_times_their_count_of_steps_in_flight_and_one_torch_thread_each(monkeypatch):
    """With P = 3 producers (a stand-in pool that makes each batch when it is taken) the feed hands out steps 0, 1,
    2, … in order and has submitted exactly DEPTH × P = 6 steps when it takes the first back, DEPTH × P + k when it
    takes step k (never more in flight: the window); near the end it drains what is left. A producer process
    starts with one torch thread (the job's cores are counted)."""
    from concurrent.futures import Future
    from types import SimpleNamespace

    from iclab.fit import prefetch

    submitted = []

    class StandInPool:
        def __init__(self, workers, mp_context, initializer, initargs):
            assert workers == 3

        def submit(self, function, step):
            submitted.append(step)
            future = Future()  # its batch: xs a (1, 1, 1) array holding the step
            future.result = lambda: (taken_at.append(len(submitted)),
                                     SimpleNamespace(xs=np.full((1, 1, 1), step), ys=np.zeros((1, 1))))[1]
            return future

        def shutdown(self, cancel_futures):
            pass

    taken_at = []
    monkeypatch.setattr(prefetch, "ProcessPoolExecutor", StandInPool)
    with prefetch.BatchFeed(lambda step: None, 0, 10, torch.device("cpu"), ahead=True, producers=3) as feed:
        steps = [int(xs.item()) for xs, _ in feed]
    assert steps == list(range(10)) and submitted == list(range(10))
    assert prefetch.DEPTH == 2 and taken_at == [6, 7, 8, 9, 10, 10, 10, 10, 10, 10]
    threads = torch.get_num_threads()
    try:
        prefetch.install(lambda step: None)
        assert torch.get_num_threads() == 1 and prefetch.PRODUCER_MAKE(5) is None
    finally:
        torch.set_num_threads(threads)


class FailsAt:
    """A picklable batch maker (a producer process imports it) that fails at one step."""

    def __init__(self, step: int):
        self.step = step

    def __call__(self, step: int):
        from iclab.fit.sgd import batch_at

        if step == self.step:
            raise ValueError(f"no batch {step}")
        return batch_at(job().train, TASK, 0, step, None)


def test_an_error_in_a_producer_process_is_raised_at_the_step_that_needs_its_batch():
    from iclab.fit.prefetch import BatchFeed

    with BatchFeed(FailsAt(3), 0, 10, torch.device("cpu"), ahead=True, producers=2) as feed:
        for _ in range(3):
            next(feed)
        with pytest.raises(ValueError, match="no batch 3"):
            next(feed)


class StandInStream:
    """A CUDA stream on the CPU: ``Tensor.to("cuda", non_blocking=True)`` enqueues a copy that reads its host buffer
    only when it runs (when a later event is waited on, or its result is used), as a real asynchronous copy may;
    ``torch.cuda.Event`` records the stream's position and ``synchronize()`` runs the copies before it."""

    def __init__(self, delay_s: float):
        self.pending: list = []
        self.lock = threading.Lock()  # the producer waits on events while the consumer enqueues and reads
        self.delay_s = delay_s  # the consumer's time between the queue's get() and recording its event

    def copy(self, host: torch.Tensor) -> "StandInStream.Copy":
        time.sleep(self.delay_s)
        copy = self.Copy(self, host)
        with self.lock:
            self.pending.append(copy)
        return copy

    def run_until(self, copy) -> None:
        with self.lock:
            while copy in self.pending:
                done = self.pending.pop(0)
                done.value = done.host.clone()

    class Copy:
        def __init__(self, stream, host):
            self.stream, self.host, self.value, self.buffer = stream, host, None, host.untyped_storage().data_ptr()

        def read(self) -> torch.Tensor:
            self.stream.run_until(self)
            return self.value

    def event(self):
        stream = self

        class Event:
            def record(self):
                self.copies = list(stream.pending)

            def synchronize(self):
                for copy in self.copies:
                    stream.run_until(copy)

        return Event()


def batches_through_the_cuda_path(monkeypatch, slots: int, steps: int = 12) -> tuple[list[bool], list[int]]:
    """``BatchFeed``'s CUDA path (pinned slots, copy events) on the CPU through ``StandInStream``, with ``slots``
    pinned buffers: for each step, whether the batch its copy read is the batch ``make(step)`` gives, and which
    buffer it read."""
    from iclab.fit import prefetch
    from iclab.fit.sgd import batch_at

    stream = StandInStream(delay_s=0.05)
    empty, to = torch.empty, torch.Tensor.to
    monkeypatch.setattr(torch, "empty", lambda *args, pin_memory=False, **kwargs: empty(*args, **kwargs))
    monkeypatch.setattr(torch.Tensor, "to", lambda self, device, *args, non_blocking=False, **kwargs: (
        stream.copy(self) if getattr(device, "type", None) == "cuda" else to(self, device, *args, **kwargs)))
    monkeypatch.setattr(torch.cuda, "Event", stream.event)
    monkeypatch.setattr(prefetch, "SLOTS", slots)
    make = lambda step: batch_at(job().train, TASK, 0, step, None)  # noqa: E731
    right, buffers = [], []
    with prefetch.BatchFeed(make, 0, steps, torch.device("cuda"), ahead=True) as feed:
        for step, (xs, ys) in enumerate(feed):
            right.append(np.array_equal(xs.read().numpy(), make(step).xs)
                         and np.array_equal(ys.read().numpy(), make(step).ys))
            buffers.append(xs.buffer)
    return right, buffers


def test_the_cuda_prefetch_path_never_overwrites_a_buffer_before_its_copy_ran(monkeypatch):
    """With ``prefetch.SLOTS`` (DEPTH + 2) buffers every step's copy reads its own batch, the buffers taken in turn;
    with DEPTH + 1 the producer fills the buffer of the step the consumer holds between the queue's get() and its
    event (the stand-in's consumer waits there), and some step reads a later batch; with DEPTH, more do."""
    from iclab.fit.prefetch import DEPTH, SLOTS

    right, buffers = batches_through_the_cuda_path(monkeypatch, SLOTS)
    assert all(right)
    assert len(set(buffers)) == SLOTS and all(buffers[i] == buffers[i % SLOTS] for i in range(len(buffers)))
    for too_few in (DEPTH + 1, DEPTH):
        right, _ = batches_through_the_cuda_path(monkeypatch, too_few)
        assert not all(right), too_few


def test_an_error_in_the_producer_is_raised_at_the_step_that_needs_its_batch():
    from iclab.fit.prefetch import BatchFeed
    from iclab.fit.sgd import batch_at

    def make(step):
        if step == 3:
            raise ValueError("no batch 3")
        return batch_at(job().train, TASK, 0, step, None)

    with BatchFeed(make, 0, 10, torch.device("cpu"), ahead=True) as feed:
        for _ in range(3):
            next(feed)
        with pytest.raises(ValueError, match="no batch 3"):
            next(feed)


def test_training_with_batches_made_ahead_is_bit_identical_and_tf32_is_set_only_while_training():
    """prefetch always (a producer thread, or two producer processes) and never give the same losses and weights;
    ``train.tf32`` is the CUDA
    flags' value during the step and they are restored after (on the CPU the products are emulated: test_tf32.py)."""
    runs = {}
    for prefetch, producers in (("always", 0), ("never", 0), ("always", 2)):
        model, losses, _ = train(job(name="lsa", steps=30), prefetch=prefetch, producers=producers)
        runs[prefetch, producers] = losses, [p.detach().clone() for p in model.parameters()]
    for other in (("never", 0), ("always", 2)):
        np.testing.assert_array_equal(runs["always", 0][0], runs[other][0])
        assert all(torch.equal(a, b) for a, b in zip(runs["always", 0][1], runs[other][1]))

    seen, flags = [], (torch.backends.cuda.matmul, torch.backends.cudnn)
    before = [flag.allow_tf32 for flag in flags]
    original = torch.nn.Module.__call__

    def recording(module, *args, **kwargs):
        seen.append(tuple(flag.allow_tf32 for flag in flags))
        return original(module, *args, **kwargs)

    for tf32 in (True, False):
        seen.clear()
        torch.nn.Module.__call__ = recording
        try:
            train(job(name="lsa", steps=3, tf32=tf32))
        finally:
            torch.nn.Module.__call__ = original
        assert seen and set(seen) == {(tf32, tf32)}
        assert [flag.allow_tf32 for flag in flags] == before


def test_train_compile_steps_through_the_compiled_model_and_forbids_falling_back_to_eager(monkeypatch):
    """With ``train.compile`` the step calls what torch.compile returned (here a stand-in that records how it was
    asked), with Inductor counting its graphs, under the recompile limit's error; without, the model itself.
    (Compiling for real costs ~50 s a model here: benchmarks/bench_compile.py measures it.)"""
    from iclab.fit.sgd import CountingInductor

    asked, calls = [], []

    def fake_compile(model, backend):
        asked.append(backend)

        def forward(*args, **kwargs):
            calls.append(torch._dynamo.config.fail_on_recompile_limit_hit)
            return model(*args, **kwargs)

        return forward

    monkeypatch.setattr(torch, "compile", fake_compile)
    train(job(name="lsa", steps=5, compile=True))
    assert len(asked) == 1 and isinstance(asked[0], CountingInductor) and calls == [True] * 5
    assert torch._dynamo.config.fail_on_recompile_limit_hit is False
    train(job(name="lsa", steps=5))
    assert len(asked) == 1 and len(calls) == 5
    assert job(compile=True).hash != job().hash and job(compile=False).hash == job().hash



CURRICULUM = {"dims": [1, 1], "points": [3, 2], "every": 2}  # points 3, 5, 7, 9 over steps 0–1, 2–3, 4–5, 6–


def curriculum_job(model: dict, positions: str, **train_kw) -> TrainJob:
    return TrainJob.from_dict({"model": model, "task": TASK.to_dict(), "seed": 0, "train": {
        "steps": 8, "batch_size": 32, "lr": 3e-3, "loss_positions": positions, "curriculum": CURRICULUM, **train_kw}})


SEQUENCE_MODELS = {"gpt2": {"name": "gpt2", "n_embd": 16, "n_layer": 2, "n_head": 2, "n_points": TASK.n_points},
                   "lstm": {"name": "lstm", "hidden": 8, "n_layer": 2}}


@pytest.mark.parametrize("name, positions", [("gpt2", "all"), ("gpt2", "last"), ("lstm", "all")])
def test_padded_curriculum_prompts_train_as_the_unpadded_ones_up_to_round_off(name, positions):
    """``train.pad_points`` 4 trains the stages of 3, 5, 7 and 9 points at 4, 8, 8 and 9 (the prompt's later points
    filling each); the loss reads only the stage's points, so in exact arithmetic it is the unpadded training: the
    losses agree to float round-off (rel 1e-5), and so do the trained models' predictions on fresh prompts (not
    bit-equal: longer matmuls round otherwise; weights whose true gradient is 0, such as the attention's key bias,
    take Adam-sized steps on round-off, so the test reads predictions, not weights),
    and the padded spec is a model of its own name."""
    from iclab.fit.sgd import batch_at

    plain, padded = (curriculum_job(SEQUENCE_MODELS[name], positions, **kw) for kw in ({}, {"pad_points": 4}))
    assert [batch_at(padded.train, TASK, 0, step, None).xs.shape[1] for step in (0, 2, 4, 6)] == [4, 8, 8, 9]
    assert [batch_at(plain.train, TASK, 0, step, None).xs.shape[1] for step in (0, 2, 4, 6)] == [3, 5, 7, 9]
    (plain_model, plain_losses, _), (padded_model, padded_losses, _) = train(plain), train(padded)
    np.testing.assert_allclose(padded_losses, plain_losses, rtol=1e-5)
    assert plain_losses[0] != plain_losses[1]  # the weights moved: the comparison covers the steps, not only the init
    prompts = eval_set(TASK, seed=1, n_prompts=64)
    xs, ys = torch.from_numpy(prompts.xs).float(), torch.from_numpy(prompts.ys).float()  # (64, 9, 3), (64, 9)
    with torch.no_grad():
        np.testing.assert_allclose(padded_model(xs, ys).numpy(), plain_model(xs, ys).numpy(), rtol=1e-4, atol=1e-5)
    assert padded.hash != plain.hash and "pad_points" not in plain.to_dict()["train"]


@pytest.mark.parametrize("name, positions", [("gpt2", "all"), ("gpt2", "last"), ("lstm", "last")])
def test_the_loss_of_a_padded_prompt_reads_only_its_real_points(name, positions):
    """Against a loss built by hand on the prompt cut at its 5 real points: the padded prompt's loss is the same
    whatever fills its 4 later points (here random values 10× the data's scale)."""
    from iclab.fit.sgd import prompt_loss

    torch.manual_seed(0)
    model = build_model(SEQUENCE_MODELS[name], TASK.d)
    xs, ys = torch.randn(6, 9, TASK.d), torch.randn(6, 9)
    filled_xs, filled_ys = xs.clone(), ys.clone()
    filled_xs[:, 5:], filled_ys[:, 5:] = 10 * torch.randn(6, 4, TASK.d), 10 * torch.randn(6, 4)
    with torch.no_grad():
        predictions = model(xs[:, :5], ys[:, :5])  # (6, 5)
        by_hand = ((predictions[:, -1] - ys[:, 4]) ** 2).mean() if positions == "last" else (
            ((predictions[:, 1:] - ys[:, 1:5]) ** 2).mean())
        for prompt in ((xs, ys), (filled_xs, filled_ys)):
            assert prompt_loss(model, *prompt, positions, points=5).item() == pytest.approx(by_hand.item(), rel=1e-6)


@pytest.mark.parametrize("name, positions", [("gpt2", "all"), ("gpt2", "last"), ("lstm", "all")])
def test_a_captured_steps_cpu_form_trains_as_padding_to_the_full_length_bit_for_bit(name, positions):
    """``train.capture`` on the CPU (uncaptured): every stage's prompts at the task's 9 points, the loss masked to
    the stage's 3, 5, 7, 9 by a length on the device. Reading every position, its gradients are the sliced loss's
    exactly, so it trains to the weights of ``pad_points`` 9 bit for bit; reading the last, the uncaptured loop's
    full-length stage reads the final token alone (``last_only``, another rounding), so the two agree to round-off
    (predictions on fresh prompts). Its losses agree to round-off (a masked sum against a sliced mean); it is a
    model of its own name, refused with compile or a schedule that moves the learning rate."""
    from dataclasses import replace

    from iclab.fit.sgd import batch_at

    plain, padded, captured = (curriculum_job(SEQUENCE_MODELS[name], positions, schedule="constant", **kw)
                               for kw in ({}, {"pad_points": TASK.n_points}, {"capture": True}))
    assert [batch_at(captured.train, TASK, 0, step, None).xs.shape[1] for step in (0, 2, 6)] == [9, 9, 9]
    (padded_model, padded_losses, _), (captured_model, captured_losses, _) = train(padded), train(captured)
    np.testing.assert_allclose(captured_losses, padded_losses, rtol=1e-6)
    # its losses pass through a record of log_every rows, read every log_every steps: 3 rows over 8 steps
    np.testing.assert_array_equal(train(captured, log_every=3)[1], captured_losses)
    plain_model, plain_losses, _ = train(plain)  # today's step: every stage at its own length, 8 steps, 4 stages
    np.testing.assert_allclose(captured_losses, plain_losses, rtol=1e-5)
    fresh = eval_set(TASK, seed=1, n_prompts=64)
    with torch.no_grad():
        xs, ys = torch.from_numpy(fresh.xs).float(), torch.from_numpy(fresh.ys).float()  # (64, 9, 3), (64, 9)
        np.testing.assert_allclose(captured_model(xs, ys).numpy(), plain_model(xs, ys).numpy(), rtol=1e-4, atol=1e-5)
    assert padded_losses[0] != padded_losses[-1]
    if positions == "all":
        for (key, mine), (_, theirs) in zip(captured_model.state_dict().items(), padded_model.state_dict().items()):
            assert torch.equal(mine, theirs), key
    else:
        prompts = eval_set(TASK, seed=1, n_prompts=64)
        xs, ys = torch.from_numpy(prompts.xs).float(), torch.from_numpy(prompts.ys).float()  # (64, 9, 3), (64, 9)
        with torch.no_grad():
            np.testing.assert_allclose(captured_model(xs, ys).numpy(), padded_model(xs, ys).numpy(), rtol=1e-4,
                                       atol=1e-5)
    assert captured.hash != padded.hash and captured.to_dict()["train"]["capture"] is True
    for bad, message in (({"compile": True}, "train.capture with train.compile"),
                         ({"schedule": "cosine"}, "train.capture with train.schedule 'cosine'")):
        with pytest.raises(ValueError, match=message):
            replace(captured.train, **bad)


def test_a_captured_step_in_bfloat16_trains_as_padding_to_the_full_length_bit_for_bit():
    """Under bf16 autocast (its weight-cast cache off in the captured step, on in the loop's) the captured step's
    CPU form still trains to ``pad_points``' weights bit for bit: the same casts, the same kernels."""
    padded, captured = (curriculum_job(SEQUENCE_MODELS["gpt2"], "all", schedule="constant", precision="bfloat16", **kw)
                        for kw in ({"pad_points": TASK.n_points}, {"capture": True}))
    (padded_model, padded_losses, _), (captured_model, _, _) = train(padded), train(captured)
    assert padded_losses[0] != padded_losses[-1]
    for (key, mine), (_, theirs) in zip(captured_model.state_dict().items(), padded_model.state_dict().items()):
        assert torch.equal(mine, theirs), key


def test_a_capture_that_fails_leaves_the_step_eager_and_says_why(monkeypatch, caplog):
    """Where torch cannot capture the step (here a stand-in for ``torch.cuda.graph`` that raises, as cuDNN's LSTM
    might), the step keeps no graph, is never captured again, and the log and ``fallback`` name the reason."""
    from contextlib import contextmanager

    from iclab.fit import capture
    from iclab.fit.sgd import Alone, make_optimizer, masked_prompt_loss

    @contextmanager
    def refused(graph):
        raise RuntimeError("operation not permitted when stream is capturing\nmore")
        yield

    monkeypatch.setattr(capture.torch.cuda, "CUDAGraph", object)
    monkeypatch.setattr(capture.torch.cuda, "graph", refused)
    job = curriculum_job(SEQUENCE_MODELS["lstm"], "all", schedule="constant", capture=True)
    model = build_model(job.model, TASK.d)
    step = capture.CapturedStep(Alone(model), make_optimizer(job.train, model.parameters()), job.train,
                                lambda m, x, y, read: masked_prompt_loss(m, x, y, "all", read), torch.device("cpu"),
                                record_steps=1)
    step.capture()
    assert step.graph is None and step.fallback == (
        "eager: the capture failed (operation not permitted when stream is capturing)")
    assert "train.capture: eager: the capture failed" in caplog.text


def test_on_cuda_the_step_runs_its_warm_up_eagerly_then_captures_once_and_replays(monkeypatch):
    """The CUDA schedule, driven on the CPU by stand-ins for torch.cuda's streams and graphs: the first WARMUP (3)
    steps run eagerly on a side stream, the fourth captures the step once and replays it, every later one replays;
    each step's losses go into the next row of the record (two rows: the third step's row is the first's again);
    autocast's weight-cast cache is off in every step (a capture must not keep casts made outside it). A schedule
    that moves the learning rate is refused (the graph holds the optimizer's one)."""
    from contextlib import contextmanager, nullcontext
    from dataclasses import replace

    from iclab.fit import capture
    from iclab.fit.sgd import Alone, batch_at, make_optimizer, masked_prompt_loss

    events = []

    class Stream:
        def __init__(self, device=None):
            events.append("side")

        def wait_stream(self, other):
            pass

    class Graph:
        def replay(self):
            events.append("replay")

    @contextmanager
    def recording(graph):
        events.append("capture")
        yield

    monkeypatch.setattr(capture.torch.cuda, "Stream", Stream)
    monkeypatch.setattr(capture.torch.cuda, "current_stream", lambda device=None: Stream.__new__(Stream))
    monkeypatch.setattr(capture.torch.cuda, "stream", lambda side: nullcontext())
    monkeypatch.setattr(capture.torch.cuda, "CUDAGraph", Graph)
    monkeypatch.setattr(capture.torch.cuda, "graph", recording)
    caches, autocast = [], torch.autocast
    monkeypatch.setattr(capture.torch, "autocast", lambda *a, **kw: caches.append(kw["cache_enabled"]) or autocast(
        *a, **kw))
    job = curriculum_job(SEQUENCE_MODELS["lstm"], "all", schedule="constant", capture=True)
    model = build_model(job.model, TASK.d)
    loss = lambda m, x, y, read: masked_prompt_loss(m, x, y, "all", read)  # noqa: E731
    step = capture.CapturedStep(Alone(model), make_optimizer(job.train, model.parameters()), job.train, loss,
                                torch.device("cpu"), record_steps=2)
    assert step.graphs is False and capture.graphs_on(torch.device("cuda")) and not capture.graphs_on(
        torch.device("meta"))
    step.graphs = True  # as on CUDA
    batch = batch_at(job.train, TASK, 0, 0, None)
    xs, ys = torch.from_numpy(batch.xs).float(), torch.from_numpy(batch.ys).float()  # (32, 9, 3), (32, 9)
    rows = [step(xs, ys, 5) for _ in range(6)]
    assert events == ["side"] * 3 + ["capture"] + ["replay"] * 3
    assert step.eager_steps == capture.WARMUP == 3 and step.fallback is None
    assert [row.data_ptr() for row in rows] == [step.record[i % 2].data_ptr() for i in range(6)]
    assert caches == [False] * 4  # three eager steps and the capture
    cosine = replace(job.train, capture=False, schedule="cosine")
    with pytest.raises(ValueError, match="train.capture with train.schedule 'cosine'"):
        capture.CapturedStep(Alone(model), make_optimizer(cosine, model.parameters()), cosine, loss,
                             torch.device("cpu"), record_steps=2)


def test_cuda_graphs_ask_inductor_for_them_and_need_compile(monkeypatch):
    """``train.cuda_graphs`` hands Inductor its ``triton.cudagraphs`` option (the "reduce-overhead" mode) and is
    refused without ``train.compile``, naming the key."""
    from iclab.fit.sgd import CountingInductor

    handed = []
    monkeypatch.setattr(torch._dynamo, "lookup_backend",
                        lambda name: lambda graph, inputs, config_patches: handed.append((name, config_patches)))
    for cuda_graphs, options in ((True, {"triton.cudagraphs": True}), (False, None)):
        CountingInductor(cuda_graphs=cuda_graphs)(None, [])
        assert handed[-1] == ("inductor", options)
    with pytest.raises(ValueError, match="train.cuda_graphs needs train.compile"):
        job(cuda_graphs=True)
    assert job(compile=True, cuda_graphs=True).hash != job(compile=True).hash

GPU_IMAGE = GPU_IMAGE_PRELUDE + """
from iclab.fit.sgd import train
from iclab.store.jobs import TrainJob
from iclab.tasks import LinearTask

spec = {"model": {"name": "gpt2", "n_embd": 8, "n_layer": 1, "n_head": 1, "n_points": 9},
        "task": LinearTask(d=3, n_points=9, beta_star=(1.0, 0.0, -1.0), psi=1.0, sigma=0.5).to_dict(), "seed": 0,
        "train": {"steps": 3, "batch_size": 4, "lr": 1e-3, "precision": "bfloat16", "tf32": True}}
_, losses, _ = train(TrainJob.from_dict(spec), prefetch="always")
print("trained", len(losses))
"""


def test_the_training_loop_runs_with_only_what_the_gpu_machines_image_has():
    """A GPU check runs there as ``PYTHONPATH=src python3 -m …`` without jsonschema, netCDF4 or snakemake: the loop,
    its configs (defaults read from the schema with pyyaml) and its models import and train without them."""
    result = subprocess.run([sys.executable, "-c", GPU_IMAGE], cwd=REPO, capture_output=True, text=True,
                            env={**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"})
    assert result.returncode == 0 and "trained 3" in result.stdout, result.stderr[-2000:]


def test_checkpoint_of_another_job_is_refused_by_name(tmp_path: Path):
    ckpt = tmp_path / "ckpt.pt"
    first = job(steps=40, seed=1)
    train(first, checkpoint=ckpt, checkpoint_every=20)
    assert ckpt.is_file()
    other = job(steps=40, seed=2)
    with pytest.raises(CheckpointError, match=rf"{ckpt}.*belongs to job {first.hash}, not {other.hash}"):
        train(other, checkpoint=ckpt, checkpoint_every=1000)


def test_killed_job_resumes_to_the_identical_cube(tmp_path: Path):
    """Two processes given the same specs, one of them killed after a checkpoint and run again, write identical
    cubes: the run is a function of its specs, and resuming does not change it, nor making batches ahead (the
    killed and the resumed run, against a reference that makes them in turn). The job trains a group of two
    models; the first, finished before the kill, is not trained again."""
    first, second = (job(name="ltb", steps=steps, snapshot_every=100) for steps in (60, 1500))
    specs = [canonical_json(j.to_dict()) for j in (first, second)]
    reference = tmp_path / "reference"
    run_cli("train", "--spec", *specs, "--out-dir", str(reference))

    out, checkpoints = tmp_path / "resumed", tmp_path / "checkpoints"
    ckpt = checkpoints / f"{second.hash}.pt"
    args = [sys.executable, "-m", "iclab", "train", "--spec", *specs, "--out-dir", str(out)]
    args += ["--checkpoint-dir", str(checkpoints), "--checkpoint-every", "50", "--log-every", "50"]
    args += ["--prefetch", "always"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(args, cwd=REPO, env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not ckpt.is_file() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert ckpt.is_file() and not out.exists(), "the job must be killed mid-way, after a checkpoint"
    assert (checkpoints / f"{first.hash}.nc").is_file(), "the finished model waits beside the checkpoints"
    killed_at = torch.load(ckpt, weights_only=False)["step"]
    assert 0 < killed_at < 1500

    resumed = run_cli(  # batches made ahead from the checkpoint's step on, as in the killed run
        "train", "--spec", *specs, "--out-dir", str(out), "--checkpoint-dir", str(checkpoints),
        "--checkpoint-every", "100", "--prefetch", "always",
    )
    assert f"[{first.hash}] finished earlier" in resumed.stderr
    assert f"resuming from checkpoint {ckpt} at step" in resumed.stderr
    assert list(checkpoints.iterdir()) == [], "checkpoints and finished models leave once the group is done"
    for j in (first, second):
        xr.testing.assert_identical(read_cube(out / f"{j.hash}.nc"), read_cube(reference / f"{j.hash}.nc"))


def test_trained_model_reloads_from_its_cube(tmp_path: Path):
    spec = job(name="lsa", steps=30)
    path = tmp_path / f"{spec.hash}.nc"
    run_cli("train", "--spec", json.dumps(spec.to_dict()), "--out-dir", str(tmp_path))
    trained = TrainedModel.open(path)
    assert trained.job == spec and trained.label == "lsa" and trained.seed == spec.seed
    model = trained.module
    ds = read_cube(path)
    assert ds.loss.dims == ("step",) and ds.sizes["step"] == 30
    np.testing.assert_array_equal(model.w_kq.detach().numpy(), ds["param__w_kq"].values)


def test_snapshots_hold_the_parameters_at_their_steps():
    short, _, _ = train(job(name="lsa", steps=40, schedule="constant"))
    model, _, snapshots = train(job(name="lsa", steps=100, snapshot_every=40, schedule="constant"))
    assert snapshots.steps == [0, 40, 80, 100]
    np.testing.assert_array_equal(snapshots.params["w_kq"][-1], model.w_kq.detach().numpy())
    # With a constant learning rate, step 40 of a longer run is the end of a 40-step run.
    np.testing.assert_array_equal(snapshots.params["w_kq"][1], short.w_kq.detach().numpy())
    torch.manual_seed(0)
    initial = build_model(job(name="lsa").model, TASK.d)
    np.testing.assert_array_equal(snapshots.params["w_pv"][0], initial.w_pv.detach().numpy())


# The papers' claims about trained models, at a size that trains in seconds. Risks are Monte-Carlo
# estimates on 40k fresh prompts (their standard error is stated in each assertion).


def final_query_risk(model: torch.nn.Module, task: LinearTask, n_prompts: int = 40_000) -> tuple[float, float]:
    """E(ŷ − y)² at the final query and its Monte-Carlo standard error."""
    batch = eval_set(task, seed=123, n_prompts=n_prompts)
    with torch.no_grad():
        xs, ys = (torch.as_tensor(a, dtype=torch.float32) for a in (batch.xs, batch.ys))
        y_hat = model(xs, ys)[:, -1].double().numpy()  # (B,)
    errors = (y_hat - batch.ys[:, -1]) ** 2
    return float(errors.mean()), float(errors.std() / np.sqrt(n_prompts))


def gd_beta_optimal_risk(task: LinearTask) -> float:
    n = task.n_points - 1
    beta_star = np.asarray(task.beta_star)
    return theory.gd_beta_optimum(beta_star=beta_star, psi=task.psi_matrix, h=task.h_matrix, sigma=task.sigma, n=n).risk


def trained(name: str, task: LinearTask, steps: int) -> torch.nn.Module:
    spec = {"model": {"name": name, "init_scale": 0.1}, "task": task.to_dict(), "seed": 0}
    model, _, _ = train(TrainJob.from_dict(spec | {"train": {"steps": steps, "batch_size": 256, "lr": 0.02}}))
    return model


def test_trained_ltb_reaches_the_gd_beta_optimum():
    """Zhang, Wu, Bartlett 2024: an LTB implements GD-β, whose optimum (β₀ = β*, Γ* in closed form)
    the trained LTB reaches: its risk is the GD-β optimum's within 4 standard errors."""
    risk, sem = final_query_risk(trained("ltb", TASK, 1500), TASK)
    assert abs(risk - gd_beta_optimal_risk(TASK)) < 4 * sem, (risk, sem)


def test_trained_lsa_excess_over_gd_beta_grows_with_the_task_mean():
    """Zhang, Wu, Bartlett 2024, Theorem 4.1: without the MLP the excess over the GD-β optimum is ~0 at
    β* = 0 and grows with ‖β*‖ (the LSA cannot use the task mean); training reaches the LSA class's optimum."""
    excess = []
    for norm in (0.0, 1.0, 2.0):
        task = LinearTask(d=3, n_points=9, beta_star=(norm / np.sqrt(3),) * 3, psi=1.0, sigma=0.5)
        risk, sem = final_query_risk(trained("lsa", task, 1500), task)
        excess.append((risk - gd_beta_optimal_risk(task), sem))
        common = dict(psi=task.psi_matrix, h=task.h_matrix, sigma=task.sigma, n=task.n_points - 1)
        lsa_optimum = theory.lsa_class_optimum(beta_star=np.asarray(task.beta_star), **common).risk
        assert abs(risk - lsa_optimum) < 4 * sem, (norm, risk, sem, lsa_optimum)
    (e0, s0), (e1, s1), (e2, s2) = excess
    assert abs(e0) < 4 * s0, excess
    assert e1 > e0 + 4 * np.hypot(s0, s1) and e2 > e1 + 4 * np.hypot(s1, s2), excess


def test_trained_lsa_product_approaches_theorem8_limit_on_random_covariances():
    """Zhang, Frei, Bartlett 2024, Theorem 8: trained on i.i.d. Exponential(1) diagonal covariances,
    u₋₁U₁₁ → K = E[Λ²](E[ΓΛ²])⁻¹ = 2/(6(1 + 1/N) + (6 + 2(d − 1))/N)·I (E λᵏ = k!), by hand."""
    d, n = 2, 4
    task = LinearTask(d=d, n_points=n + 1, beta_star=(0.0,) * d, psi=1.0, sigma=0.0, covariance="random_exponential")
    limit = hand_theorem8_limit(d, n)
    spec = {"model": {"name": "lsa", "init": "zfb", "init_scale": 0.1}, "task": task.to_dict(), "seed": 0}
    train_cfg = {"steps": 1200, "batch_size": 1024, "lr": 0.01, "schedule": "cosine", "snapshot_every": 400}
    _, _, snapshots = train(TrainJob.from_dict(spec | {"train": train_cfg}))
    products = [w_pv[d, d] * w_kq[:d, :d].T for w_pv, w_kq in zip(snapshots.params["w_pv"], snapshots.params["w_kq"])]
    distance = [np.linalg.norm(p - limit) / np.linalg.norm(limit) for p in products]  # at steps 0, 400, 800, 1200
    assert distance[0] > 0.8 and all(b < a for a, b in zip(distance, distance[1:])), distance
    assert distance[-1] < 0.1, distance
