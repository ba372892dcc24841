rule train:
    """One model group (plan.model_groups: the models that train in seconds on one task and training config, every
    seed; under batched_training, the GPT-2s of one architecture, training config and task shape as one batched
    model; else one model) in one job; each model is named by the hash of its training spec and resumes from its own
    checkpoint (a batched group from the group's). A batched member that an earlier plan's group trained is reused
    from results/models, not retrained."""
    output:
        directory(res("models/{group}")),
    log:
        res("logs/train/{group}.log"),
    benchmark:
        res("benchmarks/train/{group}.tsv")
    threads: train_threads
    priority: train_priority
    retries: train_retries()
    resources:
        mem_mb=train_mem_mb,
        runtime=train_runtime,
        gpu=train_gpus,
        gpu_mem_mb=train_gpu_mem_mb,
        slurm_partition=train_partition,
        slurm_account=SLURM_ACCOUNT,
    params:
        specs=lambda w: " ".join(shlex.quote(canonical_json(spec)) for spec in group_specs(w)),
        # Outside output: Snakemake deletes outputs before a job starts, never this.
        checkpoints=res("checkpoints"),
        reuse=lambda w, output: os.path.dirname(output[0]),  # results/models: every group's folder
        checkpoint_every=PROGRESS["checkpoint_every"],
        log_every=PROGRESS["log_every"],
        prefetch=LOOP["prefetch"],
        producers=train_producers,  # a batched group's on a GPU, cores beside gpu_threads (cluster.producers)
        hide_gpu=hide_gpu,
    conda:
        ENV
    shell:
        "{params.hide_gpu}python -m iclab train --spec {params.specs} --out-dir {output} --checkpoint-dir {params.checkpoints}"
        " --checkpoint-every {params.checkpoint_every} --log-every {params.log_every} --prefetch {params.prefetch}"
        " --producers {params.producers}"
        " --threads {threads} --reuse-dir {params.reuse}"
        " > {log} 2>&1"
