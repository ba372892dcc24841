"""One training loop for every model: fresh batches that are pure functions of (seed, step),
Adam or SGD, checkpoints with optimizer and RNG state, resume, divergence checks, progress lines.

A trained model is stored as a cube: its loss curve and every parameter tensor.
"""

from __future__ import annotations

import logging
import math
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import xarray as xr
from torch import nn

from iclab.cubes import cube_spec, read_cube, write_cube
from iclab.hashing import spec_hash
from iclab.models import build_model, default_device
from iclab.tasks import LinearTask, task_from_dict, train_batch

log = logging.getLogger("iclab.train")

MODEL_KIND = "trained_model"
PARAM_PREFIX = "param__"
SNAPSHOT_PREFIX = "snapshot__"


class TrainingDiverged(RuntimeError):
    """The training loss became non-finite or grew far above its starting value."""


@dataclass(frozen=True)
class TrainConfig:
    steps: int
    batch_size: int
    lr: float
    optimizer: str = "adam"  # adam | sgd
    schedule: str = "cosine"  # constant | cosine (to 0 at the last step)
    loss_positions: str = "last"  # last: the final query only | all: every position with context
    grad_clip: float | None = None
    divergence_factor: float = 1e4  # loss above this multiple of its start counts as divergence
    snapshot_every: int | None = None  # keep every parameter each this many steps (and at 0 and the end)
    curriculum: dict[str, Any] | None = (
        None  # Garg et al.: {"dims": [start, step], "points": [start, step], "every": n}
    )


# Fields added after the first models were trained are left out of specs at their default,
# so adding them renamed no existing job.
LATER_FIELDS = {"snapshot_every": None, "curriculum": None}


def train_config(model: dict[str, Any], fields: dict[str, Any]):
    """The training config of a model spec: TwoStageConfig for the two-stage model, else TrainConfig."""
    if model["name"] == "two_stage":
        from iclab.two_stage import TwoStageConfig

        return TwoStageConfig(**fields)
    return TrainConfig(**fields)


def train_fields(cfg: TrainConfig) -> dict[str, Any]:
    fields = asdict(cfg)
    return {k: v for k, v in fields.items() if not (k in LATER_FIELDS and v == LATER_FIELDS[k])}


@dataclass(frozen=True)
class TrainJob:
    """Everything that determines a trained model; its hash names the model."""

    model: dict[str, Any]
    task: dict[str, Any]
    train: Any  # TrainConfig, or two_stage.TwoStageConfig for the two-stage model
    seed: int

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "task": self.task, "train": train_fields(self.train), "seed": self.seed}

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> "TrainJob":
        return cls(
            model=spec["model"], task=spec["task"], train=train_config(spec["model"], spec["train"]), seed=spec["seed"]
        )

    @property
    def fitted_in_closed_form(self) -> bool:
        """The two-stage model is fitted by its own algorithm (iclab.two_stage), not by SGD."""
        return self.model["name"] == "two_stage"

    @property
    def hash(self) -> str:
        return spec_hash(self.to_dict())


def curriculum_stage(cfg: TrainConfig, task: LinearTask, step: int) -> tuple[int, int]:
    """(active dimensions, points per prompt) at ``step``: Garg et al.'s curriculum grows both by a
    fixed increment every ``every`` steps, up to the task's d and K; without one, the full task."""
    if cfg.curriculum is None:
        return task.d, task.n_points
    stage = step // cfg.curriculum["every"]
    (dims, dims_step), (points, points_step) = cfg.curriculum["dims"], cfg.curriculum["points"]
    return min(task.d, dims + stage * dims_step), min(task.n_points, points + stage * points_step)


def learning_rate(cfg: TrainConfig, step: int) -> float:
    if cfg.schedule == "constant":
        return cfg.lr
    return cfg.lr * 0.5 * (1.0 + math.cos(math.pi * step / cfg.steps))


def make_optimizer(cfg: TrainConfig, params) -> torch.optim.Optimizer:
    if cfg.optimizer == "adam":
        return torch.optim.Adam(params, lr=cfg.lr)
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(params, lr=cfg.lr)
    raise ValueError(f"unknown optimizer {cfg.optimizer!r}; allowed: adam, sgd")


def prompt_loss(model: nn.Module, xs: torch.Tensor, ys: torch.Tensor, positions: str) -> torch.Tensor:
    """Mean squared error at the final query (``last``) or at every position with context (``all``)."""
    if positions == "last":
        return ((model(xs, ys, last_only=True)[:, 0] - ys[:, -1]) ** 2).mean()
    return ((model(xs, ys)[:, 1:] - ys[:, 1:]) ** 2).mean()


def save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    """``torch.save`` to a temporary file, then rename: a crash never leaves half a checkpoint."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)


def load_checkpoint(path: Path | None, job_hash: str) -> dict[str, Any] | None:
    if path is None or not path.is_file():
        return None
    state = torch.load(path, weights_only=False, map_location="cpu")  # load_state_dict moves to the device
    if state.get("job_hash") != job_hash:
        log.warning("ignoring checkpoint %s: it belongs to job %s, not %s", path, state.get("job_hash"), job_hash)
        return None
    return state


class Progress:
    """A progress line every ``every`` steps: step, loss, learning rate, speed, time left."""

    def __init__(self, name: str, total: int, start: int, every: int):
        self.name, self.total, self.start, self.every = name, total, start, every
        self.t0 = time.perf_counter()

    def update(self, step: int, loss: float, lr: float) -> None:
        done = step + 1
        if done % self.every and done != self.total:
            return
        rate = (done - self.start) / max(time.perf_counter() - self.t0, 1e-9)
        eta = (self.total - done) / max(rate, 1e-9)
        log.info(
            "[%s] step %d/%d (%3.0f%%) loss %.4g lr %.3g %.1f steps/s eta %.0fs",
            self.name,
            done,
            self.total,
            100 * done / self.total,
            loss,
            lr,
            rate,
            eta,
        )


def check_loss(loss: float, reference: float | None, cfg: TrainConfig, step: int) -> None:
    if not math.isfinite(loss):
        raise TrainingDiverged(
            f"training loss is {loss} at step {step}: lower train.lr (now {cfg.lr}) or set train.grad_clip"
        )
    if reference is not None and loss > cfg.divergence_factor * reference:
        raise TrainingDiverged(
            f"training loss {loss:.4g} at step {step} exceeds {cfg.divergence_factor:g}× its start ({reference:.4g}): "
            f"lower train.lr (now {cfg.lr})"
        )


@dataclass
class Snapshots:
    """Parameters at chosen steps: ``steps`` (S,) and, per parameter, a list of S arrays."""

    steps: list[int]
    params: dict[str, list[np.ndarray]]

    def take(self, step: int, model: nn.Module) -> None:
        self.steps.append(step)
        for name, tensor in model.state_dict().items():
            self.params.setdefault(name, []).append(tensor.detach().cpu().numpy().copy())


def due(every: int | None, step: int, total: int) -> bool:
    """Snapshot after ``step`` steps? At 0, every ``every`` steps, and at the end."""
    return every is not None and (step % every == 0 or step == total)


def train(
    job: TrainJob,
    *,
    checkpoint: Path | None = None,
    checkpoint_every: int = 500,
    log_every: int = 100,
) -> tuple[nn.Module, np.ndarray, Snapshots]:
    """Train ``job`` (resuming from ``checkpoint`` if it holds this job's state).

    Returns the model, the loss of every step (steps,) and the parameter snapshots (empty unless
    ``train.snapshot_every`` is set).
    """
    cfg, task = job.train, task_from_dict(job.task)
    torch.manual_seed(job.seed)
    device = default_device()
    model = build_model(job.model, task.d).to(device)
    optimizer = make_optimizer(cfg, model.parameters())
    losses = np.full(cfg.steps, np.nan)
    snapshots = Snapshots(steps=[], params={})
    start = 0
    state = load_checkpoint(checkpoint, job.hash)
    if state is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        torch.set_rng_state(state["torch_rng"])
        start = state["step"]
        losses[:start] = state["losses"][:start]
        snapshots = state["snapshots"]
        log.info("[%s] resuming from checkpoint %s at step %d/%d", job.hash, checkpoint, start, cfg.steps)
    elif due(cfg.snapshot_every, 0, cfg.steps):
        snapshots.take(0, model)
    progress = Progress(job.hash, cfg.steps, start, log_every)
    for step in range(start, cfg.steps):
        dims, points = curriculum_stage(cfg, task, step)
        batch = train_batch(task, job.seed, step, cfg.batch_size, active_dims=dims, n_points=points)
        xs, ys = torch.from_numpy(batch.xs).to(device), torch.from_numpy(batch.ys).to(device)  # (B, K, d), (B, K)
        lr = learning_rate(cfg, step)
        for group in optimizer.param_groups:
            group["lr"] = lr
        optimizer.zero_grad(set_to_none=True)
        loss = prompt_loss(model, xs, ys, cfg.loss_positions)
        loss.backward()
        if cfg.grad_clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        optimizer.step()
        losses[step] = loss.item()
        reference = float(np.mean(losses[: min(10, step + 1)])) if step >= 10 else None
        check_loss(losses[step], reference, cfg, step)
        progress.update(step, losses[step], lr)
        if due(cfg.snapshot_every, step + 1, cfg.steps):
            snapshots.take(step + 1, model)
        if checkpoint is not None and ((step + 1) % checkpoint_every == 0) and step + 1 < cfg.steps:
            save_checkpoint(
                checkpoint,
                {
                    "job_hash": job.hash,
                    "step": step + 1,
                    "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "torch_rng": torch.get_rng_state(),
                    "losses": losses.copy(),
                    "snapshots": snapshots,
                },
            )
    return model, losses, snapshots


def model_dataset(model: nn.Module, losses: np.ndarray, snapshots: Snapshots) -> xr.Dataset:
    """The loss curve (step), every parameter tensor with its own dimensions, and the snapshots
    of each parameter along a ``snapshot`` dimension (coordinate: steps taken)."""
    data: dict[str, Any] = {"loss": (("step",), losses)}
    for name, tensor in model.state_dict().items():
        array = tensor.detach().cpu().numpy()
        dims = tuple(f"{name}_dim{i}" for i in range(array.ndim))
        data[PARAM_PREFIX + name] = (dims, array)
        if snapshots.steps:
            data[SNAPSHOT_PREFIX + name] = (("snapshot", *dims), np.stack(snapshots.params[name]))
    coords = {"step": np.arange(1, len(losses) + 1)}
    if snapshots.steps:
        coords["snapshot"] = np.asarray(snapshots.steps)
    return xr.Dataset(data, coords=coords)


def save_trained(path: Path, job: TrainJob, model: nn.Module, losses: np.ndarray, snapshots: Snapshots) -> None:
    write_cube(model_dataset(model, losses, snapshots), path, kind=MODEL_KIND, spec=job.to_dict(), seed=job.seed)


def save_fitted(path: Path, job: TrainJob, model: nn.Module, diagnostics: xr.Dataset) -> None:
    """A model fitted by its own algorithm: its parameters and the algorithm's diagnostics."""
    params = model_dataset(model, np.zeros(0), Snapshots(steps=[], params={})).drop_vars("loss")
    write_cube(xr.merge([params, diagnostics]), path, kind=MODEL_KIND, spec=job.to_dict(), seed=job.seed)


def load_trained(path: Path) -> tuple[nn.Module, TrainJob, xr.Dataset]:
    """Rebuild a trained model from its cube; also return the cube (loss curve, snapshots)."""
    ds = read_cube(path, kind=MODEL_KIND)
    job = TrainJob.from_dict(cube_spec(ds))
    model = build_model(job.model, task_from_dict(job.task).d)
    state = {
        name[len(PARAM_PREFIX) :]: torch.as_tensor(ds[name].values)
        for name in ds.data_vars
        if name.startswith(PARAM_PREFIX)
    }
    model.load_state_dict(state)
    return model.eval(), job, ds
