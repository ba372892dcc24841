"""The LSA class optimum as a job of its own (jobs.OptimumJob, iclab.store.optima): computed once per task, read by the
evaluations (the lsa_optimal baseline) and theories (lsa_optimum) of every setting of that task."""

import json

import numpy as np
import pytest
from conftest import REPO

from iclab import theory
from iclab.learners import estimators
from iclab.__main__ import main
from iclab.learners.baselines import lsa_optimal
from iclab.config import load
from iclab.store.cubes import read_cube
from iclab.errors import CubeError
from iclab.experiments import ExperimentError, experiment
from iclab.experiments.base import Setting, TheoryInputs
from iclab.store.jobs import OptimumJob
from iclab.store.optima import read_optimum
from iclab.pipeline.plan import Plan, build_plan
from iclab.tasks import LinearTask
from iclab.tasks.linear import final_query_setting
from iclab.tasks.samplers import batch_generator, sample

TASK = LinearTask(d=3, n_points=7, beta_star=(1.0, 0.0, 0.0), psi=1.0, sigma=0.5)


def written_optimum(tmp_path, task=TASK):
    job = OptimumJob(task=task.to_dict())
    path = tmp_path / f"{job.hash}.nc"
    main(["lsa-optimum", "--spec", json.dumps(job.to_dict()), "--out", str(path)])
    return job, path


def test_the_stage_writes_the_optimum_whose_exact_risk_and_monte_carlo_risk_are_the_one_it_states(tmp_path):
    job, path = written_optimum(tmp_path)
    optimum = read_optimum(path, TASK.to_dict())
    assert read_cube(path).attrs["iclab_spec_hash"] == job.hash
    setting = final_query_setting(TASK)
    assert optimum.risk == pytest.approx(theory.lsa_class_risk(optimum.u, optimum.w, **setting), rel=1e-12)
    assert optimum.risk <= optimum.start_risks.min() + 1e-12 and len(optimum.start_risks) == 3
    # Monte Carlo: the LSA at the stored weights on 100,000 prompts of the task, at its final query
    batch = sample(TASK, 100_000, batch_generator(0, 0, 0))
    errors = (estimators.lsa(batch.xs, batch.ys, u=optimum.u, w=optimum.w)[:, -1] - batch.ys[:, -1]) ** 2  # (B,)
    assert abs(errors.mean() - optimum.risk) < 4 * errors.std() / np.sqrt(len(errors))


def test_the_baseline_given_the_jobs_optimum_predicts_as_the_one_that_computes_it(tmp_path):
    _, path = written_optimum(tmp_path)
    batch = sample(TASK, 64, batch_generator(1, 0, 0))
    given = lsa_optimal(TASK, optimum=read_optimum(path, TASK.to_dict()))(batch.xs, batch.ys)
    np.testing.assert_allclose(given, lsa_optimal(TASK)(batch.xs, batch.ys), rtol=1e-6, atol=1e-9)


def test_an_optimum_of_another_task_or_spec_is_refused_by_name(tmp_path, caplog):
    _, path = written_optimum(tmp_path)
    other = LinearTask(d=3, n_points=7, beta_star=(2.0, 0.0, 0.0), psi=1.0, sigma=0.5)
    with pytest.raises(CubeError, match=f"{path}: the LSA class optimum of another task"):
        read_optimum(path, other.to_dict())
    with pytest.raises(SystemExit):
        main(["lsa-optimum", "--spec", '{"task": {"d": 3}}', "--out", str(tmp_path / "x.nc")])
    assert "--spec is not a valid LSA class optimum (OptimumJob) spec" in caplog.text
    assert "has the one key 'lsa_class_optimum', got ['task']" in caplog.text
    assert not (tmp_path / "x.nc").exists()


def test_a_theory_that_reads_the_optimum_without_it_says_what_to_give():
    setting = next(iter(build_plan(load(REPO / "tests" / "data" / "tiny.yaml")).settings["ltb_gap"].values()))
    with pytest.raises(ExperimentError, match="set the experiment's reads_lsa_optimum, and give the theory stage"):
        experiment("ltb_gap").theory(TheoryInputs(setting, lambda name: None, lambda model: None))


@pytest.mark.parametrize("config", ["config.yaml", "config/paper.yaml"])
def test_one_optimum_a_task_shared_by_ltb_gap_and_ltb_training(config):
    plan = build_plan(load(REPO / config))
    readers = [s for name in ("ltb_gap", "ltb_training") for s in plan.settings[name].values()]
    tasks = {OptimumJob(task=s.task).hash for s in readers}
    assert set(plan.optima) == tasks and len(tasks) == len(plan.settings["ltb_gap"])  # ltb_training's ⊂ ltb_gap's
    assert all(plan.optimum_of[s.hash] == OptimumJob(task=s.task).hash for s in readers)
    others = [s for name, settings in plan.settings.items() if name not in ("ltb_gap", "ltb_training")
              for s in settings.values()]
    assert not any(s.hash in plan.optimum_of for s in others)  # no other setting reads one


def test_a_setting_with_the_lsa_optimal_baseline_reads_its_tasks_optimum():
    setting = Setting(experiment="ltb_table1", coords={}, data={}, task=TASK.to_dict(), models=[],
                      baselines=["lsa_optimal"], analysis={})
    plan = Plan()
    plan.add_setting(setting)
    assert plan.optimum_of == {setting.hash: OptimumJob(task=TASK.to_dict()).hash}
