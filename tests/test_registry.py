"""The experiment registry and contract: packages, schema, captions and configs agree; a broken
experiment is an error naming it; figure and table code never imports torch."""

import ast
import subprocess
import sys

import pytest
import yaml
from conftest import REPO

from iclab import experiments
from iclab.config import load_schema
from iclab.experiments import ExperimentError
from iclab.experiments.base import Experiment, SweepPoint

SHIPPED = ["config.yaml", "config/paper.yaml", "tests/data/tiny.yaml"]


def point(**coords):
    return SweepPoint(coords=coords, task={}, models=[], train={})


def test_every_package_is_registered_with_its_schema_caption_and_products():
    registry = experiments.registry()
    assert list(registry) == experiments.names() and len(registry) >= 9
    assert sorted(load_schema()["properties"]["experiments"]["properties"]) == experiments.names()
    for name, experiment in registry.items():
        assert experiment.name == name
        assert experiments.claims_file(name).is_file(), f"{name}: no claims.py"
        for product in experiment.products:
            assert experiments.product_file(name, product).is_file()
        if "figure" in experiment.products:
            assert experiments.caption_file(name).read_text().strip(), f"{name}: empty caption"
    assert "ltb_table1" in experiments.product_names("table")
    assert set(experiments.product_names("figure")) | set(experiments.product_names("table")) == set(registry)


@pytest.mark.parametrize("path", SHIPPED)
def test_shipped_configs_configure_every_experiment(path):
    configured = yaml.safe_load((REPO / path).read_text())["experiments"]
    assert sorted(configured) == experiments.names()


def test_unknown_experiment_and_product_name_what_is_allowed():
    with pytest.raises(ValueError, match="unknown experiment 'nope'; allowed: .*ltb_gap"):
        experiments.experiment("nope")
    with pytest.raises(ValueError, match="no table named 'ltb_gap'; experiments with a table: ltb_table1"):
        experiments.product_function("ltb_gap", "table")


def test_sweep_order_is_the_order_the_sweep_meets_the_values():
    experiment = Experiment(name="toy", sweep=lambda cfg: [point(n=8, s=1.0), point(n=4, s=1.0), point(n=8, s=0.5)])
    assert experiment.order({}) == {"n": [8, 4], "s": [1.0, 0.5]}


@pytest.mark.parametrize(
    "points, message",
    [
        ([], "toy: the sweep has no point"),
        ([point(n=4), point(n=4)], r"toy: two sweep points at \{'n': 4\}"),
        ([point(n=4), point(m=4)], r"toy: sweep point \{'m': 4\} has coordinates other than \['n'\]"),
    ],
)
def test_a_broken_sweep_is_an_error_naming_the_experiment(points, message):
    with pytest.raises(ExperimentError, match=message):
        Experiment(name="toy", sweep=lambda cfg: points).points({})


def test_a_broken_declaration_is_an_error():
    with pytest.raises(ExperimentError, match="products .*allowed: figure, table"):
        Experiment(name="toy", sweep=lambda cfg: [], products=("movie",))
    with pytest.raises(ExperimentError, match="toy: theory must be callable"):
        Experiment(name="toy", sweep=lambda cfg: [], theory="curve")
    with pytest.raises(ExperimentError, match="must be a Python identifier"):
        Experiment(name="toy-1", sweep=lambda cfg: [])


def test_theory_code_follows_imports_across_experiments():
    files = {str(p.relative_to(experiments.HERE.parent)) for p in experiments.theory_code("lsa_shifts")}
    assert {"experiments/lsa_shifts/experiment.py", "experiments/lsa_convergence/experiment.py"} <= files
    assert {"theory/lsa.py", "experiments/lsa_shifts/conditions.py"} <= files
    assert "experiments/lsa_shifts/figure.py" not in files and "models/__init__.py" not in files


def test_a_figure_drawn_by_another_experiments_module_depends_on_that_module():
    relative = lambda name, product: {  # noqa: E731
        str(p.relative_to(experiments.HERE)) for p in experiments.product_code(name, product)
    }
    assert relative("probe_illconditioned", "figure") == {
        "probe_illconditioned/figure.py",
        "probe_similarity/figure.py",
        "probe_layers/__init__.py",  # the probed models' display names
    }
    assert relative("probe_similarity", "table") == {"probe_similarity/table.py", "probe_layers/__init__.py"}


def test_figure_table_and_claims_modules_do_not_import_torch():
    modules = [f"iclab.experiments.{n}.figure" for n in experiments.product_names("figure")]
    modules += [f"iclab.experiments.{n}.table" for n in experiments.product_names("table")]
    modules += [f"iclab.experiments.{n}.claims" for n in experiments.names()]
    code = "import sys\n" + "".join(f"import {m}\n" for m in modules) + "print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def iclab_import_graph() -> dict[str, set[str]]:
    """Module → the iclab modules it imports (at module level or inside a function), from the sources' syntax; a
    module's own packages left out."""
    src = REPO / "src"
    modules = {}
    for path in (src / "iclab").rglob("*.py"):
        parts = path.relative_to(src).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path

    def owner(target: str) -> str | None:  # the module that ``import target`` binds: its longest known prefix
        while target and target not in modules:
            target = target.rpartition(".")[0]
        return target or None

    graph = {}
    for name, path in modules.items():
        targets = []
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets += [f"{node.module}.{alias.name}" for alias in node.names]
        # a module's own packages are imported before it whatever it says: an edge to one is no dependency
        ancestors = {name.rsplit(".", k)[0] for k in range(1, name.count(".") + 1)}
        graph[name] = {owner(t) for t in targets if t.startswith("iclab")} - {None, name} - ancestors
    return graph


def test_no_iclab_modules_import_each_other():
    """Dependencies point down (docs/architecture.md): no cycle in the import graph, directly or through others."""
    graph = iclab_import_graph()
    assert graph["iclab.pipeline.plan"] >= {"iclab.store.jobs", "iclab.experiments.base"}  # it sees what it should
    done, cycles = set(), []

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            cycles.append(path[path.index(module):] + [module])
            return
        if module in done:
            return
        for target in sorted(graph[module]):
            visit(target, path + [module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
    assert not cycles, "import cycles: " + "; ".join(" → ".join(cycle) for cycle in cycles)


def test_planning_imports_no_torch():
    """Every Snakemake start plans: what it imports (task specs, training configs, every experiment's module, the
    cluster and smoke helpers) leaves torch, transformers and scipy unloaded (torch was ~1.3 s of each start)."""
    configs = ("config.yaml", "config/paper.yaml", "tests/data/tiny.yaml")
    code = (
        "import sys\n"
        "from iclab import experiments\n"
        "from iclab.compute import cluster\n"
        "from iclab.pipeline import smoke\n"
        "from iclab.config import load\n"
        "from iclab.pipeline.plan import build_plan\n"
        f"for path in {configs!r}:\n"
        "    build_plan(load(path))\n"
        "experiments.registry()\n"
        "print(sorted(name for name in ('torch', 'transformers', 'scipy') if name in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


# The layers of src/iclab, lowest first (docs/architecture.md): a module may import its own package and any lower
# layer, never a higher one nor another package of its own layer. The base modules at the package root (errors,
# atomic writes, hashing, numerics, progress lines, checkpoints, the config, the CLI's argument types) are layer 0
# and may import each other.
LAYERS = {
    "iclab": 0,
    "iclab.tasks": 1, "iclab.theory": 1,
    "iclab.models": 2,
    "iclab.fit": 3, "iclab.learners": 3, "iclab.stats": 3,
    "iclab.report": 4,
    "iclab.store": 5,
    "iclab.experiments": 6,
    "iclab.pipeline": 7,
    "iclab.compute": 8,
    "iclab.publish": 9,
    "iclab.__main__": 10,
}


def layer_of(module: str) -> str:
    """The entry of ``LAYERS`` that holds ``module``: its package's, or ``iclab`` for a base module at the root (a
    package missing from ``LAYERS`` is an error)."""
    package = ".".join(module.split(".")[:2])
    if package in LAYERS:
        return package
    if (REPO / "src" / package.replace(".", "/")).is_dir():
        raise KeyError(f"{package}: a package in no layer (add it to LAYERS and docs/architecture.md)")
    return "iclab"


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Each import of ``graph`` that runs to a higher layer, or across to another package of the same layer."""
    found = []
    for module, targets in sorted(graph.items()):
        home = layer_of(module)
        for target in sorted(targets):
            there = layer_of(target)
            if there != home and LAYERS[there] >= LAYERS[home]:
                found.append(f"{module} → {target}")
    return found


def test_imports_run_down_the_layers():
    graph = iclab_import_graph()
    assert {layer_of(module) for module in graph} == set(LAYERS)  # every layer has modules; every module a layer
    assert upward_imports(graph) == []


def test_the_layer_check_finds_an_import_up_or_across():
    """Planted: statistics importing an experiment (up), the learners importing training (across, both layer 3);
    an import down (an experiment of the statistics) and within a package pass."""
    graph = {"iclab.stats.claims": {"iclab.experiments.base", "iclab.stats.estimates", "iclab.atomic"},
             "iclab.learners.baselines": {"iclab.fit.sgd", "iclab.models"},
             "iclab.experiments.ltb_gap.claims": {"iclab.stats.claims"}}
    assert upward_imports(graph) == ["iclab.learners.baselines → iclab.fit.sgd",
                                     "iclab.stats.claims → iclab.experiments.base"]


def test_every_package_a_jobs_code_inputs_name_exists():
    """The packages whose modules count as a theory or claims job's code (``experiments.THEORY_PACKAGES``,
    ``CLAIMS_PACKAGES``): a moved module named there would silently drop a rerun trigger."""
    named = experiments.THEORY_PACKAGES + experiments.CLAIMS_PACKAGES
    assert all(experiments.module_file(name) is not None for name in named), named
    assert experiments.module_file("iclab.claims") is None  # planted: the old, flat name is found missing
    assert {path.name for path in experiments.claims_code("ltb_gap")} >= {"claims.py", "estimates.py", "intervals.py"}
