"""Config validation: bad input is rejected before any work, naming the key and what is allowed."""

import copy
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import REPO

from iclab.config import ConfigError, load, validate
from iclab.errors import ExperimentError
from iclab.pipeline.plan import build_plan


@pytest.fixture
def default_config():
    with open(REPO / "config.yaml") as f:
        return yaml.safe_load(f)


@pytest.mark.parametrize("path", ["config.yaml", "config/paper.yaml", "config/gpu_node.yaml", "tests/data/tiny.yaml"])
def test_shipped_configs_are_valid(path):
    config = load(REPO / path)
    assert build_plan(config).train


def test_the_long_gpt2_overlay_changes_only_single_index_gpt2_and_seeds(default_config):
    """Snakemake merges --configfile overlays key by key; the merged config is valid and shares the
    default's seed-0 two-stage models (same training specs)."""
    from snakemake.utils import update_config

    overlay = yaml.safe_load((REPO / "config" / "single_index_gpt2_long.yaml").read_text())
    merged = copy.deepcopy(default_config)
    update_config(merged, overlay)
    default, long = build_plan(validate(default_config)), build_plan(validate(merged))
    assert merged["experiments"]["single_index"]["gpt2"]["train"]["steps"] == 4000
    def single_index(plan, name):
        return {
            h for h, job in plan.train.items() if job.model["name"] == name and job.task["family"] == "single_index"
        }

    assert single_index(long, "two_stage") and single_index(long, "two_stage") < single_index(default, "two_stage")
    assert len(single_index(long, "gpt2")) == 5 and single_index(long, "gpt2").isdisjoint(default.train)


def test_defaults_are_filled_in(default_config):
    del default_config["threads"]
    config = validate(default_config)
    assert config["threads"] == 1
    assert config["experiments"]["ltb_gap"]["train"]["optimizer"] == "adam"
    # a default held in a shared definition ($ref) is filled in too; an optional object is not created
    del default_config["experiments"]["single_index_subspace"]["stage1_queries"]
    config = validate(default_config)
    assert config["experiments"]["single_index_subspace"]["stage1_queries"] == "last"
    assert "curriculum" not in config["experiments"]["ltb_gap"]["train"]
    # an object of defaults only is created when absent
    del default_config["progress"]
    assert validate(default_config)["progress"] == {"log_every": 500, "checkpoint_every": 1000}


def test_a_config_of_one_experiment_plans_only_that_experiment(default_config):
    default_config["experiments"] = {"ltb_gap": default_config["experiments"]["ltb_gap"]}
    plan = build_plan(validate(default_config))
    assert list(plan.settings) == ["ltb_gap"]


def mutate(config, path, value):
    config = copy.deepcopy(config)
    node = config
    for key in path[:-1]:
        node = node[key]
    if value is DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return config


DELETE = object()


@pytest.mark.parametrize(
    "path, value, expected",
    [
        (
            ("experiments", "ltb_gap", "train", "stpes"),
            10,
            r"experiments\.ltb_gap\.train\.stpes: unknown key; allowed keys here: .*steps",
        ),
        (("evaluation", "bogus"), 1, r"evaluation\.bogus: unknown key"),
        (("experiments", "ltb_gap", "d"), "five", r"experiments\.ltb_gap\.d: expected integer, got 'five'"),
        (("experiments", "ltb_gap", "n"), [10, 0], r"experiments\.ltb_gap\.n\[1\]: 0 is out of range; must be >= 1"),
        (("experiments", "ltb_gap", "n"), [-3], r"experiments\.ltb_gap\.n\[0\]: -3 is out of range"),
        (("experiments", "ltb_gap", "sigma"), 0, r"experiments\.ltb_gap\.sigma: 0 is out of range; must be > 0"),
        (
            ("experiments", "ltb_gap", "models"),
            ["lsa", "gpt9"],
            r"experiments\.ltb_gap\.models\[1\]: 'gpt9' is not allowed; allowed: lsa, ltb, gd_beta",
        ),
        (
            ("experiments", "ltb_gap", "train", "optimizer"),
            "adamw",
            r"train\.optimizer: 'adamw' is not allowed; allowed: adam, sgd",
        ),
        (
            ("experiments", "no_such_experiment"),
            {},
            r"experiments\.no_such_experiment: unknown key; allowed keys here: .*ltb_gap",
        ),
        (("seeds",), DELETE, r"'seeds' is a required property"),
        (
            ("experiments", "single_index", "train", "stage1_queries"),
            "first",
            r"single_index\.train\.stage1_queries: 'first' is not allowed; allowed: last, all",
        ),
        (("experiments", "single_index", "n_test"), 3, r"single_index\.n_test: 3 is out of range; must be >= 4"),
        (
            ("experiments", "probe_layers", "lstm", "train", "precision"),
            "float16",
            r"lstm\.train\.precision: 'float16' is not allowed; allowed: float32, bfloat16",
        ),
    ],
)
def test_bad_configs_name_the_key(default_config, path, value, expected):
    with pytest.raises(ConfigError, match=expected):
        validate(mutate(default_config, path, value))


def test_all_errors_are_reported_at_once(default_config):
    bad = mutate(mutate(default_config, ("experiments", "ltb_gap", "d"), 0), ("evaluation", "n_prompts"), "many")
    with pytest.raises(ConfigError) as info:
        validate(bad)
    assert "experiments.ltb_gap.d" in str(info.value) and "evaluation.n_prompts" in str(info.value)


def test_missing_or_malformed_files(tmp_path: Path):
    with pytest.raises(ConfigError, match="does not exist"):
        load(tmp_path / "nope.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("seeds: [0, 1\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load(broken)


def test_plan_shares_jobs_and_names_them_by_content(default_config):
    plan = build_plan(validate(default_config))
    exp = default_config["experiments"]["ltb_gap"]
    n_settings = len(exp["n"]) * len(exp["beta_star_norm"])
    settings = plan.settings["ltb_gap"].values()
    assert len(settings) == n_settings
    assert len({s.data["eval"] for s in settings}) == n_settings
    models = {m["hash"] for s in settings for m in s.models}
    assert len(models) == n_settings * len(exp["models"]) * len(default_config["seeds"])
    again = build_plan(validate(copy.deepcopy(default_config)))
    assert set(again.train) == set(plan.train)
    more_steps = mutate(default_config, ("experiments", "ltb_gap", "train", "steps"), 7)
    changed = build_plan(validate(more_steps))
    assert not {m["hash"] for s in changed.settings["ltb_gap"].values() for m in s.models} & models
    assert changed.settings["lsa_rates"].keys() == plan.settings["lsa_rates"].keys()  # other experiments untouched
    assert set(changed.data) == set(plan.data)  # evaluation sets do not depend on training


def test_models_that_train_in_seconds_share_a_job_per_task_and_training_config_and_the_others_train_alone(
    default_config,
):
    from iclab.compute import cluster
    from iclab.pipeline.plan import GROUPED_MODELS

    plan = build_plan(validate(default_config))
    assert sorted(h for members in plan.groups.values() for h in members) == sorted(plan.train)  # each model once
    for group, members in plan.groups.items():
        jobs = [plan.train[h] for h in members]
        assert all(plan.group_of[h] == group for h in members)
        shared = [{k: v for k, v in j.to_dict().items() if k in ("task", "train")} for j in jobs]
        assert all(spec == shared[0] for spec in shared)  # one task, one training config
        if jobs[0].model["name"] not in GROUPED_MODELS:
            assert len(members) == 1
        if len(members) > 1:  # the models that ask a cluster for a GPU train alone (the Snakefile asks per group)
            assert not any(cluster.gpus(job.to_dict()) for job in jobs)
    # ltb_gap: the LSA, the LTB and GD-β of one task, every seed, in one job
    ltb_gap = {plan.group_of[m["hash"]] for s in plan.settings["ltb_gap"].values() for m in s.models}
    for group in ltb_gap:
        jobs = [plan.train[h] for h in plan.groups[group]]
        kinds = sorted({j.model["name"] for j in jobs})
        assert kinds == ["gd_beta", "lsa", "ltb"]
        assert sorted((j.model["name"], j.seed) for j in jobs) == [
            (kind, seed) for kind in kinds for seed in default_config["seeds"]
        ]
    gpt2 = [g for g, members in plan.groups.items() if plan.train[members[0]].model["name"] == "gpt2"]
    assert gpt2 and all(len(plan.groups[g]) == 1 for g in gpt2)
    # adding a seed regroups the grouped models' specs but leaves every GPT-2's job as it was
    more = build_plan(validate(mutate(default_config, ("seeds",), [0, 1, 2, 3])))
    assert set(gpt2) <= set(more.groups)


def without_batched(spec: dict) -> dict:
    return spec | {"train": {k: v for k, v in spec["train"].items() if k != "batched"}}


def test_batched_training_groups_gpt2s_by_shape_and_a_new_seed_renames_only_its_group(default_config):
    """Under batched_training each GPT-2 is the default's spec plus train.batched (every other model keeps its
    name); one group holds the GPT-2s of one architecture, training config and task shape, across experiments and
    task distributions. A new seed of ltb_table1 adds its two GPT-2s and renames only the two groups they join,
    whose other members keep their names (``iclab train --reuse-dir`` then trains only the new ones)."""
    from iclab.store.jobs import TrainJob

    unbatched = build_plan(validate(copy.deepcopy(default_config)))
    batched_config = copy.deepcopy(default_config) | {"batched_training": True}
    plan = build_plan(validate(copy.deepcopy(batched_config)))
    gpt2 = {h for h, job in plan.train.items() if job.model["name"] == "gpt2"}
    assert gpt2 and all(plan.train[h].batched for h in gpt2)
    assert set(plan.train) - gpt2 == {h for h, job in unbatched.train.items() if job.model["name"] != "gpt2"}
    assert ({TrainJob.from_dict(without_batched(plan.train[h].to_dict())).hash for h in gpt2}
            == {h for h, job in unbatched.train.items() if job.model["name"] == "gpt2"})
    # the probes' group by hand: the κ = 1 GPT-2 of probe_layers, probe_similarity and probe_illconditioned (seeds
    # 0, 1, 2, shared) and probe_illconditioned's κ = 100 GPT-2 (seed 0): one architecture and shape, two tasks
    probes = {m["hash"] for name in ("probe_layers", "probe_similarity", "probe_illconditioned")
              for s in plan.settings[name].values() for m in s.models if m["hash"] in gpt2}
    assert len(probes) == 4 and len({plan.group_of[h] for h in probes}) == 1
    assert sorted(plan.train[h].seed for h in probes) == [0, 0, 1, 2]
    # ltb_table1's GPT-2 with and without its MLP: two architectures, two groups of 3 seeds
    table1 = {plan.group_of[m["hash"]] for s in plan.settings["ltb_table1"].values() for m in s.models
              if plan.train[m["hash"]].model["name"] == "gpt2"}
    assert sorted(len(plan.groups[g]) for g in table1) == [6, 6]  # 3 seeds × the table's two sweep points (‖β*‖)
    more = copy.deepcopy(batched_config)
    more["experiments"]["ltb_table1"]["seeds"] = [0, 1, 2, 3]
    after = build_plan(validate(more))
    added = set(after.train) - set(plan.train)
    assert set(plan.train) <= set(after.train)  # no model renamed
    added_gpt2 = {h for h in added if after.train[h].model["name"] == "gpt2"}
    assert {after.train[h].seed for h in added} == {3}
    gpt2_groups = {g for g in plan.groups if plan.train[plan.groups[g][0]].model["name"] == "gpt2"}
    renamed = gpt2_groups - set(after.groups)
    assert renamed == table1  # only the two groups the new GPT-2s join; every other GPT-2 group keeps its name
    for group in renamed:
        new_group = after.group_of[plan.groups[group][0]]
        assert set(after.groups[new_group]) - set(plan.groups[group]) == {
            h for h in added_gpt2 if after.group_of[h] == new_group} and len(after.groups[new_group]) == 8


def test_a_model_can_have_its_own_training_config(default_config):
    """lsa_shifts: GPT-2 trains with its own config on the LSA's task; the LSA's models are unchanged."""
    plan = build_plan(validate(default_config))
    exp = default_config["experiments"]["lsa_shifts"]
    settings = list(plan.settings["lsa_shifts"].values())
    hashes = {name: {m["hash"] for s in settings for m in s.models if m["label"] == name} for name in ("lsa", "gpt2")}
    jobs = {name: [plan.train[h] for h in sorted(hs)] for name, hs in hashes.items()}
    assert {job.train.steps for job in jobs["gpt2"]} == {exp["gpt2"]["train"]["steps"]}
    assert {job.train.steps for job in jobs["lsa"]} == {exp["train"]["steps"]}
    assert len(jobs["gpt2"]) == len(jobs["lsa"]) == len(default_config["seeds"])  # shared by every condition
    assert {job.task["n_points"] for job in jobs["gpt2"] + jobs["lsa"]} == {exp["n"] + 1}
    without = copy.deepcopy(default_config)
    del without["experiments"]["lsa_shifts"]["gpt2"]
    lsa_only = build_plan(validate(without))
    assert {m["hash"] for s in lsa_only.settings["lsa_shifts"].values() for m in s.models} == hashes["lsa"]


def test_lsa_shifts_gpt2_is_zfb_figure1s_fixed_arm_and_a_short_position_table_is_refused(default_config):
    """config.yaml: lsa_shifts' GPT-2 (gpt2_positions = zfb_figure1's m_max + 1, the same size, training and
    prompts) is the very model zfb_figure1 trains on the fixed covariance: one job per seed for both."""
    plan = build_plan(validate(default_config))

    def gpt2_models(experiment, **coords):
        settings = [s for s in plan.settings[experiment].values() if coords.items() <= s.coords.items()]
        return {m["hash"] for s in settings for m in s.models if m["label"] == "gpt2"}

    shared = gpt2_models("lsa_shifts")
    assert len(shared) == len(default_config["seeds"]) and shared == gpt2_models("zfb_figure1", train="fixed")
    assert not shared & gpt2_models("zfb_figure1", train="random")
    short = mutate(default_config, ("experiments", "lsa_shifts", "gpt2_positions"), 20)  # n = 20: 21 points
    with pytest.raises(ExperimentError, match="position embeddings for 20 points but would train on prompts of 21"):
        build_plan(validate(short))


def test_a_non_editable_install_validates_with_its_shipped_schemas(tmp_path: Path):
    """The schemas (global and per experiment) travel inside the wheel: validation needs no checkout."""
    project = tmp_path / "project"
    shutil.copytree(REPO / "src", project / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, project / name)
    site = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(project)]
    subprocess.run(pip, check=True, capture_output=True)
    env = {**os.environ, "PYTHONPATH": str(site), "HF_HUB_OFFLINE": "1"}
    where = subprocess.run(
        [sys.executable, "-c", "import iclab; print(iclab.__file__)"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert where.stdout.strip().startswith(str(site)), where.stdout + where.stderr
    result = subprocess.run(
        [sys.executable, "-m", "iclab", "validate", str(REPO / "config.yaml")],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert ": valid;" in result.stdout


@pytest.mark.parametrize("path", ["config.yaml", "config/paper.yaml", "tests/data/tiny.yaml"])
def test_no_learner_trains_on_prompts_longer_than_its_position_embeddings(path):
    """GPT-2 has position embeddings for ``n_points`` points: every planned training job's prompts fit
    (before, the paper tier's d = 32 single-index GPT-2 would have trained on 1025-point prompts with 257)."""
    plan = build_plan(load(REPO / path))
    limited = [job for job in plan.train.values() if "n_points" in job.model]
    assert all(job.task["n_points"] <= job.model["n_points"] for job in limited)


def test_a_learner_whose_prompts_exceed_its_positions_is_refused_when_planning():
    from iclab.errors import ExperimentError
    from iclab.store.jobs import TrainJob
    from iclab.pipeline.plan import check_positions
    from iclab.tasks import LinearTask

    spec = {"name": "gpt2", "n_points": 5, "prompt_format": "interleaved", "n_embd": 8, "n_layer": 1, "n_head": 2}
    train = {"steps": 1, "batch_size": 1, "lr": 0.1}
    task = LinearTask(d=2, n_points=9, beta_star=(0.0, 0.0), psi=1.0, sigma=0.1).to_dict()
    job = TrainJob.from_dict({"model": spec, "task": task, "train": train, "seed": 0})
    with pytest.raises(ExperimentError, match=r"'gpt2' has position embeddings for 5 points but would train on prompts"):
        check_positions("toy", job)


@pytest.mark.parametrize("eval_prompts", [99, None])
def test_induced_weights_on_more_prompts_than_the_evaluation_set_are_refused_when_planning(default_config, eval_prompts):
    """probe_similarity fits induced weights on its first ``weights_prompts`` evaluation prompts: more than the
    set holds (its own eval_prompts, or the global evaluation.n_prompts) is refused before any job runs."""
    config = copy.deepcopy(default_config)
    section = config["experiments"]["probe_similarity"]
    section["weights_prompts"] = 100
    if eval_prompts is None:
        del section["eval_prompts"]
        config["evaluation"]["n_prompts"] = 99
    else:
        section["eval_prompts"] = eval_prompts
    with pytest.raises(ExperimentError, match=r"probe_similarity: weights_prompts = 100 .* has 99 .* allowed: weights_prompts ≤ 99"):
        build_plan(validate(config))
    section["weights_prompts"] = 99
    build_plan(validate(config))


SOURCE_WORDS = re.compile(
    r"not stated|not confirmed|§|Section|Table|Figure|Theorem|Lemma|Corollary|Assumption|Appendix|Algorithm|"
    r"their code|the talk|the theory|iclab|\bas \w|paper|Garg"
)


def unsourced_values(text: str) -> list[str]:
    """Lines of a YAML file that set a value with no source: neither a comment naming one on the line nor on
    the line of its parent key."""
    bare, parents = [], []  # parents: (indent, has a source comment) of the open mapping keys
    for line in text.splitlines():
        content, _, comment = line.partition("#")
        if not content.strip() or content.strip().startswith("- "):
            continue
        indent = len(content) - len(content.lstrip())
        while parents and parents[-1][0] >= indent:
            parents.pop()
        sourced = bool(SOURCE_WORDS.search(comment))
        value = content.strip().partition(":")[2]
        if not value.strip() or (value.strip().startswith("&") and len(value.split()) == 1):
            parents.append((indent, sourced))  # a mapping key: its children may rely on its comment
        elif not (sourced or (parents and parents[-1][1])):
            bare.append(line.strip())
    return bare


def test_every_paper_tier_value_is_sourced_or_marked_not_stated():
    assert unsourced_values((REPO / "config" / "paper.yaml").read_text()) == []
    assert unsourced_values((REPO / "config" / "gpu_node.yaml").read_text()) == []
    assert unsourced_values("a:\n  b: 1  # Table 1\n  c: 2\nd:  # not stated\n  e: 3\n") == ["c: 2"]


@pytest.mark.parametrize("path", ["config.yaml", "config/paper.yaml"])
def test_the_well_conditioned_run_of_probe_illconditioned_adds_one_evaluation_and_no_training(path):
    """κ = 1 beside κ(Σ) is probe_similarity's task: its GPT-2 (seed 0), evaluation and probe sets are probe_layers'
    and probe_similarity's, shared by hash; only the κ = 1 evaluation of probe_illconditioned is new."""
    config = yaml.safe_load((REPO / path).read_text())
    cfg = config["experiments"]["probe_illconditioned"]
    assert cfg["well_conditioned"], f"{path} runs §5's comparison"
    with_run, without = build_plan(validate(config)), build_plan(validate(copy.deepcopy(config) | {"experiments": {
        **config["experiments"], "probe_illconditioned": cfg | {"well_conditioned": False}}}))
    assert with_run.train == without.train and with_run.data == without.data
    settings = with_run.settings["probe_illconditioned"]
    assert len(settings) == len(without.settings["probe_illconditioned"]) + 1
    well = next(s for s in settings.values() if s.coords["condition_number"] == 1.0)
    similarity = next(iter(with_run.settings["probe_similarity"].values()))
    assert well.data == similarity.data and well.task == similarity.task
    assert {m["hash"] for m in well.models} <= {m["hash"] for m in similarity.models}


def test_the_well_conditioned_run_beside_kappa_one_is_refused(default_config):
    default_config["experiments"]["probe_illconditioned"] |= {"condition_number": 1, "well_conditioned": True}
    with pytest.raises(ExperimentError, match="condition_number > 1 with well_conditioned"):
        build_plan(validate(default_config))
