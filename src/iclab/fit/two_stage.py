"""The two-stage pretraining of Oko, Song, Suzuki, Wu 2024 (§3) for ``models.two_stage``.

Stage 1: rows wⱼ ~ Unif(S^{d−1}), b = 0, Γ = diag(±1)/m; one gradient step on W of the squared
loss at the query over T₁ fresh prompts, with step η and weight decay λ:
W ← W − η(∇_W L̂ + λW) (ηλ = 1 erases the initialisation). The rows are then put back on the unit
sphere, so that ⟨wⱼ, x⟩ ~ N(0, 1) matches the bias range below (the paper's normalisation is not
stated; with ηλ = 1 it makes η irrelevant).
The paper's loss takes each prompt's last point as the query (``stage1_queries = "last"``). With
``"all"`` every one of the prompt's n + 1 points is the query in turn, the other n its context, and
the prompt's loss is the mean of those n + 1 losses: by exchangeability each term has the law of the
paper's loss, so the gradient estimates the same population gradient, with a variance roughly n
times smaller (the query's own heavy-tailed label no longer multiplies every term).
Stage 2: bⱼ ~ Unif[−1, 1] re-drawn; the prediction zᵀΓφ(x) is linear in Γ, so Γ is the ridge
solution over T₂ fresh prompts in closed form:
vec Γ = (AᵀA/T₂ + λ₂I)⁻¹ Aᵀy/T₂, rows of A = vec(z_t φ(x_t)ᵀ).

Every chunk of prompts is a pure function of (seed, stage stream, chunk index). The job
checkpoints between chunks and resumes; the model cube also holds the stage-1 diagnostics:
principal cosines between V and W's top-r right singular subspace, and the energy of the rows in V.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import xarray as xr

from iclab.checkpoints import load_checkpoint, save_checkpoint
from iclab.fit.configs import TwoStageConfig
from iclab.models.two_stage import TwoStageTransformer
from iclab.progress import Progress
from iclab.tasks import INIT_STREAM, STAGE1_STREAM, STAGE2_STREAM, SingleIndexTask, task_from_dict
from iclab.tasks.samplers import batch_generator, sample

log = logging.getLogger("iclab.fit.two_stage")

def initial_model(task: SingleIndexTask, width: int, seed: int) -> TwoStageTransformer:
    """wⱼ ~ Unif(S^{d−1}), b = 0, Γ = diag(±1)/m, from (seed, INIT_STREAM)."""
    gen = batch_generator(seed, INIT_STREAM, 0)
    model = TwoStageTransformer(task.d, width).double()
    with torch.no_grad():
        rows = torch.randn(width, task.d, generator=gen, dtype=torch.float64)
        model.weight.copy_(rows / rows.norm(dim=1, keepdim=True))
        signs = torch.randint(0, 2, (width,), generator=gen).double() * 2 - 1
        model.gamma.copy_(torch.diag(signs) / width)
    return model





def prompts(task: SingleIndexTask, seed: int, stream: int, index: int, size: int) -> tuple[torch.Tensor, torch.Tensor]:
    batch = sample(task, size, batch_generator(seed, stream, index))
    return torch.from_numpy(batch.xs), torch.from_numpy(batch.ys)  # (b, K, d), (b, K)


def leave_one_out_predictions(model: TwoStageTransformer, xs: torch.Tensor, ys: torch.Tensor) -> torch.Tensor:
    """ŷ at every point k from the other K − 1 points: z₋ₖᵀΓφ(x_k), z₋ₖ = mean_{i≠k} yᵢφ(xᵢ): (b, K)."""
    phi = model.features(xs)  # (b, K, m)
    weighted = ys[..., None] * phi  # (b, K, m)
    z = (weighted.sum(dim=1, keepdim=True) - weighted) / (xs.shape[1] - 1)  # (b, K, m)
    return model.readout(z, phi)


def stage1_loss(model: TwoStageTransformer, xs: torch.Tensor, ys: torch.Tensor, queries: str) -> torch.Tensor:
    """Σ over prompts of the squared query loss: at the last point, or the mean over all points."""
    if queries == "last":
        return ((model(xs, ys, last_only=True)[:, 0] - ys[:, -1]) ** 2).sum()
    return ((leave_one_out_predictions(model, xs, ys) - ys) ** 2).mean(dim=1).sum()


def stage1_gradient_sum(
    model: TwoStageTransformer, xs: torch.Tensor, ys: torch.Tensor, queries: str = "last"
) -> torch.Tensor:
    """Σ over the chunk's prompts of ∇_W of the prompt's stage-1 loss: (m, d)."""
    model.weight.grad = None
    stage1_loss(model, xs, ys, queries).backward()
    return model.weight.grad.detach().clone()


def ridge_features(model: TwoStageTransformer, xs: torch.Tensor, ys: torch.Tensor) -> torch.Tensor:
    """Rows of A: vec(z φ(x_query)ᵀ) with z the prompt's context mean of yᵢφ(xᵢ): (b, m²)."""
    with torch.no_grad():
        phi = model.features(xs)  # (b, K, m)
        z = (ys[:, :-1, None] * phi[:, :-1]).mean(dim=1)  # (b, m)
        return (z[:, :, None] * phi[:, -1, None, :]).flatten(1)  # (b, m²)


GRAM_BLOCKS = 8  # column blocks of AᵀA's block-upper triangle: 9/16 of the full product's FLOPs (bench_single_index)


def add_block_upper_gram(gram: torch.Tensor, features: torch.Tensor, blocks: int = GRAM_BLOCKS) -> None:
    """gram += featuresᵀ·features on and above the diagonal blocks only (AᵀA is symmetric; the blocks below the
    diagonal are left as they are): features (b, n), gram (n, n), in place. ``symmetric_from_upper`` completes it."""
    n = features.shape[1]
    edges = [round(i * n / blocks) for i in range(blocks + 1)]
    for lo, hi in zip(edges[:-1], edges[1:]):
        gram[lo:hi, lo:].addmm_(features[:, lo:hi].T, features[:, lo:])  # block row: its diagonal block and right


def symmetric_from_upper(gram: torch.Tensor) -> torch.Tensor:
    """The symmetric matrix whose upper triangle (diagonal included) is ``gram``'s: (n, n)."""
    return torch.triu(gram) + torch.triu(gram, diagonal=1).T


def ridge_solution(gram: torch.Tensor, rhs: torch.Tensor, count: int, penalty: float) -> torch.Tensor:
    """argmin_g (1/T)‖y − Ag‖² + λ‖g‖² from AᵀA, Aᵀy and T: (AᵀA/T + λI)⁻¹Aᵀy/T."""
    system = gram / count + penalty * torch.eye(len(gram), dtype=gram.dtype)
    return torch.cholesky_solve((rhs / count)[:, None], torch.linalg.cholesky(system))[:, 0]


def subspace_recovery(weight: np.ndarray, basis: np.ndarray) -> tuple[np.ndarray, float]:
    """Cosines of the principal angles between V (basis (d, r)) and the span of W's top r right
    singular vectors, largest first; and the mean over rows of ‖P_V ŵⱼ‖² (chance: r/d), over the rows that have a
    direction (a neuron whose stage-1 gradient was zero keeps a zero row: NaN if every row is zero)."""
    r = basis.shape[1]
    top = np.linalg.svd(weight, full_matrices=False)[2][:r].T  # (d, r)
    cosines = np.linalg.svd(basis.T @ top, compute_uv=False)
    norms = np.linalg.norm(weight, axis=1)  # (m,)
    unit_rows = weight[norms > 0] / norms[norms > 0, None]  # (m', d)
    energy = np.sum((unit_rows @ basis) ** 2, axis=1)  # (m',)
    return cosines, float(energy.mean()) if len(energy) else float("nan")


@dataclass
class Accumulator:
    """Running sums of one stage over its chunks, saved in checkpoints."""

    stage: int
    next_chunk: int
    sums: dict[str, torch.Tensor]


def run_stage(
    job_hash: str,
    stage: int,
    sizes: list[int],
    acc: Accumulator,
    add_chunk,
    save,
    checkpoint_every: int,
    log_every: int,
) -> None:
    """Feed chunks acc.next_chunk… to ``add_chunk(index, acc)``, checkpointing through ``save``."""
    done = lambda chunks: sum(sizes[:chunks])  # noqa: E731: prompts in the first ``chunks`` chunks
    progress = Progress(job_hash, sum(sizes), start=done(acc.next_chunk), every=1, unit="prompts")
    for index in range(acc.next_chunk, len(sizes)):
        add_chunk(index, acc)
        acc.next_chunk = index + 1
        if acc.next_chunk % log_every == 0 or acc.next_chunk == len(sizes):
            progress.update(done(acc.next_chunk), prefix=f"stage {stage}: ")
        if acc.next_chunk % checkpoint_every == 0 and acc.next_chunk < len(sizes):
            save(acc)


def fit(
    model_spec: dict[str, Any],
    task: SingleIndexTask,
    cfg: TwoStageConfig,
    seed: int,
    job_hash: str,
    *,
    checkpoint: Path | None = None,
    checkpoint_every: int = 20,
    log_every: int = 10,
) -> tuple[TwoStageTransformer, xr.Dataset]:
    """Both stages (stage 2 skipped when T₂ = 0); returns the model and its diagnostics."""
    model = initial_model(task, model_spec["width"], seed)

    def save(acc: Accumulator) -> None:
        if checkpoint is not None:
            save_checkpoint(checkpoint, {"job_hash": job_hash, "model": model.state_dict(), "acc": asdict(acc)})

    state = load_checkpoint(checkpoint, job_hash)
    acc = Accumulator(stage=1, next_chunk=0, sums={"grad": torch.zeros_like(model.weight)})
    if state is not None:
        model.load_state_dict(state["model"])
        acc = Accumulator(**state["acc"])
        log.info(
            "[%s] resuming from checkpoint %s: stage %d, chunk %d", job_hash, checkpoint, acc.stage, acc.next_chunk
        )

    sizes1 = cfg.stage_chunks(cfg.t1)
    if acc.stage == 1:

        def add_gradient(index: int, acc: Accumulator) -> None:
            xs, ys = prompts(task, seed, STAGE1_STREAM, index, sizes1[index])
            acc.sums["grad"] += stage1_gradient_sum(model, xs, ys, cfg.stage1_queries)

        run_stage(job_hash, 1, sizes1, acc, add_gradient, save, checkpoint_every, log_every)
        with torch.no_grad():
            step = model.weight - cfg.eta * (acc.sums["grad"] / sum(sizes1) + cfg.weight_decay * model.weight)
            model.weight.copy_(step / step.norm(dim=1, keepdim=True).clamp(min=1e-300))
            gen = batch_generator(seed, INIT_STREAM, 1)
            model.bias.copy_(2 * torch.rand(model.width, generator=gen, dtype=torch.float64) - 1)
        m2 = model.width**2
        acc = Accumulator(stage=2, next_chunk=0, sums={"gram": torch.zeros(m2, m2, dtype=torch.float64)})
        acc.sums |= {"rhs": torch.zeros(m2, dtype=torch.float64), "y2": torch.zeros((), dtype=torch.float64)}
        save(acc)

    diagnostics = stage1_diagnostics(model, task)
    if cfg.t2 > 0:
        sizes2 = cfg.stage_chunks(cfg.t2)
        t2 = sum(sizes2)  # T₂ (fewer in a smoke run)

        def add_ridge_sums(index: int, acc: Accumulator) -> None:
            xs, ys = prompts(task, seed, STAGE2_STREAM, index, sizes2[index])
            features = ridge_features(model, xs, ys)  # (b, m²)
            add_block_upper_gram(acc.sums["gram"], features)  # stage 2: 1.6× at m² = 4096 (bench_single_index)
            acc.sums["rhs"] += features.T @ ys[:, -1]
            acc.sums["y2"] += (ys[:, -1] ** 2).sum()

        run_stage(job_hash, 2, sizes2, acc, add_ridge_sums, save, checkpoint_every, log_every)
        gram = symmetric_from_upper(acc.sums["gram"])  # AᵀA (a checkpoint of the full product gives the same)
        g = ridge_solution(gram, acc.sums["rhs"], t2, cfg.ridge)
        with torch.no_grad():
            model.gamma.copy_(g.reshape(model.width, model.width))
        train_risk = (acc.sums["y2"] - 2 * g @ acc.sums["rhs"] + g @ gram @ g) / t2
        diagnostics["stage2_train_risk"] = float(train_risk)
        log.info("[%s] stage 2: ridge fit over %d prompts, training risk %.4g", job_hash, t2, float(train_risk))
    return model.float(), diagnostics


def stage1_diagnostics(model: TwoStageTransformer, task: SingleIndexTask) -> xr.Dataset:
    cosines, energy = subspace_recovery(model.weight.detach().numpy(), task.subspace())
    log.info(
        "stage 1: principal cosines with V %s; row energy in V %.3f (chance %.3f)",
        np.array2string(cosines, precision=3),
        energy,
        task.r / task.d,
    )
    return xr.Dataset(
        {
            "principal_cosines": (("principal_angle",), cosines),
            "subspace_energy": energy,
            "subspace_energy_chance": task.r / task.d,
        },
        coords={"principal_angle": np.arange(1, len(cosines) + 1)},
    )


def fit_job(job, *, checkpoint: Path | None = None, **step_options) -> tuple[TwoStageTransformer, xr.Dataset]:
    """The fitter of the two-stage model for an ``iclab.store.jobs.TrainJob``: checkpoints and progress lines
    come every few chunks of prompts (``fit``'s defaults); the step-based options do not apply."""
    task = task_from_dict(job.task)
    return fit(job.model, task, job.train, job.seed, job.hash, checkpoint=checkpoint)
