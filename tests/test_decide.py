"""The second look's plan (``iclab.decide``): what each inconclusive row needs, read from the table's text, and
each experiment's new seeds and price from hand-made benchmarks, worked out by hand."""

import pandas as pd
import pytest

from iclab import decide
from iclab.config import validate
from iclab.looks import LOOK2_MAX_PROMPTS, LOOK2_MAX_SEEDS, ONE_SEED_LOOK2
from iclab.plan import build_plan
from iclab.smoke import results_dir


def table(rows):
    return pd.DataFrame([{"experiment": e, "kind": k, "claim": c, "verdict": v, "seeds_needed": n}
                         for e, k, c, v, n in rows])


def test_each_inconclusive_rows_need_is_read_from_its_seeds_needed():
    rows = table([
        ("a", "claim", "six seeds", "inconclusive", "6"),
        ("a", "claim", "one seed", "inconclusive", "unknown: 1 seed has no spread"),
        ("a", "claim", "prompts", "inconclusive", "none: the Monte-Carlo error alone is too large (~12× the prompts)"),
        ("a", "claim", "many prompts", "inconclusive", "none: the Monte-Carlo error alone is too large (~213× the prompts)"),
        ("a", "claim", "past the cap", "inconclusive", str(LOOK2_MAX_SEEDS + 1)),
        ("a", "claim", "edge", "inconclusive", "none: the estimate sits on the region's edge"),
        ("a", "claim", "decided", "holds", ""),
        ("a", "verification", "check", "inconclusive", "4"),
    ])
    got = [(need.claim, need.kind, need.amount) for need in decide.needs(rows)]
    assert got == [("six seeds", "seeds", 6), ("one seed", "seeds", ONE_SEED_LOOK2), ("prompts", "prompts", 12),
                   ("many prompts", "paper tier", 0), ("past the cap", "paper tier", 0), ("edge", "paper tier", 0)]
    assert LOOK2_MAX_PROMPTS < 213 and 12 <= LOOK2_MAX_PROMPTS


@pytest.fixture()
def tier():
    """ltb_gap (3 seeds, two β*: 2 model groups of 9, 2 evaluations) and ltb_training (seeds 0, 1)."""
    gap = {"d": 3, "n": [6], "beta_star_norm": [0.0, 1.0], "psi": 1.0, "sigma": 0.5, "init_scale": 0.1,
           "models": ["lsa", "ltb", "gd_beta"], "baselines": ["zero"],
           "train": {"steps": 100, "batch_size": 8, "lr": 0.01}}
    training = {key: gap[key] for key in ("d", "psi", "sigma", "init_scale", "models", "train")}
    training |= {"n": 6, "beta_star_norm": [2.0], "baselines": [], "snapshot_every": 50, "seeds": [0, 1]}
    return validate({"seeds": [0, 1, 2], "evaluation": {"n_prompts": 100, "seed": 1},
                     "experiments": {"ltb_gap": gap, "ltb_training": training}})


def benchmarks(results, plan, seconds):
    """Every train job ``seconds["train"]``, every evaluation ``seconds["evaluate"]``, aggregate and figure 5 s."""
    def write(rule, job, s):
        path = results / "benchmarks" / rule / f"{job}.tsv"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"s\th:m:s\tmax_rss\n{s}\t0:00:00\t100\n")

    for group in plan.groups:
        write("train", group, seconds["train"])
    for experiment, settings in plan.settings.items():
        for setting in settings.values():
            write("evaluate", f"{experiment}/{setting.hash}", seconds["evaluate"])
        for rule in ("aggregate", "figure"):
            write(rule, experiment, 5.0)


def test_each_experiment_gets_the_seeds_its_rows_need_priced_from_look_one(tmp_path, tier):
    """ltb_gap: rows needing 4 and 6 seeds → 6 new seeds (3, …, 8); its look 1 ran 2 train jobs of 30 s and 2
    evaluations of 10 s for 3 seeds: 80 × 6 / 3 + 10 (aggregate, figure) = 170 job-seconds. ltb_training: one row with
    no spread to plan from → 3 new seeds (2, 3, 4); 1 train job (30 s) and 1 evaluation (10 s) for 2 seeds:
    40 × 3 / 2 + 10 = 70. A budget of 100 takes ltb_training (1 row per 70 s) and not ltb_gap (2 rows per 170 s)."""
    plan = build_plan(tier)
    benchmarks(tmp_path, plan, {"train": 30.0, "evaluate": 10.0})
    rows = table([
        ("ltb_gap", "claim", "r1", "inconclusive", "4"), ("ltb_gap", "claim", "r2", "inconclusive", "6"),
        ("ltb_training", "claim", "r3", "inconclusive", "unknown: 1 seed has no spread"),
    ])
    looks = {look.experiment: look for look in decide.look2(rows, tier, plan, tmp_path, budget_s=100.0)}
    gap, training = looks["ltb_gap"], looks["ltb_training"]
    assert gap.new_seeds == (3, 4, 5, 6, 7, 8) and gap.job_seconds == pytest.approx(80 * 6 / 3 + 10)
    assert training.new_seeds == (2, 3, 4) and training.job_seconds == pytest.approx(40 * 3 / 2 + 10)
    assert (training.affordable, gap.affordable) == (True, False)
    config = decide.overlay(list(looks.values()), tier, tmp_path)
    assert list(config["experiments"]) == ["ltb_training"] and config["experiments"]["ltb_training"]["seeds"] == [2, 3, 4]
    assert config["second_look"] == {"results": str(tmp_path), "experiments": ["ltb_gap", "ltb_training"]}
    assert results_dir(config) == f"{tmp_path}/look2"  # never over look 1's cubes and tables
    new_models = build_plan(validate(config)).train.values()
    assert {job.seed for job in new_models} == {2, 3, 4}  # look 2 trains new models only
    everything = decide.look2(rows, tier, plan, tmp_path, budget_s=1e9)
    assert all(look.affordable for look in everything)


def test_a_missing_benchmark_is_named(tmp_path, tier):
    rows = table([("ltb_gap", "claim", "r1", "inconclusive", "4")])
    with pytest.raises(FileNotFoundError, match=r"no benchmark .*benchmarks/train/.*look 1's run"):
        decide.look2(rows, tier, build_plan(tier), tmp_path, budget_s=100.0)


def test_decide_run_plans_writes_and_runs_the_workflow_on_look_twos_config(tmp_path, tier, monkeypatch, capsys):
    """One command: ``iclab decide --run`` writes look 2's config and runs Snakemake on it (here a stand-in that
    records the command)."""
    import subprocess
    import sys

    import yaml

    from iclab.__main__ import main

    plan = build_plan(tier)
    benchmarks(tmp_path / "results", plan, {"train": 30.0, "evaluate": 10.0})
    (tmp_path / "results" / "tables").mkdir(parents=True)
    table([("ltb_gap", "claim", "r1", "inconclusive", "4")]).to_csv(tmp_path / "results/tables/claims.csv")
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(tier))
    monkeypatch.chdir(tmp_path)
    ran = []
    monkeypatch.setattr(subprocess, "run", lambda command, check: ran.append(command) or subprocess.CompletedProcess(
        command, 0))
    with pytest.raises(SystemExit) as stop:
        main(["decide", "--config", "config.yaml", "--out", "look2.yaml", "--run", "--cores", "2"])
    assert stop.value.code == 0
    assert ran == [[sys.executable, "-m", "snakemake", "--cores", "2", "--configfile", "look2.yaml",
                    "--replace-workflow-config"]]
    assert yaml.safe_load((tmp_path / "look2.yaml").read_text())["experiments"]["ltb_gap"]["seeds"] == [3, 4, 5, 6]
    assert "ltb_gap: 1 rows, new seeds [3, 4, 5, 6]" in capsys.readouterr().out


def test_decide_refuses_to_plan_a_third_look_in_one_line(tmp_path, tier, caplog):
    """Pointed at a second look's config (it has second_look) or at a claims table with rows judged at look 2,
    ``decide`` refuses before any work, naming the file and the two looks' shares; look 1's table passes."""
    from iclab.__main__ import main
    from iclab.errors import UsageError

    look1 = table([("ltb_gap", "claim", "r1", "inconclusive", "4")]).assign(look=1)
    decide.refuse_a_third_look(tier, look1, tmp_path / "config.yaml", tmp_path / "claims.csv")  # no error
    look2_rows = look1.assign(look=[2])
    with pytest.raises(UsageError, match=r"--claims .*claims.csv is a second look's .*two looks \(2\.0% and 0\.5%"):
        decide.refuse_a_third_look(tier, look2_rows, tmp_path / "config.yaml", tmp_path / "claims.csv")
    second = tier | {"second_look": {"results": "results", "experiments": ["ltb_gap"]}}
    with pytest.raises(UsageError, match=r"--config .*look2.yaml is a second look's \(it has second_look"):
        decide.refuse_a_third_look(second, look1, tmp_path / "look2.yaml", tmp_path / "claims.csv")
    import yaml

    (tmp_path / "look2.yaml").write_text(yaml.safe_dump(second))
    look2_rows.to_csv(tmp_path / "claims.csv", index=False)
    with pytest.raises(SystemExit) as refused:
        main(["decide", "--config", str(tmp_path / "look2.yaml"), "--claims", str(tmp_path / "claims.csv"),
              "--results", str(tmp_path / "none"), "--out", str(tmp_path / "look3.yaml")])
    assert refused.value.code == 1 and not (tmp_path / "look3.yaml").exists()
    logged = [record.getMessage() for record in caplog.records if record.levelname == "ERROR"]
    assert len(logged) == 1 and "\n" not in logged[0] and "is a second look's" in logged[0]
