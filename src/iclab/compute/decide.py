"""The second look's plan (docs/claims.md, "Two looks"): from look 1's claims table, the new training seeds that each
experiment's inconclusive rows need, priced from look 1's own benchmark files and kept within a budget.

Each inconclusive claim (not a verification) needs one of:

- ``seeds``: its "seeds needed" (look 2's, at 99%), or ``claims.ONE_SEED_LOOK2`` after a one-seed look 1;
- ``prompts``: its Monte-Carlo error alone is too large (the factor of evaluation prompts it names, within
  ``claims.LOOK2_MAX_PROMPTS``); listed with the factor, not run: a look that adds prompts is not built;
- ``paper tier``: its seeds needed pass ``claims.LOOK2_MAX_SEEDS``, its prompts ``claims.LOOK2_MAX_PROMPTS``, or its
  estimate sits on the region's edge.

An experiment's look 2 trains ``S₂`` new seeds, the most any of its rows needs (within the cap), numbered after its
look-1 seeds, so that it trains, evaluates and judges new models only, on fresh evaluation prompts (the evaluation
sets' seed ``LOOK2_EVALUATION_SEED`` after look 1's), so that the two looks' prompt errors are independent. Its price
is look 1's job-seconds of the experiment's training and evaluation jobs × S₂ / S₁ (a model's training and its
predictions scale with the seeds; baselines and analyses inside the evaluations are counted as if they did too,
which overstates a little), a batched group's share instead (``batched_look2_seconds``: its job-seconds × the
members look 2 trains in its shape over the members it trained, since a batched group's time is not linear in its
seeds but, on the CPU that measured it, in the members it trains) plus, as measured, the jobs look 2 makes again in its own directory: the evaluation sets
(fresh prompts), the LSA class optima and the theory its settings read, and its aggregation, figure and table (a data
set or optimum that two experiments share is counted in each). Experiments are taken in order of rows they may
decide per job-second while the budget lasts; the rest are listed with their price.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from iclab.stats.claims import LOOK2_MAX_PROMPTS, LOOK2_MAX_SEEDS, LOOK_ALPHAS, PROMPTS_NEEDED, look2_need
from iclab.compute import cluster
from iclab.errors import UsageError
from iclab.pipeline.plan import Plan

FIXED_RULES = ("theory", "aggregate", "figure", "table")  # benchmarks/<rule>/<experiment>.tsv, where it has one
LOOK2_EVALUATION_SEED = 1  # look 2's evaluation sets: look 1's seed + this (independent: SeedSequence([seed, …]))


@dataclass(frozen=True)
class RowNeed:
    """What one inconclusive row needs to be decided at look 2."""

    experiment: str
    claim: str
    kind: str  # "seeds", "prompts" or "paper tier"
    amount: int  # new seeds, or the factor of prompts; 0 for the paper tier
    why: str


def row_need(row: pd.Series) -> RowNeed:
    """Read one inconclusive row's ``seeds_needed`` (``claims.seeds_needed``'s text) as a ``RowNeed``
    (``claims.look2_need``), with the reason."""
    text, experiment, claim = str(row["seeds_needed"]), row["experiment"], row["claim"]
    kind, amount = look2_need(text)
    if kind == "seeds":
        why = ("one seed at look 1: no spread to plan from" if text.startswith("unknown")
               else f"{amount} new seeds decide it with 80% power")
    elif kind == "prompts":
        why = f"the Monte-Carlo error alone: ~{amount}× the prompts"
    elif text.isdigit():
        why = f"{text} seeds needed, past the cap of {LOOK2_MAX_SEEDS}"
    elif match := PROMPTS_NEEDED.search(text):
        why = f"the Monte-Carlo error alone: ~{match['factor']}× the prompts, past the cap of {LOOK2_MAX_PROMPTS}×"
    else:
        why = text or "no count of seeds"
    return RowNeed(experiment, claim, kind, amount, why)


def needs(table: pd.DataFrame) -> list[RowNeed]:
    """The needs of look 1's inconclusive claims (verifications aside), in the table's order."""
    open_rows = table[(table["kind"] == "claim") & (table["verdict"] == "inconclusive")]
    return [row_need(row) for _, row in open_rows.iterrows()]


@dataclass(frozen=True)
class ExperimentLook:
    """An experiment's look 2: its rows that new seeds may decide, the seeds, their price in job-seconds, and
    whether the budget takes it."""

    experiment: str
    rows: tuple[RowNeed, ...]
    new_seeds: tuple[int, ...]
    job_seconds: float
    affordable: bool


def job_seconds(results: Path, rule: str, job: str, required: bool = True) -> float:
    """The wall seconds of one of look 1's jobs (its benchmark file); a missing one is an error naming it, or 0 where
    not ``required``."""
    path = results / "benchmarks" / rule / f"{job}.tsv"
    if not path.is_file():
        if not required:
            return 0.0
        raise FileNotFoundError(f"no benchmark {path}: the second look prices its work from look 1's run")
    return float(pd.read_csv(path, sep="\t").iloc[0]["s"])


def experiment_seconds(plan: Plan, experiment: str, results: Path) -> tuple[float, float]:
    """Look 1's job-seconds of ``experiment``: (training, batched groups aside, and evaluation, which scale with the
    seeds; its evaluation sets, LSA class optima, theory, aggregation, figure and table, which look 2 makes once
    again)."""
    settings = plan.settings[experiment].values()
    groups = {group for group in experiment_groups(plan, experiment) if not batched_group(plan, group)}
    scaled = sum(job_seconds(results, "train", group) for group in groups)
    scaled += sum(job_seconds(results, "evaluate", f"{experiment}/{setting.hash}") for setting in settings)
    data = {data_hash for setting in settings for data_hash in setting.data.values()}
    optima = {plan.optimum_of[setting.hash] for setting in settings if setting.hash in plan.optimum_of}
    fixed = sum(job_seconds(results, "data", data_hash) for data_hash in data)
    fixed += sum(job_seconds(results, "lsa_optimum", optimum) for optimum in optima)
    fixed += sum(job_seconds(results, rule, experiment, required=False) for rule in FIXED_RULES)
    return scaled, fixed


def experiment_groups(plan: Plan, experiment: str) -> set[str]:
    """The training groups of ``experiment``'s models."""
    return {plan.group_of[model["hash"]] for setting in plan.settings[experiment].values() for model in setting.models}


def batched_group(plan: Plan, group: str) -> bool:
    return cluster.batched([plan.train[h].to_dict() for h in plan.groups[group]])


def batched_look2_seconds(plan: Plan, experiment: str, results: Path, s1: int, s2: int) -> float:
    """Look 2's training job-seconds of ``experiment``'s batched groups: each group's look-1 job-seconds × the
    members look 2 trains in its shape (the experiment's members of the group × S₂ / S₁; a group of one trains
    beside a copy: 2) over the members look 1's group trained (``cluster.trained_members``; a group shared with
    other experiments charges each its own members' share)."""
    own = {model["hash"] for setting in plan.settings[experiment].values() for model in setting.models}
    total = 0.0
    for group in sorted(g for g in experiment_groups(plan, experiment) if batched_group(plan, g)):
        members = plan.groups[group]
        look2_members = max(2, round(sum(h in own for h in members) * s2 / s1))
        trained = cluster.trained_members([plan.train[h].to_dict() for h in members])
        total += job_seconds(results, "train", group) * look2_members / trained
    return total


def seeds_of(config: dict[str, Any], experiment: str) -> list[int]:
    return list(config["experiments"][experiment].get("seeds", config["seeds"]))


def refuse_a_third_look(config: dict[str, Any], table: pd.DataFrame, config_path: Path, claims_path: Path) -> None:
    """A UsageError where the config or the claims table is a second look's: the error split (``LOOK_ALPHAS``) has two
    looks, and planning from look 2's results would judge its models a third time."""
    if "second_look" in config:
        found = f"--config {config_path} is a second look's (it has second_look: the config `decide` wrote)"
    elif "look" in table and (table["look"] == 2).any():
        found = f"--claims {claims_path} is a second look's (rows judged at look 2)"
    else:
        return
    alphas = " and ".join(f"{alpha:.1%}" for alpha in LOOK_ALPHAS)
    raise UsageError(f"decide: {found}; the error split allows two looks ({alphas} one-sided of the 2.5%): a third "
                     "would need its own share of the error, fixed before any data. Plan from look 1's config and "
                     "table")


def look2(table: pd.DataFrame, config: dict[str, Any], plan: Plan, results: Path, budget_s: float
          ) -> list[ExperimentLook]:
    """Each experiment with rows that new seeds may decide: its look 2 (module docstring), the budget's
    (``budget_s`` job-seconds) taken in order of rows per job-second."""
    by_experiment: dict[str, list[RowNeed]] = {}
    for need in needs(table):
        if need.kind == "seeds":
            by_experiment.setdefault(need.experiment, []).append(need)
    candidates = []
    for experiment, rows in by_experiment.items():
        old = seeds_of(config, experiment)
        s2 = max(need.amount for need in rows)
        scaled, fixed = experiment_seconds(plan, experiment, results)
        batched = batched_look2_seconds(plan, experiment, results, len(old), s2)
        new = tuple(range(max(old) + 1, max(old) + 1 + s2))
        candidates.append(ExperimentLook(experiment, tuple(rows), new, scaled * s2 / len(old) + batched + fixed,
                                         False))
    return within_budget(candidates, budget_s)


def within_budget(candidates: list[ExperimentLook], budget_s: float) -> list[ExperimentLook]:
    """``candidates`` in order of rows per job-second, each affordable while the job-seconds of those taken before
    it and its own stay within ``budget_s``; one that does not fit is skipped (not charged), and a later, cheaper one
    may still be taken."""
    plans, spent = [], 0.0
    for look in sorted(candidates, key=lambda look: -len(look.rows) / look.job_seconds):
        affordable = spent + look.job_seconds <= budget_s
        spent += look.job_seconds if affordable else 0.0
        plans.append(replace(look, affordable=affordable))
    return plans


def overlay(plans: list[ExperimentLook], config: dict[str, Any], results: Path) -> dict[str, Any]:
    """The config of look 2: look 1's with only the affordable experiments, each at its new seeds, evaluated on fresh
    prompts (``LOOK2_EVALUATION_SEED``), writing under ``results``/look2/ and judging both looks (``second_look``)."""
    experiments = {plan.experiment: config["experiments"][plan.experiment] | {"seeds": list(plan.new_seeds)}
                   for plan in plans if plan.affordable}
    evaluation = config["evaluation"] | {"seed": config["evaluation"]["seed"] + LOOK2_EVALUATION_SEED}
    look = {"results": str(results), "experiments": list(config["experiments"])}
    return config | {"experiments": experiments, "evaluation": evaluation, "second_look": look}
