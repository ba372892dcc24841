"""The second look's plan (docs/claims.md, "Two looks"): from look 1's claims table, the new training seeds that each
experiment's inconclusive rows need, priced from look 1's own benchmark files and kept within a budget.

Each inconclusive claim (not a verification) needs one of:

- ``seeds``: its "seeds needed" (look 2's, at 99%), or ``looks.ONE_SEED_LOOK2`` after a one-seed look 1;
- ``prompts``: its Monte-Carlo error alone is too large (the factor of evaluation prompts it names, within
  ``looks.LOOK2_MAX_PROMPTS``); listed with the factor, not run: a look that adds prompts is not built;
- ``paper tier``: its seeds needed pass ``looks.LOOK2_MAX_SEEDS``, its prompts ``looks.LOOK2_MAX_PROMPTS``, or its
  estimate sits on the region's edge.

An experiment's look 2 trains ``S₂`` new seeds, the most any of its rows needs (within the cap), numbered after its
look-1 seeds, so that it trains, evaluates and judges new models only. Its price is look 1's job-seconds of the
experiment's training and evaluation jobs × S₂ / S₁ (a model's training and its predictions scale with the seeds;
baselines and analyses are counted as if they did too, which overstates a little) plus its aggregation, figure and
table jobs as measured. Experiments are taken in order of rows they may decide per job-second while the budget
lasts; the rest are listed with their price.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from iclab.claims import LOOK_ALPHAS
from iclab.errors import UsageError
from iclab.looks import LOOK2_MAX_PROMPTS, LOOK2_MAX_SEEDS, ONE_SEED_LOOK2
from iclab.plan import Plan

PROMPTS_NEEDED = re.compile(r"~(?P<factor>\d+)× the prompts")
FIXED_RULES = ("aggregate", "figure", "table")  # benchmarks/<rule>/<experiment>.tsv: work that does not scale


@dataclass(frozen=True)
class RowNeed:
    """What one inconclusive row needs to be decided at look 2."""

    experiment: str
    claim: str
    kind: str  # "seeds", "prompts" or "paper tier"
    amount: int  # new seeds, or the factor of prompts; 0 for the paper tier
    why: str


def row_need(row: pd.Series) -> RowNeed:
    """Read one inconclusive row's ``seeds_needed`` (``claims.seeds_needed``'s text) as a ``RowNeed``."""
    text, experiment, claim = str(row["seeds_needed"]), row["experiment"], row["claim"]
    if text.isdigit():
        seeds = int(text)
        if seeds > LOOK2_MAX_SEEDS:
            return RowNeed(experiment, claim, "paper tier", 0, f"{seeds} seeds needed, past the cap of "
                                                                f"{LOOK2_MAX_SEEDS}")
        return RowNeed(experiment, claim, "seeds", seeds, f"{seeds} new seeds decide it with 80% power")
    if text.startswith("unknown: 1 seed"):
        return RowNeed(experiment, claim, "seeds", ONE_SEED_LOOK2, "one seed at look 1: no spread to plan from")
    if match := PROMPTS_NEEDED.search(text):
        factor = int(match["factor"])
        if factor > LOOK2_MAX_PROMPTS:
            return RowNeed(experiment, claim, "paper tier", 0, f"the Monte-Carlo error alone: ~{factor}× the prompts, "
                                                                f"past the cap of {LOOK2_MAX_PROMPTS}×")
        return RowNeed(experiment, claim, "prompts", factor, f"the Monte-Carlo error alone: ~{factor}× the prompts")
    return RowNeed(experiment, claim, "paper tier", 0, text or "no count of seeds")


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
    """Look 1's job-seconds of ``experiment``: (training and evaluation, which scale with the seeds; aggregation,
    figure and table, which do not)."""
    settings = plan.settings[experiment].values()
    groups = {plan.group_of[model["hash"]] for setting in settings for model in setting.models}
    scaled = sum(job_seconds(results, "train", group) for group in groups)
    scaled += sum(job_seconds(results, "evaluate", f"{experiment}/{setting.hash}") for setting in settings)
    fixed = sum(job_seconds(results, rule, experiment, required=False) for rule in FIXED_RULES)
    return scaled, fixed


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
        new = tuple(range(max(old) + 1, max(old) + 1 + s2))
        candidates.append((experiment, tuple(rows), new, scaled * s2 / len(old) + fixed))
    candidates.sort(key=lambda c: -len(c[1]) / c[3])
    plans, spent = [], 0.0
    for experiment, rows, new, price in candidates:
        affordable = spent + price <= budget_s
        spent += price if affordable else 0.0
        plans.append(ExperimentLook(experiment, rows, new, price, affordable))
    return plans


def overlay(plans: list[ExperimentLook], config: dict[str, Any], results: Path) -> dict[str, Any]:
    """The config of look 2: look 1's with only the affordable experiments, each at its new seeds, writing under
    ``results``/look2/ and judging both looks (``second_look``)."""
    experiments = {plan.experiment: config["experiments"][plan.experiment] | {"seeds": list(plan.new_seeds)}
                   for plan in plans if plan.affordable}
    look = {"results": str(results), "experiments": list(config["experiments"])}
    return config | {"experiments": experiments, "second_look": look}
