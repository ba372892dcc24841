rule data:
    """The one evaluation set of a task spec, shared by every model and baseline."""
    output:
        res("data/{data}.nc"),
    log:
        res("logs/data/{data}.log"),
    benchmark:
        res("benchmarks/data/{data}.tsv")
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
        slurm_partition=SLURM_PARTITION,
        slurm_account=SLURM_ACCOUNT,
    params:
        spec=lambda w: canonical_json(lookup(PLAN.data, w.data, "evaluation set").to_dict()),
    conda:
        ENV
    shell:
        "python -m iclab data --spec {params.spec:q} --out {output} > {log} 2>&1"
