rule train:
    """One model, named by the hash of its training spec; resumes from its checkpoint."""
    output:
        "results/models/{model}.nc",
    log:
        "results/logs/train/{model}.log",
    benchmark:
        "results/benchmarks/train/{model}.tsv"
    threads: THREADS
    priority: train_priority
    resources:
        mem_mb=train_mem_mb,
        runtime=train_runtime,
        gpu=train_gpus,
        slurm_partition=train_partition,
        slurm_account=SLURM_ACCOUNT,
    params:
        spec=lambda w: canonical_json(lookup(PLAN.train, w.model, "model").to_dict()),
        # Outside output: Snakemake deletes outputs before a job starts, never this.
        checkpoint="results/checkpoints/{model}.pt",
        checkpoint_every=PROGRESS["checkpoint_every"],
        log_every=PROGRESS["log_every"],
    conda:
        ENV
    shell:
        "python -m iclab train --spec {params.spec:q} --out {output} --checkpoint {params.checkpoint}"
        " --checkpoint-every {params.checkpoint_every} --log-every {params.log_every} --threads {threads}"
        " > {log} 2>&1"
