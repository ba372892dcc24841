"""The pipeline on a real SLURM cluster: jobs submitted with sbatch through ``profiles/slurm`` (the one-node cluster of
``cluster/slurm-local``, which CI brings up for these tests: ``.ci/run``). Skipped where no cluster answers.

Each run gets its own scratch directory; the cluster has no GPU, so the workflow runs with ``ICLAB_SLURM_GPUS=0``
except where the test checks what the GPU setting asks for."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import xarray as xr
import yaml
from conftest import REPO, SNAKEMAKE, TINY, snakemake

from iclab.config import load
from iclab.pipeline.plan import build_plan

pytestmark = [
    pytest.mark.slurm,
    pytest.mark.skipif(
        shutil.which("sinfo") is None or subprocess.run(["sinfo"], capture_output=True).returncode != 0,
        reason="no SLURM cluster answers (cluster/slurm-local up)",
    ),
]

PROFILE = ("--profile", str(REPO / "profiles" / "slurm"), "--slurm-init-seconds-before-status-checks", "5")
SUBSET = ("lsa_convergence", "zfb_figure1")  # a linear-model experiment and a GPT-2 experiment of the tiny config
RUN_LIMIT_S = 600  # a run through the cluster that takes longer has hung


def tiny_subset(path: Path, names=SUBSET, **changes) -> Path:
    """The tiny config with only the experiments ``names``; ``changes``: experiment → keys replaced in its section."""
    cfg = yaml.safe_load(TINY.read_text())
    cfg["experiments"] = {name: cfg["experiments"][name] | changes.get(name, {}) for name in names}
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True))
    return path


def on_cluster(workdir: Path, config: Path, *targets: str, gpus: str = "0", extra=()) -> subprocess.CompletedProcess:
    """Snakemake through profiles/slurm (verbose: the plugin logs each sbatch call), bounded in time."""
    args = (*PROFILE, "--verbose", *extra, *targets)
    env = {"ICLAB_SLURM_GPUS": gpus}
    started = time.monotonic()
    result = snakemake(workdir, REPO / "src", *args, config=config, env=env)
    assert time.monotonic() - started < RUN_LIMIT_S
    return result


def sbatch_calls(result: subprocess.CompletedProcess) -> list[str]:
    """The plugin's sbatch calls (printed: CI's log shows what each job asked for)."""
    calls = re.findall(r"sbatch call: (sbatch .*)", result.stdout + result.stderr)
    print("\n".join(calls))
    return calls


def cubes(workdir: Path) -> dict[str, xr.Dataset]:
    return {path.name: xr.load_dataset(path) for path in sorted((workdir / "results" / "cubes").glob("*.nc"))}


def assert_same_cubes(a: Path, b: Path) -> None:
    left, right = cubes(a), cubes(b)
    assert list(left) == list(right) and left
    for name in left:
        xr.testing.assert_equal(left[name], right[name])  # every value bit-identical (rtol 0)


def queue_empty() -> bool:
    return subprocess.run(["squeue", "-h"], capture_output=True, text=True).stdout.strip() == ""


def test_a_subset_of_the_tiny_config_through_sbatch_equals_the_local_run(tmp_path: Path):
    config = tiny_subset(tmp_path / "subset.yaml")
    cluster, local = tmp_path / "cluster", tmp_path / "local"
    cluster.mkdir(), local.mkdir()
    targets = [f"results/cubes/{name}.nc" for name in SUBSET]
    result = on_cluster(cluster, config, *targets)
    assert result.returncode == 0, result.stderr[-3000:]
    assert snakemake(local, REPO / "src", *targets, config=config).returncode == 0
    assert_same_cubes(cluster, local)
    calls = sbatch_calls(result)
    plan = build_plan(load(config))
    gpt2 = [group for group, models in plan.groups.items() if plan.train[models[0]].model["name"] == "gpt2"]
    train = {group: [c for c in calls if f"--comment rule_train_wildcards_{group}" in c] for group in plan.groups}
    assert len(gpt2) == 1 and all(len(found) == 1 for found in train.values()), calls  # one submission each
    assert all("--gpus" not in c and "gres" not in c for c in calls)  # ICLAB_SLURM_GPUS=0: no job asks for a GPU
    assert all(re.search(r"--mem \d+", c) and re.search(r"-t \d+", c) for c in calls)
    assert "--cpus-per-task=1" in train[gpt2[0]][0]  # GPT-2 on CPUs: the config's threads (1 in tiny.yaml)
    assert queue_empty()


def test_the_gpu_setting_asks_sbatch_for_a_gpu_and_a_cpu_cluster_refuses_it_with_its_reason(tmp_path: Path):
    config = tiny_subset(tmp_path / "gpt2.yaml", names=("zfb_figure1",))
    started = time.monotonic()
    result = on_cluster(tmp_path, config, "results/cubes/zfb_figure1.nc", gpus="1", extra=("--retries", "0"))
    assert result.returncode != 0 and time.monotonic() - started < 300
    train = [c for c in sbatch_calls(result) if "--gpus" in c]
    assert train and all("--gpus=1" in c or "--gpus 1" in c for c in train)
    assert "Invalid generic resource" in result.stdout + result.stderr
    assert queue_empty()


def test_a_cancelled_training_job_is_resubmitted_and_resumes_to_the_uninterrupted_cube(tmp_path: Path):
    """scancel after the first checkpoint: the profile's retry resubmits the job, which resumes from the checkpoint;
    the model cube equals that of a local run that was never interrupted."""
    long = {"zfb_figure1": {"train": yaml.safe_load(TINY.read_text())["experiments"]["zfb_figure1"]["train"]
                             | {"steps": 3000}}}
    config = tiny_subset(tmp_path / "long.yaml", names=("zfb_figure1",), **long)
    cfg = yaml.safe_load(config.read_text())
    cfg["progress"] = {"log_every": 100, "checkpoint_every": 100}
    config.write_text(yaml.safe_dump(cfg, allow_unicode=True))
    cluster, local = tmp_path / "cluster", tmp_path / "local"
    cluster.mkdir(), local.mkdir()
    target = "results/cubes/zfb_figure1.nc"
    run = subprocess.Popen(  # in the background: the test cancels its training job while it runs
        [str(SNAKEMAKE), "--snakefile", str(REPO / "Snakefile"), "--directory", str(cluster), "--configfile",
         str(config), "--replace-workflow-config", *PROFILE, "--verbose", target],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cluster,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO / "src"), "ICLAB_SLURM_GPUS": "0"},
    )
    checkpoints = cluster / "results" / "checkpoints"
    deadline = time.monotonic() + RUN_LIMIT_S
    while not (checkpoints.is_dir() and any(checkpoints.iterdir())):
        assert time.monotonic() < deadline and run.poll() is None, "no checkpoint before the run ended"
        time.sleep(0.2)
    jobs = subprocess.run(["squeue", "-h", "-o", "%i %k"], capture_output=True, text=True).stdout.splitlines()
    train = [line.split()[0] for line in jobs if "rule_train" in line]
    assert len(train) == 1, jobs
    subprocess.run(["scancel", train[0]], check=True)
    output, _ = run.communicate(timeout=RUN_LIMIT_S)
    assert run.returncode == 0, output[-3000:]
    log = next((cluster / "results" / "logs" / "train").glob("*.log")).read_text()
    resumed = re.search(r"resuming from checkpoint .* at step [1-9]\d*/3000", log)
    assert resumed, log[-2000:]
    print(resumed.group(0))
    assert len(re.findall(r"sbatch call: sbatch .*rule_train", output)) == 2  # submitted, then resubmitted
    assert snakemake(local, REPO / "src", target, config=config).returncode == 0
    assert_same_cubes(cluster, local)
    assert queue_empty()


def test_a_failing_job_ends_the_run_with_slurms_reason_and_its_log_path(tmp_path: Path):
    """A planted bad spec (a learning rate that diverges): the job fails inside SLURM; Snakemake stops within a bound,
    naming SLURM's state and the job's log files, and leaves nothing queued."""
    bad = {"zfb_figure1": {"train": yaml.safe_load(TINY.read_text())["experiments"]["zfb_figure1"]["train"]
                            | {"lr": 1e6, "steps": 200}}}
    config = tiny_subset(tmp_path / "bad.yaml", names=("zfb_figure1",), **bad)
    started = time.monotonic()
    result = on_cluster(tmp_path, config, "results/cubes/zfb_figure1.nc", extra=("--retries", "0"))
    output = result.stdout + result.stderr
    assert result.returncode != 0 and time.monotonic() - started < 300
    assert "SLURM status is: 'FAILED'" in output
    assert re.search(r"\.snakemake/slurm_logs/rule_train/\w+/\d+\.log", output)
    log = next((tmp_path / "results" / "logs" / "train").glob("*.log")).read_text()
    assert "training loss is nan at step" in log and "lower train.lr (now 1000000.0)" in log  # the job's own error
    assert queue_empty()
