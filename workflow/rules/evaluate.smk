rule lsa_optimum:
    """The LSA class optimum of a linear task (a BFGS), once per task: read by its evaluations and theory."""
    output:
        res("optima/{optimum}.nc"),
    log:
        res("logs/lsa_optimum/{optimum}.log"),
    benchmark:
        res("benchmarks/lsa_optimum/{optimum}.tsv")
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
        slurm_partition=SLURM_PARTITION,
        slurm_account=SLURM_ACCOUNT,
    params:
        spec=lambda w: canonical_json(lookup(PLAN.optima, w.optimum, "LSA class optimum").to_dict()),
    conda:
        ENV
    shell:
        "python -m iclab lsa-optimum --spec {params.spec:q} --out {output} > {log} 2>&1"


rule evaluate:
    """Every trained model and baseline of one setting on its evaluation set (paired); each predicts once."""
    input:
        data=lambda w: [data_path(h) for h in setting_of(w).data.values()],
        models=lambda w: sorted({group_dir(m["hash"]) for m in setting_of(w).models}),
        optimum=lambda w: optimum_paths([setting_of(w)]),
    output:
        res("eval/{experiment}/{setting}.nc"),
    log:
        res("logs/evaluate/{experiment}/{setting}.log"),
    benchmark:
        res("benchmarks/evaluate/{experiment}/{setting}.tsv")
    threads: THREADS
    resources:
        mem_mb=4000,
        runtime=30,
        slurm_partition=SLURM_PARTITION,
        slurm_account=SLURM_ACCOUNT,
    params:
        spec=lambda w: canonical_json(setting_of(w).to_dict()),
        data=lambda w: " ".join(f"{name}={data_path(h)}" for name, h in setting_of(w).data.items()),
        models=lambda w: [model_path(m["hash"]) for m in setting_of(w).models],
        chunk_size=CHUNK_SIZE,
        optimum=lambda w, input: f"--lsa-optimum {input.optimum}" if input.optimum else "",
    conda:
        ENV
    shell:
        "python -m iclab evaluate --spec {params.spec:q} --data {params.data} --models {params.models}"
        " --out {output} --chunk-size {params.chunk_size} --threads {threads} {params.optimum} > {log} 2>&1"


rule theory:
    """An experiment's theory curves and weight read-outs: cheap, rerun when its code or the theory changes."""
    input:
        evaluations=lambda w: [eval_path(w.experiment, s.hash) for s in settings_of(w)],
        data=lambda w: sorted({data_path(h) for s in settings_of(w) for h in s.data.values()}),
        models=lambda w: sorted({group_dir(m["hash"]) for s in settings_of(w) for m in s.models}),
        optima=lambda w: optimum_paths(settings_of(w)),
        code=lambda w: theory_code(w.experiment),
    output:
        res("theory/{experiment}.nc"),
    log:
        res("logs/theory/{experiment}.log"),
    benchmark:
        res("benchmarks/theory/{experiment}.tsv")
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
        slurm_partition=SLURM_PARTITION,
        slurm_account=SLURM_ACCOUNT,
    params:
        order=lambda w: canonical_json(PLAN.order[w.experiment]),
        models=lambda w: sorted({model_path(m["hash"]) for s in settings_of(w) for m in s.models}),
    conda:
        ENV
    shell:
        "python -m iclab theory --experiment {wildcards.experiment} --order {params.order:q}"
        " --evaluations {input.evaluations} --data {input.data} --models {params.models} --lsa-optima {input.optima}"
        " --out {output} > {log} 2>&1"


rule aggregate:
    """All settings and the theory of an experiment in one cube, sweep values as coordinates in config order."""
    input:
        evaluations=lambda w: [eval_path(w.experiment, s.hash) for s in settings_of(w)],
        theory=theory_input,
    output:
        res("cubes/{experiment}.nc"),
    log:
        res("logs/aggregate/{experiment}.log"),
    benchmark:
        res("benchmarks/aggregate/{experiment}.tsv")
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
        slurm_partition=SLURM_PARTITION,
        slurm_account=SLURM_ACCOUNT,
    params:
        order=lambda w: canonical_json(PLAN.order[w.experiment]),
        theory=lambda w, input: f"--theory {input.theory}" if input.theory else "",
    conda:
        ENV
    shell:
        "python -m iclab aggregate --experiment {wildcards.experiment} --order {params.order:q}"
        " --inputs {input.evaluations} {params.theory} --out {output} > {log} 2>&1"
