"""Cluster requests (iclab.cluster) against counts made independently: torch's FLOP counter, the models' own
parameters, job-seconds and memory measured on this machine."""

import itertools

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from iclab import cluster
from iclab.fit.sgd import prompt_loss
from iclab.models import build_model


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


def test_partition_and_account_come_from_the_environment():
    env = {"ICLAB_SLURM_PARTITION": "cpu", "ICLAB_SLURM_GPU_PARTITION": "gpu", "ICLAB_SLURM_ACCOUNT": "lab"}
    assert (cluster.partition(1, env), cluster.partition(0, env), cluster.account(env)) == ("gpu", "cpu", "lab")
    assert cluster.partition(1, {"ICLAB_SLURM_PARTITION": "cpu"}) == "cpu"
    assert (cluster.partition(1, {}), cluster.partition(0, {}), cluster.account({})) == (None, None, None)
