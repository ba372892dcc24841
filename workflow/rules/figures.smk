localrules:
    figure,
    table,


rule figure:
    """Redrawn from the experiment cube alone: editing the figure code never retrains."""
    input:
        cube="results/cubes/{experiment}.nc",
        code=lambda w: product_code(w.experiment, "figure"),
    output:
        png=report(
            "results/figures/{experiment}.png",
            caption=str(experiments.HERE / "{experiment}" / "caption.rst"),
            category="Figures",
        ),
        pdf="results/figures/{experiment}.pdf",
    log:
        "results/logs/figure/{experiment}.log",
    benchmark:
        "results/benchmarks/figure/{experiment}.tsv"
    threads: 1
    wildcard_constraints:
        experiment="|".join(experiments.product_names("figure")),
    conda:
        ENV
    shell:
        "python -m iclab figure {wildcards.experiment} --cube {input.cube} --out {output.png} > {log} 2>&1"


rule table:
    """Redrawn from the experiment cube alone."""
    input:
        cube="results/cubes/{experiment}.nc",
        code=lambda w: product_code(w.experiment, "table"),
    output:
        csv="results/tables/{experiment}.csv",
        md="results/tables/{experiment}.md",
        tex="results/tables/{experiment}.tex",
    log:
        "results/logs/table/{experiment}.log",
    benchmark:
        "results/benchmarks/table/{experiment}.tsv"
    threads: 1
    wildcard_constraints:
        experiment="|".join(experiments.product_names("table")),
    conda:
        ENV
    shell:
        "python -m iclab table {wildcards.experiment} --cube {input.cube} --out results/tables/{wildcards.experiment}"
        " > {log} 2>&1"
