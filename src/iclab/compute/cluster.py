"""What a training job asks a cluster for (``profiles/slurm``): a GPU for the sequence models (unless
``$ICLAB_SLURM_GPUS`` is 0: a cluster without GPUs), a runtime and a memory scaled to the model and its training on
that device, the partition and account named in the environment.

The sizes are estimates from the job's spec, not measurements of the job itself:

- work = 6 · (parameters each token passes through) · tokens + attention's T² terms (forward and backward),
  the count of ``benchmarks/bench_gpt2.py``; runtime = start-up + steps · (per-step overhead + the sequence
  models' per token and layer overhead + work / rate);
- memory = base + 16 bytes a parameter (weights, gradients, Adam's two moments) + activations (on a CPU);
  GPT-2's are Korthikanti et al. 2022's s·b·h·(34 + 5·a·s/h) bytes a layer at 16 bits, doubled for float32.

A curriculum's steps are counted at their stage's prompt length (padded where ``train.pad_points`` says).

The CPU constants are calibrated on the paper tier's smoke run (every training shape of ``config/paper.yaml``,
two steps each, on this machine's 2 threads: ``benchmarks/results/paper_cost.csv``), so that every request
covers its job's projection (``tests/test_cluster.py``). A GPU step is timed by a rates file of ``iclab gpu-check``
where one is given (``GpuRates``: ``$ICLAB_GPU_RATES`` on a cluster, ``iclab cost --rates``): its shape's row, or a
fit to its family's rows; else it is estimated from anchors for an H100 (``gpu_step_seconds``: the host's time
launching the step or the device's running it, whichever is longer).

Each estimate is multiplied by ``SAFETY``; a retried job (Snakemake's ``attempt``) asks for ``attempt`` times
the runtime, capped at the partition's limit (``$ICLAB_SLURM_MAX_RUNTIME_MIN``, default ``MAX_RUNTIME_MIN``): a
job stopped at its limit resumes from its checkpoint when retried, and the training rule retries as often as its
longest job needs (``retries_needed``).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from iclab.errors import UsageError
from iclab.hashing import canonical_json

ACCELERATED_MODELS = ("gpt2", "lstm")  # sequence models trained by many gradient steps: a GPU pays

PARTITION_VARIABLE = "ICLAB_SLURM_PARTITION"  # every job's partition (unset: the cluster's default)
GPU_PARTITION_VARIABLE = "ICLAB_SLURM_GPU_PARTITION"  # jobs that ask for a GPU (unset: PARTITION_VARIABLE's)
ACCOUNT_VARIABLE = "ICLAB_SLURM_ACCOUNT"  # unset: the executor plugin guesses the account
GPUS_VARIABLE = "ICLAB_SLURM_GPUS"  # "1" (default): GPT-2 and LSTM jobs ask for a GPU; "0": no job does (a CPU cluster)
MAX_RUNTIME_VARIABLE = "ICLAB_SLURM_MAX_RUNTIME_MIN"  # the partition's time limit, minutes (unset: MAX_RUNTIME_MIN)
RATES_VARIABLE = "ICLAB_GPU_RATES"  # a rates file of `iclab gpu-check` (unset: estimated from anchors)

# Sustained FLOP/s of one training job on a CPU, measured at the papers' shapes on 2 threads: GPT-2 4.2–8.2e10 and the
# LSTM 1.1e11 (large matrix products), the linear models, the mean-field particles and the feature MLP 0.75–6.7e10.
CPU_RATE = 1e10
SEQUENCE_CPU_RATE = 4e10  # GPT-2 and LSTM on a CPU
CPU_STEP_OVERHEAD_S = 5e-3  # Python, optimizer and the step's small operations (GD-β: 5 ms here)
# GPT-2's and the LSTM's small per-token operations (layer norms, masks, gates) a layer, a step: 5.6 µs measured at
# 8 hidden units (0.36 s a step of 12 layers × 82 tokens × 64 prompts, the FLOPs 0.02 s of it)
CPU_TOKEN_LAYER_S = 6e-6

# A GPU step no rates file timed ("estimated (anchors)", for an H100 SXM; gpu_step_seconds). Its host time: eager
# PyTorch's dispatch, autograd and launches, which set the small models' steps (the third GPU run, H100, batch 64:
# the 12-layer GPT-2s 41–61 ms a step at 8 to 256 units, float32 or bf16, 0.24 to 2.4 TFLOP a step; 6 layers 27–31,
# 3 layers 18): a step's base plus a GPT-2 block's, fitted to those rows. Not a time a kernel: the bf16 steps launch
# 1.7× the kernels of the float32 ones (autocast's casts) in the same time. The LSTM's cuDNN kernels run one token
# and layer at a time: 61 ms at 10 layers × 82 tokens (the same run), its base aside
GPU_STEP_BASE_S = 7.0e-3
GPU_BLOCK_S = 3.76e-3  # a GPT-2 block, forward and backward
GPU_LSTM_TOKEN_LAYER_S = 66e-6
# Its device time: FLOPs at a share of the card's dense peak (NVIDIA's H100 SXM data sheet: bf16 989, TF32 495,
# float32 67 TFLOP/s, as gpu_check.PEAKS), the share of an eager loop: nanoGPT's README, 250 ms an iteration eager
# (135 compiled) for its 124M GPT-2 on an A100, at bench.py's 8 × 1024 tokens 9% (17%) of the A100's 312 TFLOP/s;
# plus the bytes a step moves at the card's 3.35 TB/s: the activations written and read back, and 40 B a parameter
# (the weights read twice, the gradient, Adam's update)
CARD_PEAK_FLOPS = {"bfloat16": 989e12, "tf32": 495e12, "float32": 67e12}
ACHIEVABLE_SHARE = 0.09
CARD_BANDWIDTH = 3.35e12
PARAMETER_STEP_BYTES = 40
# A batched group (the config's batched_training, ``iclab.fit.batched``) trains its G members in one step: about one
# model's launches times a kernel ratio (vmap splits each addmm into a bmm and an add, LayerNorm's affine into a mul
# and an add: 923 ops that compute against one model's 536 with eager attention, flat in G, on the CPU:
# benchmarks/results/batched_ops.json), and G members' device work. A group of one trains beside a copy of itself
# (``sgd.train_group``): 2 members' work. Not yet run on a GPU, so its device time is a range, never one number:
# a share of the card's peak at each arithmetic, by scenario.


@dataclass(frozen=True)
class Scenario:
    """How fast a batched group's or a captured step may run on a card: a group's launches over one model's
    (``kernel_ratio``), the device's share of ``CARD_PEAK_FLOPS`` at each arithmetic (``efficiency``), and a kernel's
    time in a replayed CUDA graph (``kernel_s``: a captured step, ``train.capture``), with where they come from."""

    name: str
    kernel_ratio: float
    efficiency: dict[str, float]
    kernel_s: float
    source: str


BATCHED_SCENARIOS = (
    Scenario("conservative", 2.0, {"bfloat16": 0.12, "tf32": 0.12, "float32": 0.125}, 3e-6,
             "measured: launches twice one model's (batched_ops.json's 923/536 = 1.72, rounded up: SDPA's batching "
             "on CUDA not yet counted); bf16 and TF32 12% of the peak, the H200's kernels at single_index's shape "
             "(2.395e12 FLOPs in 20.1 ms, gpu_defects_nvidia_h200.json); float32 12.5%, the least the H200's "
             "probe_layers step allows (3.02e11 FLOPs in a 36 ms step); a captured kernel 3 µs (issue 101's "
             "estimate, not measured)"),
    Scenario("central", 1.72, {"bfloat16": 0.25, "tf32": 0.25, "float32": 0.60}, 2.5e-6,
             "assumption: launches 1.72× one model's (measured on the CPU); shares of the peak and a captured "
             "kernel's 2.5 µs issue 101's central estimate, not measured"),
    Scenario("optimistic", 1.72, {"bfloat16": 0.40, "tf32": 0.40, "float32": 0.80}, 2e-6,
             "assumption: as central, at issue 101's optimistic shares of the peak and 2 µs a captured kernel, not "
             "measured"),
)
CONSERVATIVE = BATCHED_SCENARIOS[0]  # what a SLURM request asks for
# The two-stage fit's stage 1, per point and neuron beyond its 6·d multiply-adds: the activation, its derivative
# and float64 elementwise passes (2.3 ms a prompt of 257 points × 128 neurons, 84 ms of 4097 × 128 measured).
TWO_STAGE_POINT_NEURON_FLOPS = 1600
START_UP_S = 300.0  # Python, torch and transformers imports, the data, the checkpoint writes
BASE_MEMORY_BYTES = 1.0e9  # a training job's resident set before its model (0.37–0.45 GB measured here)
CUDA_CONTEXT_BYTES = 1.0e9
SAFETY = 2.0
MAX_RUNTIME_MIN = 24 * 60  # the cap where the partition's is not given (many clusters' GPU partitions allow less)
MIN_RUNTIME_MIN = 10
MIN_MEMORY_MB = 2000


@dataclass(frozen=True)
class Size:
    """A training job's work: FLOPs of one step (forward and backward), the steps, the model's parameters and
    the bytes of the activations one step keeps for its backward pass (float32)."""

    flops_per_step: float
    steps: int
    parameters: float
    activation_bytes: float
    token_layers: float = 0.0  # a sequence model's prompts × tokens × layers of one step (``CPU_TOKEN_LAYER_S``)
    device_activation_bytes: float | None = None  # on a GPU, where they differ (GPT-2: ``gpt2_device_activations``)

    @property
    def on_device(self) -> float:
        """The activation bytes one step keeps on a GPU."""
        return self.activation_bytes if self.device_activation_bytes is None else self.device_activation_bytes


def curriculum_stages(task: dict[str, Any], train: dict[str, Any]) -> list[tuple[int, int]]:
    """(steps, prompt length) of each stage of the training's curriculum (Garg et al.: the points grow by
    ``points[1]`` every ``every`` steps up to the task's n), each stage at its padded length (``train.pad_points``:
    rounded up to a multiple, at most n); one stage at n without a curriculum."""
    steps, n = train["steps"], task["n_points"]
    curriculum, pad = train.get("curriculum"), train.get("pad_points")
    if curriculum is None:
        return [(steps, n)]
    (start, grow), every = curriculum["points"], curriculum["every"]
    stages = []
    for begin in range(0, steps, every):
        points = min(n, start + (begin // every) * grow)
        if points == n:
            return stages + [(steps - begin, n)]
        stages.append((min(every, steps - begin), points if pad is None else min(n, -(-points // pad) * pad)))
    return stages


def over_curriculum(size_at: Callable[[int], Size], task: dict[str, Any], train: dict[str, Any]) -> Size:
    """A sequence model's size from ``size_at(prompt length)``: FLOPs and token-layers per step averaged over the
    curriculum's stages (step-weighted), the parameters and the largest activations the full length's."""
    stages, full = curriculum_stages(task, train), size_at(task["n_points"])
    if len(stages) == 1:
        return full
    at = {points: size_at(points) for _, points in stages}
    def mean(field: str) -> float:
        return sum(steps * getattr(at[points], field) for steps, points in stages) / train["steps"]

    return replace(full, flops_per_step=mean("flops_per_step"), token_layers=mean("token_layers"))


def gpt2_size(model: dict[str, Any], task: dict[str, Any], train: dict[str, Any]) -> Size:
    """``gpt2_step_size`` over the curriculum."""
    return over_curriculum(lambda n: gpt2_step_size(model, n, train), task, train)


def gpt2_step_size(model: dict[str, Any], n: int, train: dict[str, Any]) -> Size:
    """A GPT-2 step on prompts of n points. Blocks: 12 · L · E² parameters (4 · L · E² without the MLP), T = 2n
    tokens (interleaved; a token-matrix model trained at every position runs its n labelled tokens and n queries in
    one pass), n for a token-matrix model trained at the last query. The last block projects keys and values
    (2 · E² a token) at every token and the rest only at the tokens read (``GPT2Learner.read_states``): every query
    when the loss is at every position, else the last one. A captured step (``train.capture``) predicts at every
    position whatever its loss reads (``sgd.masked_prompt_loss``: the read length lives on the device), so it counts
    as every position."""
    batch = train["batch_size"]
    embd, layers, heads = model["n_embd"], model["n_layer"], model["n_head"]
    per_token = 12 if model.get("mlp", True) else 4  # a block's E² multiply-adds a token
    parameters = per_token * layers * embd**2
    interleaved = model.get("prompt_format", "interleaved") == "interleaved"
    every_position = train.get("loss_positions", "last") == "all" or train.get("capture", False)
    tokens = 2 * n if interleaved or every_position else n
    read = n if every_position else 1
    dense = (layers - 1) * per_token * tokens + 2 * tokens + (per_token - 2) * read  # E² multiples, fwd
    attention = (layers - 1) * tokens**2 + read * tokens  # query-key pairs
    flops = batch * (6 * dense * embd**2 + 12 * attention * embd)
    activations = 2 * tokens * batch * embd * layers * (34 + 5 * heads * tokens / embd)
    on_device = gpt2_device_activations(model, train, batch * tokens * layers)
    return Size(flops, train["steps"], parameters, activations, batch * tokens * layers, on_device)


# Bytes a GPT-2 training step keeps a token, layer and embedding unit on a GPU: Korthikanti et al. 2022's 34 at 16
# bits (attention 11, MLP 19, the two layer norms 4) without their attention term 5·a·s/h (the T × T scores, softmax
# and dropout mask): SDPA's fused kernels store none of it, only the output and a logsumexp a row; 13 without the MLP
# and its layer norm. Twice that in float32. gelu_new is seven elementwise ops whose saved intermediates add, a
# 4E-wide token: in float32 tanh's output, 0.5·x and 1 + tanh (3 × 4 × 4 B = 48); under bf16 autocast, where CUDA runs pow and what
# follows in float32, tanh's output and 1 + tanh in float32 and 0.5·x in bf16 (2 × 16 + 8 = 40); a fused GELU
# saves only its input, already counted. Checked against one step's peak on the CPU and on an H200
# (benchmarks/gpu_memory_model.py, benchmarks/results/gpu_memory_model.json).
GPT2_SDPA_BYTES = {True: 34, False: 13}  # by whether the block has its MLP
GELU_NEW_EXTRA_BYTES = {"float32": 48, "bfloat16": 40}


def gpt2_device_activations(model: dict[str, Any], train: dict[str, Any], token_layers: float) -> float:
    """Activation bytes of a GPT-2 step on a GPU (SDPA attention) over ``token_layers`` = prompts × tokens × layers:
    ``GPT2_SDPA_BYTES`` a unit at 16 bits (twice in float32), plus ``GELU_NEW_EXTRA_BYTES`` under gelu_new."""
    precision, mlp = train.get("precision", "float32"), model.get("mlp", True)
    per_unit = GPT2_SDPA_BYTES[mlp] * (2 if precision == "float32" else 1)
    if mlp and model.get("activation", "gelu_new") == "gelu_new":
        per_unit += GELU_NEW_EXTRA_BYTES[precision]
    return token_layers * model["n_embd"] * per_unit


def lstm_size(model: dict[str, Any], task: dict[str, Any], train: dict[str, Any]) -> Size:
    """``lstm_step_size`` over the curriculum."""
    return over_curriculum(lambda n: lstm_step_size(model, n, train), task, train)


def lstm_step_size(model: dict[str, Any], n: int, train: dict[str, Any]) -> Size:
    """Stacked LSTMs on prompts of n points: 8 · L · H² parameters (four gates, input and recurrent), T = 2n tokens;
    a token keeps its four gates, cell and output per layer."""
    hidden, layers, batch, tokens = model["hidden"], model["n_layer"], train["batch_size"], 2 * n
    parameters = 8 * layers * hidden**2
    activations = 4 * 6 * batch * tokens * layers * hidden
    return Size(6 * parameters * batch * tokens, train["steps"], parameters, activations, batch * tokens * layers)


def dense_size(parameters: float, tokens: float, steps: int, width: float) -> Size:
    """A model whose every token passes through all ``parameters`` and keeps ``width`` floats."""
    return Size(6 * parameters * tokens, steps, parameters, 4 * tokens * width)


def two_stage_size(width: int, d: int, n: int, train: dict[str, Any]) -> Size:
    """Oko et al.'s two stages as ``iclab.fit.two_stage`` runs them, one "step": the stage-1 gradient over t1
    prompts of n points through m neurons of dimension d (6·d multiply-adds and ``TWO_STAGE_POINT_NEURON_FLOPS``
    a point and neuron; stage 2 computes the same features); stage 2's (m², m²) Gram matrix summed over t2
    prompts (float64) and solved (a third of (m²)³). Memory, float64: the Gram matrix, its ridge system and the
    solver's copy, the chunk's (chunk, m²) features, and four (chunk, n, m) arrays of stage 1's backward pass
    (13.8 GB measured at 512 × 4097 × 128 points and neurons)."""
    m2, chunk = width**2, train["chunk"]
    per_prompt = width * n * (6 * d + TWO_STAGE_POINT_NEURON_FLOPS)
    flops = per_prompt * (train["t1"] + train["t2"]) + 2 * train["t2"] * m2**2 + m2**3 / 3
    return Size(flops, 1, width * d + m2, 8 * (3 * m2**2 + chunk * m2 + 4 * chunk * n * width))


def mean_field_size(model: dict[str, Any], d: int, n: int, train: dict[str, Any]) -> Size:
    """M particles (a ∈ R^k, w ∈ R^d) on every point. The static and modified variants refit Γ* on
    ``gamma_prompts`` prompts at once (``fit.mean_field.refit_gamma``): their (prompts, n, M) features and
    products, float32 (8.3 GB measured at 2048 × 1001 × 500)."""
    width = model["width"]
    size = dense_size(width * (d + model["k"]), train["batch_size"] * n, train["steps"], width)
    if train["variant"] in ("static", "modified"):
        refit = 2 * 4 * train["gamma_prompts"] * n * width
        return replace(size, activation_bytes=max(size.activation_bytes, refit))
    return size


def model_size(job: dict[str, Any]) -> Size:
    """The size of the training job with spec ``job`` (``TrainJob.to_dict()``)."""
    model, task, train = job["model"], job["task"], job["train"]
    d, n = task["d"], task["n_points"]
    name = model["name"]
    if name == "gpt2":
        return gpt2_size(model, task, train)
    if name == "lstm":
        return lstm_size(model, task, train)
    if name == "two_stage":
        return two_stage_size(model["width"], d, n, train)
    if name == "mean_field":
        return mean_field_size(model, d, n, train)
    if name == "feature_attention":  # the MLP φ on every point (d → width → … → N), then Γ (N × N)
        w, depth, features = model["width"], model["depth"], model["features"]
        parameters = d * w + (depth - 1) * w**2 + w * features + features**2
        return dense_size(parameters, train["batch_size"] * n, train["steps"], w * depth)
    # lsa, ltb, gd_beta: (d+1)×(d+1) matrices acting on every token
    return dense_size(2 * (d + 1) ** 2, train["batch_size"] * (n + 1), train["steps"], 4 * (d + 1))


def gpus_allowed(environ: Mapping[str, str]) -> bool:
    """``$ICLAB_SLURM_GPUS``: "1" or unset, sequence models ask for a GPU; "0", no job does (a cluster without GPUs:
    they ask for CPUs, and a runtime and memory estimated on a CPU). Anything else is an error naming the variable."""
    value = environ.get(GPUS_VARIABLE, "1")
    if value not in ("0", "1"):
        raise ValueError(f"{GPUS_VARIABLE}={value!r}; allowed: 1 (GPT-2 and LSTM jobs ask for a GPU) or 0 (none does)")
    return value == "1"


def device(job: dict[str, Any], gpus_allowed: bool = True) -> str:
    """"gpu" for a GPT-2 or an LSTM where GPUs are allowed, "cpu" otherwise."""
    return "gpu" if gpus_allowed and job["model"]["name"] in ACCELERATED_MODELS else "cpu"


def gpus(job: dict[str, Any], gpus_allowed: bool = True) -> int:
    """1 for a GPT-2 or an LSTM (where GPUs are allowed), 0 for the linear models and closed-form fits."""
    return int(device(job, gpus_allowed) == "gpu")


def numerics(job: dict[str, Any]) -> dict[str, Any]:
    """What a training step's speed depends on beyond its FLOPs: the model family and the step's arithmetic."""
    train = job["train"]
    return {"family": job["model"]["name"], "precision": train.get("precision", "float32"),
            "tf32": train.get("tf32", False), "compile": train.get("compile", False),
            "cuda_graphs": train.get("cuda_graphs", False)}


def step_key(job: dict[str, Any]) -> str:
    """A training step's shape and numerics: the model (its label aside), the task's d and prompt length, the batch,
    the loss positions and ``numerics``. Jobs of one key take one time a step on one device."""
    model = {key: value for key, value in job["model"].items() if key != "label"}
    task, train = job["task"], job["train"]
    return canonical_json({"model": model, "d": task["d"], "n_points": task["n_points"],
                           "batch_size": train["batch_size"], "loss_positions": train.get("loss_positions", "last"),
                           **numerics(job)})


RATE_COLUMNS = ("card", "key", "family", "precision", "tf32", "compile", "cuda_graphs", "loop", "flops_per_step",
                "seconds_per_step")  # what GpuRates reads of a gpu-check rates file (it writes more)
GROUP_COLUMN = "group_size"  # a row's batched group size; absent (files before issue 99): 1, one model alone


@dataclass(frozen=True)
class GpuRates:
    """GPU step times and memory from a rates file of ``iclab gpu-check`` (rows of the loop that trains, ``loop`` =
    "new", that measured without an error). A step whose shape and numerics (``step_key``) were timed takes its own
    row's seconds, and its row's peak memory replaces ``device_bytes``' model; any other step of a family and numerics
    measured there takes seconds = overhead + FLOPs × seconds_per_flop, by least squares over that family's shapes
    (overhead 0 where one shape was measured, or where the fit's would be negative). A curriculum job's steps all
    take its full shape's time (an upper bound: the check times the last stage). Rows of batched groups (column
    ``group_size`` above 1) time only a group of their size (``group_step_seconds``): a model alone is never read
    as a group's step, nor a group's as one model's."""

    card: str
    fits: dict[str, tuple[float, float]]  # canonical_json(numerics) → (overhead s, seconds per FLOP)
    shapes: dict[str, float] = field(default_factory=dict)  # step_key → seconds a step measured
    memory_mb: dict[str, float] = field(default_factory=dict)  # step_key → peak allocated MB measured
    groups: dict[tuple[str, int], float] = field(default_factory=dict)  # (step_key, G ≥ 2) → seconds a group step
    kernels: dict[str, float] = field(default_factory=dict)  # step_key → kernels a step launched (the profiled rows)

    @classmethod
    def read(cls, path: Path) -> GpuRates:
        path = Path(path)
        if not path.is_file():
            raise UsageError(f"GPU rates file {path} does not exist (write one with `python -m iclab gpu-check`)")
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        missing = [column for column in RATE_COLUMNS if rows and column not in rows[0]]
        if not rows or missing:
            raise UsageError(f"GPU rates file {path}: {'no rows' if not rows else f'no columns {missing}'}; "
                             f"a file of `python -m iclab gpu-check` has the columns {', '.join(RATE_COLUMNS)}")
        points: dict[str, list[tuple[float, float]]] = {}
        shapes, memory, groups, kernels = {}, {}, {}, {}
        for row in rows:
            if row["loop"] != "new" or row.get("error") or not row["seconds_per_step"]:
                continue
            size = int(row.get(GROUP_COLUMN) or 1)
            if size > 1:
                groups[row["key"], size] = float(row["seconds_per_step"])
                continue
            measured = {key: json.loads(row[key]) for key in ("tf32", "compile", "cuda_graphs")}
            key = canonical_json({"family": row["family"], "precision": row["precision"], **measured})
            points.setdefault(key, []).append((float(row["flops_per_step"]), float(row["seconds_per_step"])))
            shapes[row["key"]] = float(row["seconds_per_step"])
            if math.isfinite(float(row.get("peak_memory_mb") or "nan")):
                memory[row["key"]] = float(row["peak_memory_mb"])
            if math.isfinite(float(row.get("kernels_per_step") or "nan")):
                kernels[row["key"]] = float(row["kernels_per_step"])
        return cls(card=rows[0]["card"], fits={key: fit_step_time(pairs) for key, pairs in points.items()},
                   shapes=shapes, memory_mb=memory, groups=groups, kernels=kernels)

    def fit_of(self, job: dict[str, Any]) -> tuple[float, float] | None:
        """(overhead, seconds per FLOP) fitted for ``job``'s family and numerics, None where they were not measured."""
        return self.fits.get(canonical_json(numerics(job)))

    def step_seconds(self, job: dict[str, Any], flops_per_step: float) -> float | None:
        """Seconds a step of ``job`` on this card: its shape's row, else its family's fit, else None."""
        measured = self.shapes.get(step_key(job))
        if measured is not None:
            return measured
        fit = self.fit_of(job)
        return None if fit is None else fit[0] + flops_per_step * fit[1]

    def group_step_seconds(self, job: dict[str, Any], size: int) -> float | None:
        """Seconds a step of a batched group of ``size`` members of ``job``'s shape, where a row timed one."""
        return self.groups.get((step_key(job), size))

    def basis(self, job: dict[str, Any]) -> str | None:
        """"measured on <card>" (the job's shape was timed), "fitted on <card>" (its family and numerics were), or
        None."""
        if step_key(job) in self.shapes:
            return f"measured on {self.card}"
        return f"fitted on {self.card}" if self.fit_of(job) is not None else None


def fit_step_time(pairs: list[tuple[float, float]]) -> tuple[float, float]:
    """(overhead, seconds per FLOP) of seconds = overhead + FLOPs × seconds_per_flop through (FLOPs, seconds) pairs:
    least squares, or through the origin where one pair (or one FLOP count) is given or the overhead would be < 0."""
    flops, seconds = (np.asarray(column, dtype=float) for column in zip(*pairs))
    if len(set(flops)) > 1:
        slope, overhead = np.polyfit(flops, seconds, 1)
        if overhead >= 0 and slope > 0:
            return float(overhead), float(slope)
    return 0.0, float(np.sum(flops * seconds) / np.sum(flops**2))


def gpu_basis(job: dict[str, Any], rates: GpuRates | None) -> str:
    """Where a GPU estimate of ``job`` comes from: "measured on <card>" (its shape), "fitted on <card>" (its family's
    fit) or "estimated (anchors)" (``gpu_step_seconds``); a captured step's, "captured: its kernels counted on
    <card>, a scenario's time a kernel and peak shares", or where no row counted them, the eager step's basis."""
    if captured_kernels(job, rates) is not None:
        return f"captured: its kernels counted on {rates.card}, a scenario's time a kernel and peak shares"
    basis = (rates.basis(job) if rates is not None else None) or "estimated (anchors)"
    return basis + ("; captured, its kernels not counted: the eager step" if captured(job) else "")


def captured(job: dict[str, Any]) -> bool:
    """Whether ``job`` trains with ``train.capture``: its whole step one CUDA graph, replayed with one launch."""
    return job["train"].get("capture", False)


def captured_kernels(job: dict[str, Any], rates: GpuRates | None) -> float | None:
    """The kernels one step of a captured ``job``'s shape launches, where a rates row profiled it
    (``kernels_per_step``); None for a job that is not captured, or whose shape no row counted."""
    return rates.kernels.get(step_key(job)) if captured(job) and rates is not None else None


def captured_step_seconds(job: dict[str, Any], scenario: Scenario, rates: GpuRates | None) -> float | None:
    """A captured step of one model under ``scenario``: the longer of its kernels run back to back from the graph
    (``kernel_s`` each: the host launches once) and the device's time at the scenario's share of the peak
    (``gpu_device_seconds``); None for a job that is not captured, or whose kernels no rates row counted."""
    kernels = captured_kernels(job, rates)
    if kernels is None:
        return None
    device_s = gpu_device_seconds(job, model_size(job), scenario.efficiency[arithmetic(job)])
    return max(kernels * scenario.kernel_s, device_s)


def estimated_seconds(job: dict[str, Any], on: str, rates: GpuRates | None = None,
                      scenario: Scenario | None = None) -> float:
    """Estimated wall-clock seconds of the training job on device ``on`` ("cpu" or "gpu"), before SAFETY: on a GPU
    a captured step's under ``scenario`` (default the conservative one) where its kernels were counted
    (``captured_step_seconds``), else from ``rates`` where they cover the job's family and numerics, else
    ``gpu_step_seconds``."""
    size = model_size(job)
    if on == "cpu":
        return START_UP_S + size.steps * cpu_step_seconds(job, size)
    step = captured_step_seconds(job, scenario or CONSERVATIVE, rates)
    if step is None:
        step = rates.step_seconds(job, size.flops_per_step) if rates is not None else None
    return START_UP_S + size.steps * (gpu_step_seconds(job, size) if step is None else step)


def cpu_step_seconds(job: dict[str, Any], size: Size) -> float:
    """A training step on this machine's CPU: its overhead, per-token work and FLOPs at ``rate``."""
    return CPU_STEP_OVERHEAD_S + size.token_layers * CPU_TOKEN_LAYER_S + size.flops_per_step / rate(job)


def gpu_step_seconds(job: dict[str, Any], size: Size) -> float:
    """A GPT-2's or an LSTM's training step on an H100 without a measurement ("estimated (anchors)"): the longer of
    ``gpu_host_seconds`` and ``gpu_device_seconds``. The stream queues the kernels as the host launches them (a
    training step has no host sync: issue 78), so whichever is slower sets the step."""
    return max(gpu_host_seconds(job, size), gpu_device_seconds(job, size))


def gpu_host_seconds(job: dict[str, Any], size: Size) -> float:
    """The host's time launching a step (``GPU_STEP_BASE_S`` and the model's part: ``GPU_BLOCK_S`` a GPT-2 block, or
    ``GPU_LSTM_TOKEN_LAYER_S`` an LSTM token and layer)."""
    model = job["model"]
    if model["name"] == "gpt2":
        return GPU_STEP_BASE_S + model["n_layer"] * GPU_BLOCK_S
    return GPU_STEP_BASE_S + size.token_layers / job["train"]["batch_size"] * GPU_LSTM_TOKEN_LAYER_S


def gpu_device_seconds(job: dict[str, Any], size: Size, share: float = ACHIEVABLE_SHARE) -> float:
    """The card's time running a step: its FLOPs at ``share`` of the peak of the step's arithmetic (the anchors'
    ``ACHIEVABLE_SHARE``, or a batched scenario's), and the bytes it moves (activations written and read back,
    ``PARAMETER_STEP_BYTES`` a parameter) at ``CARD_BANDWIDTH``."""
    moved = 2 * size.on_device + PARAMETER_STEP_BYTES * size.parameters
    return size.flops_per_step / (share * CARD_PEAK_FLOPS[arithmetic(job)]) + moved / CARD_BANDWIDTH


def arithmetic(job: dict[str, Any]) -> str:
    """The matrix products' arithmetic of a training step (a key of ``CARD_PEAK_FLOPS``): its precision, or "tf32"
    for float32 with TF32 on."""
    precision = job["train"].get("precision", "float32")
    return "tf32" if precision == "float32" and job["train"].get("tf32", False) else precision


def rate(job: dict[str, Any]) -> float:
    """Sustained FLOP/s of the training job on a CPU: ``SEQUENCE_CPU_RATE`` for GPT-2 and the LSTM, ``CPU_RATE``
    otherwise."""
    return SEQUENCE_CPU_RATE if job["model"]["name"] in ACCELERATED_MODELS else CPU_RATE


def priority(job: dict[str, Any]) -> int:
    """The training job's Snakemake priority: its estimated seconds on a CPU. With more ready jobs than cores
    (a local run, where every job trains on the CPU) the longest start first (longest-processing-time
    scheduling), so that no long job is left to run alone at the end; jobs of other rules keep priority 0."""
    return round(estimated_seconds(job, "cpu"))


def requested_minutes(seconds: float, attempt: int, cap: int = MAX_RUNTIME_MIN) -> int:
    """Wall-clock minutes to ask for a job estimated at ``seconds``: × SAFETY × attempt, capped at ``cap``."""
    minutes = math.ceil(SAFETY * seconds / 60) * attempt
    return min(max(minutes, MIN_RUNTIME_MIN), cap)


def retries_needed(seconds: float, cap: int = MAX_RUNTIME_MIN) -> int:
    """Retries that let a job estimated at ``seconds`` finish under a cap of ``cap`` minutes a run, each resuming from
    the last one's checkpoint: ⌈SAFETY × seconds ÷ cap⌉, so its attempts (one more) leave one to spare."""
    return math.ceil(SAFETY * seconds / (60 * cap))


def runtime_minutes(job: dict[str, Any], attempt: int = 1, gpus_allowed: bool = True, rates: GpuRates | None = None,
                    cap: int = MAX_RUNTIME_MIN) -> int:
    """Wall-clock minutes to ask for: the estimate on the job's device × SAFETY × attempt, capped."""
    return requested_minutes(estimated_seconds(job, device(job, gpus_allowed), rates), attempt, cap)


def batched(jobs: list[dict[str, Any]]) -> bool:
    """Whether ``jobs`` (a model group's specs) train as one batched group: every spec's ``train.batched``."""
    return all(job.get("train", {}).get("batched", False) for job in jobs)


def producers(jobs: list[dict[str, Any]], loop_producers: int, gpus_allowed: bool = True) -> int:
    """The processes that make a training job's batches (``loop.producers``): a batched group's on a GPU, whose steps
    take many members' batches at once; none otherwise (the loop's thread makes one model's ahead). They are cores
    of their own: the job asks ``gpu_threads`` + these."""
    return loop_producers if batched(jobs) and gpus(jobs[0], gpus_allowed) else 0


def trained_members(jobs: list[dict[str, Any]]) -> int:
    """The models a group's job trains: a batched group of one trains beside a copy of itself (two), else each."""
    return max(len(jobs), 2) if batched(jobs) else len(jobs)


def group_seconds(jobs: list[dict[str, Any]], gpus_allowed: bool = True, rates: GpuRates | None = None,
                  scenario: Scenario = CONSERVATIVE) -> float:
    """Estimated seconds of one job that trains ``jobs`` (a model group, ``iclab.pipeline.plan.model_groups``): one
    start-up, then each model's training one after another; a batched group on a GPU, its steps
    (``group_step_seconds``). On a CPU a batched group counts its members one after another: its FLOPs are theirs,
    and no run has yet timed a batched group there alone (docs/measurements.md#batched-groups-at-cpu-size)."""
    on = device(jobs[0], gpus_allowed)
    if batched(jobs) and on == "gpu":
        return START_UP_S + model_size(jobs[0]).steps * group_step_seconds(jobs, rates, scenario)
    copies = trained_members(jobs) // len(jobs)  # a batched group of one: twice its model's work
    return START_UP_S + copies * sum(estimated_seconds(job, on, rates, scenario) - START_UP_S for job in jobs)


def group_step_seconds(jobs: list[dict[str, Any]], rates: GpuRates | None = None,
                       scenario: Scenario = CONSERVATIVE) -> float:
    """A GPU step of the batched group ``jobs``: its row in ``rates`` where one timed a group of its size, else
    ``batched_step_seconds``."""
    measured = None if rates is None else rates.group_step_seconds(jobs[0], trained_members(jobs))
    return batched_step_seconds(jobs, scenario, rates) if measured is None else measured


def batched_step_seconds(jobs: list[dict[str, Any]], scenario: Scenario, rates: GpuRates | None = None) -> float:
    """A batched group's GPU step under ``scenario``, the longer of the host's and the device's time (one stream,
    no sync): the host launches ``kernel_ratio`` times one member's step alone (its row in ``rates``, its family's
    fit, else the anchors: launch-bound steps), or, captured, its ``kernel_ratio`` × a member's kernels run back to
    back at ``kernel_s`` each (where a row counted them); the device runs the G trained members' FLOPs at the
    scenario's share of the peak and moves their bytes (``gpu_device_seconds``' count) at ``CARD_BANDWIDTH``."""
    job, size = jobs[0], model_size(jobs[0])
    kernels = captured_kernels(job, rates)
    if kernels is not None:
        host = scenario.kernel_ratio * kernels * scenario.kernel_s
    else:
        alone = None if rates is None else rates.step_seconds(job, size.flops_per_step)
        host = scenario.kernel_ratio * (gpu_step_seconds(job, size) if alone is None else alone)
    member = gpu_device_seconds(job, size, scenario.efficiency[arithmetic(job)])
    return max(host, trained_members(jobs) * member)


def group_gpu_basis(jobs: list[dict[str, Any]], rates: GpuRates | None) -> str:
    """``gpu_basis`` of a model group: a batched group's "batched: measured on <card> at G = n", else "batched:
    estimated from one member's step (<its basis>) and peak shares" (its G is in the cost table's ``what``)."""
    members = trained_members(jobs)
    if not batched(jobs):
        return gpu_basis(jobs[0], rates)
    if rates is not None and rates.group_step_seconds(jobs[0], members) is not None:
        return f"batched: measured on {rates.card} at G = {members}"
    if captured_kernels(jobs[0], rates) is not None:
        return f"batched and captured: estimated from one member's kernels (counted on {rates.card}) and peak shares"
    return f"batched: estimated from one member's step ({gpu_basis(jobs[0], rates)}) and peak shares"


def group_priority(jobs: list[dict[str, Any]]) -> int:
    """``priority`` of a job that trains a model group."""
    return round(group_seconds(jobs, gpus_allowed=False))


def group_runtime_minutes(jobs: list[dict[str, Any]], attempt: int = 1, gpus_allowed: bool = True,
                          rates: GpuRates | None = None, cap: int = MAX_RUNTIME_MIN) -> int:
    """``runtime_minutes`` of a job that trains a model group."""
    return requested_minutes(group_seconds(jobs, gpus_allowed, rates), attempt, cap)


def host_bytes(job: dict[str, Any], on: str) -> float:
    """Estimated host memory of the training job on device ``on``, before SAFETY. On a GPU the activations live
    in the GPU's memory and the host holds the CUDA context instead."""
    size = model_size(job)
    held = size.activation_bytes if on == "cpu" else CUDA_CONTEXT_BYTES
    return BASE_MEMORY_BYTES + 16 * size.parameters + held


def device_bytes(job: dict[str, Any], rates: GpuRates | None = None) -> float:
    """Estimated GPU memory of the training job when it trains on a GPU, before SAFETY: the CUDA context, and the
    peak of torch's allocations that ``rates`` measured at the job's shape, or else the model's: the weights,
    gradients and Adam's moments (16 bytes a parameter) and the activations of one step."""
    measured = None if rates is None else rates.memory_mb.get(step_key(job))
    if measured is not None:
        return CUDA_CONTEXT_BYTES + measured * 2**20
    size = model_size(job)
    return CUDA_CONTEXT_BYTES + 16 * size.parameters + size.on_device


def device_memory_mb(job: dict[str, Any], gpus_allowed: bool = True, rates: GpuRates | None = None) -> int:
    """GPU memory a training job reserves (MB; Snakemake resource ``gpu_mem_mb``): ``device_bytes`` × SAFETY,
    rounded up to 500 MB, for a job that trains on a GPU; 0 for the rest. A local run given
    ``--resources gpu_mem_mb=<the card's>`` starts no more packed trainings than fit the card."""
    if not gpus(job, gpus_allowed):
        return 0
    return mb_rounded(device_bytes(job, rates))


def memory_mb(job: dict[str, Any], gpus_allowed: bool = True) -> int:
    """Host memory to ask for (MB): the estimate on the job's device × SAFETY, rounded up to 500 MB."""
    return max(MIN_MEMORY_MB, mb_rounded(host_bytes(job, device(job, gpus_allowed))))


def group_memory_mb(jobs: list[dict[str, Any]], gpus_allowed: bool = True) -> int:
    """``memory_mb`` of a job that trains a model group: its largest model's (they train one at a time); a batched
    group's, every trained member's parameters (16 bytes each, as ``host_bytes``) and, on a CPU, activations at once
    (on a GPU, one CUDA context)."""
    if not batched(jobs):
        return max(memory_mb(job, gpus_allowed) for job in jobs)
    size, on, members = model_size(jobs[0]), device(jobs[0], gpus_allowed), trained_members(jobs)
    held = members * size.activation_bytes if on == "cpu" else CUDA_CONTEXT_BYTES
    return max(MIN_MEMORY_MB, mb_rounded(BASE_MEMORY_BYTES + members * 16 * size.parameters + held))


def group_device_memory_mb(jobs: list[dict[str, Any]], gpus_allowed: bool = True,
                           rates: GpuRates | None = None) -> int:
    """``device_memory_mb`` of a job that trains a model group: its largest model's; a batched group's, one CUDA
    context and every trained member's share of ``device_bytes`` (measured or modelled) at once."""
    if not batched(jobs):
        return max(device_memory_mb(job, gpus_allowed, rates) for job in jobs)
    if not gpus(jobs[0], gpus_allowed):
        return 0
    member = device_bytes(jobs[0], rates) - CUDA_CONTEXT_BYTES
    return mb_rounded(CUDA_CONTEXT_BYTES + trained_members(jobs) * member)


def mb_rounded(estimated_bytes: float) -> int:
    """A reservation: ``estimated_bytes`` × SAFETY in MB, rounded up to 500."""
    return 500 * math.ceil(SAFETY * estimated_bytes / 1e6 / 500)


def max_runtime_min(environ: Mapping[str, str]) -> int:
    """``$ICLAB_SLURM_MAX_RUNTIME_MIN``: the partition's time limit in minutes (a whole number ≥ MIN_RUNTIME_MIN);
    ``MAX_RUNTIME_MIN`` if unset. Anything else is an error naming the variable."""
    value = environ.get(MAX_RUNTIME_VARIABLE)
    if value is None:
        return MAX_RUNTIME_MIN
    if not value.isdigit() or int(value) < MIN_RUNTIME_MIN:
        raise UsageError(f"{MAX_RUNTIME_VARIABLE}={value!r}: the partition's time limit in whole minutes, "
                         f"at least {MIN_RUNTIME_MIN} (e.g. 720 for 12 h)")
    return int(value)


def gpu_rates(environ: Mapping[str, str]) -> GpuRates | None:
    """``$ICLAB_GPU_RATES``: the rates file of ``iclab gpu-check`` that GPU runtimes are estimated from (unset:
    none: estimated from anchors)."""
    path = environ.get(RATES_VARIABLE)
    return GpuRates.read(Path(path)) if path else None


def partition(gpu: int, environ: Mapping[str, str]) -> str | None:
    """The SLURM partition of a job: ``$ICLAB_SLURM_GPU_PARTITION`` for one that asks for a GPU (falling back to
    ``$ICLAB_SLURM_PARTITION``), ``$ICLAB_SLURM_PARTITION`` otherwise; None (the cluster's default) if unset."""
    names = (GPU_PARTITION_VARIABLE, PARTITION_VARIABLE) if gpu else (PARTITION_VARIABLE,)
    return next((environ[name] for name in names if environ.get(name)), None)


def account(environ: Mapping[str, str]) -> str | None:
    """``$ICLAB_SLURM_ACCOUNT``; None (the executor plugin guesses it) if unset."""
    return environ.get(ACCOUNT_VARIABLE) or None
