"""G models of one architecture trained as one batched model (a group), their parameters stacked along a leading
model dimension (issue 98). Each step is one forward and backward pass for all G. Where every op has a batching
rule, its kernels do not grow with G: about twice one model's, flat from G = 1 to 16 (``benchmarks/batched_ops.py``,
on the CPU).

The batching is ``torch.func.vmap`` over ``torch.func.functional_call`` of one weightless template of the model:
every member runs the model's own code (GPT-2's prompt formats, its last block read at the prediction tokens, its
float32 read-out), so a group of one computes what the model computes, and no second copy of a forward pass exists
to drift from it. vmap batches an op where torch has a batching rule for it: the linear layers, LayerNorm, eager
attention, and on CUDA the flash, memory-efficient and cuDNN attention kernels (``BatchRulesLinearAlgebra.cpp``);
it loops over the members where there is none, as for the CPU's SDPA kernel (measured in
``benchmarks/results/batched_ops.json``). Not yet run on a GPU.

What stays each member's own:
- its initialisation (its seed's, as alone) and its batches, a function of (its seed, step);
- its loss (``member_losses``: one per member, summed for the backward pass, whose gradient for each member is its
  own loss's), its record, snapshots and progress lines (under its own hash);
- Adam's update: elementwise, so one fused Adam over the stacked parameters is G Adams: bit for bit where a member's
  tensor fills the CPU kernel's vector lanes, within an ulp where a scalar tail rounds otherwise;
- gradient clipping, by each member's own norm (``clip_members``): a norm over the stack would couple them;
- its divergence. A diverged member stays in the batch, masked: its record ends at the step that diverged, and it
  computes on, unread. The group size, and with it every other member's round-off, is unchanged: the others' numbers
  are bit for bit those of the undisturbed group. The job writes the other members (into the checkpoint folder, as a
  finished member waits there), then stops with the diverged one's message. A rerun finds them written and trains
  the diverged member from step 0 as a group of one, whose round-off differs from a group of two or more (measured:
  docs/measurements.md#batched-gpt-2s); it diverges again unless its spec changes, as a model alone would. Once
  every member has diverged, the run stops at the read that finds it.
A group's checkpoint is one file (``<group hash>.pt``, ``group_hash``: the hash of its members' hashes), written
atomically, so that a kill never leaves its members at different steps. Batched round-off is not bit for bit that of
a model trained alone: the group size changes the kernels' blocking.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Callable

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from iclab.errors import UsageError
from iclab.fit.configs import BATCHABLE_MODELS
from iclab.hashing import spec_hash
from iclab.tasks import Batch, task_from_dict


SEPARATOR = "/"  # replaces the dots of a member's parameter names in the group's (ParameterDict keys have no dots)


class ModelGroup(nn.Module):
    """G models of one architecture as one module: ``stacked`` holds each parameter as (G, …), member g's at index
    g; ``template`` is the architecture without weights (on the meta device), called with a member's parameters.
    Models with buffers are refused (no batchable model has one: ``BATCHABLE_MODELS``)."""

    def __init__(self, models: Sequence[nn.Module]):
        super().__init__()
        check_same_architecture(models)
        params, buffers = stack_module_state(list(models))  # (G, …) each, detached copies
        if buffers:
            raise ValueError(f"a model group stacks parameters only; these models have buffers: {sorted(buffers)}")
        self.stacked = nn.ParameterDict({name.replace(".", SEPARATOR): nn.Parameter(p) for name, p in params.items()})
        self.size = len(models)
        object.__setattr__(self, "template", copy.deepcopy(models[0]).to("meta"))  # not a submodule: no weights

    def member_tensors(self) -> dict[str, torch.Tensor]:
        """Every parameter by the model's own name, stacked (G, …)."""
        return {name.replace(SEPARATOR, "."): p for name, p in self.stacked.items()}

    def member_state_dicts(self) -> list[dict[str, torch.Tensor]]:
        """Each member's ``state_dict`` as the model alone would have it (names and shapes), detached."""
        tensors = self.member_tensors()
        order = list(self.template.state_dict())
        return [{name: tensors[name][g].detach() for name in order} for g in range(self.size)]


def check_same_architecture(models: Sequence[nn.Module]) -> None:
    """Models stack only with the same parameter names, shapes and dtypes and the same class."""
    if not models:
        raise ValueError("a model group needs at least one model")
    first = models[0].state_dict()
    for g, model in enumerate(models[1:], start=1):
        state = model.state_dict()
        if type(model) is not type(models[0]) or {k: (v.shape, v.dtype) for k, v in state.items()} != {
                k: (v.shape, v.dtype) for k, v in first.items()}:
            raise ValueError(f"model {g} of the group differs from model 0 in class or parameters: a group stacks "
                             "models of one architecture")


def member_losses(group: ModelGroup, xs: torch.Tensor, ys: torch.Tensor, loss) -> torch.Tensor:
    """Each member's training loss on its own prompts: ``loss(model, xs, ys)`` (a scalar for one model, called with
    the model as a function of (xs, ys, last_only)) for every member, xs (G, B, K, d), ys (G, B, K) → (G,)."""

    def one(tensors, x, y):
        def model(xs_, ys_, last_only=False):
            return functional_call(group.template, tensors, (xs_, ys_), {"last_only": last_only})

        return loss(model, x, y)

    return vmap(one)(group.member_tensors(), xs, ys)


def member_grad_norms(group: ModelGroup) -> torch.Tensor:
    """Each member's gradient norm over all its parameters, as ``clip_grad_norm_`` computes it alone: (G,)."""
    per_param = [p.grad.flatten(1).norm(dim=1) for p in group.stacked.values() if p.grad is not None]  # (G,) each
    return torch.stack(per_param).norm(dim=0)


def clip_members(group: ModelGroup, max_norm: float) -> torch.Tensor:
    """``nn.utils.clip_grad_norm_`` for each member by its own gradient norm (the same coefficient,
    max_norm / (norm + 1e-6) where below 1); returns the norms before clipping (G,)."""
    norms = member_grad_norms(group)
    scale = (max_norm / (norms + 1e-6)).clamp(max=1.0)  # (G,)
    for p in group.stacked.values():
        if p.grad is not None:
            p.grad.mul_(scale.view(-1, *[1] * (p.grad.dim() - 1)))
    return norms


class Batched:
    """A ``ModelGroup`` as the training loop's learner (the methods of ``iclab.fit.sgd.Alone``, one model's)."""

    def __init__(self, group: ModelGroup):
        self.module = group

    def member_losses(self, loss: Callable, xs: torch.Tensor, ys: torch.Tensor) -> torch.Tensor:
        return member_losses(self.module, xs, ys, loss)  # (G,)

    def clip(self, max_norm: float) -> None:
        clip_members(self.module, max_norm)

    def member_state_dicts(self) -> list[dict[str, torch.Tensor]]:
        return self.module.member_state_dicts()

    def unstacked(self, models: Sequence[nn.Module]) -> list[nn.Module]:
        """``models`` (one a member, of the group's architecture) loaded with the members' weights."""
        for model, state in zip(models, self.member_state_dicts()):
            model.load_state_dict(state)
        return list(models)


def group_hash(jobs: Sequence) -> str:
    """A batched group's name (its checkpoint's): the hash of its members' hashes, in order."""
    return spec_hash({"batched_group": [job.hash for job in jobs]})


def check_group(jobs: Sequence) -> None:
    """``jobs`` (``TrainJob``s) train as one batched group only with one model spec (a label aside), one training
    config, tasks of one d and prompt length, and distinct specs; a UsageError names the first that differs."""
    if not jobs:
        raise UsageError("a batched group needs at least one training spec")
    first, first_task = jobs[0], task_from_dict(jobs[0].task)
    if first.model["name"] not in BATCHABLE_MODELS:
        raise UsageError(f"model {first.model['name']!r} cannot train batched; batched models: "
                         f"{', '.join(BATCHABLE_MODELS)}")
    if first.train.compile:
        raise UsageError("train.compile with a batched group: compiled groups are not built; set train.compile false")
    architecture = {k: v for k, v in first.model.items() if k != "label"}
    for g, job in enumerate(jobs[1:], start=1):
        task = task_from_dict(job.task)
        differs = [what for what, same in (
            ("model", {k: v for k, v in job.model.items() if k != "label"} == architecture),
            ("train", job.train == first.train),
            ("task d", task.d == first_task.d),
            ("task n_points", task.n_points == first_task.n_points)) if not same]
        if differs:
            raise UsageError(f"training spec {g} ({job.hash}) differs from spec 0 ({first.hash}) in "
                             f"{', '.join(differs)}: a batched group trains one architecture, training config and "
                             "task shape")
    hashes = [job.hash for job in jobs]
    if len(set(hashes)) < len(hashes):
        raise UsageError(f"a batched group names one training spec twice: {hashes}")


def stacked_batch(batches: Sequence[Batch]) -> Batch:
    """The members' batches as one: xs (G, B, K, d), ys (G, B, K), betas (G, B, d), covariances (G, B, d)."""
    return Batch(*(np.stack([getattr(b, field) for b in batches]) for field in ("xs", "ys", "betas", "covariances")))
