localrules:
    figure,
    table,
    claims,
    gallery,


rule figure:
    """Redrawn from the experiment cube alone: editing the figure code never retrains."""
    input:
        cube="results/cubes/{experiment}.nc",
        code=lambda w: product_code(w.experiment, "figure"),
    output:
        png=report(
            "results/figures/{experiment}.png",
            caption="../report/product.rst",
            category="Figures",
            labels={"experiment": "{experiment}"},
        ),
        pdf="results/figures/{experiment}.pdf",
    log:
        "results/logs/figure/{experiment}.log",
    benchmark:
        "results/benchmarks/figure/{experiment}.tsv"
    threads: 1
    params:
        caption=lambda w: experiments.product_caption(w.experiment, "figure"),
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
        csv=report(
            "results/tables/{experiment}.csv",
            caption="../report/product.rst",
            category="Tables",
            labels={"experiment": "{experiment}"},
        ),
        md="results/tables/{experiment}.md",
        tex="results/tables/{experiment}.tex",
    log:
        "results/logs/table/{experiment}.log",
    benchmark:
        "results/benchmarks/table/{experiment}.tsv"
    threads: 1
    params:
        caption=lambda w: experiments.product_caption(w.experiment, "table"),
    wildcard_constraints:
        experiment="|".join(experiments.product_names("table")),
    conda:
        ENV
    shell:
        "python -m iclab table {wildcards.experiment} --cube {input.cube} --out results/tables/{wildcards.experiment}"
        " > {log} 2>&1"


rule claims:
    """Every configured experiment's claims against its theory, from the cubes alone."""
    input:
        cubes=[f"results/cubes/{name}.nc" for name in CONFIG["experiments"]],
        code=claims_code(),
    output:
        csv="results/tables/claims.csv",
        md="results/tables/claims.md",
        html=report("results/tables/claims.html", caption="../report/claims.rst", category="Claims"),
    log:
        "results/logs/claims.log",
    benchmark:
        "results/benchmarks/claims.tsv"
    threads: 1
    conda:
        ENV
    shell:
        "python -m iclab claims --cubes {input.cubes} --out results/tables/claims > {log} 2>&1"


rule gallery:
    """The front page's images: every figure of this run downscaled into docs/gallery/, stamped with the commit that
    drew it, the commit that made its cube and the config, and the run's claims table; a manifest lists them with
    their sizes. Not part of `all`: `snakemake --cores 2 gallery` after a run of the default config."""
    input:
        figures=[f"results/figures/{name}.png" for name in figure_names()],
        cubes=[f"results/cubes/{name}.nc" for name in figure_names()],
        claims="results/tables/claims.md",
    output:
        images=[f"docs/gallery/{name}.png" for name in figure_names()],
        claims="docs/gallery/claims.md",
        manifest="docs/gallery/manifest.json",
    log:
        "results/logs/gallery.log",
    benchmark:
        "results/benchmarks/gallery.tsv"
    threads: 1
    params:
        config=canonical_json(CONFIG),
        config_files=[str(path) for path in workflow.configfiles],
    conda:
        ENV
    shell:
        "python -m iclab gallery --figures {input.figures} --cubes {input.cubes} --config {params.config:q}"
        " --config-files {params.config_files:q} --claims {input.claims} --out-dir docs/gallery > {log} 2>&1"
