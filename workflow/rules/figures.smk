localrules:
    figure,
    table,
    claims,


rule figure:
    """Redrawn from the experiment cube alone: editing the figure code never retrains."""
    input:
        cube=res("cubes/{experiment}.nc"),
        code=lambda w: product_code(w.experiment, "figure"),
    output:
        png=report(
            res("figures/{experiment}.png"),
            caption="../report/product.rst",
            category="Figures",
            labels={"experiment": "{experiment}"},
        ),
        pdf=res("figures/{experiment}.pdf"),
        problems=res("figures/{experiment}.layout.txt"),
    log:
        res("logs/figure/{experiment}.log"),
    benchmark:
        res("benchmarks/figure/{experiment}.tsv")
    threads: 1
    params:
        caption=lambda w: experiments.product_caption(w.experiment, "figure"),
    wildcard_constraints:
        experiment="|".join(experiments.product_names("figure")),
    conda:
        ENV
    shell:
        "python -m iclab figure {wildcards.experiment} --cube {input.cube} --out {output.png}"
        " --layout-problems {output.problems} > {log} 2>&1"


rule table:
    """Redrawn from the experiment cube alone."""
    input:
        cube=res("cubes/{experiment}.nc"),
        code=lambda w: product_code(w.experiment, "table"),
    output:
        csv=report(
            res("tables/{experiment}.csv"),
            caption="../report/product.rst",
            category="Tables",
            labels={"experiment": "{experiment}"},
        ),
        md=res("tables/{experiment}.md"),
        tex=res("tables/{experiment}.tex"),
    log:
        res("logs/table/{experiment}.log"),
    benchmark:
        res("benchmarks/table/{experiment}.tsv")
    threads: 1
    params:
        caption=lambda w: experiments.product_caption(w.experiment, "table"),
        stem=lambda w: res(f"tables/{w.experiment}"),
    wildcard_constraints:
        experiment="|".join(experiments.product_names("table")),
    conda:
        ENV
    shell:
        "python -m iclab table {wildcards.experiment} --cube {input.cube} --out {params.stem}"
        " > {log} 2>&1"


rule claims:
    """Every configured experiment's claims against its theory, from the cubes alone."""
    input:
        cubes=[res(f"cubes/{name}.nc") for name in CONFIG["experiments"]],
        first_look=first_look_cubes(),
        code=lambda w: claims_code(),
    output:
        csv=res("tables/claims.csv"),
        md=res("tables/claims.md"),
        html=report(res("tables/claims.html"), caption="../report/claims.rst", category="Claims"),
    log:
        res("logs/claims.log"),
    benchmark:
        res("benchmarks/claims.tsv")
    threads: 1
    params:
        stem=lambda w, output: output.csv.removesuffix(".csv"),
        smoke=f"--smoke {SMOKE}" if SMOKE else "",
        raised=seeds_raised_option(),
        first_look=lambda w, input: f"--first-look-cubes {' '.join(input.first_look)}" if input.first_look else "",
    conda:
        ENV
    shell:
        "python -m iclab claims --cubes {input.cubes} --out {params.stem} {params.smoke} {params.raised}"
        " {params.first_look} > {log} 2>&1"


if SMOKE:

    rule cost:
        """The tier's cost, job by job, projected from this smoke run's logs and benchmarks (iclab.compute.cost): the last job
        of a smoke run."""
        input:
            product_targets(),
        output:
            csv=res("tables/cost.csv"),
            md=res("tables/cost.md"),
        log:
            res("logs/cost.log"),
        localrule: True
        threads: 1
        params:
            config=canonical_json(TIER_CONFIG),
            stem=lambda w, output: output.csv.removesuffix(".csv"),
            steps=SMOKE,
            results=lambda w, output: os.path.dirname(os.path.dirname(output.csv)),  # RESULTS
        conda:
            ENV
        shell:
            "python -m iclab cost --config-json {params.config:q} --smoke {params.steps} --smoke-dir {params.results}"
            " --out {params.stem} > {log} 2>&1"


# A smoke run has no gallery rule: Snakemake would delete the committed images before the job could refuse.
if not SMOKE:

    rule gallery:
        """The front page's images: every figure of this run downscaled into docs/gallery/, stamped with the commit that
        drew it, the commit that made its cube and the config, the run's claims table, and a page showing each figure
        under its claims with their verdicts; a manifest lists them with their sizes. Not part of `all`: `snakemake --cores 2 gallery` after a run of the default config."""
        input:
            figures=[res(f"figures/{name}.png") for name in figure_names()],
            cubes=[res(f"cubes/{name}.nc") for name in CONFIG["experiments"]],  # layouts of the tables' too
            claims=res("tables/claims.md"),
            claims_csv=res("tables/claims.csv"),  # the figures page quotes its verdicts
        output:
            images=[f"docs/gallery/{name}.png" for name in figure_names()],
            claims="docs/gallery/claims.md",
            figures_page="docs/gallery/README.md",
            manifest="docs/gallery/manifest.json",
            layouts="docs/gallery/cubes.json",
            quotes="docs/gallery/quotes.json",
        localrule: True
        log:
            res("logs/gallery.log"),
        benchmark:
            res("benchmarks/gallery.tsv")
        threads: 1
        params:
            config=canonical_json(CONFIG),
            config_files=[str(path) for path in workflow.configfiles],
        conda:
            ENV
        shell:
            "python -m iclab gallery --figures {input.figures} --cubes {input.cubes} --config {params.config:q}"
            " --config-files {params.config_files:q} --claims {input.claims} --out-dir docs/gallery > {log} 2>&1"
