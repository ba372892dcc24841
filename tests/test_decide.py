"""The second look's plan (``iclab.compute.decide``): what each inconclusive row needs, read from the table's text, and
each experiment's new seeds and price from hand-made benchmarks, worked out by hand."""

import pandas as pd
import pytest

from iclab.compute import decide
from iclab.config import validate
from iclab.stats.claims import LOOK2_MAX_PROMPTS, LOOK2_MAX_SEEDS, ONE_SEED_LOOK2, SMOKE_VERDICT
from iclab.pipeline.plan import build_plan
from iclab.pipeline.smoke import results_dir


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
        ("a", "claim", "blank", "inconclusive", ""),
        ("a", "claim", "decided", "holds", ""),
        ("a", "claim", "smoke", SMOKE_VERDICT, ""),
        ("a", "verification", "check", "inconclusive", "4"),
    ])
    found = decide.needs(rows)
    got = [(need.claim, need.kind, need.amount) for need in found]
    assert got == [("six seeds", "seeds", 6), ("one seed", "seeds", ONE_SEED_LOOK2), ("prompts", "prompts", 12),
                   ("many prompts", "paper tier", 0), ("past the cap", "paper tier", 0), ("edge", "paper tier", 0),
                   ("blank", "paper tier", 0)]
    assert [need.why for need in found] == [
        "6 new seeds decide it with 80% power", "one seed at look 1: no spread to plan from",
        "the Monte-Carlo error alone: ~12× the prompts",
        f"the Monte-Carlo error alone: ~213× the prompts, past the cap of {LOOK2_MAX_PROMPTS}×",
        f"{LOOK2_MAX_SEEDS + 1} seeds needed, past the cap of {LOOK2_MAX_SEEDS}",
        "none: the estimate sits on the region's edge", "no count of seeds"]
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
    """Every train job ``seconds["train"]``, every evaluation ``seconds["evaluate"]``, every evaluation set 1 s, every
    LSA class optimum 2 s, each experiment's theory 3 s and its aggregate and figure 5 s."""
    def write(rule, job, s):
        path = results / "benchmarks" / rule / f"{job}.tsv"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"s\th:m:s\tmax_rss\n{s}\t0:00:00\t100\n")

    for group in plan.groups:
        write("train", group, seconds["train"])
    for experiment, settings in plan.settings.items():
        for setting in settings.values():
            write("evaluate", f"{experiment}/{setting.hash}", seconds["evaluate"])
        write("theory", experiment, 3.0)
        for rule in ("aggregate", "figure"):
            write(rule, experiment, 5.0)
    for data_hash in plan.data:
        write("data", data_hash, 1.0)
    for optimum in plan.optima:
        write("lsa_optimum", optimum, 2.0)


def test_each_experiment_gets_the_seeds_its_rows_need_priced_from_look_one(tmp_path, tier):
    """ltb_gap: rows needing 4 and 6 seeds → 6 new seeds (3, …, 8); its look 1 ran 2 train jobs of 30 s and 2
    evaluations of 10 s for 3 seeds, and once each 2 evaluation sets (1 s), 2 LSA optima (2 s), its theory (3 s),
    aggregate and figure (5 s each): 80 × 6 / 3 + 2 + 4 + 3 + 10 = 179 job-seconds (scaling the evaluation sets
    with the seeds would give 181, leaving them out 177). ltb_training: one row with no spread to plan from → 3 new
    seeds (2, 3, 4); 1 train job (30 s) and 1 evaluation (10 s) for 2 seeds: 40 × 3 / 2 + 1 + 2 + 3 + 10 = 76. A
    budget of 100 takes ltb_training (1 row per 76 s) and not ltb_gap (2 rows per 179 s); look 2's evaluation sets
    are drawn from seed 1 + 1 = 2, look 1's from 1."""
    plan = build_plan(tier)
    benchmarks(tmp_path, plan, {"train": 30.0, "evaluate": 10.0})
    rows = table([
        ("ltb_gap", "claim", "r1", "inconclusive", "4"), ("ltb_gap", "claim", "r2", "inconclusive", "6"),
        ("ltb_gap", "claim", "more prompts", "inconclusive",
         "none: the Monte-Carlo error alone is too large (~12× the prompts)"),  # not seeds: not in S₂
        ("ltb_training", "claim", "r3", "inconclusive", "unknown: 1 seed has no spread"),
    ])
    looks = {look.experiment: look for look in decide.look2(rows, tier, plan, tmp_path, budget_s=100.0)}
    gap, training = looks["ltb_gap"], looks["ltb_training"]
    assert gap.new_seeds == (3, 4, 5, 6, 7, 8) and gap.job_seconds == pytest.approx(179.0)
    assert [need.claim for need in gap.rows] == ["r1", "r2"]
    assert training.new_seeds == (2, 3, 4) and training.job_seconds == pytest.approx(76.0)
    assert (training.affordable, gap.affordable) == (True, False)
    config = decide.overlay(list(looks.values()), tier, tmp_path)
    assert list(config["experiments"]) == ["ltb_training"] and config["experiments"]["ltb_training"]["seeds"] == [2, 3, 4]
    assert config["second_look"] == {"results": str(tmp_path), "experiments": ["ltb_gap", "ltb_training"]}
    assert results_dir(config) == f"{tmp_path}/look2"  # never over look 1's cubes and tables
    assert config["evaluation"]["seed"] == 2 and tier["evaluation"]["seed"] == 1
    look2_plan = build_plan(validate(config))
    assert not set(look2_plan.data) & set(plan.data)  # fresh evaluation sets: none of look 1's
    new_models = look2_plan.train.values()
    assert {job.seed for job in new_models} == {2, 3, 4}  # look 2 trains new models only
    everything = decide.look2(rows, tier, plan, tmp_path, budget_s=1e9)
    assert all(look.affordable for look in everything)


def test_the_budget_takes_experiments_by_rows_per_job_second_and_charges_only_those_taken():
    """X (10 rows, 131 s: 0.076 a second), D (1, 30 s: 0.033), A (2, 100 s: 0.02), Y (1, 90 s: 0.011) at a budget of
    130: X misses by 1 s and is not charged, D fits (30), A fits exactly (130), Y does not (220). Charging X would
    leave D and A out, a strict budget A, a start 1 s off X or A; the rows or the price alone would order them
    otherwise."""
    def candidate(name, rows, seconds):
        needs = tuple(decide.RowNeed(name, f"r{i}", "seeds", 4, "") for i in range(rows))
        return decide.ExperimentLook(name, needs, (3, 4, 5, 6), seconds, False)

    candidates = [candidate("A", 2, 100.0), candidate("Y", 1, 90.0), candidate("X", 10, 131.0),
                  candidate("D", 1, 30.0)]
    taken = decide.within_budget(candidates, budget_s=130.0)
    assert [(look.experiment, look.affordable) for look in taken] == [("X", False), ("D", True), ("A", True),
                                                                      ("Y", False)]
    # at 200, with X at 201 and Y at 71: D and A take 130 and Y misses by 1 s (a skipped X refunding 1 would take it)
    candidates = [candidate("X", 10, 201.0), candidate("D", 1, 30.0), candidate("A", 2, 100.0),
                  candidate("Y", 1, 71.0)]
    assert [look.affordable for look in decide.within_budget(candidates, budget_s=200.0)] == [False, True, True, False]


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
    """Pointed at a second look's config (it has second_look) or at a claims table with rows judged at look 2 (all of
    them, or one among look 1's rows: a real second look's table), ``decide`` refuses before any work, naming the
    file and the two looks' shares; look 1's table passes."""
    from iclab.__main__ import main
    from iclab.errors import UsageError

    look1 = table([("ltb_gap", "claim", "r1", "inconclusive", "4")]).assign(look=1)
    decide.refuse_a_third_look(tier, look1, tmp_path / "config.yaml", tmp_path / "claims.csv")  # no error
    look2_rows = look1.assign(look=[2])
    with pytest.raises(UsageError, match=r"--claims .*claims.csv is a second look's .*two looks \(2\.0% and 0\.5%"):
        decide.refuse_a_third_look(tier, look2_rows, tmp_path / "config.yaml", tmp_path / "claims.csv")
    # a second look's table as `decide --run` leaves it: the rows it judged at look 2 beside look 1's decided ones
    mixed = table([("ltb_gap", "claim", "r1", "holds", ""), ("ltb_gap", "claim", "r2", "holds", ""),
                   ("ltb_gap", "claim", "r3", "inconclusive", "4")]).assign(look=[1, 2, 1])
    with pytest.raises(UsageError, match=r"--claims .*claims.csv is a second look's"):
        decide.refuse_a_third_look(tier, mixed, tmp_path / "config.yaml", tmp_path / "claims.csv")
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


def test_a_batched_groups_look_two_price_is_its_members_share_by_hand(tmp_path):
    """ltb_table1 (3 seeds, one β*) under batched_training: its GPT-2 with and without the MLP are 2 batched groups
    of 3 (30 s each), 1 evaluation (10 s); 1 evaluation set (1 s), its theory (3 s), aggregate and figure (5 s
    each). 6 new seeds: each group's look 2 trains 6 members, 30 × 6/3 = 60 s each; the evaluation 10 × 6/3 = 20:
    120 + 20 + 1 + 3 + 10 = 154. 1 new seed: 1 member trains beside a copy, 30 × 2/3 = 20 each (30 × 1/3 = 10 would
    forget the copy): 40 + 10/3 + 14 = 57.33."""
    table1 = {"d": 3, "n": 6, "beta_star_norm": [1.0], "psi": 1.0, "sigma": 0.5,
              "model": {"n_embd": 8, "n_layer": 1, "n_head": 1},
              "train": {"steps": 10, "batch_size": 8, "lr": 0.001}}
    tier = validate({"seeds": [0, 1, 2], "evaluation": {"n_prompts": 100, "seed": 1}, "batched_training": True,
                     "experiments": {"ltb_table1": table1}})
    plan = build_plan(tier)
    assert len(plan.groups) == 2 and sorted(len(members) for members in plan.groups.values()) == [3, 3]
    assert all(decide.batched_group(plan, group) for group in plan.groups)
    benchmarks(tmp_path, plan, {"train": 30.0, "evaluate": 10.0})
    for needed, price in (("6", 120 + 20 + 1 + 3 + 10), ("1", 40 + 10 / 3 + 1 + 3 + 10)):
        rows = table([("ltb_table1", "claim", "gap", "inconclusive", needed)])
        assert decide.look2(rows, tier, plan, tmp_path, budget_s=1e9)[0].job_seconds == pytest.approx(price)
