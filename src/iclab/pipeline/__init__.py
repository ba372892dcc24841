"""The workflow above the experiments: the plan of every job a config makes (what Snakemake reads), the smoke
run's config, and the evaluation of one setting's learners.

Layer 7: may import ``iclab.experiments`` and everything below it; never compute planning, the GPU tools or
publishing.
"""
