"""End to end: the Snakemake workflow on the tiny config, and a toy experiment added as a package
only, each in a scratch directory with a scratch copy of the iclab package (tests edit its files,
never the repository's).

Runs serially (Snakemake locks its working directory).
"""

import collections
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import REPO, run_cli

from iclab.cubes import read_cube

TINY = REPO / "tests" / "data" / "tiny.yaml"
TOY_CONFIG = REPO / "tests" / "data" / "toy.yaml"
TOY_PACKAGE = REPO / "tests" / "data" / "toy_experiment"
SNAKEMAKE = Path(sys.executable).with_name("snakemake")


@pytest.fixture(scope="module")
def scratch_src(tmp_path_factory) -> Path:
    """A copy of the iclab package with the toy experiment's package added, and nothing else changed."""
    src = tmp_path_factory.mktemp("src")
    shutil.copytree(REPO / "src" / "iclab", src / "iclab", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(TOY_PACKAGE, src / "iclab" / "experiments" / "toy_noise")
    return src


def snakemake(workdir: Path, src: Path, *args: str, config: Path = TINY) -> subprocess.CompletedProcess:
    cmd = [
        str(SNAKEMAKE),
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        "--configfile",
        str(config),
        "--replace-workflow-config",
        "--cores",
        "2",
        *args,
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(src)}
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=workdir)


def job_counts(result: subprocess.CompletedProcess) -> dict[str, int]:
    """The first 'Job stats' table of a Snakemake run (on stderr) or dry run (stdout): rule → number of jobs."""
    rows = (result.stdout + result.stderr).split("Job stats:")[1].split("\n\n")[0].splitlines()[3:]
    return {rule: int(count) for rule, count in (row.split() for row in rows)}


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory, scratch_src: Path):
    workdir = tmp_path_factory.mktemp("e2e")
    result = snakemake(workdir, scratch_src)
    assert result.returncode == 0, result.stdout + result.stderr
    return workdir


@pytest.mark.e2e
def test_workflow_makes_every_target(finished_run: Path):
    from iclab.experiments import product_names

    for name in yaml.safe_load(TINY.read_text())["experiments"]:
        targets = [f"results/cubes/{name}.nc"]
        targets += [f"results/figures/{name}.{ext}" for ext in ("png", "pdf") if name in product_names("figure")]
        targets += [f"results/tables/{name}.{ext}" for ext in ("csv", "md", "tex") if name in product_names("table")]
        assert len(targets) > 1, f"{name} makes neither a figure nor a table"
        for target in targets:
            assert (finished_run / target).stat().st_size > 0, target
    cube = read_cube(finished_run / "results/cubes/ltb_gap.nc", kind="experiment")
    assert list(cube.beta_star_norm.values) == [0.0, 2.0] and list(cube.n.values) == [6]
    assert set(cube.learner.values) == {"lsa", "ltb", "gd_beta", "bayes", "gd_beta_optimal", "ridge", "ols", "zero"}
    assert list(cube.seed.values) == [0, 1]
    assert not np.isnan(cube.query_risk.values).any()
    # Paired evaluation: the empirical GD-β optimum agrees with its closed form (eval-set MC error only).
    empirical = cube.query_risk.sel(learner="gd_beta_optimal").isel(seed=0)
    closed = cube.theory_risk.sel(theory="gd_beta_optimum")
    np.testing.assert_allclose(empirical, closed, rtol=0.1)
    # Bayes is never beaten on average by the zero predictor.
    assert (cube.query_risk.sel(learner="bayes") < cube.query_risk.sel(learner="zero")).all()
    for log in (finished_run / "results/logs/train").iterdir():
        assert "(100%)" in log.read_text(), log
    assert list((finished_run / "results/benchmarks/train").iterdir())
    assert not list((finished_run / "results").rglob("*.tmp*"))


@pytest.mark.e2e
@pytest.mark.parametrize("name", ["zfb_figure1", "lsa_shifts", "random_covariance"])
def test_evaluation_runs_each_trained_model_once_per_chunk(finished_run: Path, name: str, monkeypatch):
    """Every module built from a trained model is counted: the derived variables reuse the
    evaluation's predictions instead of running the models again."""
    from iclab.config import load
    from iclab.evaluate import evaluate_setting, load_data
    from iclab.experiments import experiment
    from iclab.plan import build_plan
    from iclab.trained import TrainedModel

    config = load(TINY)
    calls = collections.Counter()
    build = TrainedModel.build

    def counted_build(model: TrainedModel):
        module = build(model)
        module.register_forward_pre_hook(lambda *_: calls.update([(model.label, model.seed)]))
        return module

    monkeypatch.setattr(TrainedModel, "build", counted_build)
    for setting in build_plan(config).settings[name].values():
        calls.clear()
        results = finished_run / "results"
        data = {key: load_data(results / f"data/{h}.nc", h) for key, h in setting.data.items()}
        models = {(m["label"], m["seed"]): TrainedModel.open(results / f"models/{m['hash']}.nc") for m in setting.models}
        chunk_size = math.ceil(len(data["eval"].ys) / 3)  # three chunks of prompts per model
        evaluate_setting(experiment(name), setting, data, models, chunk_size=chunk_size)
        assert models and dict(calls) == {key: 3 for key in models}, setting.coords


@pytest.mark.e2e
def test_figures_redraw_without_retraining(finished_run: Path, scratch_src: Path):
    (finished_run / "results/figures/ltb_gap.png").unlink()
    dry = snakemake(finished_run, scratch_src, "-n", "results/figures/ltb_gap.png")
    assert dry.returncode == 0, dry.stderr
    assert job_counts(dry) == {"figure": 1, "total": 1}
    result = snakemake(finished_run, scratch_src, "results/figures/ltb_gap.png")
    assert result.returncode == 0, result.stderr
    nothing = snakemake(finished_run, scratch_src, "-n")
    assert "Nothing to be done" in nothing.stdout + nothing.stderr


@pytest.mark.e2e
@pytest.mark.parametrize(
    "edited, experiment",
    [("theory/lsa.py", "lsa_shifts"), ("experiments/random_covariance/experiment.py", "random_covariance")],
)
def test_editing_theory_code_reruns_only_theory_aggregate_and_figure(finished_run, scratch_src, edited, experiment):
    source = scratch_src / "iclab" / edited
    text, stat = source.read_text(), source.stat()
    # An edit, not a touch: Snakemake ignores a newer input whose checksum is the recorded one.
    source.write_text(text + "\n# edited\n")
    os.utime(source, (stat.st_atime, time.time() + 60))
    try:
        dry = snakemake(finished_run, scratch_src, "-n", f"results/figures/{experiment}.png")
    finally:
        source.write_text(text)
        os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert dry.returncode == 0, dry.stderr
    assert job_counts(dry) == {"aggregate": 1, "figure": 1, "theory": 1, "total": 3}


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
        "figure": 1,
        "theory": 1,
        "total": 14,
        "train": 4,
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


@pytest.mark.e2e
def test_figure_cli_redraws_from_a_cube(finished_run: Path, tmp_path: Path):
    out = tmp_path / "again.png"
    run_cli("figure", "ltb_gap", "--cube", str(finished_run / "results/cubes/ltb_gap.nc"), "--out", str(out))
    assert out.stat().st_size > 0 and out.with_suffix(".pdf").stat().st_size > 0


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


@pytest.mark.e2e
def test_truncated_input_cube_fails_with_a_clear_message(finished_run: Path, tmp_path: Path):
    model = next((finished_run / "results/models").iterdir())
    broken = tmp_path / model.name
    broken.write_bytes(model.read_bytes()[:200])
    cube = tmp_path / "cube.nc"
    result = run_cli("figure", "ltb_gap", "--cube", str(broken), "--out", str(tmp_path / "x.png"), check=False)
    assert result.returncode == 1
    assert f"{broken}: not a readable NetCDF file" in result.stderr
    assert "Traceback" not in result.stderr
    assert not cube.exists()


def test_every_stage_has_help():
    for stage in ("validate", "data", "train", "evaluate", "theory", "aggregate", "figure", "table"):
        assert "usage: python -m iclab" in run_cli(stage, "--help").stdout


def test_lint_is_clean():
    result = subprocess.run(
        [str(SNAKEMAKE), "--lint", "--snakefile", str(REPO / "Snakefile")], capture_output=True, text=True, cwd=REPO
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_data_stage_is_deterministic(tmp_path: Path):
    from iclab.config import load
    from iclab.hashing import canonical_json
    from iclab.plan import build_plan

    spec = canonical_json(next(iter(build_plan(load(TINY)).data.values())).to_dict())
    for name in ("a.nc", "b.nc"):
        run_cli("data", "--spec", spec, "--out", str(tmp_path / name))
    assert (tmp_path / "a.nc").read_bytes() == (tmp_path / "b.nc").read_bytes()
