"""Experiments, one package each (``iclab/experiments/<name>/``, see ``experiments.base``).

The registry is this folder: every package in it with an ``experiment.py`` is an experiment, named
by its folder. Nothing is imported at package import, so that figure and table modules stay
torch-free; ``experiment(name)`` imports and checks one experiment, ``registry()`` every one.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from functools import cache
from pathlib import Path

from iclab.errors import ExperimentError, UsageError

HERE = Path(__file__).parent
PRODUCT_FUNCTIONS = {"figure": "figure", "table": "table"}  # product → function of its module
THEORY_PACKAGES = ("iclab.experiments", "iclab.theory")  # code that theory hooks may run
CLAIMS_PACKAGES = ("iclab.experiments", "iclab.stats")  # code that decides a claim


def names() -> list[str]:
    """Names of the experiment packages, sorted."""
    return sorted(
        m.name for m in pkgutil.iter_modules([str(HERE)]) if m.ispkg and (HERE / m.name / "experiment.py").is_file()
    )


def check_name(name: str) -> None:
    """A ``UsageError`` naming the experiments there are, unless ``name`` is one (no experiment is imported)."""
    if name not in names():
        raise UsageError(f"unknown experiment {name!r}; allowed: {', '.join(names())}")


def product_names(product: str) -> list[str]:
    """Experiments that make ``product`` ("figure" or "table"), found by their module file."""
    return [name for name in names() if product_file(name, product).is_file()]


def product_file(name: str, product: str) -> Path:
    return HERE / name / f"{product}.py"


def caption_file(name: str) -> Path:
    return HERE / name / "caption.rst"


def product_caption(name: str, product: str) -> str:
    """The report caption of experiment ``name``'s figure (its ``caption.rst``) or table (its module's
    docstring, read without importing it)."""
    if product == "figure":
        return caption_file(name).read_text()
    return ast.get_docstring(ast.parse(product_file(name, product).read_text())) or f"Table of {name}."


def module_file(module: str) -> Path | None:
    """The source file of an iclab module (a package's ``__init__.py``), or None if there is none."""
    path = HERE.parent.parent.joinpath(*module.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@cache
def imported_modules(path: Path) -> tuple[str, ...]:
    """Absolute module names a source file imports (for ``from a import b``: a and a.b); each file is parsed
    once a process (the claims job's inputs walk every experiment's closure, which share most files)."""
    modules = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            modules += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return tuple(modules)


def code_closure(module: str, packages: tuple[str, ...]) -> list[Path]:
    """Source files of ``module`` and of every module of ``packages`` it imports, transitively."""
    seen: set[Path] = set()
    todo = [module]
    while todo:
        path = module_file(todo.pop())
        if path is None or path in seen:
            continue
        seen.add(path)
        todo += [m for m in imported_modules(path) if any(m == p or m.startswith(p + ".") for p in packages)]
    return sorted(seen)


def theory_code(name: str) -> list[Path]:
    """Source files the theory of experiment ``name`` depends on: its ``experiment.py`` and every
    experiment or theory module it imports, transitively (the code inputs of its theory job)."""
    return code_closure(f"{__name__}.{name}.experiment", THEORY_PACKAGES)


def product_code(name: str, product: str) -> list[Path]:
    """Source files of experiment ``name``'s figure or table: its module and the experiment modules it
    imports, transitively (a figure may be another experiment's: the code inputs of its job)."""
    return code_closure(f"{__name__}.{name}.{product}", (__name__,))


def claims_file(name: str) -> Path:
    return HERE / name / "claims.py"


def claims_code(name: str) -> list[Path]:
    """Source files of experiment ``name``'s claims: its ``claims.py`` and the iclab modules it imports that
    decide a claim (``CLAIMS_PACKAGES``: the experiments' and the statistics'), transitively."""
    return code_closure(f"{__name__}.{name}.claims", CLAIMS_PACKAGES)


def claims(name: str, cube) -> list:
    """The claims of experiment ``name`` that its cube can check (``iclab.stats.claims.Claim``s; none where its config
    ran too little), from the package's ``claims.py``."""
    from iclab.stats.claims import Claim

    path = claims_file(name)
    if not path.is_file():
        raise UsageError(f"experiment {name!r} has no claims ({path} missing)")
    found = importlib.import_module(f"{__name__}.{name}.claims").claims(cube)
    if not isinstance(found, list) or not all(isinstance(c, Claim) for c in found):
        raise ExperimentError(f"{path}: claims(cube) must return a list of Claim")
    return found


def quotes(name: str, cube) -> list:
    """The numbers the docs quote from experiment ``name``'s cube (``iclab.report.quotes.Quote``s), from the package's
    ``quotes.py``; none where it has no such file."""
    from iclab.report.quotes import Quote

    path = HERE / name / "quotes.py"
    if not path.is_file():
        return []
    found = importlib.import_module(f"{__name__}.{name}.quotes").quotes(cube)
    if not isinstance(found, list) or not all(isinstance(q, Quote) for q in found):
        raise ExperimentError(f"{path}: quotes(cube) must return a list of Quote")
    names = [q.name for q in found]
    if len(set(names)) != len(names):
        twice = sorted(n for n in names if names.count(n) > 1)
        raise ExperimentError(f"{path}: quotes(cube) names a quote twice ({twice})")
    return found


def product_function(name: str, product: str):
    """The ``figure(cube, png)`` or ``table(cube, stem)`` function of experiment ``name``."""
    if name not in product_names(product):
        raise UsageError(
            f"no {product} named {name!r}; experiments with a {product}: {', '.join(product_names(product))}"
        )
    module = importlib.import_module(f"{__name__}.{name}.{product}")
    return getattr(module, PRODUCT_FUNCTIONS[product])


@cache
def registry() -> dict:
    """Experiment name → its ``Experiment``, each checked against its package's files."""
    return {name: experiment(name) for name in names()}


@cache
def experiment(name: str):
    """The ``Experiment`` of package ``name``, checked against its package's files (importing that
    package only: a stage of one experiment does not pay for the others' imports)."""
    from iclab.experiments.base import Experiment

    check_name(name)
    declared = getattr(importlib.import_module(f"{__name__}.{name}.experiment"), "EXPERIMENT", None)
    if not isinstance(declared, Experiment):
        raise ExperimentError(f"{HERE / name / 'experiment.py'}: EXPERIMENT must be an iclab Experiment")
    if declared.name != name:
        raise ExperimentError(f"experiment package {name!r} declares the name {declared.name!r}")
    required = [HERE / name / "schema.yaml", claims_file(name)]
    required += [product_file(name, product) for product in declared.products]
    required += [caption_file(name)] if "figure" in declared.products else []
    missing = [path.name for path in required if not path.is_file()]
    if missing:
        raise ExperimentError(f"experiment {name!r} lacks {', '.join(missing)} in {HERE / name}")
    undeclared = [p for p in PRODUCT_FUNCTIONS if p not in declared.products and product_file(name, p).is_file()]
    if undeclared:
        raise ExperimentError(f"experiment {name!r} has {undeclared[0]}.py but does not list it in products")
    return declared
