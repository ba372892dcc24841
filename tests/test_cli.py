"""Every stage rejects a bad argument or input file with one line naming it and what is allowed,
exit status 1 (2 for argparse's usage errors), no traceback and no output file."""

import logging
from pathlib import Path

import pytest
import torch
import xarray as xr

from iclab.__main__ import main
from iclab.store.cubes import EVAL_KIND, EXPERIMENT_KIND, write_cube
from iclab.hashing import canonical_json
from iclab.tasks import LinearTask

TASK = LinearTask(d=2, n_points=5, beta_star=(0.0, 0.0), psi=1.0, sigma=0.1)


def fails(argv: list[str], caplog, status: int = 1) -> str:
    """Run the stage in-process; return what it logged (iclab errors) or printed (usage errors)."""
    caplog.clear()
    with caplog.at_level(logging.ERROR, logger="iclab"), pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == status
    return caplog.text


def experiment_cube(path: Path, experiment: str, kind: str = EXPERIMENT_KIND) -> Path:
    ds = xr.Dataset({"risk": (("learner",), [1.0])}, coords={"learner": ["zero"]})
    write_cube(ds, path, kind=kind, spec={"experiment": experiment, "order": {}, "settings": []})
    return path


def test_unknown_figure_or_table_names_the_allowed_ones(tmp_path: Path, caplog):
    cube = experiment_cube(tmp_path / "c.nc", "ltb_gap")
    assert "no figure named 'nope'; experiments with a figure: gdbeta_flow" in fails(
        ["figure", "nope", "--cube", str(cube), "--out", str(tmp_path / "x.png")], caplog
    )
    assert "no table named 'ltb_gap'; experiments with a table: ltb_table1, probe_similarity" in fails(
        ["table", "ltb_gap", "--cube", str(cube), "--out", str(tmp_path / "x")], caplog
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.nc"]


def test_a_cube_of_another_experiment_or_kind_is_named(tmp_path: Path, caplog):
    other = experiment_cube(tmp_path / "mean_field.nc", "mean_field")
    text = fails(["figure", "ltb_gap", "--cube", str(other), "--out", str(tmp_path / "x.png")], caplog)
    assert f"{other}: a cube of experiment 'mean_field', not 'ltb_gap'" in text
    evaluation = experiment_cube(tmp_path / "eval.nc", "ltb_gap", kind=EVAL_KIND)
    text = fails(["figure", "ltb_gap", "--cube", str(evaluation), "--out", str(tmp_path / "x.png")], caplog)
    assert f"{evaluation}: an iclab 'evaluation' cube, expected a 'experiment' cube" in text
    args = ["aggregate", "--experiment", "ltb_gap", "--order", "{}", "--out", str(tmp_path / "agg.nc")]
    foreign = experiment_cube(tmp_path / "e2.nc", "lsa_rates", kind=EVAL_KIND)
    text = fails([*args, "--inputs", str(foreign)], caplog)
    assert f"{foreign}: a cube of experiment 'lsa_rates', not 'ltb_gap'" in text
    missing = tmp_path / "missing.nc"
    assert f"{missing}: no such file" in fails([*args, "--inputs", str(missing)], caplog)
    assert not (tmp_path / "x.png").exists() and not (tmp_path / "agg.nc").exists()


def test_unknown_experiment_is_refused_before_any_file_is_read(tmp_path: Path, caplog):
    for stage in ("aggregate", "theory"):
        files = "--inputs" if stage == "aggregate" else "--evaluations"
        argv = [stage, "--experiment", "nope", "--order", "{}", files, str(tmp_path / "none.nc"), "--out", "o.nc"]
        assert "unknown experiment 'nope'; allowed: gdbeta_flow" in fails(argv, caplog)


@pytest.mark.parametrize(
    "stage, spec, what",
    [
        ("data", {"a": 1}, "data set (DataJob)"),
        ("train", {}, "training (TrainJob)"),
        ("train", [1], "training (TrainJob)"),
        ("evaluate", {"experiment": "ltb_gap"}, "setting"),
    ],
)
def test_a_spec_that_is_not_one_is_named(tmp_path: Path, caplog, stage: str, spec, what: str):
    argv = [stage, "--spec", canonical_json(spec), "--out-dir" if stage == "train" else "--out", str(tmp_path / "out")]
    argv += ["--data", "eval=x.nc"] if stage == "evaluate" else []
    assert f"--spec is not a valid {what} spec" in fails(argv, caplog)
    assert not (tmp_path / "out").exists()


def test_an_unknown_model_in_a_training_spec_names_the_fitted_ones(tmp_path: Path, caplog):
    spec = {"model": {"name": "mamba"}, "task": TASK.to_dict(), "train": {"steps": 1, "batch_size": 2, "lr": 0.1}}
    text = fails(["train", "--spec", canonical_json(spec | {"seed": 0}), "--out-dir", str(tmp_path / "m")], caplog)
    assert "no fitter for model 'mamba'; fitted models: lsa, ltb" in text


@pytest.mark.parametrize("option", ["--threads", "--checkpoint-every", "--log-every"])
@pytest.mark.parametrize("value", ["0", "-2", "two"])
def test_bad_numbers_are_usage_errors_naming_the_option(tmp_path: Path, capsys, caplog, option: str, value: str):
    fails(["train", "--spec", "{}", "--out-dir", str(tmp_path / "m"), option, value], caplog, status=2)
    assert f"argument {option}: must be a positive integer, got '{value}'" in capsys.readouterr().err


def test_a_non_finite_loss_stops_training_and_leaves_no_model(tmp_path: Path, caplog):
    spec = {
        "model": {"name": "lsa", "init_scale": 0.1},
        "task": TASK.to_dict(),
        "train": {"steps": 50, "batch_size": 8, "lr": 1e30, "optimizer": "sgd", "schedule": "constant"},
        "seed": 0,
    }
    torch.manual_seed(0)
    text = fails(["train", "--spec", canonical_json(spec), "--out-dir", str(tmp_path / "models")], caplog)
    assert "training loss is" in text and "lower train.lr (now 1e+30)" in text
    assert list(tmp_path.rglob("*.nc")) == []


def test_evaluation_refuses_a_data_set_or_model_of_another_spec(tmp_path: Path, caplog):
    from conftest import REPO

    from iclab.config import load
    from iclab.pipeline.plan import build_plan

    plan = build_plan(load(REPO / "tests" / "data" / "tiny.yaml"))
    setting = next(s for s in plan.settings["ltb_gap"].values() if s.models)
    own, other = plan.data[setting.data["eval"]], next(j for h, j in plan.data.items() if h != setting.data["eval"])
    for name, job in (("own.nc", own), ("other.nc", other)):
        main(["data", "--spec", canonical_json(job.to_dict()), "--out", str(tmp_path / name)])
    out = str(tmp_path / "eval.nc")
    argv = ["evaluate", "--spec", canonical_json(setting.to_dict()), "--out", out]
    text = fails([*argv, "--data", f"eval={tmp_path / 'other.nc'}"], caplog)
    assert f"{tmp_path / 'other.nc'}: the data set of spec {other.hash}, not {own.hash}" in text
    foreign = {"model": {"name": "gd_beta", "init_scale": 0.0}, "task": TASK.to_dict(), "seed": 0}
    foreign["train"] = {"steps": 2, "batch_size": 4, "lr": 0.01}
    main(["train", "--spec", canonical_json(foreign), "--out-dir", str(tmp_path / "models")])
    model = next((tmp_path / "models").glob("*.nc"))
    text = fails([*argv, "--data", f"eval={tmp_path / 'own.nc'}", "--models", str(model)], caplog)
    assert "--models: the models given are of specs" in text and "pass results/models/<group>/<hash>.nc" in text
    assert not (tmp_path / "eval.nc").exists()


def test_theory_names_a_model_it_was_not_given(tmp_path: Path, caplog):
    from conftest import REPO

    from iclab.config import load
    from iclab.pipeline.plan import build_plan

    plan = build_plan(load(REPO / "tests" / "data" / "tiny.yaml"))
    setting = next(iter(plan.settings["single_index"].values()))
    evaluation = tmp_path / "eval.nc"
    write_cube(xr.Dataset({"risk": ((), 1.0)}), evaluation, kind=EVAL_KIND, spec=setting.to_dict())
    argv = ["theory", "--experiment", "single_index", "--order", "{}", "--evaluations", str(evaluation)]
    text = fails([*argv, "--out", str(tmp_path / "theory.nc")], caplog)
    assert f"--models: no trained_model cube of spec {setting.models[0]['hash']} among []" in text
    assert not (tmp_path / "theory.nc").exists()


def test_claims_refuses_a_raised_seed_count_it_cannot_place(tmp_path: Path, caplog):
    cube = str(experiment_cube(tmp_path / "c.nc", "ltb_gap"))
    out = str(tmp_path / "claims")
    assert "--seeds-raised mean_field: no such experiment among the cubes (ltb_gap)" in fails(
        ["claims", "--cubes", cube, "--out", out, "--seeds-raised", "mean_field=3"], caplog)
    assert "--seeds-raised ltb_gap=three: the seeds must be a positive integer" in fails(
        ["claims", "--cubes", cube, "--out", out, "--seeds-raised", "ltb_gap=three"], caplog)
    assert "--seeds-raised takes name=seeds, got 'ltb_gap'" in fails(
        ["claims", "--cubes", cube, "--out", out, "--seeds-raised", "ltb_gap"], caplog)
    assert not list(tmp_path.glob("claims*"))
