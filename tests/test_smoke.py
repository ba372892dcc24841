"""The smoke run of a tier (iclab.pipeline.smoke): the papers' shapes kept, only the work capped, its results apart."""

import pandas as pd
import pytest
import torch
from conftest import REPO, TINY, job_counts, snakemake

from iclab.report.claims_report import summary
from iclab.stats.claims import SMOKE_VERDICT
from iclab.config import load, validate
from iclab.fit import sgd
from iclab.fit.two_stage import TwoStageConfig, fit
from iclab.hashing import canonical_json
from iclab.pipeline.plan import build_plan
from iclab.pipeline.smoke import SMOKE_PROMPTS, results_dir, shape_key, smoke_config
from iclab.tasks import LinearTask, SingleIndexTask

PAPER = REPO / "config" / "paper.yaml"
STEPS = 3


@pytest.fixture(scope="module")
def paper_plans():
    """The paper tier's plan and its smoke run's (K = STEPS)."""
    config = load(PAPER)
    smoke = validate(smoke_config(config | {"smoke": STEPS}), source="the smoke config")
    return build_plan(config), build_plan(smoke)


def test_smoke_keeps_every_shape_of_the_paper_tier(paper_plans):
    full, smoke = paper_plans
    assert set(smoke.settings) == set(full.settings)  # every experiment
    for name in full.settings:
        points = lambda plan: sorted(canonical_json([s.coords, s.task]) for s in plan.settings[name].values())  # noqa: E731
        assert points(smoke) == points(full), name  # every sweep point and its evaluation task (d, n, N, M)
    # every model, task and training shape (width, depth, heads, batch size, lr, chunk) of the tier's seed 0
    first_seed = {shape_key(job.to_dict()) for job in full.train.values() if job.seed == 0}
    assert {shape_key(job.to_dict()) for job in smoke.train.values()} == first_seed


def test_smoke_caps_steps_seeds_and_prompts(paper_plans):
    full, smoke = paper_plans
    assert {job.seed for job in full.train.values()} == {0, 1, 2, 3, 4}
    assert {job.seed for job in smoke.train.values()} == {0}
    assert len(smoke.train) == len({shape_key(j.to_dict()) for j in full.train.values() if j.seed == 0})
    for job in smoke.train.values():
        train = job.to_dict()["train"]
        if job.model["name"] == "two_stage":
            assert train["max_chunks"] == STEPS
        else:
            assert train["steps"] == STEPS, job.to_dict()
    assert max(job.n_prompts for job in full.data.values()) == 100_000
    assert all(job.n_prompts <= SMOKE_PROMPTS for job in smoke.data.values() if job.stream in ("eval", "probe"))
    assert not set(smoke.train) & set(full.train)  # its own models: nothing of a real run is overwritten


def test_smoke_tunes_the_prompt_only_baselines_on_fewer_held_out_prompts(paper_plans):
    """In the smoke run every tuned baseline (kernel ridge, the two-layer net, random-features ridge) gets
    SMOKE_PROMPTS held-out prompts; the tier's own settings carry no such option (their hashes are the config's)."""
    full, smoke = paper_plans
    tuned = {"krr", "two_layer_net", "random_features_ridge"}
    seen = set()
    for plan, expected in ((full, None), (smoke, SMOKE_PROMPTS)):
        for settings in plan.settings.values():
            for setting in settings.values():
                options = setting.analysis.get("baseline_options", {})
                for name in tuned & set(setting.baselines):
                    seen.add(name)
                    assert options.get(name, {}).get("holdout_prompts") == expected, (setting.experiment, name)
    assert seen == tuned  # the paper tier uses all three


def test_smoke_writes_apart_and_leaves_a_real_config_alone():
    config = load(TINY)
    assert smoke_config(config) == config and results_dir(config) == "results"
    smoke = smoke_config(config | {"smoke": 2})
    assert results_dir(smoke) == "results/smoke"
    assert config == load(TINY)  # not changed in place


def test_smoke_curriculum_starts_at_its_first_stage_and_trains_at_the_full_shape_from_step_one():
    config = load(PAPER)
    train = smoke_config(config | {"smoke": 2})["experiments"]["zfb_figure1"]["train"]
    cfg = sgd.TrainConfig(**train)
    task = LinearTask(d=20, n_points=101, beta_star=(0.0,) * 20, psi=1.0, sigma=0.0)
    assert sgd.curriculum_stage(cfg, task, 0) == (5, 11)  # Garg et al.'s start, as the paper tier's
    assert sgd.curriculum_stage(cfg, task, 1) == (20, 101)


def test_two_stage_max_chunks_is_the_fit_of_the_first_chunks_alone():
    """A fit stopped after one chunk equals the fit whose T₁ and T₂ are one chunk: chunks are pure functions of
    (seed, stage, index), and each stage averages over the prompts it read."""
    task = SingleIndexTask(d=6, r=2, n_points=9, q=2, p=3, sigma=0.0)
    chunk = 16
    stopped = TwoStageConfig(t1=5 * chunk, t2=3 * chunk, ridge=0.1, chunk=chunk, max_chunks=1)
    short = TwoStageConfig(t1=chunk, t2=chunk, ridge=0.1, chunk=chunk)
    model_a, record_a = fit({"width": 8}, task, stopped, 0, "a")
    model_b, record_b = fit({"width": 8}, task, short, 0, "b")
    for a, b in zip(model_a.state_dict().values(), model_b.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert float(record_a.stage2_train_risk) == float(record_b.stage2_train_risk)
    full = TwoStageConfig(t1=5 * chunk, t2=3 * chunk, ridge=0.1, chunk=chunk)
    model_c, _ = fit({"width": 8}, task, full, 0, "c")
    assert not torch.equal(model_c.weight, model_a.weight)  # without the cap every chunk counts


def test_a_smoke_runs_claims_table_judges_nothing():
    table = pd.DataFrame({"verdict": [SMOKE_VERDICT] * 3})
    assert summary(table).startswith("SMOKE RUN: 3 claims, none judged")


def test_smoke_workflow_plans_every_target_under_results_smoke(tmp_path):
    """``--config smoke=2`` on the tiny config: every figure of a real run, the claims and the cost table, under
    results/smoke/; no gallery rule (it would overwrite the committed images)."""
    from iclab.experiments import product_names

    smoke = snakemake(tmp_path, REPO / "src", "-n", "--config", "smoke=2")
    assert smoke.returncode == 0, smoke.stderr
    counts = job_counts(smoke)
    figures = [name for name in load(TINY)["experiments"] if name in product_names("figure")]
    assert counts["figure"] == len(figures) and counts["claims"] == counts["cost"] == 1
    assert counts["train"] == len(build_plan(smoke_config(load(TINY) | {"smoke": 2})).groups)
    planned = [line.split()[1] for line in smoke.stdout.splitlines() if line.strip().startswith("output:")]
    assert planned and all(path.startswith("results/smoke/") for path in planned), planned[:3]
    assert "smoke run" in smoke.stderr
    gallery = snakemake(tmp_path, REPO / "src", "-n", "--config", "smoke=2", "gallery")
    assert gallery.returncode != 0
