"""Config validation, the job plan and path helpers shared by every rule."""

import os
import shlex
import sys

from iclab import experiments
from iclab.compute import cluster
from iclab.config import ConfigError, validate
from iclab.hashing import HASH_PATTERN, canonical_json
from iclab.pipeline.plan import build_plan
from iclab.pipeline.smoke import results_dir, smoke_config, smoke_steps

try:
    TIER_CONFIG = validate(config, source="given to Snakemake")
except ConfigError as err:
    raise WorkflowError(str(err)) from None
CONFIG = smoke_config(TIER_CONFIG)  # the config itself, or its smoke run (iclab.pipeline.smoke)

PLAN = build_plan(CONFIG)
THREADS = CONFIG["threads"]
GPU_THREADS = CONFIG.get("gpu_threads", THREADS)
PROGRESS = CONFIG["progress"]
LOOP = CONFIG["loop"]
CHUNK_SIZE = CONFIG["evaluation"]["chunk_size"]
ENV = "../../environment.yml"
SMOKE = smoke_steps(CONFIG)
RESULTS = results_dir(CONFIG)  # results/, or results/smoke/ for a smoke run (never over a real run's results)
if SMOKE:
    print(f"iclab: smoke run (--config smoke={SMOKE}): every shape kept, {SMOKE} training steps, into {RESULTS}/",
          file=sys.stderr)


wildcard_constraints:
    data=HASH_PATTERN,
    group=HASH_PATTERN,
    setting=HASH_PATTERN,
    optimum=HASH_PATTERN,
    experiment="|".join(CONFIG["experiments"]),


def res(path):
    """``path`` under this run's results directory."""
    return f"{RESULTS}/{path}"


def data_path(data_hash):
    return res(f"data/{data_hash}.nc")


def group_dir(model_hash):
    """The output of the training job of the model's group (plan.model_groups)."""
    return res(f"models/{PLAN.group_of[model_hash]}")


def model_path(model_hash):
    return f"{group_dir(model_hash)}/{model_hash}.nc"


def eval_path(experiment, setting_hash):
    return res(f"eval/{experiment}/{setting_hash}.nc")


def optimum_paths(settings):
    """The files of the LSA class optima that ``settings`` read (plan.Plan.optimum_of), each once."""
    return sorted({res(f"optima/{PLAN.optimum_of[s.hash]}.nc") for s in settings if s.hash in PLAN.optimum_of})


def lookup(table, key, what):
    try:
        return table[key]
    except KeyError:
        raise WorkflowError(f"no {what} {key!r} in the plan of this config (stale target or another config?)") from None


def group_specs(wildcards):
    """The training specs of a group's models, in the group's order (plan.model_groups)."""
    return [PLAN.train[model_hash].to_dict() for model_hash in lookup(PLAN.groups, wildcards.group, "model group")]


# What a job asks a cluster for (iclab.compute.cluster; the local executor ignores these): a training job asks for a GPU
# if it trains a GPT-2 or an LSTM, for a runtime and memory estimated from its spec, and for the partition and
# account named in $ICLAB_SLURM_PARTITION, $ICLAB_SLURM_GPU_PARTITION, $ICLAB_SLURM_ACCOUNT (unset: None, the
# cluster's default partition and the executor plugin's guess of the account).
# $ICLAB_SLURM_MAX_RUNTIME_MIN (the partition's limit) caps each request, and the training rule then retries as often
# as its longest job needs (cluster.retries_needed); $ICLAB_GPU_RATES (a rates file of `iclab gpu-check`) sets the GPU
# runtimes and GPU memory (gpu_mem_mb) from what that check measured instead of the anchors' estimate and the model.
SLURM_PARTITION = cluster.partition(0, os.environ)
SLURM_ACCOUNT = cluster.account(os.environ)
try:
    GPUS_ALLOWED = cluster.gpus_allowed(os.environ)  # $ICLAB_SLURM_GPUS=0: a cluster without GPUs
    MAX_RUNTIME_MIN = cluster.max_runtime_min(os.environ)
    GPU_RATES = cluster.gpu_rates(os.environ)
except ValueError as err:
    raise WorkflowError(str(err)) from None
if not GPUS_ALLOWED:
    print(f"iclab: {cluster.GPUS_VARIABLE}=0: no job asks for a GPU; GPT-2 and LSTM jobs ask for CPUs", file=sys.stderr)
if GPU_RATES is not None:
    print(f"iclab: GPU runtimes from {os.environ[cluster.RATES_VARIABLE]} ({GPU_RATES.card})", file=sys.stderr)


def train_retries():
    """With the partition's limit given, the retries its longest training job needs to finish across attempts
    (each resumes from the last one's checkpoint); without it, the profile's (`--retries`: 0 in a local run)."""
    if cluster.MAX_RUNTIME_VARIABLE not in os.environ:
        return None
    groups = ([PLAN.train[h].to_dict() for h in members] for members in PLAN.groups.values())
    return max([cluster.retries_needed(cluster.group_seconds(specs, GPUS_ALLOWED, GPU_RATES), MAX_RUNTIME_MIN)
                for specs in groups], default=0)


def train_gpus(wildcards):
    # one GPU a job: the models that ask for one train alone, or as one batched group (one architecture)
    return cluster.gpus(group_specs(wildcards)[0], GPUS_ALLOWED)


def train_runtime(wildcards, attempt):
    """Minutes; a retried job (--retries) asks for `attempt` times the estimate and resumes from its checkpoints."""
    return cluster.group_runtime_minutes(group_specs(wildcards), attempt, GPUS_ALLOWED, GPU_RATES, MAX_RUNTIME_MIN)


def train_priority(wildcards):
    return cluster.group_priority(group_specs(wildcards))  # CPU seconds: priorities order a local run


def train_gpu_mem_mb(wildcards):
    return cluster.group_device_memory_mb(group_specs(wildcards), GPUS_ALLOWED, GPU_RATES)


def train_threads(wildcards):
    """``gpu_threads`` for a job that trains on a GPU (the Python loop), and a batched group's producers
    (``cluster.producers``); ``threads`` otherwise."""
    return GPU_THREADS + train_producers(wildcards) if train_gpus(wildcards) else THREADS


def train_producers(wildcards):
    return cluster.producers(group_specs(wildcards), LOOP["producers"], GPUS_ALLOWED)


def hide_gpu(wildcards):
    """A job that trains on the CPU sees no GPU (``CUDA_VISIBLE_DEVICES=``): every training goes to CUDA where it
    sees one (``models.default_device``), and in a packed local run only the jobs counted in ``gpu`` may."""
    return "" if train_gpus(wildcards) else "CUDA_VISIBLE_DEVICES= "


def train_mem_mb(wildcards):
    return cluster.group_memory_mb(group_specs(wildcards), GPUS_ALLOWED)


def train_partition(wildcards):
    return cluster.partition(train_gpus(wildcards), os.environ)


def setting_of(wildcards):
    return lookup(PLAN.settings[wildcards.experiment], wildcards.setting, f"{wildcards.experiment} setting")


def settings_of(wildcards):
    return PLAN.settings[wildcards.experiment].values()


def product_code(name, product):
    """The figure or table module of an experiment and the experiment modules it imports: inputs of
    the job that draws it."""
    return [str(p) for p in experiments.product_code(name, product)]


def claims_code():
    """The claims modules of the configured experiments and what they import: inputs of the claims job."""
    return sorted({str(p) for name in CONFIG["experiments"] for p in experiments.claims_code(name)})


def first_look_cubes():
    """A second look's claims read look 1's cubes too (its table holds both looks); none otherwise."""
    look = CONFIG.get("second_look")
    return [] if look is None else [f"{look['results']}/cubes/{name}.nc" for name in look["experiments"]]


def seeds_raised_option():
    """--seeds-raised for the experiments whose config says their seeds were raised after an inconclusive verdict."""
    raised = [f"{name}={cfg['seeds_raised_from']}" for name, cfg in CONFIG["experiments"].items()
              if "seeds_raised_from" in cfg]
    return "--seeds-raised " + " ".join(raised) if raised else ""


def theory_code(name):
    """The experiment and theory modules an experiment's theory runs: inputs of its theory job."""
    return [str(p) for p in experiments.theory_code(name)]


def theory_input(wildcards):
    """The theory cube of an experiment that has a theory hook; none (and no theory job) otherwise."""
    if experiments.experiment(wildcards.experiment).theory is None:
        return []
    return [res(f"theory/{wildcards.experiment}.nc")]


def figure_names():
    """The configured experiments that draw a figure."""
    registry = experiments.registry()
    return [name for name in CONFIG["experiments"] if "figure" in registry[name].products]


def all_targets():
    """Every product and, in a smoke run, the cost table (made last, from every other job's measurements)."""
    return product_targets() + [res(f"tables/cost.{ext}") for ext in ("csv", "md")] * bool(SMOKE)


def product_targets():
    """Every figure (.png, .pdf) and table (.csv, .md, .tex) of the configured experiments, and the claims table."""
    registry = experiments.registry()
    targets = []
    for name in CONFIG["experiments"]:
        if "figure" in registry[name].products:
            targets += [res(f"figures/{name}.{ext}") for ext in ("png", "pdf")]
        if "table" in registry[name].products:
            targets += [res(f"tables/{name}.{ext}") for ext in ("csv", "md", "tex")]
    return targets + [res(f"tables/claims.{ext}") for ext in ("csv", "md", "html")]


def layout_problems():
    """The closing summary's list: every figure of this run drawn with layout problems (its .layout.txt, written by
    the figure rule), so that a run that went on past them says so at its end."""
    found = []
    for name in CONFIG["experiments"]:
        path = res(f"figures/{name}.layout.txt")
        problems = open(path).read().strip() if os.path.isfile(path) else ""
        if problems:
            found.append(problems)
    if found:
        print(f"iclab: {len(found)} figure(s) drawn with layout problems (each figure's .layout.txt; the tests make "
              "them errors):\n" + "\n".join(found), file=sys.stderr)
