"""The prepared GPU check (``python -m iclab gpu-check``): the paper tier's GPT-2 and LSTM training steps timed on a
lent GPU, at the tier's shapes and settings, so that its cost table and SLURM requests come from measured rates.

It runs where only torch, transformers, numpy, pandas, xarray and pyyaml are installed (the lent GPU's image, as
``PYTHONPATH=src python3 -m iclab gpu-check``): the tier's config is read without the schema's validation (the suite
validates it), and nothing here imports jsonschema, netCDF4 or snakemake. In the order that matters if time runs
out (``--budget-s``), it

1. checks one training step on the GPU against the CPU's from the same weights and batch, for float32, TF32 and
   bf16 autocast (``AGREEMENT_TOLERANCE``) on the tier's largest GPT-2 and its LSTM (``gpu_agreement_<card>.csv``);
2. times every distinct training step of the tier (``cluster.step_key``: model, d, prompt length, batch, loss
   positions and numerics), largest share of the tier's FLOPs first, in the training loop itself (``sgd.train_step``
   with batches made ahead, the losses left on the device) at the full shape (a curriculum's last stage);
3. times the ``COMPILED`` steps with the largest share compiled (``train.compile``);
4. times the largest step of each experiment in the loop before issue 68 (a host sync per step for the loss,
   batches made in turn) and, for each float32 step, with ``train.tf32``.

Each timing is ``WARMUP_STEPS`` steps (a compile's seconds among them) and then up to ``TIMED_STEPS`` steps or
``CAP_S`` seconds. Its row gives seconds a step, FLOP/s by ``cluster``'s count against the card's peak for the
step's numerics (``PEAKS``; "unknown" for other cards), peak device memory and the graphs compiled. Rows go to
``gpu_rates_<card>.csv`` one by one (each write atomic), so that a run stopped at its limit keeps what it measured.
``iclab cost --rates`` and ``$ICLAB_GPU_RATES`` read that file (``cluster.GpuRates``).

``--tiny`` runs the same on the CPU at tiny widths, depths and batches (the suite's check of this module): no
number of it is a rate of anything.
"""

from __future__ import annotations

import copy
import csv
import hashlib
import io
import json
import logging
import math
import re
import shutil
import subprocess
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch

from iclab.compute import cluster
from iclab.atomic import write_text
from iclab.config import load
from iclab.errors import UsageError
from iclab.fit.prefetch import BatchFeed
from iclab.fit.sgd import (CountingInductor, batch_at, deterministic_kernels, make_optimizer, matmul_precision,
                          prompt_loss, step_model, train_step)
from iclab.store.jobs import TrainJob
from iclab.models import build_model
from iclab.models.lstm import recurrent_precision
from iclab.pipeline.plan import build_plan
from iclab.tasks import task_from_dict

log = logging.getLogger("iclab.compute.gpu_check")

WARMUP_STEPS = 5
TIMED_STEPS = 200
CAP_S = 2.0  # timed seconds a row at most: ≥ 40 steps of every shape (the slowest, 0.047 s a step on an H200)
COMPILED = 2  # steps timed compiled: the largest shares of the tier (a compile took 25–40 s on the H200)
REPEAT_STEPS = 30  # steps of the deterministic repeat at the longest shape (twice)
STARTUP_S, COMPILE_S, OTHER_S = 3.0, 40.0, 60.0  # the estimate's allowances (the H200 run: docs/measurements.md)
MIN_TORCH, MIN_TRANSFORMERS = (2, 4), (5, 0)
# The APIs the check relies on whose versions matter: the GPU image has torch 2.11 and transformers 5.17, the pins
# are torch 2.13 and transformers 5.x; each was run under the image's versions on an H200 (2026-11-27), and under
# transformers 5.17 on the CPU.
VERSION_NOTES = {
    "torch": "torch.is_autocast_enabled(device_type) 2.4; fused Adam on the CPU 2.4; torch._dynamo.config."
             "fail_on_recompile_limit_hit; torch.compiler.cudagraph_mark_step_begin; FunctionEvent.device_time_total",
    "transformers": "GPT2Model built from GPT2Config with an 'sdpa' _attn_implementation; ALL_ATTENTION_FUNCTIONS."
                    "get_interface; the GPT-2 block's is_causal under SDPA with no mask (5.x)",
}
AGREEMENT_PROMPTS = 8  # the batch of the CPU-against-GPU step (the CPU runs it at the tier's widths)
# Relative error of the GPU step's gradient against the CPU's float32 one (‖g − g_cpu‖ / ‖g_cpu‖) and of its loss.
# float32: different kernels' summation orders (~1e-6 a product, grown over 12 layers); TF32 keeps 10 bits of each
# matmul input (2^-11 ≈ 5e-4 a product); bf16 8 bits (2^-9 ≈ 2e-3 a product, the body only: read-out and loss stay
# float32), both summed over 12 layers' products. The gradient, not the weights after Adam's first step, whose
# update is lr times the gradient's sign wherever it is not 0: round-off flips the sign of near-zero components.
AGREEMENT_TOLERANCE = {"float32": 1e-4, "tf32": 2e-2, "bfloat16": 1e-1}
# Dense FLOP/s of the vendors' data sheets by (bfloat16, TF32, float32), matched by the device name's first listed
# substring; "unknown" otherwise.
PEAKS = (
    ("H100 PCIe", (756e12, 378e12, 51e12)),
    ("H100", (989e12, 495e12, 67e12)),  # SXM
    ("H200", (989e12, 495e12, 67e12)),
    ("A100", (312e12, 156e12, 19.5e12)),
)
RATE_FIELDS = (
    *cluster.RATE_COLUMNS, cluster.GROUP_COLUMN, "experiment", "models", "tier_share", "steps_timed", "flops_per_s", "peak_flops_per_s",
    "fraction_of_peak", "peak_memory_mb", "reserved_mb", "card_used_mb", "graphs", "warmup_s", "kernels_per_step",
    "sdpa_backend", "warnings", "error",
)
AGREEMENT_FIELDS = ("card", "key", "numerics", "loss_rel_error", "grad_rel_error", "tolerance", "within", "error")


@dataclass(frozen=True)
class Shape:
    """One distinct training step of the tier: a job of it at the full shape (curriculum off, seed 0), the experiment
    that first trains it, how many models train at it and their share of the tier's GPT-2 and LSTM FLOPs."""

    job: TrainJob
    experiment: str
    models: int
    share: float

    @property
    def spec(self) -> dict[str, Any]:
        return self.job.to_dict()


def full_shape(job: TrainJob) -> TrainJob:
    """``job`` at its full shape from the first step (no curriculum), seed 0, alone: a batched group's member as one
    model (its rows have ``group_size`` 1; ``cluster.batched_step_seconds`` reads them as a member's step), and its
    eager step (a captured step's kernels are the eager step's, which these rows count; backlog row 9 times the
    captured one)."""
    return replace(job, train=replace(job.train, curriculum=None, batched=False, capture=False), seed=0)


def first_experiments(plan) -> dict[str, str]:
    """Each model's hash → the first experiment of ``plan`` that trains it."""
    return {m["hash"]: name for name, settings in reversed(plan.settings.items())
            for setting in settings.values() for m in setting.models}


def tier_shapes(config_path: Path) -> list[Shape]:
    """The tier's distinct GPT-2 and LSTM training steps, largest share of the tier's FLOPs first."""
    plan = build_plan(load(config_path, check=False))
    first_experiment = first_experiments(plan)
    by_key: dict[str, list[TrainJob]] = {}
    for model_hash, job in plan.train.items():
        if job.model["name"] in cluster.ACCELERATED_MODELS:
            by_key.setdefault(cluster.step_key(job.to_dict()), []).append((model_hash, job))
    flops = {key: sum(tier_flops(job.to_dict()) for _, job in jobs) for key, jobs in by_key.items()}
    total = sum(flops.values())
    shapes = [Shape(full_shape(jobs[0][1]), first_experiment[jobs[0][0]], len(jobs), flops[key] / total)
              for key, jobs in by_key.items()]
    return sorted(shapes, key=lambda shape: -shape.share)


def tier_flops(spec: dict[str, Any]) -> float:
    size = cluster.model_size(spec)
    return size.flops_per_step * size.steps


def tiny(shape: Shape) -> Shape:
    """``shape`` at widths 8, one layer and batch 4 (its d, prompt length and numerics kept): ``--tiny``."""
    spec = copy.deepcopy(shape.spec)
    model = spec["model"]
    for key, value in {"n_embd": 8, "n_head": 1, "n_layer": 1, "hidden": 8}.items():
        if key in model:
            model[key] = value
    spec["train"]["batch_size"] = 4
    return replace(shape, job=TrainJob.from_dict(spec))


def card_name(device: torch.device) -> str:
    return torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"


def file_card(card: str) -> str:
    """The card's name as a file name's part: "NVIDIA H100 80GB HBM3" → "nvidia_h100_80gb_hbm3"."""
    return re.sub(r"[^a-z0-9]+", "_", card.lower()).strip("_")


def peak_flops(card: str, numerics: dict[str, Any]) -> float:
    """The card's dense peak for the step's numerics (bf16 autocast, TF32, or float32), NaN if unknown."""
    for name, (bf16, tf32, fp32) in PEAKS:
        if name in card:
            return bf16 if numerics["precision"] == "bfloat16" else tf32 if numerics["tf32"] else fp32
    return math.nan


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed_steps(job: TrainJob, device: torch.device, old_loop: bool, steps: int, cap_s: float
                ) -> dict[str, Any]:
    """``job``'s training steps in the loop (``old_loop``: a host sync per step and batches made in turn, as before
    issue 68): seconds a step over up to ``steps`` steps or ``cap_s`` seconds after ``WARMUP_STEPS``, the warm-up's
    seconds, peak device memory (MB) and the graphs compiled."""
    return trained_and_timed(job, device, old_loop, steps, cap_s)[1]


def trained_and_timed(job: TrainJob, device: torch.device, old_loop: bool, steps: int, cap_s: float,
                      start_at: float | None = None) -> tuple[torch.nn.Module, dict[str, Any], tuple[float, float]]:
    """``timed_steps``, under the training loop's deterministic kernels, its first step not before ``start_at``
    (epoch seconds; packed processes start their steps together): the model it trained, the timing and the timed
    window (epoch seconds)."""
    cfg, task = job.train, task_from_dict(job.task)
    torch.manual_seed(job.seed)
    model = build_model(job.model, task.d).to(device)
    optimizer = make_optimizer(cfg, model.parameters())
    backend = CountingInductor(cuda_graphs=cfg.cuda_graphs)
    make = lambda step: batch_at(cfg, task, job.seed, step, None)  # noqa: E731
    total = WARMUP_STEPS + steps
    feed = BatchFeed(make, 0, total, device, ahead=device.type == "cuda" and not old_loop)
    fresh_peak(device)
    if start_at is not None:
        time.sleep(max(0.0, start_at - time.time()))
    started = time.perf_counter()
    with (warnings.catch_warnings(record=True) as raised, deterministic_kernels(device, cfg.allow_nondeterministic),
          matmul_precision(cfg.tf32, device), feed, step_model(model, job, backend) as forward):
        warnings.simplefilter("always")
        for step, prompts in zip(range(total), feed):  # (B, K, d), (B, K)
            loss = train_step(forward, model, optimizer, cfg, prompts, task.n_points, cfg.lr)
            if old_loop:
                loss.item()
            if step == WARMUP_STEPS - 1:
                synchronize(device)
                warm, warm_at = time.perf_counter(), time.time()
            elif step >= WARMUP_STEPS and time.perf_counter() - warm > cap_s:
                break
        synchronize(device)
    done, done_at = time.perf_counter(), time.time()
    return model, {
        "steps_timed": step + 1 - WARMUP_STEPS, "seconds_per_step": (done - warm) / (step + 1 - WARMUP_STEPS),
        "warmup_s": warm - started, **device_memory(device), "graphs": backend.graphs if cfg.compile else 0,
        "warnings": " | ".join(sorted({str(w.message).splitlines()[0][:160] for w in raised})),
    }, (warm_at, done_at)


def fresh_peak(device: torch.device) -> None:
    """On CUDA, the cache of earlier timings freed and the peak reset: the reservations ``device_memory`` reads next
    are this timing's own."""
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)


def device_memory(device: torch.device) -> dict[str, float]:
    """Peak memory of torch's allocations and of its caching allocator's reservations since the last reset, and what
    the card has in use now (the CUDA context and any other process included), MB; NaN on the CPU."""
    if device.type != "cuda":
        return {"peak_memory_mb": math.nan, "reserved_mb": math.nan, "card_used_mb": math.nan}
    free, total = torch.cuda.mem_get_info(device)
    return {"peak_memory_mb": torch.cuda.max_memory_allocated(device) / 2**20,
            "reserved_mb": torch.cuda.max_memory_reserved(device) / 2**20, "card_used_mb": (total - free) / 2**20}


SDPA_BACKENDS = (("cudnn", "cudnn"), ("flash", "flash"), ("fmha", "mem_efficient"), ("efficient", "mem_efficient"))


def profiled_step(job: TrainJob, device: torch.device) -> tuple[list[Any], float]:
    """One eager training step of ``job`` under torch.profiler, after two unprofiled ones, in the training loop's
    deterministic mode: the device kernels it launched (their profiler events; none on the CPU) and its wall
    seconds under the profiler."""
    from torch.profiler import ProfilerActivity, profile

    cfg, task = job.train, task_from_dict(job.task)
    model = build_model(job.model, task.d).to(device)
    optimizer = make_optimizer(cfg, model.parameters())
    batch = batch_at(cfg, task, job.seed, 0, None)
    prompts = torch.from_numpy(batch.xs).to(device), torch.from_numpy(batch.ys).to(device)  # (B, K, d), (B, K)
    activity = ProfilerActivity.CUDA if device.type == "cuda" else ProfilerActivity.CPU
    with deterministic_kernels(device, cfg.allow_nondeterministic), matmul_precision(cfg.tf32, device):
        for _ in range(2):
            train_step(model, model, optimizer, cfg, prompts, task.n_points, cfg.lr)
        synchronize(device)
        with profile(activities=[activity]) as profiled:
            start = time.perf_counter()
            train_step(model, model, optimizer, cfg, prompts, task.n_points, cfg.lr)
            synchronize(device)
            wall = time.perf_counter() - start
    return [event for event in profiled.events() if event.device_type == torch.autograd.DeviceType.CUDA], wall


def step_kernels(job: TrainJob, device: torch.device) -> dict[str, Any]:
    """``profiled_step``'s device kernels and the SDPA backends they belong to (by kernel name; "none seen" where no
    attention kernel ran)."""
    if device.type != "cuda":
        return {"kernels_per_step": math.nan, "sdpa_backend": "n/a (cpu)"}
    kernels = [event.name.lower() for event in profiled_step(job, device)[0]]
    backends = {backend for name in kernels if "attention" in name or "sdpa" in name or "fmha" in name
                for word, backend in SDPA_BACKENDS if word in name}
    return {"kernels_per_step": len(kernels), "sdpa_backend": "+".join(sorted(backends)) or "none seen"}


def rate_row(shape: Shape, job: TrainJob, card: str, loop: str, timing: dict[str, Any]) -> dict[str, Any]:
    spec = job.to_dict()
    numerics = cluster.numerics(spec)
    flops = cluster.model_size(spec).flops_per_step
    achieved = flops / timing["seconds_per_step"]
    peak = peak_flops(card, numerics)
    return {"card": card, "key": cluster.step_key(spec), **{k: json.dumps(v) if isinstance(v, bool) else v
                                                           for k, v in numerics.items()},
            "loop": loop, "flops_per_step": flops, cluster.GROUP_COLUMN: 1,  # one model: never a group's step
            "experiment": shape.experiment, "models": shape.models,
            "tier_share": shape.share, "flops_per_s": achieved, "peak_flops_per_s": peak,
            "fraction_of_peak": achieved / peak, **timing}


def with_train(job: TrainJob, **fields: Any) -> TrainJob:
    return replace(job, train=replace(job.train, **fields))


def loss_and_gradient(job: TrainJob, state: dict[str, torch.Tensor], prompts: tuple[torch.Tensor, torch.Tensor],
                      device: torch.device) -> tuple[float, torch.Tensor]:
    """The loss and the flattened gradient of ``job``'s model from weights ``state`` on ``prompts``, on ``device``
    under the job's numerics."""
    cfg, task = job.train, task_from_dict(job.task)
    model = build_model(job.model, task.d)
    model.load_state_dict(state)
    model.to(device)
    xs, ys = (tensor.to(device) for tensor in prompts)
    with matmul_precision(cfg.tf32, device):  # the backward's products too, as in a training step
        with torch.autocast(device.type, torch.bfloat16, enabled=cfg.precision == "bfloat16"):
            loss = prompt_loss(model, xs, ys, cfg.loss_positions)
        loss.backward()
    gradient = torch.cat([p.grad.reshape(-1) for p in model.parameters() if p.grad is not None])
    return loss.item(), gradient.double().cpu()


def agreement_rows(shape: Shape, device: torch.device, card: str) -> list[dict[str, Any]]:
    """One step of ``shape``'s model (``AGREEMENT_PROMPTS`` prompts) on ``device`` in float32, TF32 and bf16 against
    the CPU's float32 step, from the same weights and batch: the loss's and the gradient's relative errors."""
    job = with_train(shape.job, batch_size=AGREEMENT_PROMPTS, precision="float32", tf32=False, compile=False,
                     cuda_graphs=False)
    task = task_from_dict(job.task)
    torch.manual_seed(0)
    state = build_model(job.model, task.d).state_dict()
    batch = batch_at(job.train, task, 0, 0, None)
    prompts = torch.from_numpy(batch.xs), torch.from_numpy(batch.ys)
    reference_loss, reference = loss_and_gradient(job, state, prompts, torch.device("cpu"))
    rows = []
    for name, fields in (("float32", {}), ("tf32", {"tf32": True}), ("bfloat16", {"precision": "bfloat16"})):
        loss, gradient = loss_and_gradient(with_train(job, **fields), state, prompts, device)
        error = float(torch.linalg.vector_norm(gradient - reference) / torch.linalg.vector_norm(reference))
        loss_error = abs(loss - reference_loss) / abs(reference_loss)
        tolerance = AGREEMENT_TOLERANCE[name]
        rows.append({"card": card, "key": cluster.step_key(job.to_dict()), "numerics": ran(name, job, device),
                     "loss_rel_error": loss_error, "grad_rel_error": error, "tolerance": tolerance,
                     "within": json.dumps(error <= tolerance and loss_error <= tolerance)})
    return rows


def ran(numerics: str, job: TrainJob, device: torch.device) -> str:
    """What a step of ``numerics`` runs in on ``device``: the LSTM's recurrent layers keep their own precision
    under bf16 autocast (``models.lstm.recurrent_precision``)."""
    if numerics == "bfloat16" and job.model["name"] == "lstm":
        return f"bfloat16 (recurrent layers {recurrent_precision(device)})"
    return numerics


class RowsFile:
    """A CSV file rewritten whole (atomically) at each new row: a run stopped at any point leaves the rows so far."""

    def __init__(self, path: Path, fields: tuple[str, ...]):
        self.path, self.fields, self.rows = path, fields, []

    def add(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=self.fields, extrasaction="raise")
        writer.writeheader()
        writer.writerows(self.rows)
        write_text(self.path, out.getvalue())


def planned_timings(shapes: list[Shape]) -> list[tuple[Shape, TrainJob, str]]:
    """(shape, job as timed, loop) in the order of the module's steps 2–4."""
    planned = [(shape, shape.job, "new") for shape in shapes]
    planned += [(shape, with_train(shape.job, compile=True), "new") for shape in shapes[:COMPILED]
                if not shape.job.train.compile]
    largest = {}
    for shape in shapes:
        largest.setdefault(shape.experiment, shape)
    planned += [(shape, shape.job, "old") for shape in largest.values()]
    planned += [(shape, with_train(shape.job, tf32=True), "new") for shape in shapes
                if shape.job.train.precision == "float32" and not shape.job.train.tf32]
    return planned


def failed(error: BaseException) -> str:
    """An exception as a row's ``error``: its type, message and innermost frame, on one line."""
    frame = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
    where = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
    return f"{type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}{where}"


def estimated_seconds(planned: list[tuple[Shape, TrainJob, str]], cap_s: float) -> float:
    """The check's own estimate of its length: each timing's cap plus ``STARTUP_S`` (building, warm-up, the kernels'
    profile), ``COMPILE_S`` more for a compiled one, and ``OTHER_S`` for the agreement rows and the repeat."""
    return OTHER_S + sum(cap_s + STARTUP_S + (COMPILE_S if job.train.compile else 0) for _, job, _ in planned)


def environment(device: torch.device) -> dict[str, Any]:
    """The versions the check ran under (the GPU image's differ from the pins: ``VERSION_NOTES``)."""
    import transformers

    out: dict[str, Any] = {"torch": torch.__version__, "transformers": transformers.__version__,
                           "python": sys.version.split()[0], "cuda": torch.version.cuda,
                           "cudnn": torch.backends.cudnn.version() if device.type == "cuda" else None,
                           "c_compiler": shutil.which("cc"), "version_notes": VERSION_NOTES}
    try:
        import triton
        out["triton"] = triton.__version__
    except ImportError as error:
        out["triton"] = f"not importable ({error})"
    if device.type == "cuda":
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                             capture_output=True, text=True, check=False)
        out["nvidia_smi"] = smi.stdout.strip() or smi.stderr.strip()
    return out


def require_versions() -> None:
    """Refuse, in one line naming the version, where an API the check relies on is missing (``VERSION_NOTES``)."""
    import transformers

    for name, version, least in (("torch", torch.__version__, MIN_TORCH),
                                 ("transformers", transformers.__version__, MIN_TRANSFORMERS)):
        if tuple(int(part) for part in re.findall(r"\d+", version)[:2]) < least:
            raise UsageError(f"gpu-check: {name} {version} is older than {'.'.join(map(str, least))}, the oldest "
                             f"whose APIs it uses ({VERSION_NOTES[name]})")


def deterministic_repeat(shape: Shape, device: torch.device, steps: int) -> dict[str, Any]:
    """``shape`` trained ``steps`` steps twice from its seed in the training loop: whether the weights are equal bit
    for bit (their SHA-256), and their largest difference."""
    runs = [trained_and_timed(shape.job, device, False, steps - WARMUP_STEPS, math.inf)[0] for _ in range(2)]
    states = [run.state_dict() for run in runs]
    largest = max(float((states[0][name].float() - states[1][name].float()).abs().max()) for name in states[0])
    return {"experiment": shape.experiment, "key": cluster.step_key(shape.spec), "steps": steps,
            "equal_bit_for_bit": weights_digest(runs[0]) == weights_digest(runs[1]), "max_abs_difference": largest}


def weights_digest(model: torch.nn.Module) -> str:
    """SHA-256 of the model's parameters and buffers, in ``state_dict`` order, as bytes on the host."""
    digest = hashlib.sha256()
    for name, tensor in model.state_dict().items():
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def longest(shapes: list[Shape]) -> Shape:
    """The shape of the longest prompts (the largest share of the tier's FLOPs among equals)."""
    return max(shapes, key=lambda shape: (task_from_dict(shape.job.task).n_points, shape.share))


def run_check(config: Path, out_dir: Path, budget_s: float, device: torch.device, shrink: Callable[[Shape], Shape],
              steps: int = TIMED_STEPS, cap_s: float = CAP_S, repeat_steps: int = REPEAT_STEPS
              ) -> tuple[Path, Path, Path]:
    """The check (module docstring) on ``device`` with each shape ``shrink``-ed: the rates, agreement and environment
    files. Each agreement row and timing runs on its own: an exception is its row's ``error``, and the rest run."""
    started = time.perf_counter()
    card = card_name(device)
    shapes = [shrink(shape) for shape in tier_shapes(config)]
    planned = planned_timings(shapes)
    rates = RowsFile(out_dir / f"gpu_rates_{file_card(card)}.csv", RATE_FIELDS)
    agreement = RowsFile(out_dir / f"gpu_agreement_{file_card(card)}.csv", AGREEMENT_FIELDS)
    env_path = out_dir / f"gpu_env_{file_card(card)}.json"
    env = {"card": card, **environment(device), "timings_planned": len(planned), "budget_s": budget_s,
           "estimated_s": estimated_seconds(planned, cap_s)}
    write_text(env_path, json.dumps(env, indent=1) + "\n")
    log.info("gpu-check on %s: %d timings, ~%.0f s by its own estimate (budget %.0f s)", card, len(planned),
             env["estimated_s"], budget_s)
    lstm = [shape for shape in shapes if shape.job.model["name"] == "lstm"][:1]
    for shape in [shapes[0], *lstm]:
        try:
            rows = agreement_rows(shape, device, card)
        except Exception as error:  # noqa: BLE001 — recorded in its row; the other rows run
            rows = [{"card": card, "key": cluster.step_key(shape.spec), "error": failed(error)}]
        for row in rows:
            agreement.add(row)
            log.info("agreement %s %s: %s", shape.experiment, row.get("numerics", "-"),
                     row.get("error") or f"loss {row['loss_rel_error']:.2g}, gradient {row['grad_rel_error']:.2g}")
    for done, (shape, job, loop) in enumerate(planned):
        if time.perf_counter() - started > budget_s:
            log.warning("budget of %.0f s spent: %d of %d timings left out", budget_s, len(planned) - done,
                        len(planned))
            break
        rates.add(timing_row(shape, job, card, loop, device, steps, cap_s, profile=done < len(shapes)))
        row = rates.rows[-1]
        log.info("[%d/%d] %s %s %s loop: %s", done + 1, len(planned), shape.experiment,
                 cluster.numerics(job.to_dict()), loop, row["error"] or (
                     f"{row['seconds_per_step']:.4g} s a step, {row['flops_per_s']:.3g} FLOP/s, "
                     f"{row.get('reserved_mb', math.nan):.0f} MB reserved, SDPA {row.get('sdpa_backend')}"))
    try:
        env["deterministic_repeat"] = deterministic_repeat(longest(shapes), device, repeat_steps)
    except Exception as error:  # noqa: BLE001 — recorded; the files so far stand
        env["deterministic_repeat"] = {"error": failed(error)}
    env["seconds"] = time.perf_counter() - started
    write_text(env_path, json.dumps(env, indent=1) + "\n")
    return rates.path, agreement.path, env_path


def timing_row(shape: Shape, job: TrainJob, card: str, loop: str, device: torch.device, steps: int, cap_s: float,
               profile: bool) -> dict[str, Any]:
    """One timing's row (with the step's kernels where ``profile``), or, where it raised, a row naming the error."""
    try:
        timing = timed_steps(job, device, loop == "old", steps, cap_s)
        kernels = step_kernels(job, device) if profile else {"kernels_per_step": math.nan, "sdpa_backend": ""}
        return rate_row(shape, job, card, loop, {**timing, **kernels, "error": ""})
    except Exception as error:  # noqa: BLE001 — recorded in its row; the other timings run
        spec = job.to_dict()
        return {"card": card, "key": cluster.step_key(spec), **{k: json.dumps(v) if isinstance(v, bool) else v
                                                               for k, v in cluster.numerics(spec).items()},
                "loop": loop, cluster.GROUP_COLUMN: 1, "experiment": shape.experiment, "models": shape.models,
                "tier_share": shape.share, "error": failed(error)}


def check(config: Path, out_dir: Path, budget_s: float, tiny_shapes: bool) -> tuple[Path, Path, Path]:
    """``python -m iclab gpu-check``: on CUDA, or at tiny shapes on the CPU (``--tiny``)."""
    require_versions()
    if tiny_shapes:
        return run_check(config, out_dir, budget_s, torch.device("cpu"), tiny, steps=2, cap_s=1.0,
                         repeat_steps=WARMUP_STEPS + 2)
    if not torch.cuda.is_available():
        raise UsageError("gpu-check: no CUDA device here (torch.cuda.is_available() is False); "
                         "--tiny runs it at tiny shapes on the CPU")
    return run_check(config, out_dir, budget_s, torch.device("cuda"), lambda shape: shape)
