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
    assert graph["iclab.plan"] >= {"iclab.jobs", "iclab.experiments.base"}  # the graph sees what it should
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
        "from iclab import cluster, experiments, smoke\n"
        "from iclab.config import load\n"
        "from iclab.plan import build_plan\n"
        f"for path in {configs!r}:\n"
        "    build_plan(load(path))\n"
        "experiments.registry()\n"
        "print(sorted(name for name in ('torch', 'transformers', 'scipy') if name in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
