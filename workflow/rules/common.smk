"""Config validation, the job plan and path helpers shared by every rule."""

import os

from iclab import cluster, experiments
from iclab.config import ConfigError, validate
from iclab.hashing import HASH_PATTERN, canonical_json
from iclab.plan import build_plan

try:
    CONFIG = validate(config, source="given to Snakemake")
except ConfigError as err:
    raise WorkflowError(str(err)) from None

PLAN = build_plan(CONFIG)
THREADS = CONFIG["threads"]
PROGRESS = CONFIG["progress"]
CHUNK_SIZE = CONFIG["evaluation"]["chunk_size"]
ENV = "../../environment.yml"


wildcard_constraints:
    data=HASH_PATTERN,
    model=HASH_PATTERN,
    setting=HASH_PATTERN,
    experiment="|".join(CONFIG["experiments"]),


def data_path(data_hash):
    return f"results/data/{data_hash}.nc"


def model_path(model_hash):
    return f"results/models/{model_hash}.nc"


def eval_path(experiment, setting_hash):
    return f"results/eval/{experiment}/{setting_hash}.nc"


def lookup(table, key, what):
    try:
        return table[key]
    except KeyError:
        raise WorkflowError(f"no {what} {key!r} in the plan of this config (stale target or another config?)") from None


def train_spec(wildcards):
    return lookup(PLAN.train, wildcards.model, "model").to_dict()


# What a job asks a cluster for (iclab.cluster; the local executor ignores these): a training job asks for a GPU
# if it trains a GPT-2 or an LSTM, for a runtime and memory estimated from its spec, and for the partition and
# account named in $ICLAB_SLURM_PARTITION, $ICLAB_SLURM_GPU_PARTITION, $ICLAB_SLURM_ACCOUNT (unset: None, the
# cluster's default partition and the executor plugin's guess of the account).
SLURM_PARTITION = cluster.partition(0, os.environ)
SLURM_ACCOUNT = cluster.account(os.environ)


def train_gpus(wildcards):
    return cluster.gpus(train_spec(wildcards))


def train_runtime(wildcards, attempt):
    """Minutes; a retried job (--retries) asks for `attempt` times the estimate and resumes from its checkpoint."""
    return cluster.runtime_minutes(train_spec(wildcards), attempt)


def train_priority(wildcards):
    return cluster.priority(train_spec(wildcards))


def train_mem_mb(wildcards):
    return cluster.memory_mb(train_spec(wildcards))


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


def theory_code(name):
    """The experiment and theory modules an experiment's theory runs: inputs of its theory job."""
    return [str(p) for p in experiments.theory_code(name)]


def theory_input(wildcards):
    """The theory cube of an experiment that has a theory hook; none (and no theory job) otherwise."""
    if experiments.experiment(wildcards.experiment).theory is None:
        return []
    return [f"results/theory/{wildcards.experiment}.nc"]


def all_targets():
    """Every figure (.png, .pdf) and table (.csv, .md, .tex) of the configured experiments, and the claims table."""
    registry = experiments.registry()
    targets = []
    for name in CONFIG["experiments"]:
        if "figure" in registry[name].products:
            targets += [f"results/figures/{name}.{ext}" for ext in ("png", "pdf")]
        if "table" in registry[name].products:
            targets += [f"results/tables/{name}.{ext}" for ext in ("csv", "md", "tex")]
    return targets + [f"results/tables/claims.{ext}" for ext in ("csv", "md", "html")]
