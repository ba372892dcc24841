"""The smoke run of a tier: every shape of the config kept, only the amount of work capped.

``snakemake --cores 2 --configfile config/paper.yaml --replace-workflow-config --config smoke=2`` runs every rule of
the tier through to every figure, table and the claims table with:

- every training run stopped after K = ``smoke`` steps (gradient steps; for the two-stage fit, K chunks of
  ``fit_chunk`` prompts in each stage), its learning-rate schedule spread over those K steps;
- a curriculum that starts at its first stage and jumps to the task's full shape at step 1, so that every
  step after the first trains at the shape that the tier's long runs spend almost all their steps at;
- the first seed only;
- every evaluation set and every analysis set read like one (``PROMPT_KEYS``) capped at ``SMOKE_PROMPTS`` prompts:
  less than one evaluation chunk, enough for every code path (Fu et al.'s probes fit 257 weights from 16 × 41
  rows); the induced weights' prompts at ``SMOKE_WEIGHTS_PROMPTS``; the held-out prompts that tune the prompt-only
  baselines (``evaluation.holdout_prompts``) at ``SMOKE_PROMPTS`` too;
- a progress line after every step (``iclab.compute.cost`` reads the seconds per step from them), checkpoints at
  the tier's cadence (none within K steps: a checkpoint's write would count in the next step's seconds).

Everything else is the tier's: d, n, N, M, model widths, depths and heads, batch sizes, chunk sizes, sweep points,
theory sample counts. The run writes under ``results/smoke/`` (``results_dir``), never over a real run's results, and
its claims table judges nothing. Its logs and benchmarks are what ``iclab cost`` projects the tier's cost from.
"""

from __future__ import annotations

import copy
from typing import Any

from iclab.hashing import canonical_json

SMOKE_KEY = "smoke"
# Prompts of every evaluation and analysis set in a smoke run, and of the held-out sets that tune the prompt-only
# baselines. These cost seconds a prompt at the paper's lengths (mean_field's kernel ridge at n = 1000: 4.6 s; its
# tuning on the default 512 held-out prompts took 437 s a setting), so 64 would take the smoke run past an hour.
SMOKE_PROMPTS = 16
PROMPT_KEYS = ("eval_prompts", "probe_prompts", "pretraining_eval")  # counts of prompts read
# The induced weights' prompts (Fu et al.) each cost K·T forward passes (41 prefixes × 200 queries at the paper's
# shape: the tier's 64 prompts take ~2 h on 2 cores, 2 took 12 min): one exercises every code path.
SMOKE_WEIGHTS_PROMPTS = 1
# A curriculum increment larger than any task's d and prompt length: one stage reaches the full shape.
FULL_SHAPE_STEP = 1_000_000
RESULTS = "results"
CAPPED_TRAIN_FIELDS = ("steps", "max_chunks", "curriculum")  # what a smoke run changes in a training spec


def shape_key(job: dict[str, Any]) -> str:
    """A training spec (``TrainJob.to_dict()``) without its seed and what a smoke run caps: a tier's model and its
    smoke run's counterpart share it."""
    train = {key: value for key, value in job["train"].items() if key not in CAPPED_TRAIN_FIELDS}
    return canonical_json({"model": job["model"], "task": job["task"], "train": train})


def smoke_steps(config: dict[str, Any]) -> int | None:
    """K of a smoke run, or None for a real run."""
    return config.get(SMOKE_KEY)


def results_dir(config: dict[str, Any]) -> str:
    """Where the run writes: ``results/``, ``results/smoke/`` for a smoke run, ``<look 1's>/look2/`` for a second
    look (``second_look``)."""
    if "second_look" in config:
        return f"{config['second_look']['results']}/look2"
    return f"{RESULTS}/smoke" if smoke_steps(config) else RESULTS


def smoke_config(config: dict[str, Any]) -> dict[str, Any]:
    """The validated ``config`` as its smoke run (module docstring); unchanged without a ``smoke`` key."""
    steps = smoke_steps(config)
    if not steps:
        return config
    out = copy.deepcopy(config)
    out["seeds"] = out["seeds"][:1]
    out["evaluation"]["n_prompts"] = min(out["evaluation"]["n_prompts"], SMOKE_PROMPTS)
    out["evaluation"]["holdout_prompts"] = min(out["evaluation"].get("holdout_prompts", SMOKE_PROMPTS), SMOKE_PROMPTS)
    out["progress"] = out["progress"] | {"log_every": 1}
    out["experiments"] = {name: capped(section, steps) for name, section in out["experiments"].items()}
    return out


def capped(node: Any, steps: int) -> Any:
    """An experiment's section (or any part of it) with its work capped, its shapes kept."""
    if isinstance(node, list):
        return [capped(item, steps) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: capped(value, steps) for key, value in node.items()}
    if "seeds" in out:
        out["seeds"] = out["seeds"][:1]
    for key in PROMPT_KEYS:
        if key in out:
            out[key] = min(out[key], SMOKE_PROMPTS)
    if "weights_prompts" in out:
        out["weights_prompts"] = min(out["weights_prompts"], SMOKE_WEIGHTS_PROMPTS)
    if "steps" in out and "lr" in out:  # a training section of gradient steps
        out["steps"] = min(out["steps"], steps)
    if is_two_stage(out):
        out["max_chunks"] = steps
    if "curriculum" in out:
        out["curriculum"] = full_shape_from_step_one(out["curriculum"])
    return out


def is_two_stage(section: dict[str, Any]) -> bool:
    """The training section of the two-stage fit (single_index's ``train``) or the stage-1 sweep that builds it
    (single_index_subspace)."""
    return "t2" in section or ("t1" in section and "width" in section)


def full_shape_from_step_one(curriculum: dict[str, Any]) -> dict[str, Any]:
    """The curriculum's first stage at step 0, the task's full dimensions and points from step 1 on."""
    return {
        "dims": [curriculum["dims"][0], FULL_SHAPE_STEP],
        "points": [curriculum["points"][0], FULL_SHAPE_STEP],
        "every": 1,
    }
