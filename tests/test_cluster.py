"""Cluster requests (iclab.compute.cluster) against counts made independently: torch's FLOP counter, the models' own
parameters, job-seconds and memory measured on this machine."""

import importlib.util
import itertools
import json
import math
from pathlib import Path

import pandas as pd
import pytest
import torch
import yaml
from torch.utils.flop_counter import FlopCounterMode

from iclab.compute import cluster
from iclab.config import load
from iclab.fit.sgd import prompt_loss
from iclab.models import build_model
from iclab.pipeline.plan import build_plan


def job(model: dict, d: int, n: int, **train) -> dict:
    return {"model": model, "task": {"d": d, "n_points": n}, "train": {"batch_size": 8, "steps": 1} | train}


def counted_flops(model: torch.nn.Module, d: int, n: int, batch: int, loss_positions: str) -> int:
    """FLOPs of one training step's forward and backward pass, counted by torch. Eager attention: the counter
    does not see the fused SDPA kernel of the CPU, and eager computes the same products."""
    model.backbone.config._attn_implementation = "eager"
    xs, ys = torch.randn(batch, n, d), torch.randn(batch, n)
    with FlopCounterMode(display=False) as counter:
        prompt_loss(model, xs, ys, loss_positions).backward()
    return counter.get_total_flops()


@pytest.mark.parametrize(
    "spec, n, loss_positions",
    [
        ({"n_embd": 64, "n_layer": 2, "n_head": 2}, 11, "all"),  # parameter term dominates
        ({"n_embd": 64, "n_layer": 3, "n_head": 2}, 11, "last"),  # the last block at one token
        ({"n_embd": 16, "n_layer": 1, "n_head": 2}, 41, "all"),  # attention's T² term dominates
        ({"n_embd": 16, "n_layer": 2, "n_head": 2}, 41, "last"),
        ({"n_embd": 32, "n_layer": 2, "n_head": 2, "prompt_format": "token_matrix"}, 11, "all"),
    ],
)
def test_gpt2_step_flops_match_torchs_count(spec: dict, n: int, loss_positions: str):
    model_spec = {"name": "gpt2", "n_points": n, "activation": "gelu_pytorch_tanh"} | spec
    estimate = cluster.model_size(job(model_spec, 5, n, loss_positions=loss_positions)).flops_per_step
    counted = counted_flops(build_model(model_spec, 5), 5, n, 8, loss_positions)
    assert estimate == pytest.approx(counted, rel=0.15)


def test_parameter_counts_match_the_models():
    gpt2 = {"name": "gpt2", "n_points": 11, "n_embd": 64, "n_layer": 3, "n_head": 2}
    blocks = sum(p.numel() for p in build_model(gpt2, 5).backbone.h.parameters())
    assert cluster.model_size(job(gpt2, 5, 11)).parameters == pytest.approx(blocks, rel=0.03)
    no_mlp = gpt2 | {"mlp": False}
    attention = sum(p.numel() for block in build_model(no_mlp, 5).backbone.h for p in block.attn.parameters())
    assert cluster.model_size(job(no_mlp, 5, 11)).parameters == pytest.approx(attention, rel=0.03)
    lstm = {"name": "lstm", "hidden": 64, "n_layer": 4}
    layers = sum(p.numel() for p in build_model(lstm, 5).layers.parameters())
    assert cluster.model_size(job(lstm, 5, 11)).parameters == pytest.approx(layers, rel=0.03)


# Job-seconds of training jobs of the default run on this machine (2 threads, results/benchmarks/train,
# 2026-11-24; loss at every position, as the default config trains them): the CPU estimate, before SAFETY,
# must not stop them early.
MEASURED_SECONDS = [
    ({"name": "gpt2", "n_points": 11, "n_embd": 64, "n_layer": 6, "n_head": 2}, 5, 11, 8000, 64, 558),
    ({"name": "gpt2", "n_points": 21, "n_embd": 64, "n_layer": 3, "n_head": 2}, 5, 21, 3000, 64, 165),
    ({"name": "lstm", "hidden": 64, "n_layer": 6}, 5, 11, 4000, 64, 158),
    ({"name": "gpt2", "n_points": 129, "n_embd": 32, "n_layer": 2, "n_head": 2}, 16, 129, 600, 32, 57),
    ({"name": "lsa", "init_scale": 0.01}, 5, 21, 2000, 512, 6.3),
]


@pytest.mark.parametrize("model, d, n, steps, batch, seconds", MEASURED_SECONDS)
def test_cpu_runtime_estimates_cover_measured_jobs(model, d, n, steps, batch, seconds):
    spec = job(model, d, n, steps=steps, batch_size=batch, loss_positions="all")
    estimate = cluster.estimated_seconds(spec, on="cpu")
    assert seconds <= estimate <= 10 * seconds + cluster.START_UP_S


def test_priorities_order_the_measured_jobs_longest_first():
    """Snakemake starts the job of highest priority first: every pair of measured jobs more than 1.5× apart
    in job-seconds is ordered as measured."""
    runs = [(cluster.priority(job(m, d, n, steps=s, batch_size=b, loss_positions="all")), sec)
            for m, d, n, s, b, sec in MEASURED_SECONDS]
    for (p1, s1), (p2, s2) in itertools.combinations(runs, 2):
        if max(s1, s2) > 1.5 * min(s1, s2):
            assert (p1 > p2) == (s1 > s2), (p1, s1, p2, s2)


def test_paper_gpt2_memory_on_cpu_covers_its_measured_resident_set():
    """GPT-2 256/12/8 on 41 points, batch 64: 3.6 GB resident, measured here (reference/pitfalls.md)."""
    model = {"name": "gpt2", "n_points": 41, "n_embd": 256, "n_layer": 12, "n_head": 8}
    estimate = cluster.host_bytes(job(model, 20, 41, steps=500_000, batch_size=64), on="cpu")
    assert 3.6e9 / 2 <= estimate and cluster.SAFETY * estimate >= 3.6e9


def test_requests_follow_the_device_and_are_capped():
    gpt2 = job({"name": "gpt2", "n_points": 257, "n_embd": 256, "n_layer": 12, "n_head": 8}, 16, 257,
               steps=500_000, batch_size=64)
    lsa = job({"name": "lsa"}, 20, 41, steps=100_000, batch_size=4096)
    assert (cluster.gpus(gpt2), cluster.gpus(lsa)) == (1, 0)
    assert cluster.runtime_minutes(gpt2) == cluster.MAX_RUNTIME_MIN  # resumed from its checkpoint when retried
    assert cluster.runtime_minutes(lsa, attempt=2) == 2 * cluster.runtime_minutes(lsa)
    # on a GPU the activations are not in host memory
    assert cluster.memory_mb(gpt2) < cluster.SAFETY * (cluster.model_size(gpt2).activation_bytes) / 1e6
    # a group's models train one at a time: the group asks for the memory of its largest, whatever the order
    large = job({"name": "lsa"}, 20, 41, steps=100_000, batch_size=65536)
    assert cluster.memory_mb(large) > cluster.memory_mb(lsa)
    assert cluster.group_memory_mb([lsa, large]) == cluster.group_memory_mb([large, lsa]) == cluster.memory_mb(large)
    assert cluster.group_memory_mb([lsa]) == cluster.memory_mb(lsa)


def test_a_curriculum_counts_each_stage_at_its_own_and_its_padded_length():
    """Points 3 → 9 by 2 every 2 steps over 10 steps: stages of 2, 2, 2 and 4 steps at 3, 5, 7 and 9 points (at 4, 8,
    8 and 9 padded to multiples of 4), so a step's mean FLOPs is the step-weighted mean of the full-shape counts at
    those lengths; the parameters and the activations are the full length's."""
    model = {"name": "gpt2", "n_points": 9, "n_embd": 16, "n_layer": 2, "n_head": 2}
    curriculum = {"dims": [1, 1], "points": [3, 2], "every": 2}
    at = lambda n: cluster.model_size(job(model, 5, n, steps=10, loss_positions="all"))  # noqa: E731
    grown = cluster.model_size(job(model, 5, 9, steps=10, loss_positions="all", curriculum=curriculum))
    expected = (2 * at(3).flops_per_step + 2 * at(5).flops_per_step + 2 * at(7).flops_per_step
                + 4 * at(9).flops_per_step) / 10
    assert grown.flops_per_step == pytest.approx(expected)
    assert (grown.parameters, grown.activation_bytes) == (at(9).parameters, at(9).activation_bytes)
    padded = cluster.model_size(job(model, 5, 9, steps=10, loss_positions="all", curriculum=curriculum, pad_points=4))
    assert padded.flops_per_step == pytest.approx(
        (2 * at(4).flops_per_step + 4 * at(8).flops_per_step + 4 * at(9).flops_per_step) / 10)
    lstm = {"name": "lstm", "hidden": 8, "n_layer": 2}
    lstm_at = lambda n: cluster.model_size(job(lstm, 5, n, steps=10)).flops_per_step  # noqa: E731
    assert cluster.model_size(job(lstm, 5, 9, steps=10, curriculum=curriculum)).flops_per_step == pytest.approx(
        (2 * lstm_at(3) + 2 * lstm_at(5) + 2 * lstm_at(7) + 4 * lstm_at(9)) / 10)


def test_the_partitions_limit_caps_each_request_and_sets_the_retries():
    """A 40 h job under a 12 h limit: every attempt asks for at most 720 min, and it retries
    ⌈2 × 40 h / 12 h⌉ = 7 times (≥ ⌈40 / 12⌉ = 4 attempts of work, one to spare)."""
    assert cluster.max_runtime_min({}) == cluster.MAX_RUNTIME_MIN == 1440
    assert cluster.max_runtime_min({"ICLAB_SLURM_MAX_RUNTIME_MIN": "720"}) == 720
    for bad in ("12h", "5", "-1", ""):
        with pytest.raises(ValueError, match="ICLAB_SLURM_MAX_RUNTIME_MIN=.*whole minutes, at least 10"):
            cluster.max_runtime_min({"ICLAB_SLURM_MAX_RUNTIME_MIN": bad})
    seconds = 40 * 3600
    assert cluster.retries_needed(seconds, 720) == 7 and cluster.retries_needed(seconds) == 4
    assert [cluster.requested_minutes(seconds, a, 720) for a in (1, 2)] == [720, 720]
    assert cluster.requested_minutes(60, 1, 720) == cluster.MIN_RUNTIME_MIN  # short jobs ask for the floor


def test_the_paper_tiers_slurm_plan_under_a_12_hour_limit_finishes_every_training():
    """Every training job of the paper tier, on a GPU cluster whose partitions allow 12 h: each attempt asks for at
    most 720 min, and the retries of the training rule (its longest job's) give every job attempts whose minutes add
    up to at least its SAFETY-scaled estimate."""
    plan = build_plan(load(ROOT / "config/paper.yaml"))
    groups = [[plan.train[h].to_dict() for h in members] for members in plan.groups.values()]
    retries = max(cluster.retries_needed(cluster.group_seconds(specs), 720) for specs in groups)
    for specs in groups:
        requests = [cluster.group_runtime_minutes(specs, a, cap=720) for a in range(1, retries + 2)]
        estimate = cluster.group_seconds(specs)
        assert max(requests) <= 720 and retries >= math.ceil(estimate / (720 * 60))
        assert 60 * sum(requests) >= cluster.SAFETY * estimate, (specs[0]["model"], requests, estimate)
    assert retries > 3  # more than the profile's own: the estimate puts single_index's GPT-2s at days


def test_partition_and_account_come_from_the_environment():
    env = {"ICLAB_SLURM_PARTITION": "cpu", "ICLAB_SLURM_GPU_PARTITION": "gpu", "ICLAB_SLURM_ACCOUNT": "lab"}
    assert (cluster.partition(1, env), cluster.partition(0, env), cluster.account(env)) == ("gpu", "cpu", "lab")
    assert cluster.partition(1, {"ICLAB_SLURM_PARTITION": "cpu"}) == "cpu"
    assert (cluster.partition(1, {}), cluster.partition(0, {}), cluster.account({})) == (None, None, None)


# The paper tier's training jobs projected from its smoke run (every shape, two steps each, measured on this
# machine's 2 threads): `python -m iclab cost --config config/paper.yaml --smoke 2 --out benchmarks/results/paper_cost`.
ROOT = Path(__file__).resolve().parents[1]
PAPER_COST = ROOT / "benchmarks/results/paper_cost.csv"
# Twins of one shape measured up to 15% apart in seconds a step (GPT-2 on 257 points: 42.6–48.7 s): a request
# covers its projection by a quarter more.
MARGIN = 1.25


@pytest.fixture(scope="module")
def paper_training() -> list[tuple[list[dict], pd.Series]]:
    """(the specs of each training job of the paper tier, its row of the committed projection)."""
    config = load(ROOT / "config/paper.yaml")
    plan = build_plan(config)
    table = pd.read_csv(PAPER_COST)
    rows = table[table["rule"] == "train"].set_index("job")
    assert set(rows.index) == set(plan.groups), f"{PAPER_COST} is stale: rerun the paper tier's smoke run and cost"
    return [([plan.train[h].to_dict() for h in members], rows.loc[group]) for group, members in plan.groups.items()]


def attempts() -> int:
    return 1 + yaml.safe_load((ROOT / "profiles/slurm/config.yaml").read_text())["retries"]


@pytest.mark.parametrize("gpus_allowed", [False, True])
def test_paper_memory_requests_cover_the_measured_peaks(paper_training, gpus_allowed: bool):
    """Host memory measured at every paper shape on a CPU; on a GPU cluster the GPT-2s and LSTMs keep their
    activations on the GPU, which only a GPU run can measure, so only the CPU jobs are checked there."""
    for specs, measured in paper_training:
        if cluster.device(specs[0], gpus_allowed) == "cpu":
            requested = cluster.group_memory_mb(specs, gpus_allowed)
            assert requested >= MARGIN * measured["peak_host_mb"], (measured["what"], requested, measured["peak_host_mb"])


@pytest.mark.parametrize("gpus_allowed", [False, True])
def test_paper_runtime_requests_cover_the_projected_seconds(paper_training, gpus_allowed: bool):
    """A CPU job whose projection fits the cap asks for it at its first attempt; a longer one is covered by its
    attempts (each resumes from the last one's checkpoint). The CPU jobs that no attempts cover are exactly the
    GPT-2s and LSTMs, which ask for a GPU where the cluster has one (their GPU seconds are assumed, not measured)."""
    uncovered = []
    for specs, measured in paper_training:
        if cluster.device(specs[0], gpus_allowed) == "gpu":
            continue
        needed = MARGIN * measured["cpu_seconds"]
        first = 60 * cluster.group_runtime_minutes(specs, 1, gpus_allowed)
        every = sum(60 * cluster.group_runtime_minutes(specs, a, gpus_allowed) for a in range(1, attempts() + 1))
        if needed <= 60 * cluster.MAX_RUNTIME_MIN:
            assert first >= needed, (measured["what"], first, needed)
        elif every < needed:
            uncovered.append(specs[0]["model"]["name"])
    assert set(uncovered) <= set(cluster.ACCELERATED_MODELS) and (not gpus_allowed or not uncovered)


@pytest.mark.parametrize("model", [{"name": "gpt2", "n_embd": 256, "n_layer": 12, "n_head": 8},
                                   {"name": "lstm", "hidden": 256, "n_layer": 10}])
def test_a_gpu_training_reserves_its_weights_gradients_and_adams_moments_twice_over(model):
    """gpu_mem_mb of a paper-size GPT-2 and LSTM (d = 20, 41 points, batch 64) covers twice (SAFETY) the CUDA context
    and 16 bytes for each parameter the built torch module has (weights, gradients, Adam's two moments, float32); a
    linear model reserves none."""
    job = {"model": model, "task": {"d": 20, "n_points": 41}, "train": {"steps": 10, "batch_size": 64}}
    built = model | {"n_points": 41} if model["name"] == "gpt2" else model
    parameters = sum(p.numel() for p in build_model(built, 20).parameters())
    reserved = cluster.device_memory_mb(job) * 1e6
    assert reserved >= cluster.SAFETY * (cluster.CUDA_CONTEXT_BYTES + 16 * parameters)
    assert cluster.device_memory_mb(job | {"model": {"name": "lsa"}}) == 0
    assert cluster.device_memory_mb(job, gpus_allowed=False) == 0


def test_a_gpt2s_gpu_reservation_counts_what_sdpa_stores_by_hand():
    """single_index's GPT-2 on gpu_node (12 layers × 256, 514 tokens, batch 64, bf16, gelu_pytorch_tanh): 394,752
    token-layers × 256 × 34 B = 3,435,921,408 B of activations (no attention scores: SDPA stores none), 9,437,184
    parameters × 16 B, 1e9 B of CUDA context: × 2 = 9,174 MB → 9,500 MB reserved. With the scores' term (the old
    model) it reserved 49,000; counting bf16 as float32 would give 16,500; gelu_new adds 40 B a unit under bf16 and
    48 in float32 (its float32 intermediates); a block without its MLP keeps 13."""
    from iclab.compute.gpu_check import tier_shapes

    spec = tier_shapes(ROOT / "tests" / "data" / "gpu_shapes.yaml")[0].spec
    assert spec["model"]["activation"] == "gelu_pytorch_tanh" and spec["train"]["precision"] == "bfloat16"
    size = cluster.model_size(spec)
    assert size.parameters == 9_437_184 and size.on_device == 394_752 * 256 * 34
    assert cluster.device_memory_mb(spec) == 9_500
    as_gelu_new = spec | {"model": spec["model"] | {"activation": "gelu_new"}}
    assert cluster.model_size(as_gelu_new).on_device == 394_752 * 256 * (34 + 40)
    as_float32 = spec | {"train": spec["train"] | {"precision": "float32"}}
    assert cluster.model_size(as_float32).on_device == 394_752 * 256 * 68
    no_mlp = spec | {"model": spec["model"] | {"activation": "gelu_new", "mlp": False}}
    assert cluster.model_size(no_mlp).on_device == 394_752 * 256 * 13  # attention 11 and one layer norm 2


def test_the_host_and_measured_device_reservations_of_a_gpu_training_by_hand():
    """single_index's GPT-2 on gpu_node (9,437,184 parameters) on a GPU: host 1e9 (base) + 16 × 9,437,184 + 1e9 (CUDA
    context) = 2,150,994,944 B, × 2 = 4,302 MB → 4,500 MB (without the context 2,500, without the parameters 4,000,
    without the base 2,500). With its shape's peak measured at 3,000 MiB: device 1e9 + 3,000 × 2²⁰ = 4,145,728,000 B,
    × 2 = 8,291 MB → 8,500 MB (without the context 6,500; MiB read as MB 8,000; the model's estimate 9,500)."""
    from iclab.compute.gpu_check import tier_shapes

    spec = tier_shapes(ROOT / "tests" / "data" / "gpu_shapes.yaml")[0].spec
    assert cluster.model_size(spec).parameters == 9_437_184
    assert cluster.memory_mb(spec) == 4_500
    rates = cluster.GpuRates(card="H100", fits={}, memory_mb={cluster.step_key(spec): 3_000.0})
    assert cluster.device_memory_mb(spec, rates=rates) == 8_500
    assert cluster.device_memory_mb(spec) == 9_500


def test_a_gpu_step_estimated_from_the_anchors_by_hand():
    """single_index's GPT-2 on gpu_node (12 blocks, 2,395,342,503,936 FLOPs a step in bf16, 3,435,921,408 B of
    activations, 9,437,184 parameters): the host 7 ms + 12 · 3.76 ms = 52.12 ms; the device 2.3953e12 / (0.09 ·
    989e12) = 26.911 ms and (2 · 3,435,921,408 + 40 · 9,437,184) B / 3.35e12 B/s = 2.164 ms, 29.07 ms: the step is
    52.12 ms, host-bound (their sum, 81.2 ms, would count the overlap twice). A step of 8.901e12 bf16 FLOPs at the
    same depth takes the device 100 ms: device-bound. probe_layers' LSTM (10 layers × 82 tokens): 7 ms + 820 · 66 µs
    = 61.12 ms."""
    from iclab.compute.gpu_check import tier_shapes

    shapes = tier_shapes(ROOT / "tests" / "data" / "gpu_shapes.yaml")
    spec = shapes[0].spec
    size = cluster.model_size(spec)
    assert size.flops_per_step == 2_395_342_503_936 and size.on_device == 3_435_921_408
    assert cluster.gpu_host_seconds(spec, size) == pytest.approx(0.05212, rel=1e-9)
    assert cluster.gpu_device_seconds(spec, size) == pytest.approx(0.026911 + 0.002164, abs=2e-6)
    assert cluster.gpu_step_seconds(spec, size) == pytest.approx(0.05212, rel=1e-9)
    heavy = cluster.Size(flops_per_step=8.901e12, steps=1, parameters=0, activation_bytes=0)
    assert cluster.gpu_step_seconds(spec, heavy) == pytest.approx(0.1, rel=1e-9)
    lstm = next(shape.spec for shape in shapes if shape.spec["model"]["name"] == "lstm")
    assert (lstm["model"]["n_layer"], lstm["task"]["n_points"]) == (10, 41)
    assert cluster.gpu_step_seconds(lstm, cluster.model_size(lstm)) == pytest.approx(0.06112, rel=1e-9)


def test_the_anchors_estimate_against_the_steps_the_h100_measured():
    """The anchors' estimate against every step the third GPU run timed on an H100 (the training loop, not
    compiled; benchmarks/results/gpu_h100_2026-11-28): within a factor 1.5 each, the median ratio within 10% of 1
    (the host constants were fitted to these rows: not a held-out test; Fu et al.'s ~41 ms a step for the 12 × 256
    GPT-2 at ~30 tokens in float32, their code and card, is one: 52 ms here)."""
    import json

    rates = pd.read_csv(ROOT / "benchmarks/results/gpu_h100_2026-11-28/gpu_rates_nvidia_h100_80gb_hbm3.csv")
    rows = rates[(rates["loop"] == "new") & ~rates["compile"] & rates["error"].isna()]
    ratios = []
    for key, measured in zip(rows["key"], rows["seconds_per_step"], strict=True):
        step = json.loads(key)
        spec = job(step["model"], step["d"], step["n_points"], batch_size=step["batch_size"],
                   loss_positions=step["loss_positions"], precision=step["precision"], tf32=step["tf32"])
        ratios.append(cluster.gpu_step_seconds(spec, cluster.model_size(spec)) / measured)
    assert len(ratios) == 19 and 1 / 1.5 < min(ratios) and max(ratios) < 1.5, ratios
    assert abs(sorted(ratios)[len(ratios) // 2] - 1) < 0.1
    fu = job({"name": "gpt2", "n_embd": 256, "n_layer": 12, "n_head": 8}, 20, 15, batch_size=64)
    assert cluster.gpu_step_seconds(fu, cluster.model_size(fu)) == pytest.approx(0.05212, rel=1e-9)


def test_a_rate_fit_never_takes_a_negative_overhead_by_hand():
    """A family measured at (1e12 FLOPs, 0.01 s) and (3e12, 0.05 s): least squares gives 2e-14 s a FLOP and an overhead
    of −0.01 s, which no step has, so the fit goes through the origin: Σfs / Σf² = 1.6e11 / 1e25 = 1.6e-14 s a FLOP,
    overhead 0 (a 2e12-FLOP step: 0.032 s, not the line's 0.03). A positive overhead is kept: (1e12, 0.012) and
    (3e12, 0.032) give 0.002 s and 1e-14."""
    assert cluster.fit_step_time([(1e12, 0.01), (3e12, 0.05)]) == (0.0, pytest.approx(1.6e-14))
    assert cluster.fit_step_time([(1e12, 0.012), (3e12, 0.032)]) == (pytest.approx(0.002), pytest.approx(1e-14))
    assert cluster.fit_step_time([(2e12, 0.03)]) == (0.0, pytest.approx(1.5e-14))  # one shape: through the origin


def cluster_requests_module():
    spec = importlib.util.spec_from_file_location("cluster_requests", ROOT / "benchmarks" / "cluster_requests.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cluster_requests_record_spans_its_jobs_and_names_the_longest():
    """Three hand-made jobs: 2 h (2 models), 5 h (1 model) and 3 h requested; memory 4, 1, 9 GB. By hand: 2–5 h,
    1–9 GB, the longest the 5 h one (the last or the most memory would name another)."""
    jobs = [{"minutes": 120, "hours": 2.0, "uncapped_hours": 2.0, "estimate_hours": 1.0, "memory_gb": 4.0,
             "gpu_memory_gb": 0.0, "model": "lsa", "models": 2},
            {"minutes": 300, "hours": 5.0, "uncapped_hours": 5.0, "estimate_hours": 2.5, "memory_gb": 1.0,
             "gpu_memory_gb": 0.0, "model": "gd_beta", "models": 1},
            {"minutes": 180, "hours": 3.0, "uncapped_hours": 3.0, "estimate_hours": 1.5, "memory_gb": 9.0,
             "gpu_memory_gb": 0.0, "model": "two_stage", "models": 3}]
    found = cluster_requests_module().spans(jobs)
    assert (found["hours_min"], found["hours_max"], found["memory_gb_min"], found["memory_gb_max"]) == (2, 5, 1, 9)
    assert (found["jobs"], found["longest_model"], found["longest_models"]) == (3, "gd_beta", 1)


def test_the_committed_cluster_requests_record_is_what_cluster_py_requests_now():
    """benchmarks/results/cluster_requests.json (docs/cluster.md quotes it) against the requests of the current code
    and config/paper.yaml: a change to either makes it stale until the benchmark is rerun."""
    committed = json.loads((ROOT / "benchmarks/results/cluster_requests.json").read_text())
    assert json.loads(json.dumps(cluster_requests_module().cluster_requests(ROOT))) == committed, \
        "stale: rerun python benchmarks/cluster_requests.py"


def batched_single_index(members: int, steps: int | None = None) -> list[dict]:
    """``members`` specs of gpu_node's single_index GPT-2 (12 × 256, 257 points, bf16), batched, seeds apart."""
    from iclab.compute.gpu_check import tier_shapes

    spec = tier_shapes(ROOT / "tests" / "data" / "gpu_shapes.yaml")[0].spec
    train = spec["train"] | {"batched": True} | ({} if steps is None else {"steps": steps})
    return [spec | {"train": train, "seed": seed} for seed in range(members)]


def test_a_batched_groups_gpu_step_by_hand():
    """single_index's GPT-2 (its member alone: host 52.12 ms from the anchors; device 2.3953e12 FLOPs and 2.164 ms of
    bytes). A batched group of 4, conservative: the host 2.0 × 52.12 = 104.24 ms; the device 4 × (2.3953e12 / (0.12
    × 989e12) + 2.164 ms) = 4 × 22.347 = 89.39 ms: 104.24 ms (host-bound; one model alone's 52.12, or 4 of them one
    after another 208.5). Central: host 1.72 × 52.12 = 89.65 ms, device 4 × (9.688 + 2.164) = 47.41: 89.65. At 16:
    device 16 × 22.347 = 357.6 ms (15 members would give 335.2). 1,000 steps of the group of 4: 300 s of start-up +
    104.24 s = 404.24 s, where the same models one after another take 300 + 4 × 52.12 = 508.48 s."""
    group = batched_single_index(4, steps=1000)
    size = cluster.model_size(group[0])
    assert size.flops_per_step == 2_395_342_503_936
    conservative, central, optimistic = cluster.BATCHED_SCENARIOS
    assert cluster.group_step_seconds(group) == pytest.approx(0.10424, rel=1e-9)
    assert cluster.group_step_seconds(group, scenario=central) == pytest.approx(1.72 * 0.05212, rel=1e-9)
    member = 2_395_342_503_936 / (0.12 * 989e12) + (2 * 3_435_921_408 + 40 * 9_437_184) / 3.35e12
    assert member == pytest.approx(0.022347, abs=1e-6)
    assert cluster.group_step_seconds(batched_single_index(16)) == pytest.approx(16 * member, rel=1e-9)
    assert cluster.group_seconds(group) == pytest.approx(404.24, rel=1e-9)
    unbatched = [spec | {"train": spec["train"] | {"batched": False}} for spec in group]
    assert cluster.group_seconds(unbatched) == pytest.approx(508.48, rel=1e-9)
    assert optimistic.efficiency["float32"] > central.efficiency["float32"] > conservative.efficiency["float32"]


def test_a_batched_groups_memory_requests_by_hand():
    """single_index's member on a GPU keeps 16 × 9,437,184 + 3,435,921,408 = 3,586,916,352 B. A batched group of 4:
    one CUDA context 1e9 + 4 × that = 15,347,665,408 B, × 2 = 30,695 MB → 31,000 MB (the largest member's 9,500; a
    context a member 37,000; 4 members' reservations 38,000). A batched group of one trains a discarded copy
    beside it: 1e9 + 2 × 3,586,916,352, × 2 → 16,500 (alone, 9,500). Host, on the GPU: 1e9 (base) + 4 × 16 ×
    9,437,184 + 1e9 (context) = 2,603,979,776 B, × 2 → 5,500 MB (a member's 4,500). Measured at 3,000 MiB a member:
    1e9 + 4 × 3,145,728,000, × 2 = 27,166 → 27,500."""
    group = batched_single_index(4)
    assert cluster.group_device_memory_mb(group) == 31_000
    assert cluster.group_device_memory_mb(group[:1]) == 16_500
    assert cluster.device_memory_mb(group[0]) == 9_500
    assert cluster.group_memory_mb(group) == 5_500
    assert cluster.group_memory_mb(group, gpus_allowed=False) > cluster.group_memory_mb(group[:2], gpus_allowed=False)
    rates = cluster.GpuRates(card="H100", fits={}, memory_mb={cluster.step_key(group[0]): 3_000.0})
    assert cluster.group_device_memory_mb(group, rates=rates) == 27_500
    assert cluster.group_device_memory_mb(group, gpus_allowed=False) == 0


def test_a_group_is_timed_only_by_a_row_of_its_size(tmp_path: Path):
    """A rates file with single_index's shape alone (0.034 s) and as a batched group of 4 (0.080 s): the group of 4
    takes its row's 0.080; a group of 5 is estimated with its member's 0.034 (host 2 × 0.034 = 0.068 against a
    device of 5 × 22.347 = 111.7 ms: 0.1117); one model takes 0.034, never the group's row. A file written before
    the column reads every row as one model's."""
    group = batched_single_index(4)
    key = cluster.step_key(group[0])
    flops = cluster.model_size(group[0]).flops_per_step
    base = {"card": "H200", "key": key, "family": "gpt2", "precision": "bfloat16", "tf32": "false",
            "compile": "false", "cuda_graphs": "false", "loop": "new", "flops_per_step": flops}
    path = tmp_path / "rates.csv"
    pd.DataFrame([base | {"seconds_per_step": 0.034, "group_size": 1},
                  base | {"seconds_per_step": 0.080, "group_size": 4}]).to_csv(path, index=False)
    rates = cluster.GpuRates.read(path)
    assert cluster.group_step_seconds(group, rates) == pytest.approx(0.080)
    member = 2_395_342_503_936 / (0.12 * 989e12) + (2 * 3_435_921_408 + 40 * 9_437_184) / 3.35e12
    assert cluster.group_step_seconds(batched_single_index(5), rates) == pytest.approx(5 * member, rel=1e-9)
    assert rates.step_seconds(group[0], flops) == pytest.approx(0.034)
    assert cluster.group_gpu_basis(group, rates) == "batched: measured on H200 at G = 4"
    assert cluster.group_gpu_basis(batched_single_index(5), rates) == ("batched: estimated from one member's step "
                                                                       "(measured on H200) and peak shares")
    pd.DataFrame([base | {"seconds_per_step": 0.034}]).to_csv(path, index=False)
    assert cluster.GpuRates.read(path).shapes == {key: 0.034}


def test_a_captured_steps_gpu_time_by_hand(tmp_path: Path):
    """``train.capture`` (issue 101's estimate): single_index's shape alone timed at 0.034 s and 1,441 kernels a step
    (the H100's count). Captured alone, conservative: max(1,441 × 3 µs = 4.323 ms, the device's 22.347 ms) = 22.347
    ms (eager: 34). A captured group of 2: max(2.0 × 4.323 = 8.646 ms, 2 × 22.347 = 44.69 ms) = 44.69 (eager: the host's
    2 × 34 = 68). At 20,000 kernels the kernels bind: alone 60 ms conservative, 50 ms central (2.5 µs; its device
    9.688 + 2.164 = 11.85 ms); 1,000 steps alone 300 + 60 = 360 s. A shape whose kernels no row counted keeps the
    eager step (0.034 s), and its basis says so."""
    key = cluster.step_key(batched_single_index(1)[0])
    flops = cluster.model_size(batched_single_index(1)[0]).flops_per_step
    base = {"card": "H100", "key": key, "family": "gpt2", "precision": "bfloat16", "tf32": "false",
            "compile": "false", "cuda_graphs": "false", "loop": "new", "flops_per_step": flops,
            "seconds_per_step": 0.034}

    def rates_with(kernels: float | None) -> cluster.GpuRates:
        path = tmp_path / f"rates_{kernels}.csv"
        pd.DataFrame([base | ({} if kernels is None else {"kernels_per_step": kernels})]).to_csv(path, index=False)
        return cluster.GpuRates.read(path)

    def captured(jobs: list[dict]) -> list[dict]:
        return [job | {"train": job["train"] | {"capture": True}} for job in jobs]

    conservative, central, _ = cluster.BATCHED_SCENARIOS
    counted, many, uncounted = rates_with(1441), rates_with(20_000), rates_with(None)
    member = 2_395_342_503_936 / (0.12 * 989e12) + (2 * 3_435_921_408 + 40 * 9_437_184) / 3.35e12  # 22.347 ms
    alone = [job | {"train": job["train"] | {"batched": False, "steps": 1000}} for job in batched_single_index(1)]
    assert cluster.captured_step_seconds(captured(alone)[0], conservative, counted) == pytest.approx(member, rel=1e-9)
    assert cluster.estimated_seconds(alone[0], "gpu", counted) == pytest.approx(300 + 1000 * 0.034)
    assert cluster.group_step_seconds(captured(batched_single_index(2)), counted) == pytest.approx(2 * member,
                                                                                                   rel=1e-9)
    assert cluster.group_step_seconds(batched_single_index(2), counted) == pytest.approx(2 * 0.034)
    assert cluster.captured_step_seconds(captured(alone)[0], conservative, many) == pytest.approx(0.060)
    assert cluster.captured_step_seconds(captured(alone)[0], central, many) == pytest.approx(0.050)
    assert cluster.estimated_seconds(captured(alone)[0], "gpu", many) == pytest.approx(360.0)
    assert cluster.group_seconds(captured(alone), rates=many, scenario=central) == pytest.approx(350.0)
    assert cluster.captured_step_seconds(captured(alone)[0], conservative, uncounted) is None
    assert cluster.estimated_seconds(captured(alone)[0], "gpu", uncounted) == pytest.approx(300 + 1000 * 0.034)
    assert cluster.gpu_basis(captured(alone)[0], counted) == (
        "captured: its kernels counted on H100, a scenario's time a kernel and peak shares")
    assert cluster.gpu_basis(captured(alone)[0], uncounted) == (
        "measured on H100; captured, its kernels not counted: the eager step")
    assert cluster.group_gpu_basis(captured(batched_single_index(2)), counted) == (
        "batched and captured: estimated from one member's kernels (counted on H100) and peak shares")
    # a captured group bound by its kernels: 2.0 × 20,000 × 3 µs = 0.12 s over the device's 44.69 ms; an eager group
    # whose shape's kernels were counted keeps the eager step's basis
    assert cluster.group_step_seconds(captured(batched_single_index(2)), many) == pytest.approx(0.12)
    assert cluster.group_gpu_basis(batched_single_index(2), counted) == (
        "batched: estimated from one member's step (measured on H100) and peak shares")


def test_a_captured_gpt2_step_predicts_at_every_position_by_hand():
    """Table 1's GPT-2 (token matrix, 128 × 6 × 4, n = 41, batch 64) trained at the last query: eagerly it runs n = 41
    tokens and reads one, 64 × (6 · 2,552 · 128² + 12 · 8,446 · 128) = 16,886,071,296 FLOPs a step; captured, its
    loss masked on the device, it predicts at every position: 2n = 82 tokens, 41 read, dense 5 · 12 · 82 + 2 · 82 +
    10 · 41 = 5,494 and attention 5 · 82² + 41 · 82 = 36,982 E-multiples, 64 × (6 · 5,494 · 128² + 12 · 36,982 · 128)
    = 38,200,737,792 (2.26×). A model read at every position already costs the same either way."""
    job = {"model": {"name": "gpt2", "n_embd": 128, "n_layer": 6, "n_head": 4, "prompt_format": "token_matrix"},
           "task": {"d": 20, "n_points": 41}, "train": {"steps": 500_000, "batch_size": 64}}
    captured = job | {"train": job["train"] | {"capture": True}}
    assert cluster.model_size(job).flops_per_step == 16_886_071_296
    assert cluster.model_size(captured).flops_per_step == 38_200_737_792
    every = {key: job[key] | ({"loss_positions": "all"} if key == "train" else {}) for key in job}
    assert cluster.model_size(every | {"train": every["train"] | {"capture": True}}).flops_per_step == (
        cluster.model_size(every).flops_per_step)


def test_a_batched_group_on_a_cpu_counts_its_members_by_hand():
    """On a CPU (no GPU allowed) single_index's member steps in 5 ms + 394,752 token-layers × 6 µs + 2.3953e12 FLOPs
    / 4e10 = 62.2571 s. A batched group of 4 counts its members one after another: 300 + 4 × 1,000 × 62.2571 =
    249,328.3 s (the GPU's batched step would give 404.2 s); a group of one, with its copy, 300 + 2 × 62,257.1 =
    124,814.1 s. Its host memory: 1e9 + 4 × 16 × 9,437,184 + 4 × 23,104,045,056 B of activations (the CPU model:
    2 × 514 × 64 × 256 × 12 × (34 + 5 · 8 · 514 / 256)) = 94,020,160,000 B, × 2 → 188,500 MB (one member's
    activations added instead of multiplied: 49,500)."""
    assert cluster.model_size(batched_single_index(1)[0]).activation_bytes == 23_104_045_056
    assert cluster.group_seconds(batched_single_index(4, steps=1000), gpus_allowed=False) == pytest.approx(
        300 + 4 * 1000 * 62.2571, abs=0.5)
    assert cluster.group_seconds(batched_single_index(1, steps=1000), gpus_allowed=False) == pytest.approx(
        300 + 2 * 1000 * 62.2571, abs=0.5)
    assert cluster.group_memory_mb(batched_single_index(4), gpus_allowed=False) == 188_500


def test_only_a_batched_group_on_a_gpu_runs_producers():
    """loop.producers 2: a batched group asking a GPU runs 2; the same group on a cluster without GPUs, one model
    alone on a GPU, and a linear model run none (their loop's thread makes their batches)."""
    alone = batched_single_index(1)[0] | {"train": batched_single_index(1)[0]["train"] | {"batched": False}}
    assert cluster.producers(batched_single_index(4), 2) == 2
    assert cluster.producers(batched_single_index(4), 2, gpus_allowed=False) == 0
    assert cluster.producers([alone], 2) == 0
    assert cluster.producers([alone | {"model": {"name": "lsa"}}], 2) == 0


def test_rates_rows_of_groups_anywhere_in_the_file_by_hand(tmp_path: Path):
    """A group row of 2 members (0.05 s) first, then a group of 4 (0.08 s), then the model alone (0.034 s): each is
    read for its own size, wherever it stands in the file."""
    group = batched_single_index(4)
    key = cluster.step_key(group[0])
    base = {"card": "H200", "key": key, "family": "gpt2", "precision": "bfloat16", "tf32": "false",
            "compile": "false", "cuda_graphs": "false", "loop": "new",
            "flops_per_step": cluster.model_size(group[0]).flops_per_step}
    path = tmp_path / "rates.csv"
    pd.DataFrame([base | {"seconds_per_step": 0.05, "group_size": 2}, base | {"seconds_per_step": 0.08, "group_size": 4},
                  base | {"seconds_per_step": 0.034, "group_size": 1}]).to_csv(path, index=False)
    rates = cluster.GpuRates.read(path)
    assert rates.groups == {(key, 2): 0.05, (key, 4): 0.08} and rates.shapes == {key: 0.034}
    assert cluster.group_step_seconds(batched_single_index(2), rates) == pytest.approx(0.05)
