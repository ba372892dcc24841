"""iclab: data generation -> training -> evaluation -> theory -> aggregation -> figures and tables.

    snakemake --cores all                              # every figure and table of config.yaml
    snakemake --cores 2 results/figures/ltb_gap.png     # one target
    snakemake --cores all --configfile config/paper.yaml --replace-workflow-config

The config is validated against the schema shipped in the package (src/iclab/config.schema.yaml and each
experiment package's schema.yaml) before any job is planned.
"""

import shlex
import sys
from pathlib import Path

from snakemake.utils import min_version

min_version("9.0")

# Jobs run `python -m iclab` with the interpreter that runs Snakemake (a venv need not be
# activated), and never touch the network (HF_HUB_OFFLINE).
shell.prefix(f"export PATH={shlex.quote(str(Path(sys.executable).parent))}:$PATH HF_HUB_OFFLINE=1; ")


configfile: "config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/figures.smk"


onsuccess:
    layout_problems()


onerror:
    layout_problems()


rule all:
    input:
        all_targets(),
    default_target: True
