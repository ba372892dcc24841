"""Workflow runs that need no finished tiny run, beside test_workflow.py's (pytest-xdist gives each file to one
worker): an experiment added as a package, configs and targets refused before any job, jobs killed mid-run and
rerun, the paper tier's dry run through the SLURM profile, the stages' help and the lint.

Each runs Snakemake in its own scratch directory.
"""

import importlib.util
import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
import yaml
from conftest import REPO, SNAKEMAKE, TINY, TOY_CONFIG, job_counts, run_cli, snakemake

from iclab.compute import cluster
from iclab.config import load
from iclab.store.cubes import read_cube
from iclab.pipeline.plan import build_plan


@pytest.mark.e2e
def test_an_experiment_added_as_a_package_runs_end_to_end(tmp_path: Path, scratch_src: Path):
    """The toy experiment is only a package (experiment, schema, figure, caption) and a config: it
    gets its data sets (with an extra one), models, evaluation, derived and theory variables, cube and figure."""
    result = snakemake(tmp_path, scratch_src, config=TOY_CONFIG)
    assert result.returncode == 0, result.stdout + result.stderr
    assert job_counts(result) == {
        "aggregate": 1,
        "all": 1,
        "data": 4,
        "evaluate": 2,
        "claims": 1,
        "figure": 1,
        "theory": 1,
        "total": 13,
        "train": 2,  # 4 LSAs: one job a spec, its two seeds
    }
    cube = read_cube(tmp_path / "results/cubes/toy_noise.nc", kind="experiment")
    assert list(cube.sigma.values) == [0.0, 1.0] and list(cube.seed.values) == [0, 1]
    assert set(cube.learner.values) == {"lsa", "ols", "zero"}
    assert cube.lsa_gain.dims == ("sigma", "seed") and cube.lsa_product_norm.dims == ("sigma", "seed")
    # the probe prompts (4000, their own stream) estimate E y² = d + σ² within Monte-Carlo error
    error = np.abs(cube.label_power - cube.theory_label_power) / cube.label_power_sem
    assert (error < 4).all(), error.values
    # zero predictor's risk is E y² too, estimated on the evaluation prompts
    np.testing.assert_allclose(cube.query_risk.sel(learner="zero").isel(seed=0), cube.theory_label_power, rtol=0.2)
    assert (tmp_path / "results/figures/toy_noise.pdf").stat().st_size > 0
    claims = pd.read_csv(tmp_path / "results/tables/claims.csv")  # the package's claims.py, one row per σ
    assert list(claims.experiment) == ["toy_noise", "toy_noise"] and list(claims.verdict) == ["holds", "holds"]


@pytest.mark.e2e
def test_bad_config_fails_before_any_job(tmp_path: Path, scratch_src: Path):
    config = yaml.safe_load(TINY.read_text())
    config["experiments"]["ltb_gap"]["n"] = [0]
    config["experiments"]["ltb_gap"]["models"] = ["lsa", "mamba"]
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(config))
    result = snakemake(tmp_path, scratch_src, "-n", config=bad)
    assert result.returncode != 0
    message = result.stdout + result.stderr
    assert "experiments.ltb_gap.n[0]: 0 is out of range; must be >= 1" in message
    assert "experiments.ltb_gap.models[1]: 'mamba' is not allowed; allowed: lsa, ltb, gd_beta" in message
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize(
    "target, message",
    [
        ("results/cubes/../../evil.nc", "No rule to produce evil.nc"),
        ("/tmp/evil.nc", "No rule to produce /tmp/evil.nc"),
        ("results/figures/not_an_experiment.png", "No rule to produce results/figures/not_an_experiment.png"),
        ("results/models/0123456789ab", "no model group '0123456789ab' in the plan of this config"),
    ],
)
def test_targets_outside_results_or_the_plan_are_refused(tmp_path: Path, target: str, message: str):
    result = snakemake(tmp_path, REPO / "src", "-n", target)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert message in output, output[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".snakemake"]  # nothing written but Snakemake's own


KILL_TARGET = "results/cubes/ltb_gap.nc"  # data, training, evaluation, theory and aggregation; no figure


def kill_config(tmp_path: Path) -> Path:
    """The tiny config's ltb_gap, one LTB of two seeds (one training job, a group) trained long enough (2000
    steps, a checkpoint every 100) to be killed in the middle of the second."""
    config = yaml.safe_load(TINY.read_text())
    gap = config["experiments"]["ltb_gap"] | {"models": ["ltb"], "seeds": [0, 1], "beta_star_norm": [2.0]}
    gap["train"] = gap["train"] | {"steps": 2000}
    config["experiments"] = {"ltb_gap": gap}
    config["progress"] = {"log_every": 100, "checkpoint_every": 100}
    path = tmp_path / "kill.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def stage_pids(workdir: Path, stage: str) -> list[int]:
    """Processes running ``python -m iclab <stage>`` in ``workdir`` (Snakemake's jobs run there)."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            argv, cwd = (proc / "cmdline").read_bytes().split(b"\0"), (proc / "cwd").resolve()
        except OSError:
            continue
        if argv[1:4] == [b"-m", b"iclab", stage.encode()] and cwd == workdir.resolve():
            pids.append(int(proc.name))
    return pids


def run_and_kill(workdir: Path, config: Path, stage: str, ready) -> None:
    """Start the workflow, SIGKILL its ``stage`` job once ``ready()`` holds and the job runs, as a
    scheduler would; Snakemake then stops with that job failed."""
    cmd = [str(SNAKEMAKE), "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir)]
    cmd += ["--configfile", str(config), "--replace-workflow-config", "--cores", "1", KILL_TARGET]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO / "src")}
    with subprocess.Popen(cmd, env=env, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as snake:
        deadline = time.monotonic() + 120
        while not (ready() and (pids := stage_pids(workdir, stage))):
            assert snake.poll() is None, f"the workflow ended before its {stage} job was killed"
            assert time.monotonic() < deadline, f"no {stage} job to kill"
            time.sleep(0.02)
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        _, err = snake.communicate(timeout=120)
    assert snake.returncode != 0, err


@pytest.mark.e2e
def test_jobs_killed_mid_run_and_rerun_end_with_the_cubes_of_an_uninterrupted_run(tmp_path: Path):
    config = kill_config(tmp_path)
    reference, killed = tmp_path / "reference", tmp_path / "killed"
    reference.mkdir(), killed.mkdir()
    assert snakemake(reference, REPO / "src", KILL_TARGET, config=config).returncode == 0

    checkpoints = killed / "results" / "checkpoints"
    ((first, second),) = build_plan(load(config)).groups.values()  # one group: the two seeds, in order
    finished, midway = checkpoints / f"{first}.nc", checkpoints / f"{second}.pt"
    # the first seed finished and waiting beside the checkpoints, the second >= 100 steps in
    run_and_kill(killed, config, "train", lambda: finished.is_file() and midway.is_file())
    assert midway.is_file() and not any((killed / "results" / "models").rglob("*.nc"))
    run_and_kill(killed, config, "evaluate", lambda: True)
    assert not (killed / "results" / "eval").exists() or not any((killed / "results" / "eval").rglob("*.nc"))
    run_and_kill(killed, config, "aggregate", lambda: True)
    assert not (killed / "results" / "cubes").exists()
    result = snakemake(killed, REPO / "src", KILL_TARGET, config=config)
    assert result.returncode == 0, result.stdout + result.stderr
    log = next((killed / "results" / "logs" / "train").glob("*.log")).read_text()
    assert "finished earlier" in log and "resuming from checkpoint" in log

    files = sorted(p.relative_to(reference) for p in (reference / "results").rglob("*.nc"))
    assert files == sorted(p.relative_to(killed) for p in (killed / "results").rglob("*.nc"))
    for name in files:
        xr.testing.assert_identical(read_cube(reference / name), read_cube(killed / name))
    hidden = {p.name for p in (killed / "results").rglob("*") if p.name.startswith(".")}
    assert hidden <= {".snakemake_timestamp"}  # no temporaries left (Snakemake marks a directory output so)


def job_resources(block: str) -> dict[str, str]:
    """The resources line of one job of a dry run: name → value."""
    line = block.split("resources: ")[1].splitlines()[0]
    return dict(item.split("=", 1) for item in line.split(", "))


def test_paper_tier_through_the_slurm_profile_asks_a_gpu_for_sequence_models_only(tmp_path: Path):
    """Dry run of config/paper.yaml through profiles/slurm (snakemake-executor-plugin-slurm, a test
    dependency): a training job asks for one GPU and the GPU partition exactly when it trains a GPT-2 or an
    LSTM; runtime and memory follow iclab.compute.cluster's estimate of its spec, under the partition's 12 h limit and
    from a rates file of `iclab gpu-check` (bf16 GPT-2 rows), both given in the environment; every job gets the
    account."""
    assert importlib.util.find_spec("snakemake_executor_plugin_slurm"), "pip install -e '.[test]' installs it"
    rates_path = tmp_path / "gpu_rates_card_x.csv"
    rates_path.write_text(",".join(cluster.RATE_COLUMNS) + "\n" + "".join(
        f"Card X,k{i},gpt2,bfloat16,false,false,false,new,{flops},{seconds}\n"
        for i, (flops, seconds) in enumerate([(1e11, 0.02), (1e12, 0.05)])))
    rates = cluster.GpuRates.read(rates_path)
    env = {"ICLAB_SLURM_PARTITION": "cpu-q", "ICLAB_SLURM_GPU_PARTITION": "gpu-q", "ICLAB_SLURM_ACCOUNT": "lab",
           "ICLAB_SLURM_MAX_RUNTIME_MIN": "720", "ICLAB_GPU_RATES": str(rates_path)}
    paper = REPO / "config" / "paper.yaml"
    profile = ["--profile", str(REPO / "profiles" / "slurm")]
    result = snakemake(tmp_path, REPO / "src", "-n", "-p", *profile, config=paper, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Using profiles " + str(REPO / "profiles" / "slurm") in result.stdout + result.stderr
    plan = build_plan(load(paper))
    requests, blocks = {}, {}
    for block in result.stdout.split("rule train:")[1:]:
        group = block.split("wildcards: group=")[1].split()[0]
        requests[group], blocks[group] = job_resources(block), block
    assert set(requests) == set(plan.groups)
    for group, resources in requests.items():
        specs = [plan.train[h].to_dict() for h in plan.groups[group]]
        sequence_model = specs[0]["model"]["name"] in ("gpt2", "lstm")
        assert int(resources["gpu"]) == sequence_model
        # a job on the CPU sees no GPU; one on a GPU reserves its modelled memory there (a packed local run's cap)
        assert ("CUDA_VISIBLE_DEVICES= python -m iclab train" in blocks[group]) == (not sequence_model)
        assert int(resources["gpu_mem_mb"]) == cluster.group_device_memory_mb(specs, rates=rates)  # a batched group's
        assert resources["slurm_partition"] == ("gpu-q" if sequence_model else "cpu-q")
        assert resources["slurm_account"] == "lab"
        assert (int(resources["runtime"]), int(resources["mem_mb"])) == (
            cluster.group_runtime_minutes(specs, rates=rates, cap=720),
            cluster.group_memory_mb(specs),
        )
        assert int(resources["runtime"]) <= 720
        if len(specs) == 1 and not cluster.batched(specs):  # a model alone asks for what it would alone
            assert int(resources["runtime"]) == cluster.runtime_minutes(specs[0], rates=rates, cap=720)
    assert any(cluster.group_runtime_minutes([plan.train[h].to_dict() for h in plan.groups[group]], rates=rates,
                                             cap=720) < 720 for group, r in requests.items() if int(r["gpu"]))
    names = {plan.train[h].model["name"] for group in requests for h in plan.groups[group]}
    assert {"gpt2", "lstm", "lsa", "ltb", "gd_beta", "two_stage", "mean_field"} <= names
    for rule in ("data", "evaluate", "aggregate"):
        resources = job_resources(result.stdout.split(f"rule {rule}:")[1])
        placement = (resources["slurm_partition"], resources["slurm_account"], resources.get("gpu"))
        assert placement == ("cpu-q", "lab", None)


def test_every_stage_has_help():
    stages = ("validate", "data", "train", "lsa-optimum", "evaluate", "theory", "aggregate", "figure", "table",
              "claims", "cost", "gpu-check", "gpu-backlog", "decide")
    for stage in stages:
        assert "usage: python -m iclab" in run_cli(stage, "--help").stdout


@pytest.mark.parametrize("extra", [(), ("--config", "smoke=2")], ids=["run", "smoke run"])
def test_lint_is_clean(extra):
    result = subprocess.run(
        [str(SNAKEMAKE), "--lint", "--snakefile", str(REPO / "Snakefile"), *extra],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_data_stage_is_deterministic(tmp_path: Path):
    from iclab.hashing import canonical_json

    spec = canonical_json(next(iter(build_plan(load(TINY)).data.values())).to_dict())
    for name in ("a.nc", "b.nc"):
        run_cli("data", "--spec", spec, "--out", str(tmp_path / name))
    assert (tmp_path / "a.nc").read_bytes() == (tmp_path / "b.nc").read_bytes()
