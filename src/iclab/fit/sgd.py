"""The fitter of every model trained by gradient steps: fresh batches that are pure functions of
(seed, step) (or batches drawn from a finite pretraining set, a pure function of (seed, T)), Adam or SGD,
checkpoints with optimizer and RNG state, resume, divergence checks, progress lines. Its record in the model
cube: the loss curve and the parameter snapshots.

On a GPU the step does not wait on the host: the losses stay on the device until the next progress line or
checkpoint reads them (divergence is checked there, step by step), batches are made ahead (``iclab.fit.prefetch``),
and ``train.tf32`` sets CUDA's float32 matmuls (on the CPU it is emulated: ``iclab.fit.tf32``). The rest changes no
number on the CPU. ``train.compile`` runs the step's model through torch.compile (a model of its own name: compiled
kernels round differently), replayed as CUDA graphs with ``train.cuda_graphs``; ``train.pad_points`` trains a
curriculum's stages at fewer distinct lengths.
"""

from __future__ import annotations

import logging
import math
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import xarray as xr
from torch import nn

from iclab.checkpoints import load_checkpoint, save_checkpoint
from iclab.errors import UsageError
from iclab.fit.base import SNAPSHOT_PREFIX, TrainingDiverged, param_dims
from iclab.fit.batched import Batched, ModelGroup, check_group, group_hash, stacked_batch
from iclab.fit.capture import CapturedStep, graphs_on
from iclab.fit.configs import TrainConfig
from iclab.fit.prefetch import BatchFeed
from iclab.fit.tf32 import emulated_tf32
from iclab.models import build_model, default_device
from iclab.models.lstm import onednn_bf16
from iclab.progress import Progress
from iclab.tasks import Batch, Task, task_from_dict
from iclab.tasks.samplers import pretraining_batch, pretraining_set, train_batch

log = logging.getLogger("iclab.fit.sgd")


def curriculum_stage(cfg: TrainConfig, task: Task, step: int) -> tuple[int, int]:
    """(active dimensions, points per prompt) at ``step``: Garg et al.'s curriculum grows both by a
    fixed increment every ``every`` steps, up to the task's d and K; without one, the full task."""
    if cfg.curriculum is None:
        return task.d, task.n_points
    stage = step // cfg.curriculum["every"]
    (dims, dims_step), (points, points_step) = cfg.curriculum["dims"], cfg.curriculum["points"]
    return min(task.d, dims + stage * dims_step), min(task.n_points, points + stage * points_step)


def padded_points(cfg: TrainConfig, task: Task, points: int) -> int:
    """The length a stage of ``points`` points is trained at: rounded up to a multiple of ``train.pad_points`` (at
    most the task's K), or ``points`` itself."""
    if cfg.pad_points is None:
        return points
    return min(task.n_points, -(-points // cfg.pad_points) * cfg.pad_points)


def batch_at(cfg: TrainConfig, task: Task, seed: int, step: int, pool: Batch | None) -> Batch:
    """Training batch number ``step``: fresh prompts (with the curriculum's dimensions, cut at the stage's padded
    length: ``padded_points``), or prompts of the finite pretraining set ``pool``."""
    if pool is not None:
        return pretraining_batch(pool, seed, step, cfg.batch_size)
    dims, points = curriculum_stage(cfg, task, step)
    length = task.n_points if cfg.capture else padded_points(cfg, task, points)  # a captured step: one shape
    return train_batch(task, seed, step, cfg.batch_size, active_dims=dims, n_points=length)


@dataclass(frozen=True)
class BatchMaker:
    """Training batch number ``step`` of a model (``batch_at``) or, ``batched``, of each member of a group, stacked:
    a pure function of the step, picklable (``loop.producers`` make batches in processes of their own)."""

    cfg: TrainConfig
    tasks: tuple[Task, ...]
    seeds: tuple[int, ...]
    pools: tuple[Batch | None, ...]
    batched: bool

    def __call__(self, step: int) -> Batch:
        batches = [batch_at(self.cfg, task, seed, step, pool) for task, seed, pool in zip(self.tasks, self.seeds,
                                                                                          self.pools)]
        return stacked_batch(batches) if self.batched else batches[0]


def batch_maker(jobs: list, tasks: list[Task], batched: bool) -> BatchMaker:
    """The batches of ``jobs`` (one model's, or a batched group's), each from its task, seed and pretraining set."""
    cfg = jobs[0].train
    pools = [None if cfg.pretraining_prompts is None else pretraining_set(task, job.seed, cfg.pretraining_prompts)
             for job, task in zip(jobs, tasks)]
    return BatchMaker(cfg, tuple(tasks), tuple(job.seed for job in jobs), tuple(pools), batched)


def loss_points(cfg: TrainConfig, task: Task, step: int, pool: Batch | None) -> int:
    """The points of step ``step``'s prompts that its loss reads: the curriculum stage's (a pretraining set's
    prompts are whole)."""
    return task.n_points if pool is not None else curriculum_stage(cfg, task, step)[1]


def prefetching(setting: str, device: torch.device) -> bool:
    """Whether batches are made ahead in a background thread (``loop.prefetch``: always, never, or ``auto``: where the
    model trains on CUDA, whose steps would wait for each batch; on the CPU the thread only contends for the job's
    cores)."""
    return setting == "always" or (setting == "auto" and device.type == "cuda")


@contextmanager
def matmul_precision(tf32: bool, device: torch.device) -> Iterator[None]:
    """CUDA's float32 matmuls (cuBLAS) and convolutions and RNNs (cuDNN) in TF32 or in full float32 while training
    (``train.tf32``), restored after. The CPU ignores both flags; there ``train.tf32`` is emulated
    (``iclab.fit.tf32``: the factors of the float32 products the card's tensor cores run rounded to TF32)."""
    flags = torch.backends.cuda.matmul, torch.backends.cudnn
    before = [flag.allow_tf32 for flag in flags]
    for flag in flags:
        flag.allow_tf32 = tf32
    try:
        with emulated_tf32() if tf32 and device.type != "cuda" else nullcontext():
            yield
    finally:
        for flag, value in zip(flags, before):
            flag.allow_tf32 = value


CUBLAS_WORKSPACES = (":4096:8", ":16:8")  # cuBLAS's deterministic workspaces (CUDA's reproducibility notes)
DETERMINISM_WORD = "deterministic"  # in torch's warning for an op run without a deterministic kernel


@contextmanager
def deterministic_kernels(device: torch.device, allow_nondeterministic: bool = False) -> Iterator[None]:
    """On CUDA, the same numbers from every run, alone or packed beside others on one card: no cuDNN autotuning
    (``benchmark``, whose choice may depend on what else runs), cuDNN's deterministic algorithms, and torch's
    deterministic implementations, failing on an op that has none. Warn-only mode would not do: under it torch also
    picks SDPA's faster non-deterministic backward (attention gradients that differ from run to run, measured on an
    H200: docs/measurements.md#first-gpu-run). ``allow_nondeterministic`` (``train.allow_nondeterministic``) runs
    such ops anyway and logs each one's warning, naming the op, once.

    cuBLAS reads its workspace setting when it makes its handle, so ``CUBLAS_WORKSPACE_CONFIG`` must be set before the
    process's first CUDA call: ``python -m iclab`` sets it at start; here a missing one is an error. Restored after;
    nothing changes on the CPU, whose kernels are deterministic."""
    if device.type != "cuda":
        yield
        return
    if os.environ.get("CUBLAS_WORKSPACE_CONFIG") not in CUBLAS_WORKSPACES:
        raise UsageError(
            f"CUBLAS_WORKSPACE_CONFIG is {os.environ.get('CUBLAS_WORKSPACE_CONFIG')!r}; deterministic CUDA training "
            f"needs one of {', '.join(CUBLAS_WORKSPACES)}, set before the process's first CUDA call (python -m iclab "
            "sets it at start)")
    cudnn = torch.backends.cudnn
    before = (cudnn.benchmark, cudnn.deterministic, torch.are_deterministic_algorithms_enabled(),
              torch.is_deterministic_algorithms_warn_only_enabled())
    cudnn.benchmark, cudnn.deterministic = False, True
    torch.use_deterministic_algorithms(True, warn_only=allow_nondeterministic)
    try:
        with logged_determinism_warnings() if allow_nondeterministic else nullcontext():
            yield
    finally:
        cudnn.benchmark, cudnn.deterministic = before[:2]
        torch.use_deterministic_algorithms(before[2], warn_only=before[3])


@contextmanager
def logged_determinism_warnings() -> Iterator[None]:
    """Each warning of an op run without a deterministic kernel logged once (its first line names the op); other
    warnings shown, and filtered, as before."""
    logged: set[str] = set()
    with warnings.catch_warnings():
        shown = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None) -> None:
            first = str(message).splitlines()[0]
            if DETERMINISM_WORD not in first.lower():
                shown(message, category, filename, lineno, file, line)
            elif first not in logged:
                logged.add(first)
                log.warning("train.allow_nondeterministic: an op ran without a deterministic kernel: %s", first)

        warnings.showwarning = show
        warnings.filterwarnings("always", message=f".*{DETERMINISM_WORD}")  # each reaches ``show``; logged once
        yield


class CountingInductor:
    """torch.compile's Inductor backend, counting the graphs it is handed: one at the first call, one more at each
    recompile (a new shape that the graphs so far do not cover) or graph break. ``cuda_graphs``: Inductor's
    ``triton.cudagraphs`` (the "reduce-overhead" mode; CUDA tensors only, others run uncaptured)."""

    def __init__(self, cuda_graphs: bool = False) -> None:
        self.graphs = 0
        self.options = {"triton.cudagraphs": True} if cuda_graphs else None

    def __call__(self, graph: torch.fx.GraphModule, example_inputs: list) -> Any:
        self.graphs += 1
        return torch._dynamo.lookup_backend("inductor")(graph, example_inputs, config_patches=self.options)


@contextmanager
def step_model(model: nn.Module, job, backend: CountingInductor | None = None) -> Iterator[nn.Module]:
    """The module the training step calls: ``model``, or (``train.compile``) ``model`` compiled by Inductor
    (``backend``, or a new one), where reaching the recompile limit is an error rather than a silent fall-back to
    eager; its graph count is logged at the end. The weights are ``model``'s either way."""
    if not job.train.compile:
        yield model
        return
    backend = backend or CountingInductor(cuda_graphs=job.train.cuda_graphs)
    with torch._dynamo.config.patch(fail_on_recompile_limit_hit=True):
        yield torch.compile(model, backend=backend)
    log.info("[%s] torch.compile made %d graph(s) of the training step", job.hash, backend.graphs)


def learning_rate(cfg: TrainConfig, step: int) -> float:
    if cfg.schedule == "constant":
        return cfg.lr
    return cfg.lr * 0.5 * (1.0 + math.cos(math.pi * step / cfg.steps))


def make_optimizer(cfg: TrainConfig, params, capturable: bool = False) -> torch.optim.Optimizer:
    """Adam runs fused (one kernel for all parameters; 1.1× a GPT-2 step on CPU, benchmarks/bench_gpt2.py):
    the same update as torch's default Adam up to float round-off; ``capturable`` (a captured step on CUDA) keeps
    its step count and bias corrections on the device."""
    if cfg.optimizer == "adam":
        return torch.optim.Adam(params, lr=cfg.lr, fused=True, capturable=capturable)
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(params, lr=cfg.lr)
    raise ValueError(f"unknown optimizer {cfg.optimizer!r}; allowed: adam, sgd")


def prompt_loss(model: nn.Module, xs: torch.Tensor, ys: torch.Tensor, positions: str,
                points: int | None = None) -> torch.Tensor:
    """Mean squared error at the final query (``last``) or at every position with context (``all``) of prompts xs
    (B, K', d), ys (B, K') whose first ``points`` points are read (all K' unless given): a padded prompt's loss is
    the mean over its real positions, its final query the last real point. The model is causal, so the fill past
    ``points`` changes none of the predictions read."""
    k = xs.shape[1] if points is None else points
    if k == xs.shape[1]:
        if positions == "last":
            return ((model(xs, ys, last_only=True)[:, 0] - ys[:, -1]) ** 2).mean()
        return ((model(xs, ys)[:, 1:] - ys[:, 1:]) ** 2).mean()
    predictions = model(xs, ys)  # (B, K')
    if positions == "last":
        return ((predictions[:, k - 1] - ys[:, k - 1]) ** 2).mean()
    return ((predictions[:, 1:k] - ys[:, 1:k]) ** 2).mean()


def masked_prompt_loss(model: nn.Module, xs: torch.Tensor, ys: torch.Tensor, positions: str,
                       points: torch.Tensor) -> torch.Tensor:
    """``prompt_loss`` of prompts xs (B, K, d), ys (B, K) at their full length whose first ``points`` points are read,
    ``points`` a 0-d integer tensor on the prompts' device: no shape and no host number depends on it, so one
    captured step serves every curriculum stage (issue 100). The fill past ``points`` changes no prediction read
    (the model is causal) and weighs 0: the sliced loss's value and gradients up to round-off, as the two reduce
    over other numbers of terms (benchmarks/results/capture_curriculum.json)."""
    errors = (model(xs, ys) - ys) ** 2  # (B, K)
    if positions == "last":
        return errors.index_select(1, (points - 1).reshape(1)).mean()  # (B, 1) → ()
    position = torch.arange(xs.shape[1], device=xs.device)  # (K,)
    read = (position >= 1) & (position < points)  # (K,): the positions with context, before the fill
    return (errors * read).sum() / (read.sum() * xs.shape[0])


def captured_step(learner, optimizer: torch.optim.Optimizer, cfg: TrainConfig, device: torch.device,
                  record_steps: int) -> CapturedStep:
    """``train.capture``'s step of ``learner``: ``capture.CapturedStep`` with the loss masked to each stage's points
    (``masked_prompt_loss`` at ``cfg.loss_positions``), its losses recorded in ``record_steps`` rows."""
    return CapturedStep(learner, optimizer, cfg, lambda model, xs, ys, read: masked_prompt_loss(
        model, xs, ys, cfg.loss_positions, read), device, record_steps=record_steps)


def check_loss(losses: np.ndarray, cfg: TrainConfig, step: int) -> None:
    """Stop on a non-finite loss at ``step``, or one above ``divergence_factor`` times the mean of the
    first 10 steps' (checked from step 10 on)."""
    loss = losses[step]
    reference = float(np.mean(losses[:10])) if step >= 10 else None
    if not math.isfinite(loss):
        raise TrainingDiverged(
            f"training loss is {loss} at step {step}: lower train.lr (now {cfg.lr}) or set train.grad_clip"
        )
    if reference is not None and loss > cfg.divergence_factor * reference:
        raise TrainingDiverged(
            f"training loss {loss:.4g} at step {step} exceeds {cfg.divergence_factor:g}× its start ({reference:.4g}): "
            f"lower train.lr (now {cfg.lr})"
        )


class LossReader:
    """The losses of the steps since the last read, kept on the device (no host sync per step) and copied into
    ``losses`` (G, steps), one row a model, at a read, where each read step is checked for divergence in order. A model
    trained alone (``alone``) stops at the first read after it diverged, with the message of the first step that
    diverged. In a batched group a diverged member is masked: its record ends at the step that diverged (the rest
    NaN, no longer written) and ``diverged`` keeps its message; it stays in the batch, so that the group size, and
    with it every other member's round-off, is unchanged. Once every member has diverged the run stops."""

    def __init__(self, losses: np.ndarray, cfg: TrainConfig, alone: bool, names: list[str],
                 diverged: dict[int, str] | None = None):
        self.losses, self.cfg, self.alone, self.names = losses, cfg, alone, names
        self.diverged: dict[int, str] = {} if diverged is None else diverged  # member → message
        self.pending: list[torch.Tensor] = []  # (G,) each, on the device
        self.first = 0  # the step of pending[0]

    def add(self, step: int, loss: torch.Tensor) -> None:
        if not self.pending:
            self.first = step
        self.pending.append(loss.detach())

    def read(self) -> None:
        """Copy the pending losses to the host (one sync) and check them."""
        if not self.pending:
            return
        steps = range(self.first, self.first + len(self.pending))
        values = torch.stack(self.pending).to("cpu", torch.float64).numpy()  # (steps read, G)
        self.pending = []
        for g, row in enumerate(self.losses):
            if g not in self.diverged:
                row[steps.start : steps.stop] = values[:, g]
                self.check(g, row, steps)
        if len(self.diverged) == len(self.losses):
            raise TrainingDiverged("every model of the batched group diverged: "
                                   + "; ".join(f"[{self.names[g]}] {message}" for g, message in self.diverged.items()))

    def check(self, g: int, row: np.ndarray, steps: range) -> None:
        for step in steps:
            try:
                check_loss(row, self.cfg, step)
            except TrainingDiverged as err:
                if self.alone:
                    raise
                row[step + 1 :] = np.nan
                self.diverged[g] = str(err)
                log.error("[%s] diverged, masked in its batched group from step %d on: %s", self.names[g], step, err)
                return


@dataclass
class Snapshots:
    """Parameters at chosen steps: ``steps`` (S,) and, per parameter, a list of S arrays."""

    steps: list[int]
    params: dict[str, list[np.ndarray]]

    def take(self, step: int, state: dict[str, torch.Tensor]) -> None:
        """Keep ``state`` (a model's ``state_dict``) as the parameters after ``step`` steps."""
        self.steps.append(step)
        for name, tensor in state.items():
            self.params.setdefault(name, []).append(tensor.detach().cpu().numpy().copy())


def due(every: int | None, step: int, total: int) -> bool:
    """Snapshot after ``step`` steps? At 0, every ``every`` steps, and at the end."""
    return every is not None and (step % every == 0 or step == total)


class Alone:
    """One model trained by itself, the learner of the loop for one job: ``module`` is the model, ``forward`` it or
    its compiled form. (A batched group's learner is ``iclab.fit.batched.Batched``, with the same methods.)"""

    def __init__(self, model: nn.Module, forward: nn.Module | None = None):
        self.module, self.forward = model, model if forward is None else forward

    def member_losses(self, loss, xs: torch.Tensor, ys: torch.Tensor) -> torch.Tensor:
        """``loss(model, xs, ys)`` of prompts xs (B, K, d), ys (B, K) as a (1,) tensor."""
        return loss(self.forward, xs, ys)[None]

    def clip(self, max_norm: float) -> None:
        nn.utils.clip_grad_norm_(self.module.parameters(), max_norm)

    def member_state_dicts(self) -> list[dict[str, torch.Tensor]]:
        return [self.module.state_dict()]


def checkpoint_state(name: str, step: int, learner, optimizer: torch.optim.Optimizer, losses: np.ndarray,
                     snapshots: list[Snapshots], diverged: dict[int, str]) -> dict[str, Any]:
    """What a resumed run of ``name`` (a job's hash, or a group's) needs after ``step`` steps: weights (a group's
    stacked), optimizer and RNG state, losses (G, steps), each model's snapshots, a group's diverged members."""
    return {
        "job_hash": name,
        "step": step,
        "model": learner.module.state_dict(),
        "optimizer": optimizer.state_dict(),
        "torch_rng": torch.get_rng_state(),
        "losses": losses.copy(),
        "snapshots": [asdict(s) for s in snapshots],
        "diverged": {str(g): message for g, message in diverged.items()},
    }


def learner_step(learner, optimizer: torch.optim.Optimizer, cfg: TrainConfig,
                 prompts: tuple[torch.Tensor, torch.Tensor], points: int, lr: float) -> torch.Tensor:
    """One gradient step of ``learner`` (``Alone``, or a group's ``Batched``) at learning rate ``lr`` on prompts
    xs (B, K', d), ys (B, K') (a group's: (G, B, K', d), (G, B, K'), each member's own) whose first ``points`` points
    the loss reads: each model's loss (G,), left on the device. The backward pass runs on the members' summed loss,
    whose gradient for each member is its own loss's; each clips by its own gradient norm."""
    xs, ys = prompts
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.zero_grad(set_to_none=True)
    if cfg.cuda_graphs:
        torch.compiler.cudagraph_mark_step_begin()  # the last step's graph outputs may be overwritten
    with torch.autocast(xs.device.type, dtype=torch.bfloat16, enabled=cfg.precision == "bfloat16"):
        losses = learner.member_losses(lambda model, x, y: prompt_loss(model, x, y, cfg.loss_positions, points), xs, ys)
    losses.sum().backward()
    if cfg.grad_clip is not None:
        learner.clip(cfg.grad_clip)
    optimizer.step()
    return losses


def train_step(forward: nn.Module, model: nn.Module, optimizer: torch.optim.Optimizer, cfg: TrainConfig,
               prompts: tuple[torch.Tensor, torch.Tensor], points: int, lr: float) -> torch.Tensor:
    """One gradient step of ``model`` (called as ``forward``: itself or compiled) at learning rate ``lr`` on prompts
    xs (B, K', d), ys (B, K') whose first ``points`` points the loss reads: the loss, left on the device."""
    return learner_step(Alone(model, forward), optimizer, cfg, prompts, points, lr)[0]


def train(
    job,
    *,
    checkpoint: Path | None = None,
    checkpoint_every: int = 500,
    log_every: int = 100,
    prefetch: str = "auto",
    producers: int = 0,
) -> tuple[nn.Module, np.ndarray, Snapshots]:
    """Train ``job`` (an ``iclab.store.jobs.TrainJob``; resuming from ``checkpoint`` if it holds this job's state), with
    batches made ahead where ``prefetching(prefetch, device)``, there by ``producers`` processes if more than 0.

    Returns the model, the loss of every step (steps,) and the parameter snapshots (empty unless
    ``train.snapshot_every`` is set).
    """
    if job.train.batched:
        raise UsageError(f"[{job.hash}] train.batched: true names a model trained in a batched group; train it with "
                         "its group (train_group, or `iclab train` with every member's spec), not alone")
    models, losses, snapshots, _ = train_models([job], batched=False, checkpoint=checkpoint,
                                                checkpoint_every=checkpoint_every, log_every=log_every,
                                                prefetch=prefetch, producers=producers)
    return models[0], losses[0], snapshots[0]


def train_group(jobs: list, *, checkpoint: Path | None = None, checkpoint_every: int = 500, log_every: int = 100,
                prefetch: str = "auto", producers: int = 0
                ) -> tuple[list[nn.Module], np.ndarray, list[Snapshots], dict[int, str]]:
    """Train ``jobs`` (``TrainJob``s of one architecture, task shape and training config:
    ``batched.check_group``) as one batched model, in the loop that trains one (its checkpoints, now of the whole
    group in one file, divergence checks and progress lines, one per model).

    Returns each model (its own weights, as trained alone would leave them), the loss of every step (G, steps), each
    model's snapshots, and the members that diverged (their index → message), whose records end there.

    A group of one trains beside a copy of itself, which is then dropped: every member trains at G ≥ 2, where (on
    the CPUs measured) its numbers do not depend on G, its slot or its companions; at G = 1 they round otherwise
    (docs/measurements.md#batched-gpt-2s). So a member has one result whichever group trains it (``plan``'s names)."""
    check_group(jobs)
    members = list(jobs) if len(jobs) > 1 else [jobs[0], jobs[0]]
    models, losses, snapshots, diverged = train_models(
        members, batched=True, checkpoint=checkpoint, checkpoint_every=checkpoint_every, log_every=log_every,
        prefetch=prefetch, producers=producers)
    kept = len(jobs)
    return models[:kept], losses[:kept], snapshots[:kept], {g: m for g, m in diverged.items() if g < kept}


def seeded_model(job, task: Task, device: torch.device) -> nn.Module:
    """``job``'s model as its seed initialises it."""
    torch.manual_seed(job.seed)
    return build_model(job.model, task.d).to(device)


def seeded_learner(jobs: list, tasks: list[Task], device: torch.device, batched: bool
                   ) -> tuple[list[nn.Module], Alone | Batched]:
    """The jobs' models as their seeds initialise them, and the learner that trains them: the one model alone, or
    (``batched``) all as one ``ModelGroup``. A group's members are built on the CPU (initialised as alone, where
    they are built too) and only their stack moves to the device; they take the trained weights at the end."""
    models = [seeded_model(job, task, torch.device("cpu") if batched else device) for job, task in zip(jobs, tasks)]
    return models, Batched(ModelGroup(models).to(device)) if batched else Alone(models[0])


def train_models(jobs: list, *, batched: bool, checkpoint: Path | None, checkpoint_every: int, log_every: int,
                 prefetch: str, producers: int) -> tuple[list[nn.Module], np.ndarray, list[Snapshots], dict[int, str]]:
    """The loop: one job's model alone, or (``batched``) the jobs' models as one ``ModelGroup``."""
    cfg, tasks = jobs[0].train, [task_from_dict(job.task) for job in jobs]
    device = default_device()
    if cfg.tf32 and cfg.compile and device.type != "cuda":
        raise UsageError("train.tf32 with train.compile on the CPU: TF32 is emulated there op by op (iclab.fit.tf32), "
                         "which a compiled step would bypass; set train.compile or train.tf32 to false")
    models, learner = seeded_learner(jobs, tasks, device, batched)
    name, names = group_hash(jobs) if batched else jobs[0].hash, [job.hash for job in jobs]
    warn_slow_bf16(name, cfg, device)
    optimizer = make_optimizer(cfg, learner.module.parameters(), capturable=cfg.capture and graphs_on(device))
    losses = np.full((len(jobs), cfg.steps), np.nan)  # (G, steps)
    snapshots, diverged, start = [Snapshots(steps=[], params={}) for _ in jobs], {}, 0
    state = load_checkpoint(checkpoint, name)
    if state is not None:
        learner.module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        torch.set_rng_state(state["torch_rng"])
        start = state["step"]
        losses[:, :start] = np.atleast_2d(state["losses"])[:, :start]  # (steps,): one model's, written before groups
        saved = state["snapshots"]
        snapshots = [Snapshots(**s) for s in ([saved] if isinstance(saved, dict) else saved)]
        diverged = {int(g): message for g, message in state.get("diverged", {}).items()}
        log.info("[%s] resuming from checkpoint %s at step %d/%d", name, checkpoint, start, cfg.steps)
    elif due(cfg.snapshot_every, 0, cfg.steps):
        for member, member_state in zip(snapshots, learner.member_state_dicts()):
            member.take(0, member_state)
    progress = [Progress(job.hash, cfg.steps, start=start, every=log_every, unit="steps") for job in jobs]
    reader = LossReader(losses, cfg, alone=not batched, names=names, diverged=diverged)
    make = batch_maker(jobs, tasks, batched)
    ahead = prefetching(prefetch, device)
    feed = BatchFeed(make, start, cfg.steps, device, ahead, producers if ahead else 0)
    with (deterministic_kernels(device, cfg.allow_nondeterministic), matmul_precision(cfg.tf32, device), feed,
          step_model(models[0], jobs[0]) as forward):  # a group's compile is refused: forward is models[0]
        if not batched:
            learner.forward = forward
        captured = captured_step(learner, optimizer, cfg, device, log_every) if cfg.capture else None
        for step, (xs, ys) in zip(range(start, cfg.steps), feed):  # (B, K, d), (B, K); a group's (G, B, K, d), …
            lr = learning_rate(cfg, step)
            points = loss_points(cfg, tasks[0], step, make.pools[0])
            if captured is None:
                losses_now = learner_step(learner, optimizer, cfg, (xs, ys), points, lr)  # (G,)
            else:
                losses_now = captured(xs, ys, points)  # (G,): at cfg.lr, the constant schedule's
            reader.add(step, losses_now)
            checkpoint_due = checkpoint is not None and (step + 1) % checkpoint_every == 0 and step + 1 < cfg.steps
            if progress[0].due(step + 1) or checkpoint_due:
                reader.read()
                for g, member in enumerate(progress):
                    if g not in reader.diverged:
                        member.update(step + 1, suffix=f"loss {losses[g, step]:.4g} lr {lr:.3g}")
            if due(cfg.snapshot_every, step + 1, cfg.steps):
                for g, member_state in enumerate(learner.member_state_dicts()):
                    if g not in reader.diverged:
                        snapshots[g].take(step + 1, member_state)
            if checkpoint_due:
                save_checkpoint(checkpoint, checkpoint_state(name, step + 1, learner, optimizer, losses, snapshots,
                                                             reader.diverged))
    trained = learner.unstacked(models) if batched else models
    return trained, losses, snapshots, reader.diverged


def warn_slow_bf16(name: str, cfg: TrainConfig, device: torch.device) -> None:
    """A warning where bf16 autocast trains on a CPU without oneDNN's bf16 (AVX2): torch's bf16 matmuls fall back
    to slow kernels there, and the LSTM runs decomposed (``models.lstm.recurrent_precision``)."""
    if cfg.precision == "bfloat16" and device.type == "cpu" and not onednn_bf16():
        log.warning("[%s] train.precision bfloat16 on a CPU without oneDNN's bfloat16 (torch CPU capability %s): "
                    "its bfloat16 matmuls run slow fallback kernels (the LSTM's steps, far slower than float32: "
                    "benchmarks/results/bf16_lstm_paths.json); train.precision float32 is likely faster here", name,
                    torch.backends.cpu.get_cpu_capability())


def fit(job, *, checkpoint: Path | None = None, checkpoint_every: int = 500, log_every: int = 100,
        prefetch: str = "auto", producers: int = 0):
    """The fitter of models trained by gradient steps: the model, and its loss curve (step) with the
    parameter snapshots along a ``snapshot`` dimension (coordinate: steps taken) for the model cube."""
    model, losses, snapshots = train(job, checkpoint=checkpoint, checkpoint_every=checkpoint_every, log_every=log_every,
                                     prefetch=prefetch, producers=producers)
    log.info("[%s] final loss %.4g", job.hash, losses[-1])
    return model, training_record(losses, snapshots)


def fit_group(jobs: list, *, checkpoint: Path | None = None, checkpoint_every: int = 500, log_every: int = 100,
              prefetch: str = "auto", producers: int = 0) -> tuple[list[tuple[nn.Module, xr.Dataset]], dict[int, str]]:
    """``fit`` for a batched group (``train_group``): each model with its record, and the members that diverged."""
    models, losses, snapshots, diverged = train_group(jobs, checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                                                      log_every=log_every, prefetch=prefetch, producers=producers)
    for g, job in enumerate(jobs):
        if g not in diverged:
            log.info("[%s] final loss %.4g", job.hash, losses[g, -1])
    return [(model, training_record(losses[g], snapshots[g])) for g, model in enumerate(models)], diverged


def training_record(losses: np.ndarray, snapshots: Snapshots) -> xr.Dataset:
    data: dict[str, Any] = {"loss": (("step",), losses)}
    coords = {"step": np.arange(1, len(losses) + 1)}
    if snapshots.steps:
        for name, values in snapshots.params.items():
            data[SNAPSHOT_PREFIX + name] = (("snapshot", *param_dims(name, values[0].ndim)), np.stack(values))
        coords["snapshot"] = np.asarray(snapshots.steps)
    return xr.Dataset(data, coords=coords)
