"""What a training job asks a cluster for (``profiles/slurm``): a GPU for the sequence models (unless
``$ICLAB_SLURM_GPUS`` is 0: a cluster without GPUs), a runtime and a memory scaled to the model and its training on
that device, the partition and account named in the environment.

The sizes are estimates from the job's spec, not measurements of the job itself:

- work = 6 · (parameters each token passes through) · tokens + attention's T² terms (forward and backward),
  the count of ``benchmarks/bench_gpt2.py``; runtime = start-up + steps · (per-step overhead + the sequence
  models' per token and layer overhead + work / rate);
- memory = base + 16 bytes a parameter (weights, gradients, Adam's two moments) + activations (on a CPU);
  GPT-2's are Korthikanti et al. 2022's s·b·h·(34 + 5·a·s/h) bytes a layer at 16 bits, doubled for float32.

The CPU constants are calibrated on the paper tier's smoke run (every training shape of ``config/paper.yaml``,
two steps each, on this machine's 2 threads: ``benchmarks/results/paper_cost.csv``), so that every request
covers its job's projection (``tests/test_cluster.py``). The GPU constants are assumed: no GPU was lent.

Each estimate is multiplied by ``SAFETY``; a retried job (Snakemake's ``attempt``) asks for ``attempt`` times
the runtime, capped at ``MAX_RUNTIME_MIN``: a job stopped at its limit resumes from its checkpoint when retried.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

ACCELERATED_MODELS = ("gpt2", "lstm")  # sequence models trained by many gradient steps: a GPU pays

PARTITION_VARIABLE = "ICLAB_SLURM_PARTITION"  # every job's partition (unset: the cluster's default)
GPU_PARTITION_VARIABLE = "ICLAB_SLURM_GPU_PARTITION"  # jobs that ask for a GPU (unset: PARTITION_VARIABLE's)
ACCOUNT_VARIABLE = "ICLAB_SLURM_ACCOUNT"  # unset: the executor plugin guesses the account
GPUS_VARIABLE = "ICLAB_SLURM_GPUS"  # "1" (default): GPT-2 and LSTM jobs ask for a GPU; "0": no job does (a CPU cluster)

# Sustained FLOP/s of one training job. CPU, measured at the papers' shapes on 2 threads: GPT-2 4.2–8.2e10 and the
# LSTM 1.1e11 (large matrix products), the linear models, the mean-field particles and the feature MLP 0.75–6.7e10.
# GPU: assumed for small models on a data-centre GPU, not measured (no GPU lent).
RATE = {"cpu": 1e10, "gpu": 5e12}
SEQUENCE_CPU_RATE = 4e10  # GPT-2 and LSTM on a CPU
STEP_OVERHEAD_S = {"cpu": 5e-3, "gpu": 1e-2}  # Python, optimizer and kernel launches of one step (GD-β: 5 ms here)
# GPT-2's and the LSTM's small per-token operations (layer norms, masks, gates) a layer, a step: 5.6 µs measured at
# 8 hidden units (0.36 s a step of 12 layers × 82 tokens × 64 prompts, the FLOPs 0.02 s of it). GPU: in the launches.
TOKEN_LAYER_S = {"cpu": 6e-6, "gpu": 0.0}
# The two-stage fit's stage 1, per point and neuron beyond its 6·d multiply-adds: the activation, its derivative
# and float64 elementwise passes (2.3 ms a prompt of 257 points × 128 neurons, 84 ms of 4097 × 128 measured).
TWO_STAGE_POINT_NEURON_FLOPS = 1600
START_UP_S = 300.0  # Python, torch and transformers imports, the data, the checkpoint writes
BASE_MEMORY_BYTES = 1.0e9  # a training job's resident set before its model (0.37–0.45 GB measured here)
CUDA_CONTEXT_BYTES = 1.0e9
SAFETY = 2.0
MAX_RUNTIME_MIN = 24 * 60
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
    token_layers: float = 0.0  # a sequence model's prompts × tokens × layers of one step (``TOKEN_LAYER_S``)


def gpt2_size(model: dict[str, Any], task: dict[str, Any], train: dict[str, Any]) -> Size:
    """GPT-2 blocks: 12 · L · E² parameters (4 · L · E² without the MLP), T = 2n tokens (interleaved; a token-matrix
    model trained at every position runs its n labelled tokens and n queries in one pass), n for a token-matrix
    model trained at the last query. The last block projects keys and values (2 · E² a token) at every token and the
    rest only at the tokens read (``GPT2Learner.read_states``): every query when the loss is at every position,
    else the last one."""
    n, batch = task["n_points"], train["batch_size"]
    embd, layers, heads = model["n_embd"], model["n_layer"], model["n_head"]
    per_token = 12 if model.get("mlp", True) else 4  # a block's E² multiply-adds a token
    parameters = per_token * layers * embd**2
    interleaved = model.get("prompt_format", "interleaved") == "interleaved"
    every_position = train.get("loss_positions", "last") == "all"
    tokens = 2 * n if interleaved or every_position else n
    read = n if every_position else 1
    dense = (layers - 1) * per_token * tokens + 2 * tokens + (per_token - 2) * read  # E² multiples, fwd
    attention = (layers - 1) * tokens**2 + read * tokens  # query-key pairs
    flops = batch * (6 * dense * embd**2 + 12 * attention * embd)
    activations = 2 * tokens * batch * embd * layers * (34 + 5 * heads * tokens / embd)
    return Size(flops, train["steps"], parameters, activations, batch * tokens * layers)


def lstm_size(model: dict[str, Any], task: dict[str, Any], train: dict[str, Any]) -> Size:
    """Stacked LSTMs: 8 · L · H² parameters (four gates, input and recurrent), T = 2n tokens; a token keeps its
    four gates, cell and output per layer."""
    hidden, layers, batch, tokens = model["hidden"], model["n_layer"], train["batch_size"], 2 * task["n_points"]
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


def estimated_seconds(job: dict[str, Any], on: str) -> float:
    """Estimated wall-clock seconds of the training job on device ``on`` ("cpu" or "gpu"), before SAFETY."""
    size = model_size(job)
    step = STEP_OVERHEAD_S[on] + size.token_layers * TOKEN_LAYER_S[on] + size.flops_per_step / rate(job, on)
    return START_UP_S + size.steps * step


def rate(job: dict[str, Any], on: str) -> float:
    """Sustained FLOP/s of the training job on device ``on``: ``SEQUENCE_CPU_RATE`` for GPT-2 and the LSTM on a
    CPU, ``RATE[on]`` otherwise."""
    return SEQUENCE_CPU_RATE if on == "cpu" and job["model"]["name"] in ACCELERATED_MODELS else RATE[on]


def priority(job: dict[str, Any]) -> int:
    """The training job's Snakemake priority: its estimated seconds on a CPU. With more ready jobs than cores
    (a local run, where every job trains on the CPU) the longest start first (longest-processing-time
    scheduling), so that no long job is left to run alone at the end; jobs of other rules keep priority 0."""
    return round(estimated_seconds(job, "cpu"))


def requested_minutes(seconds: float, attempt: int) -> int:
    """Wall-clock minutes to ask for a job estimated at ``seconds``: × SAFETY × attempt, capped."""
    minutes = math.ceil(SAFETY * seconds / 60) * attempt
    return min(max(minutes, MIN_RUNTIME_MIN), MAX_RUNTIME_MIN)


def runtime_minutes(job: dict[str, Any], attempt: int = 1, gpus_allowed: bool = True) -> int:
    """Wall-clock minutes to ask for: the estimate on the job's device × SAFETY × attempt, capped."""
    return requested_minutes(estimated_seconds(job, device(job, gpus_allowed)), attempt)


def group_seconds(jobs: list[dict[str, Any]], gpus_allowed: bool = True) -> float:
    """Estimated seconds of one job that trains ``jobs`` (a model group, ``iclab.plan.model_groups``: one device,
    since the models that ask for a GPU train alone) one after another: one start-up, then each model's training."""
    on = device(jobs[0], gpus_allowed)
    return START_UP_S + sum(estimated_seconds(job, on) - START_UP_S for job in jobs)


def group_priority(jobs: list[dict[str, Any]]) -> int:
    """``priority`` of a job that trains a model group."""
    return round(group_seconds(jobs, gpus_allowed=False))


def group_runtime_minutes(jobs: list[dict[str, Any]], attempt: int = 1, gpus_allowed: bool = True) -> int:
    """``runtime_minutes`` of a job that trains a model group."""
    return requested_minutes(group_seconds(jobs, gpus_allowed), attempt)


def host_bytes(job: dict[str, Any], on: str) -> float:
    """Estimated host memory of the training job on device ``on``, before SAFETY. On a GPU the activations live
    in the GPU's memory and the host holds the CUDA context instead."""
    size = model_size(job)
    held = size.activation_bytes if on == "cpu" else CUDA_CONTEXT_BYTES
    return BASE_MEMORY_BYTES + 16 * size.parameters + held


def memory_mb(job: dict[str, Any], gpus_allowed: bool = True) -> int:
    """Host memory to ask for (MB): the estimate on the job's device × SAFETY, rounded up to 500 MB."""
    return max(MIN_MEMORY_MB, 500 * math.ceil(SAFETY * host_bytes(job, device(job, gpus_allowed)) / 1e6 / 500))


def group_memory_mb(jobs: list[dict[str, Any]], gpus_allowed: bool = True) -> int:
    """``memory_mb`` of a job that trains a model group: its largest model's (they train one at a time)."""
    return max(memory_mb(job, gpus_allowed) for job in jobs)


def partition(gpu: int, environ: Mapping[str, str]) -> str | None:
    """The SLURM partition of a job: ``$ICLAB_SLURM_GPU_PARTITION`` for one that asks for a GPU (falling back to
    ``$ICLAB_SLURM_PARTITION``), ``$ICLAB_SLURM_PARTITION`` otherwise; None (the cluster's default) if unset."""
    names = (GPU_PARTITION_VARIABLE, PARTITION_VARIABLE) if gpu else (PARTITION_VARIABLE,)
    return next((environ[name] for name in names if environ.get(name)), None)


def account(environ: Mapping[str, str]) -> str | None:
    """``$ICLAB_SLURM_ACCOUNT``; None (the executor plugin guesses it) if unset."""
    return environ.get(ACCOUNT_VARIABLE) or None
