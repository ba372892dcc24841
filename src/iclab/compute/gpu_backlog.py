"""The GPU backlog: what the next lent GPU measures first, in order (docs/gpu_node.md, "GPU backlog"), before
gpu-check in ``benchmarks/gpu_window.sh``. Each row is written as it is measured (``gpu_backlog_<card>.json``,
rewritten whole, atomically), so a window cut short keeps the rows so far; a row that raises records its error and
the rest run.

1. ``kernel time``: the float32 probe GPT-2 (probe_layers', 28 of gpu_node's models), then zfb_figure1's, one step
   under torch.profiler after two unprofiled ones, in the training loop's deterministic mode: the sum of its device
   kernels' durations beside the step's wall time under the profiler (the device's share of a launch-bound step;
   none on the CPU).
2. ``tf32 agreement``: gpu-check's one-step agreement at the probe shape (float32, TF32 and bf16 against the CPU's
   float32 step, backward included).
3. ``tf32 rounding``: single products on the card with TF32 on, bit for bit against each way of rounding their
   factors (``ROUNDING_PRODUCTS``): which rounding cuBLAS applies, and which shapes it leaves in float32 — what
   ``iclab.fit.tf32`` infers from one agreement row.
4. ``batched agreement`` (issue 99; the backlog's fifth row in docs/gpu_node.md, after four rounding products): one step of ``BATCHED_SEEDS``' probe GPT-2s as one batched group
   (``iclab.fit.batched``) against each trained alone, the loss and gradients' largest differences relative to the
   member's largest gradient entry; and whether the last member's loss and gradients are bit for bit the same in a
   group of two, first, as in the group of four, last (on this CPU they are, for any G ≥ 2: the naming of batched
   models in the tiers rests on it; a card's kernels may choose their algorithm by the batch count).
5. ``batched steps`` (issue 99): each of the tier's batched groups of GPT-2s (``batched_groups``: one per
   architecture, training config and task shape, at the members it trains), its training step timed as a group of
   G and as one model alone (G = 1), in one run, each over ``BATCHED_TIMED_STEPS`` steps after
   ``gpu_check.WARMUP_STEPS`` in the loop's deterministic mode; also written as a rates file
   (``gpu_rates_batched_<card>.csv``, column ``group_size``) that ``iclab cost --rates`` reads: the group rows as
   groups' steps, the G = 1 rows as a member's.

Row 9 runs in a window of its own (``--rows capture``, ``gpu_backlog_capture_<card>.json``): ``captured steps``
(issue 100), each batched group's (and the tier's LSTM's, alone: whether cuDNN's LSTM step can be captured at all,
else its fallback named) eager step (``sgd.learner_step``) against ``train.capture``'s
(``capture.CapturedStep``, captured after its 3 eager steps: inside ``gpu_check.WARMUP_STEPS``' 5), in one run, 3
steps timed each, and the captured sequence run twice from the seeds, its weights compared bit for bit (the
project's rule: no tolerance). Manual capture, not Inductor: no compile time in the window.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from iclab.atomic import write_text
from iclab.compute import cluster
from iclab.compute.gpu_check import (WARMUP_STEPS, Shape, agreement_rows, card_name, failed, file_card,
                                     first_experiments, full_shape, profiled_step, synchronize, tier_flops, tier_shapes,
                                     tiny, weights_digest)
from iclab.config import load
from iclab.errors import UsageError
from iclab.fit.batched import Batched, ModelGroup, stacked_batch
from iclab.fit.capture import graphs_on
from iclab.fit.sgd import (Alone, BatchMaker, batch_at, captured_step, deterministic_kernels, learner_step,
                           loss_points, make_optimizer, matmul_precision, prompt_loss, seeded_learner, seeded_model)
from iclab.pipeline.plan import build_plan
from iclab.store.jobs import TrainJob
from iclab.tasks import task_from_dict

log = logging.getLogger("iclab.compute.gpu_backlog")

KERNEL_SHAPES = ("probe_layers", "zfb_figure1")  # the experiments whose GPT-2 step is profiled, in order
UNIT = 2.0**-12  # a quarter of TF32's unit in the last place at 1
# (M, K, N) of each rounding product: tensor-core shaped (N, K multiples of 4), then the three shapes that
# iclab.fit.tf32 leaves in float32: K = 17 (rows not 16-byte aligned), N = 1 (matrix-vector), M = 1
ROUNDING_SHAPES = ((4, 16, 4), (4, 17, 4), (4, 16, 1), (1, 16, 4))
# A's first column 1 + 2⁻¹¹ (a tie between two TF32 values), its second 1 + 3·2⁻¹² (past the half), the rest 1;
# B all ones: each output is K + (the first two factors' excess), which tells the roundings apart
ROUNDINGS = {"float32 (not rounded)": 5 * UNIT, "nearest, ties away (iclab.fit.tf32)": 8 * UNIT,
             "nearest, ties to even": 4 * UNIT, "truncation": 0.0}
BATCHED_SEEDS = (0, 1, 2, 3)  # the batched agreement's group; its last member again first in a group of two
BATCHED_TIMED_STEPS = 3  # steps timed a batched-steps row, after gpu_check.WARMUP_STEPS (each way)


def rounding_factors(m: int, k: int, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A (M, K) and B (K, N) of ``ROUNDINGS``' note."""
    a = torch.ones(m, k)
    a[:, 0], a[:, 1] = 1 + 2 * UNIT, 1 + 3 * UNIT
    return a, torch.ones(k, n)


def rounding_row(shape: tuple[int, int, int], device: torch.device) -> dict[str, Any]:
    """One product of ``shape`` on ``device`` with TF32 on (emulated on the CPU): its output, and the roundings
    whose exact result it equals bit for bit."""
    m, k, n = shape
    a, b = (factor.to(device) for factor in rounding_factors(m, k, n))
    with matmul_precision(True, device):
        out = torch.mm(a, b).cpu()  # (M, N)
    value = float(out[0, 0])
    matches = [name for name, excess in ROUNDINGS.items() if bool((out == k + excess).all())]
    return {"row": "tf32 rounding", "shape": f"M={m} K={k} N={n}", "value": value,
            "excess_over_K_in_2^-12": (value - k) / UNIT, "matches": matches}


def kernel_time(shape: Shape, device: torch.device) -> dict[str, Any]:
    """``gpu_check.profiled_step`` of ``shape``: the sum of its device kernels' durations and the step's wall time
    (no kernel time on the CPU)."""
    job = shape.job
    kernels, wall = profiled_step(job, device)
    kernel_s = sum(event.time_range.elapsed_us() for event in kernels) / 1e6 if device.type == "cuda" else None
    return {"row": "kernel time", "shape": shape.experiment, "key": cluster.step_key(job.to_dict()),
            "numerics": cluster.numerics(job.to_dict()), "kernels": len(kernels), "kernel_s": kernel_s,
            "step_wall_s": wall, "kernel_share": None if kernel_s is None else kernel_s / wall}


def first_step(jobs: list[TrainJob], device: torch.device, batched: bool) -> list[tuple[torch.Tensor, dict]]:
    """Each job's first-step loss and gradients (float32, the loop's deterministic mode and TF32 setting), the jobs
    trained as one batched group or each alone: [(loss, {parameter name: gradient})], on the CPU."""
    cfg, task = jobs[0].train, task_from_dict(jobs[0].task)
    points = loss_points(cfg, task, 0, None)
    loss = lambda model, x, y: prompt_loss(model, x, y, cfg.loss_positions, points)  # noqa: E731
    models = [seeded_model(job, task, device) for job in jobs]
    batches = [batch_at(cfg, task, job.seed, 0, None) for job in jobs]
    with deterministic_kernels(device, cfg.allow_nondeterministic), matmul_precision(cfg.tf32, device):
        if not batched:
            out = []
            for model, batch in zip(models, batches):
                xs, ys = (torch.from_numpy(a).to(device) for a in (batch.xs, batch.ys))  # (B, K, d), (B, K)
                losses = Alone(model).member_losses(loss, xs, ys)  # (1,)
                losses.sum().backward()
                out.append((losses[0].detach().cpu(), {n: p.grad.cpu() for n, p in model.named_parameters()}))
            return out
        group = ModelGroup(models)
        both = stacked_batch(batches)
        xs, ys = (torch.from_numpy(a).to(device) for a in (both.xs, both.ys))  # (G, B, K, d), (G, B, K)
        losses = Batched(group).member_losses(loss, xs, ys)  # (G,)
        losses.sum().backward()
        grads = {name: p.grad.cpu() for name, p in group.member_tensors().items()}  # (G, …) each
        return [(losses[g].detach().cpu(), {name: grad[g] for name, grad in grads.items()}) for g in range(len(jobs))]


def batched_agreement(shape: Shape, device: torch.device) -> dict[str, Any]:
    """Row 5 of the module's note at ``shape`` (a float32 GPT-2)."""
    jobs = [TrainJob.from_dict(shape.spec | {"seed": seed}) for seed in BATCHED_SEEDS]
    alone, four = first_step(jobs, device, batched=False), first_step(jobs, device, batched=True)
    two = first_step([jobs[-1], jobs[0]], device, batched=True)
    return {"row": "batched agreement", "shape": shape.experiment, "group_size": len(jobs),
            **agreement(alone, four, two)}


def agreement(alone: list[tuple], batched: list[tuple], regrouped: list[tuple]) -> dict[str, Any]:
    """From (loss, {name: gradient}) per member: the largest loss difference, batched against alone, relative to the
    loss; the largest gradient difference relative to the member's largest gradient entry; and whether the last and
    first members of ``batched`` are bit for bit ``regrouped``'s first and second (a group of two, reordered)."""

    def relative(a: tuple, b: tuple) -> tuple[float, float]:
        scale = max(float(g.abs().max()) for g in a[1].values())
        return (abs(float(b[0] - a[0])) / abs(float(a[0])),
                max(float((b[1][name] - g).abs().max()) for name, g in a[1].items()) / scale)

    def identical(a: tuple, b: tuple) -> bool:
        return torch.equal(a[0], b[0]) and all(torch.equal(a[1][name], b[1][name]) for name in a[1])

    differences = [relative(a, b) for a, b in zip(alone, batched)]
    return {"loss_rel_vs_alone": max(d[0] for d in differences),
            "gradient_rel_vs_alone": max(d[1] for d in differences),
            "same_in_a_group_of_two": identical(batched[-1], regrouped[0]) and identical(batched[0], regrouped[1])}


def batched_groups(config: Path) -> list[tuple[str, list[TrainJob]]]:
    """The tier's batched groups of GPT-2s at their full shape (``gpu_check.full_shape``, batched): each group's
    first experiment and the members it trains (``cluster.trained_members``: a group of one, two), seeds 0, 1, …;
    the most training FLOPs first (a window cut short has timed the groups that weigh most)."""
    plan = build_plan(load(config, check=False))
    firsts = first_experiments(plan)
    found = []
    for members in plan.groups.values():
        specs = [plan.train[h].to_dict() for h in members]
        if not cluster.batched(specs):
            continue
        job = full_shape(plan.train[members[0]])
        jobs = [replace(job, train=replace(job.train, batched=True), seed=seed)
                for seed in range(cluster.trained_members(specs))]
        found.append((firsts[members[0]], jobs, len(jobs) * sum(map(tier_flops, specs)) / len(specs)))
    return [(experiment, jobs) for experiment, jobs, _ in sorted(found, key=lambda group: -group[2])]


def step_seconds(jobs: list[TrainJob], device: torch.device, steps: int, warmup: int = WARMUP_STEPS) -> float:
    """Seconds a training step of ``jobs``, one model alone or a batched group (``timed_learner``)."""
    return timed_learner(jobs, device, steps, warmup)[1]


def timed_learner(jobs: list[TrainJob], device: torch.device, steps: int, warmup: int = WARMUP_STEPS,
                  start_at: float | None = None, captured: bool = False
                  ) -> tuple[torch.nn.Module, float, tuple[float, float], str | None]:
    """``jobs`` trained ``warmup + steps`` steps from their seeds, one model alone or (two or more) a batched group
    (``sgd.learner_step``, or with ``captured`` ``train.capture``'s step, ``capture.CapturedStep``: on CUDA captured
    after its warm-up; on the loop's batches, made before the clock starts), in the loop's deterministic mode, the
    first step not before ``start_at`` (epoch seconds; packed processes start together): the trained module,
    seconds a step over the last ``steps``, their window (epoch seconds) and, where a capture failed, its fallback."""
    cfg, task = jobs[0].train, task_from_dict(jobs[0].task)
    if captured:  # the schedule held constant: a captured step holds one learning rate, and the speed is the same
        cfg = replace(cfg, capture=True, schedule="constant")
    batched = len(jobs) > 1
    _, learner = seeded_learner(jobs, [task] * len(jobs), device, batched)
    optimizer = make_optimizer(cfg, learner.module.parameters(), capturable=cfg.capture and graphs_on(device))
    step_of = captured_step(learner, optimizer, cfg, device, record_steps=1) if captured else None  # losses unread
    make = BatchMaker(cfg, (task,) * len(jobs), tuple(job.seed for job in jobs), (None,) * len(jobs), batched)
    batches = [make(step) for step in range(warmup + steps)]  # fresh prompts (no pretraining set)
    prompts = [tuple(torch.from_numpy(a).to(device) for a in (b.xs, b.ys)) for b in batches]  # (G,) B, K, d; B, K
    if start_at is not None:
        time.sleep(max(0.0, start_at - time.time()))
    with deterministic_kernels(device, cfg.allow_nondeterministic), matmul_precision(cfg.tf32, device):
        for step, xy in enumerate(prompts):
            if step == warmup:
                synchronize(device)
                started, started_at = time.perf_counter(), time.time()
            points = loss_points(cfg, task, step, None)
            if step_of is None:
                learner_step(learner, optimizer, cfg, xy, points, cfg.lr)
            else:
                step_of(*xy, points)
        synchronize(device)
    fallback = None if step_of is None else step_of.fallback
    return learner.module, (time.perf_counter() - started) / steps, (started_at, time.time()), fallback


def captured_steps(experiment: str, jobs: list[TrainJob], device: torch.device, steps: int,
                   warmup: int = WARMUP_STEPS) -> dict[str, Any]:
    """Row 9 of the module's note for one group: its eager step against ``train.capture``'s, timed in one run, and
    the captured sequence run twice, its weights compared bit for bit."""
    eager_s = timed_learner(jobs, device, steps, warmup)[1]
    first, captured_s, _, fallback = timed_learner(jobs, device, steps, warmup, captured=True)
    again = timed_learner(jobs, device, steps, warmup, captured=True)[0]
    spec = jobs[0].to_dict()
    on = "uncaptured (cpu)" if device.type != "cuda" else fallback or "cuda graph"
    return {"row": "captured steps", "shape": experiment, "key": cluster.step_key(spec), "group_size": len(jobs),
            "eager_s": eager_s, "captured_s": captured_s, "eager_over_captured": eager_s / captured_s,
            "repeat_bit_for_bit": weights_digest(first) == weights_digest(again), "steps_timed": steps,
            "captured_on": on}


def batched_steps(experiment: str, jobs: list[TrainJob], device: torch.device, steps: int,
                  warmup: int = WARMUP_STEPS) -> dict[str, Any]:
    """Row 6 of the module's note for one group: its step as a group of G and one member's alone."""
    group_s = step_seconds(jobs, device, steps, warmup)
    alone_s = step_seconds([replace(jobs[0], train=replace(jobs[0].train, batched=False))], device, steps, warmup)
    spec = jobs[0].to_dict()
    return {"row": "batched steps", "shape": experiment, "key": cluster.step_key(spec),
            "numerics": cluster.numerics(spec), "flops_per_step": cluster.model_size(spec).flops_per_step,
            "group_size": len(jobs), "group_s": group_s, "alone_s": alone_s,
            "group_over_alone": group_s / alone_s, "steps_timed": steps}


def rates_rows(card: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The batched-steps rows as a rates file's (``cluster.RATE_COLUMNS`` and ``group_size``): a group's and its
    member's alone."""
    out = []
    for row in rows:
        if row.get("row") != "batched steps" or "group_s" not in row:
            continue
        flags = {k: json.dumps(v) if isinstance(v, bool) else v for k, v in row["numerics"].items()}
        for size, seconds in ((row["group_size"], row["group_s"]), (1, row["alone_s"])):
            out.append({"card": card, "key": row["key"], **flags, "loop": "new",
                        "flops_per_step": row["flops_per_step"], "seconds_per_step": seconds,
                        cluster.GROUP_COLUMN: size})
    return out


def shape_of(shapes: list[Shape], experiment: str) -> Shape:
    """The tier's GPT-2 shape that ``experiment`` first trains."""
    for shape in shapes:
        if shape.experiment == experiment and shape.job.model["name"] == "gpt2":
            return shape
    raise UsageError(f"gpu-backlog: the tier trains no GPT-2 first in {experiment} (there: "
                     f"{', '.join(sorted({s.experiment for s in shapes}))})")


def backlog(config: Path, out_dir: Path, tiny_shapes: bool, rows: str = "window") -> Path:
    """``python -m iclab gpu-backlog``: the rows of the module's note, in order (``rows``: ``window``, rows 1–6;
    ``capture``, row 9, into ``gpu_backlog_capture_<card>.json``), on CUDA (or at tiny shapes on the CPU with
    ``tiny_shapes``, the suite's check of it)."""
    if not tiny_shapes and not torch.cuda.is_available():
        raise UsageError("gpu-backlog: no CUDA device here (torch.cuda.is_available() is False); "
                         "--tiny runs it at tiny shapes on the CPU")
    device = torch.device("cpu" if tiny_shapes else "cuda")
    card = card_name(device)
    shapes = [tiny(shape) if tiny_shapes else shape for shape in tier_shapes(config)]
    groups = [(experiment, [tiny_job(job) for job in jobs] if tiny_shapes else jobs)
              for experiment, jobs in batched_groups(config)]
    timing = (1, 1) if tiny_shapes else (BATCHED_TIMED_STEPS, WARMUP_STEPS)  # steps timed, warm-up
    if rows == "capture":
        lstm = max((s for s in shapes if s.job.model["name"] == "lstm"), key=lambda s: s.models, default=None)
        captured = groups + ([] if lstm is None else [(lstm.experiment, [lstm.job])])  # cuDNN's LSTM: one model
        steps = [(lambda e=e, j=j: captured_steps(e, j, device, *timing)) for e, j in captured]
    else:
        kernel_shapes = [shape_of(shapes, name) for name in KERNEL_SHAPES]
        steps = [*((lambda s=s: kernel_time(s, device)) for s in kernel_shapes),
                 lambda: {"row": "tf32 agreement", "shape": KERNEL_SHAPES[0],
                          "rows": agreement_rows(kernel_shapes[0], device, card)},
                 *((lambda s=s: rounding_row(s, device)) for s in ROUNDING_SHAPES),
                 lambda: batched_agreement(kernel_shapes[0], device),
                 *((lambda e=e, j=j: batched_steps(e, j, device, *timing)) for e, j in groups)]
    out = out_dir / f"gpu_backlog{'_capture' if rows == 'capture' else ''}_{file_card(card)}.json"
    rows: list[dict[str, Any]] = []
    for step in steps:
        started = time.perf_counter()
        try:
            row = step()
        except Exception as error:  # noqa: BLE001 — recorded in its row; the others run
            row = {"error": failed(error)}
        rows.append({"card": card, **row, "seconds": time.perf_counter() - started})
        write_text(out, json.dumps(rows, indent=1) + "\n")
        log.info("gpu-backlog %s", json.dumps(rows[-1])[:300])
        rates = rates_rows(card, rows)
        if rates:
            write_text(out_dir / f"gpu_rates_batched_{file_card(card)}.csv",
                       pd.DataFrame(rates).to_csv(index=False))
    return out


def tiny_job(job: TrainJob) -> TrainJob:
    """``job`` at ``gpu_check.tiny``'s widths (its d, prompt length and numerics kept)."""
    return tiny(Shape(job, "", 1, 0.0)).job
