"""The fitter of the mean-field transformer (``models.mean_field``, Kim & Suzuki 2024): three variants
of the particle dynamics on fresh prompts (batches are pure functions of (seed, step)).

- ``attention``: joint gradient steps on μ and Γ of the ICL loss at the final query L(μ, Γ).
- ``static``: the two-timescale objective L(μ) = min_Γ L(μ, Γ) minimised directly: each step Γ is the
  batch's closed-form minimiser (``optimal_gamma``), and the gradient in μ at that Γ is the gradient of
  min_Γ L (envelope theorem).
- ``modified``: ``static`` with a birth–death step and a Gaussian perturbation of the particles. Suzuki's
  talk calls it "static … implementing birth-death & GP" without expanding GP, and the paper's
  experiments section could not be found here; GP is read as Gaussian perturbation (perturbed
  gradient descent, the noise that lets a particle flow leave a saddle).

Particle steps are mean-field time steps: θ_m ← θ_m − lr·M·∇_{θ_m}L, i.e. the Wasserstein gradient flow
θ̇ = −∇ δL/δμ(θ) discretised with step lr (M·∇_{θ_m}L = ∇_θ δL/δμ at θ_m). Γ steps by ``gamma_lr``.

Birth–death (Rotskoff, Jelassi, Bruna, Vanden-Eijnden 2019, conservative form at fixed M): with
V_m = δL/δμ(θ_m) = ⟨a_m, M·∇_{a_m}L⟩ (h_μ is linear in a) and β_m = V_m − mean(V), particle m is
killed with probability 1 − exp(−rate·β_m·lr) when β_m > 0 (its slot takes a copy of a uniformly
drawn particle), and duplicated with probability 1 − exp(rate·β_m·lr) when β_m < 0 (the copy takes a
uniformly drawn slot). The perturbation adds N(0, perturbation²) to every coordinate of every
particle each step. Both draw from ``BIRTH_DEATH_STREAM`` at the step: a pure function of (seed, step).

Static and modified models store, at snapshots and at the end, the Γ* of ``gamma_prompts`` prompts of
``GAMMA_STREAM`` (not the last batch's), so that evaluation sees the two-timescale model.
"""

from __future__ import annotations

import logging
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from iclab.checkpoints import load_checkpoint, save_checkpoint
from iclab.fit.configs import MeanFieldTrainConfig
from iclab.fit.sgd import Snapshots, check_loss, due, training_record
from iclab.models import build_model, default_device
from iclab.models.mean_field import MeanFieldTransformer, optimal_gamma
from iclab.progress import Progress
from iclab.tasks import BIRTH_DEATH_STREAM, GAMMA_STREAM, Task, task_from_dict
from iclab.tasks.samplers import batch_generator, sample, train_batch

log = logging.getLogger("iclab.fit.mean_field")

def batch_loss(model: MeanFieldTransformer, xs: torch.Tensor, ys: torch.Tensor, cfg: MeanFieldTrainConfig):
    """Mean squared error at the final query; static and modified first set Γ to the batch's Γ*."""
    z, h_query = model.final_query_terms(xs, ys)  # (B, k) each
    if cfg.closed_form_gamma:
        with torch.no_grad():
            model.gamma.copy_(optimal_gamma(z, h_query, ys[:, -1], cfg.gamma_ridge))
    predictions = torch.einsum("bm,mn,bn->b", z, model.gamma, h_query)  # (B,)
    return ((predictions - ys[:, -1]) ** 2).mean()


def gradient_step(model: MeanFieldTransformer, cfg: MeanFieldTrainConfig) -> None:
    """θ_m ← θ_m − lr·M·∇_{θ_m}L; Γ ← Γ − gamma_lr·∇_Γ L (attention only)."""
    with torch.no_grad():
        model.a -= cfg.lr * model.width * model.a.grad
        model.w -= cfg.lr * model.width * model.w.grad
        if cfg.variant == "attention":
            model.gamma -= cfg.gamma_lr * model.gamma.grad


def particle_potentials(model: MeanFieldTransformer) -> torch.Tensor:
    """V_m = δL/δμ(θ_m) = ⟨a_m, M·∇_{a_m}L⟩ from the gradient of the last backward pass: (M,).

    h_μ is linear in a, so the loss's first variation at a particle is its a-gradient (times M, undoing
    the 1/M of the mean-field average) paired with a_m."""
    return model.width * (model.a * model.a.grad).sum(dim=1).detach()


def birth_death(model: MeanFieldTransformer, potentials: torch.Tensor, cfg: MeanFieldTrainConfig, gen) -> int:
    """One conservative birth–death step on the particles (see the module docstring); the number replaced."""
    m = model.width
    excess = potentials - potentials.mean()  # (M,): β_m
    chance = 1 - torch.exp(-cfg.birth_death_rate * excess.abs() * cfg.lr)  # (M,)
    excess, chance = excess.cpu(), chance.cpu()  # the draws come from a CPU generator
    fires = torch.rand(m, generator=gen, dtype=chance.dtype) < chance  # (M,)
    partners = torch.randint(m, (m,), generator=gen)  # (M,): the uniformly drawn particle of each event
    source = torch.arange(m)
    dies = fires & (excess > 0)
    source[dies] = partners[dies]  # a killed particle's slot copies a uniform particle
    births = torch.nonzero(fires & (excess < 0))[:, 0]
    source[partners[births]] = births  # a duplicated particle overwrites a uniform slot
    with torch.no_grad():
        model.a.copy_(model.a[source.to(model.a.device)])
        model.w.copy_(model.w[source.to(model.w.device)])
    return int((source != torch.arange(m)).sum())


def perturb(model: MeanFieldTransformer, cfg: MeanFieldTrainConfig, gen) -> None:
    with torch.no_grad():
        for param in (model.a, model.w):
            param += cfg.perturbation * torch.randn(param.shape, generator=gen, dtype=param.dtype).to(param.device)


def refit_gamma(model: MeanFieldTransformer, task: Task, seed: int, step: int, cfg: MeanFieldTrainConfig) -> None:
    """Γ ← the Γ* of ``gamma_prompts`` prompts of ``GAMMA_STREAM`` at ``step`` (static and modified)."""
    if not cfg.closed_form_gamma:
        return
    batch = sample(task, cfg.gamma_prompts, batch_generator(seed, GAMMA_STREAM, step), dtype=torch.float32)
    xs, ys = (torch.from_numpy(a).to(model.a.device) for a in (batch.xs, batch.ys))  # (B, K, d), (B, K)
    with torch.no_grad():
        z, h_query = model.final_query_terms(xs, ys)
        model.gamma.copy_(optimal_gamma(z, h_query, ys[:, -1], cfg.gamma_ridge))


def fit(job, *, checkpoint: Path | None = None, checkpoint_every: int = 500, log_every: int = 100):
    """Train ``job`` (resuming from ``checkpoint`` if it holds this job's state): the model, and its record
    (loss per step, particles replaced per step, snapshots)."""
    cfg, task = job.train, task_from_dict(job.task)
    torch.manual_seed(job.seed)
    device = default_device()
    model = build_model(job.model, task.d).to(device)  # initialised on the CPU: the same weights on any device
    losses, replaced = np.full(cfg.steps, np.nan), np.zeros(cfg.steps, dtype=np.int64)
    snapshots, start = Snapshots(steps=[], params={}), 0
    state = load_checkpoint(checkpoint, job.hash)
    if state is not None:
        model.load_state_dict(state["model"])
        start, snapshots = state["step"], Snapshots(**state["snapshots"])
        losses[:start], replaced[:start] = state["losses"][:start], state["replaced"][:start]
        log.info("[%s] resuming from checkpoint %s at step %d/%d", job.hash, checkpoint, start, cfg.steps)
    elif due(cfg.snapshot_every, 0, cfg.steps):
        refit_gamma(model, task, job.seed, 0, cfg)
        snapshots.take(0, model.state_dict())
    progress = Progress(job.hash, cfg.steps, start=start, every=log_every, unit="steps")
    for step in range(start, cfg.steps):
        batch = train_batch(task, job.seed, step, cfg.batch_size)
        model.zero_grad(set_to_none=True)
        xs, ys = (torch.from_numpy(a).to(device) for a in (batch.xs, batch.ys))  # (B, K, d), (B, K)
        loss = batch_loss(model, xs, ys, cfg)
        loss.backward()
        potentials = particle_potentials(model)  # (M,), before the step moves the particles
        gradient_step(model, cfg)
        if cfg.variant == "modified":
            gen = batch_generator(job.seed, BIRTH_DEATH_STREAM, step)
            replaced[step] = birth_death(model, potentials, cfg, gen)
            perturb(model, cfg, gen)
        losses[step] = loss.item()
        check_loss(losses, cfg, step)
        progress.update(step + 1, suffix=f"loss {losses[step]:.4g}")
        if due(cfg.snapshot_every, step + 1, cfg.steps):
            refit_gamma(model, task, job.seed, step + 1, cfg)
            snapshots.take(step + 1, model.state_dict())
        if checkpoint is not None and (step + 1) % checkpoint_every == 0 and step + 1 < cfg.steps:
            save_checkpoint(
                checkpoint,
                {
                    "job_hash": job.hash,
                    "step": step + 1,
                    "model": model.state_dict(),
                    "losses": losses.copy(),
                    "replaced": replaced.copy(),
                    "snapshots": asdict(snapshots),
                },
            )
    if not due(cfg.snapshot_every, cfg.steps, cfg.steps):  # else the last snapshot refitted it
        refit_gamma(model, task, job.seed, cfg.steps, cfg)
    log.info("[%s] final loss %.4g", job.hash, losses[-1])
    record = training_record(losses, snapshots)
    record["replaced"] = (("step",), replaced)
    return model, record
