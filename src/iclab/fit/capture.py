"""The training step in a form one CUDA graph can capture (issue 100, ``train.capture``): static input buffers the
feed's batches are copied into, the loss masked by a length held on the device (``sgd.masked_prompt_loss``: one
graph serves every curriculum stage, the prompts always at their full length), gradients kept allocated, fused
Adam with ``capturable`` on CUDA, autocast's weight-cast cache off.

On CUDA, ``CapturedStep`` runs its first ``WARMUP`` steps eagerly on a side stream (the real steps 0 … WARMUP − 1 of
the run, or of a resumed run from its checkpoint, in order), then captures one step with ``torch.cuda.graph`` and
replays it for every later step: the same kernels, so the same numbers (not yet run on a GPU). On the CPU the same
step runs uncaptured. Reading every position (``loss_positions: all``), it trains to the weights of the uncaptured
loop with ``pad_points`` at the task's length bit for bit: the masked loss's gradients are the sliced loss's
exactly. Reading the last, the two agree to round-off: the uncaptured loop reads a full-length prompt's final token
alone (``last_only``), the captured one picks it from every prediction (``tests/test_train.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import torch

from iclab.fit.configs import TrainConfig

log = logging.getLogger("iclab.fit.capture")

WARMUP = 3  # eager steps before the capture (CUDA): the allocator and cuBLAS's workspaces settle


def graphs_on(device: torch.device) -> bool:
    """Whether a captured step on ``device`` is captured and replayed as a CUDA graph (CUDA), or runs eagerly."""
    return device.type == "cuda"


class CapturedStep:
    """One gradient step of ``learner`` (``sgd.Alone`` or a group's ``Batched``) on static buffers:
    ``step(xs, ys, points)`` copies the prompts xs (B, K, d), ys (B, K) (a group's (G, B, K, d), (G, B, K)) in, sets
    the read length ``points`` and runs the step, eagerly or as the captured graph, and returns each model's loss
    (G,): a row of a device buffer of ``record_steps`` rows, written in turn (the loop reads its losses at least every
    ``progress.log_every`` steps, so no row is overwritten before it is read, and no tensor is allocated a step). The
    learning rate is the optimizer's own, ``cfg.lr``, every step: a captured step needs a constant schedule
    (refused otherwise), and the graph holds it."""

    def __init__(self, learner, optimizer: torch.optim.Optimizer, cfg: TrainConfig,
                 loss: Callable[[torch.nn.Module, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor],
                 device: torch.device, *, record_steps: int):
        if cfg.schedule != "constant":
            raise ValueError(f"train.capture with train.schedule {cfg.schedule!r}: a captured step holds one "
                             "learning rate (allowed: constant)")
        self.learner, self.optimizer, self.cfg, self.loss, self.device = learner, optimizer, cfg, loss, device
        self.record_steps, self.record, self.calls = record_steps, None, 0
        self.xs = self.ys = None
        self.points = torch.zeros((), dtype=torch.long, device=device)
        self.losses: torch.Tensor | None = None
        self.graph: torch.cuda.CUDAGraph | None = None
        self.eager_steps = 0
        self.graphs = graphs_on(device)  # captured and replayed; else every step eager
        self.fallback: str | None = None  # why the step runs eagerly on CUDA, where a capture failed

    def __call__(self, xs: torch.Tensor, ys: torch.Tensor, points: int) -> torch.Tensor:
        if self.xs is None:
            self.xs, self.ys = torch.empty_like(xs), torch.empty_like(ys)
        self.xs.copy_(xs)
        self.ys.copy_(ys)
        self.points.fill_(points)
        if not self.graphs:
            return self.recorded(self.run())
        if self.graph is None and self.fallback is None and self.eager_steps >= WARMUP:
            self.capture()
        if self.graph is None:
            self.eager_steps += 1
            return self.recorded(self.on_side_stream())
        self.graph.replay()
        return self.recorded(self.losses)

    def recorded(self, losses: torch.Tensor) -> torch.Tensor:
        """``losses`` (G,) copied into the next row of the record (allocated at the first step)."""
        if self.record is None:
            self.record = torch.empty((self.record_steps, *losses.shape), dtype=losses.dtype, device=self.device)
        row = self.record[self.calls % self.record_steps]
        row.copy_(losses.detach())
        self.calls += 1
        return row

    def run(self) -> torch.Tensor:
        """The step itself: each model's masked loss (G,), the backward pass of their sum into gradients that stay
        allocated, each clipped by its own norm, then the optimizer's update."""
        for parameter in self.learner.module.parameters():
            if parameter.grad is not None:
                parameter.grad.zero_()
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.cfg.precision == "bfloat16",
                            cache_enabled=False):
            losses = self.learner.member_losses(lambda model, x, y: self.loss(model, x, y, self.points),
                                                self.xs, self.ys)  # (G,)
        losses.sum().backward()
        if self.cfg.grad_clip is not None:
            self.learner.clip(self.cfg.grad_clip)
        self.optimizer.step()
        return losses

    def on_side_stream(self) -> torch.Tensor:
        """An eager step on a side stream, as a capture needs its warm-up steps."""
        side = torch.cuda.Stream(self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            losses = self.run()
        torch.cuda.current_stream(self.device).wait_stream(side)
        return losses

    def capture(self) -> None:
        """The step recorded once as a CUDA graph over the static buffers (its losses a static output); where torch
        cannot capture it (an op that syncs, cuDNN's LSTM), the step stays eager, the same kernels, named in the log
        and in ``fallback``. Nothing runs during a capture, so the weights are as the eager steps left them."""
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph):
                self.losses = self.run()
        except RuntimeError as error:
            self.fallback = f"eager: the capture failed ({str(error).splitlines()[0]})"
            log.warning("train.capture: %s", self.fallback)
            return
        self.graph = graph
