"""Issue 78's defects and issue 79's missing records, looked at on a lent CUDA card (the GPU's half of the evidence;
each defect's CPU test is in the suite). Runs on the GPU image with only torch, transformers, numpy and pyyaml:

    PYTHONPATH=src python3 benchmarks/gpu_defects.py --out-dir DIR [--config config/gpu_node.yaml]

For the tier's sequence-model training shapes (one of each model family and prompt layout: its longest prompt), each
probe isolated (an exception is recorded in its entry and the next one runs), it writes ``gpu_defects_<card>.json``
(atomic) after every probe:

- versions: torch, CUDA, cuDNN, transformers, triton, the driver, a C compiler, the SDPA backends enabled;
- host syncs in one training step (``torch.cuda.set_sync_debug_mode("warn")``), their warnings' first lines;
- the dtypes under bf16 autocast (whatever the job's precision): ops that run in float32 inside a bf16 step, the LSTM's RNN input dtype;
- the SDPA kernels one step launches and the kernels a step (torch.profiler), the step's seconds and peak memory
  (allocated, reserved, and used on the card: the CUDA context too), GPT-2 with gelu_new and gelu_pytorch_tanh;
- determinism at the longest GPT-2 (batch 16): two gradients from the same weights and batch under warn-only
  deterministic mode, under the training loop's mode (``fit.sgd.deterministic_kernels``), and under strict mode
  (bitwise equal? an op refused?).
"""

from __future__ import annotations

import argparse
import json
import os
import time
import traceback
import warnings
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before any CUDA call (issue 78, defect 5)

import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from iclab.atomic import write_text  # noqa: E402
from iclab.fit.sgd import batch_at, deterministic_kernels, make_optimizer, prompt_loss, train_step  # noqa: E402
from iclab.compute.gpu_check import Shape, card_name, environment, file_card, tier_shapes  # noqa: E402
from iclab.store.jobs import TrainJob  # noqa: E402
from iclab.models import build_model  # noqa: E402
from iclab.tasks import task_from_dict  # noqa: E402

ATTENTION_WORDS = ("flash", "fmha", "efficient", "attention", "cudnn", "sdpa", "softmax")


def probe_shapes(config: Path) -> dict[str, Shape]:
    """One shape per model family and prompt layout: the longest prompt."""
    chosen: dict[str, Shape] = {}
    for shape in tier_shapes(config):
        model = shape.job.model
        label = model["name"] + ("" if model["name"] == "lstm" else "_" + model.get("prompt_format", "interleaved"))
        points = task_from_dict(shape.job.task).n_points
        if label not in chosen or points > task_from_dict(chosen[label].job.task).n_points:
            chosen[label] = shape
    return chosen


def setup(job: TrainJob, device: torch.device, activation: str | None = None):
    """The job's model (``activation`` replacing GPT-2's), optimizer and step-0 batch on ``device``."""
    task = task_from_dict(job.task)
    spec = dict(job.model, activation=activation) if activation else job.model
    torch.manual_seed(0)
    model = build_model(spec, task.d).to(device)
    optimizer = make_optimizer(job.train, model.parameters())
    batch = batch_at(job.train, task, 0, 0, None)
    prompts = torch.from_numpy(batch.xs).to(device), torch.from_numpy(batch.ys).to(device)  # (B, K, d), (B, K)
    return model, optimizer, prompts, task.n_points


def one_step(job: TrainJob, model, optimizer, prompts, points) -> torch.Tensor:
    return train_step(model, model, optimizer, job.train, prompts, points, job.train.lr)


def versions() -> dict[str, Any]:
    """``gpu_check.environment``'s versions, and the SDPA backends torch has enabled."""
    cuda = torch.backends.cuda
    return {**environment(torch.device("cuda")), "CUBLAS_WORKSPACE_CONFIG": os.environ.get("CUBLAS_WORKSPACE_CONFIG"),
            "sdpa_enabled": {"flash": cuda.flash_sdp_enabled(), "mem_efficient": cuda.mem_efficient_sdp_enabled(),
                             "cudnn": cuda.cudnn_sdp_enabled(), "math": cuda.math_sdp_enabled()}}


def host_syncs(job: TrainJob, device: torch.device) -> dict[str, Any]:
    model, optimizer, prompts, points = setup(job, device)
    one_step(job, model, optimizer, prompts, points)  # warm-up: lazy initialisations may sync once
    torch.cuda.synchronize()
    seen: list[tuple[str, str]] = []

    def note(message, *_args, **_kwargs) -> None:  # the warning's first line and the iclab/transformers frames
        frames = [f"{Path(f.filename).name}:{f.lineno}" for f in traceback.extract_stack()
                  if "iclab" in f.filename or "transformers" in f.filename]
        seen.append((str(message).splitlines()[0][:150], " < ".join(reversed(frames[-4:]))))

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = note
        torch.cuda.set_sync_debug_mode("warn")
        try:
            one_step(job, model, optimizer, prompts, points)
        finally:
            torch.cuda.set_sync_debug_mode(0)
    syncs = [(message, where) for message, where in seen if "synchron" in message.lower()]
    return {"syncs": len(syncs), "where": dict(Counter(where for _, where in syncs)),
            "messages": sorted({message for message, _ in syncs})[:5]}


class DtypeRecorder(TorchDispatchMode):
    """(op, input float dtypes, output dtype) of every op dispatched, autocast's casts already applied."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: Counter = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        inputs = tuple(sorted({str(a.dtype).replace("torch.", "") for a in args
                               if isinstance(a, torch.Tensor) and a.is_floating_point()}))
        first = out[0] if isinstance(out, (tuple, list)) and out else out
        result = str(first.dtype).replace("torch.", "") if isinstance(first, torch.Tensor) else "-"
        self.ops[(str(func.overloadpacket.__name__), inputs, result)] += 1
        return out


def autocast_dtypes(job: TrainJob, device: torch.device) -> dict[str, Any]:
    model, optimizer, prompts, points = setup(job, device)
    xs, ys = prompts
    recorder = DtypeRecorder()
    with recorder, torch.autocast("cuda", torch.bfloat16):  # bf16 autocast whatever the job's precision
        loss = prompt_loss(model, xs, ys, job.train.loss_positions, points)
    float32_out = {f"{name} {'/'.join(inputs)}->{out}": n for (name, inputs, out), n in recorder.ops.items()
                   if out == "float32" and inputs}
    rnn = {f"{name} {'/'.join(inputs)}->{out}": n for (name, inputs, out), n in recorder.ops.items()
           if "rnn" in name or "lstm" in name}
    return {"job_precision": job.train.precision, "run_under": "bfloat16 autocast", "loss_dtype": str(loss.dtype), "forward_ops": sum(recorder.ops.values()),
            "float32_outputs": dict(sorted(float32_out.items(), key=lambda kv: -kv[1])), "rnn_ops": rnn}


def profiled_step(job: TrainJob, device: torch.device, activation: str | None, steps: int = 10) -> dict[str, Any]:
    """One step under torch.profiler (its kernels), then ``steps`` timed steps: seconds a step and memory."""
    from torch.profiler import ProfilerActivity, profile

    model, optimizer, prompts, points = setup(job, device, activation)
    for _ in range(3):
        one_step(job, model, optimizer, prompts, points)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        one_step(job, model, optimizer, prompts, points)
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    attention = Counter(e.name[:120] for e in kernels if any(w in e.name.lower() for w in ATTENTION_WORDS))
    torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    for _ in range(steps):
        one_step(job, model, optimizer, prompts, points)
    torch.cuda.synchronize()
    seconds = (time.perf_counter() - started) / steps
    free, total = torch.cuda.mem_get_info()
    return {"activation": activation or job.model.get("activation", "gelu_new"), "kernels_per_step": len(kernels),
            "kernel_seconds_per_step": sum(e.device_time_total for e in kernels) / 1e6,
            "attention_kernels": dict(attention), "seconds_per_step": seconds,
            "peak_allocated_mb": torch.cuda.max_memory_allocated() / 2**20,
            "reserved_mb": torch.cuda.memory_reserved() / 2**20, "card_used_mb": (total - free) / 2**20}


def gradient(job: TrainJob, device: torch.device) -> torch.Tensor:
    model, _, (xs, ys), points = setup(job, device)
    with torch.autocast("cuda", torch.bfloat16, enabled=job.train.precision == "bfloat16"):
        loss = prompt_loss(model, xs, ys, job.train.loss_positions, points)
    loss.backward()
    return torch.cat([p.grad.reshape(-1) for p in model.parameters() if p.grad is not None]).float()


def determinism(job: TrainJob, device: torch.device) -> dict[str, Any]:
    out: dict[str, Any] = {}
    torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic = False, True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.use_deterministic_algorithms(True, warn_only=True)
        first, second = gradient(job, device), gradient(job, device)
    out["warn_only"] = {"bitwise_equal": bool(torch.equal(first, second)),
                        "max_abs_diff": float((first - second).abs().max()),
                        "rel_diff": float((first - second).norm() / first.norm()),
                        "warnings": sorted({str(w.message).splitlines()[0][:200] for w in caught})[:5]}
    with deterministic_kernels(device, job.train.allow_nondeterministic):  # the training loop's mode
        fifth, sixth = gradient(job, device), gradient(job, device)
    out["training_loop"] = {"bitwise_equal": bool(torch.equal(fifth, sixth))}
    torch.use_deterministic_algorithms(True, warn_only=False)
    try:
        third, fourth = gradient(job, device), gradient(job, device)
        out["strict"] = {"raised": None, "bitwise_equal": bool(torch.equal(third, fourth))}
    except Exception as error:  # noqa: BLE001 — the error is the finding
        out["strict"] = {"raised": f"{type(error).__name__}: {str(error).splitlines()[0][:300]}"}
    finally:
        torch.use_deterministic_algorithms(False)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("config/gpu_node.yaml"))
    parser.add_argument("--out-dir", type=Path, required=True)
    args = parser.parse_args()
    device = torch.device("cuda")
    card = card_name(device)
    path = args.out_dir / f"gpu_defects_{file_card(card)}.json"
    result: dict[str, Any] = {"card": card}

    def record(name: str, probe: Callable[[], Any]) -> None:
        started = time.perf_counter()
        try:
            result[name] = probe()
        except Exception:  # noqa: BLE001 — one failing probe must not lose the others
            result[name] = {"error": traceback.format_exc(limit=4)[-1500:]}
        finally:
            torch.use_deterministic_algorithms(False)
            torch.cuda.set_sync_debug_mode(0)
        print(f"{name}: {time.perf_counter() - started:.1f} s", flush=True)
        write_text(path, json.dumps(result, indent=1, default=str) + "\n")

    record("versions", versions)
    shapes = probe_shapes(args.config)
    result["shapes"] = {label: {"experiment": s.experiment, "key": s.job.to_dict()["model"],
                                "n_points": task_from_dict(s.job.task).n_points,
                                "batch_size": s.job.train.batch_size, "precision": s.job.train.precision}
                        for label, s in shapes.items()}
    for label, shape in shapes.items():
        job = shape.job
        record(f"{label}.host_syncs", lambda: host_syncs(job, device))
        record(f"{label}.autocast_dtypes", lambda: autocast_dtypes(job, device))
        if label.startswith("gpt2"):
            for activation in ("gelu_new", "gelu_pytorch_tanh"):
                record(f"{label}.profiled_step_{activation}", lambda: profiled_step(job, device, activation))
        else:
            record(f"{label}.profiled_step", lambda: profiled_step(job, device, None))
        torch.cuda.empty_cache()
    longest = max((s for label, s in shapes.items() if label.startswith("gpt2")),
                  key=lambda s: task_from_dict(s.job.task).n_points)
    small = replace(longest.job, train=replace(longest.job.train, batch_size=16))
    record("determinism_longest_gpt2", lambda: determinism(small, device))
    print(path)


if __name__ == "__main__":
    main()
