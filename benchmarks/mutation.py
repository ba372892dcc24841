"""Mutation testing of one module against the tests that name it (issue 81): ``python benchmarks/mutation.py
stats.looks``; ``--functions NAME …`` plants mutants in those functions only (a module whose full run takes hours).

cosmic-ray (``pip install -e '.[mutation]'``) plants one small change at a time in ``src/iclab/<dotted/path>.py``
(an arithmetic or comparison operator swapped, a number moved, a condition negated, a loop skipped, a boolean flipped;
never a string: cosmic-ray has no string operator) and runs the module's tests on each; a mutant that every test
passes survived. The run works on a copy of the working tree, so an interrupted run leaves the checkout untouched.

Operators left out (``EXCLUDED``): replacements by bitwise, shift, modulo, floor-division and power operators, ``is``
comparisons, ``~`` and ``not`` for a sign (they mostly raise a TypeError, a kill that measures nothing), the removal
of decorators (a dataclass without its decorator breaks every caller) and cosmic-ray's variable replacer and inserter
(random: two runs would not plant the same mutants).

Writes ``benchmarks/results/mutation/<module>.json`` (``<module>.functions.json`` for a run on named functions, with
their names): the counts, the score (killed / (killed + survived)), the wall
time, and each survivor with its line, its change and, where ``benchmarks/mutation_justified.json`` has one, the reason
it cannot be killed (an equivalent mutant, or a path no CPU test reaches). Not run by CI: a module takes minutes.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "mutation"
JUSTIFIED = ROOT / "benchmarks" / "mutation_justified.json"
EXCLUDED = [
    r"core/ReplaceBinaryOperator_\w+_(BitOr|BitAnd|BitXor|LShift|RShift|Mod|FloorDiv|Pow)$",
    r"core/ReplaceBinaryOperator_(BitOr|BitAnd|BitXor|LShift|RShift|Mod|FloorDiv|Pow)_\w+$",
    r"core/ReplaceComparisonOperator_\w+_(Is|IsNot)$",
    r"core/ReplaceComparisonOperator_(Is|IsNot)_\w+$",
    r"core/ReplaceUnaryOperator_\w+_(Invert|Not)$",
    r"core/RemoveDecorator$",
    r"core/Variable(Replacer|Inserter)$",
]
END_TO_END = ("test_workflow.py", "test_workflow_runs.py")  # a Snakemake run a mutant: minutes; --tests adds them
TIMEOUT_S = 120.0  # a mutant whose tests run this long (an endless loop) counts as killed by timeout


def tests_naming(module: str) -> list[str]:
    """The test files that import ``iclab.<module>`` (a dotted name under iclab: ``stats.looks``), but the end-to-end
    workflow runs (``END_TO_END``)."""
    package, _, name = module.rpartition(".")
    parent = re.escape(f"iclab.{package}" if package else "iclab")
    pattern = re.compile(rf"(iclab\.{re.escape(module)}\b|from {parent} import [^\n]*\b{name}\b)")
    return sorted(f"tests/{path.name}" for path in (ROOT / "tests").glob("test_*.py")
                  if path.name not in END_TO_END and pattern.search(path.read_text()))


def copy_tree(destination: Path) -> None:
    """The working tree's tracked and unignored files (not .venv, results or caches) into ``destination``."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def source_path(module: str) -> str:
    """``stats.looks`` → ``src/iclab/stats/looks.py``."""
    return "src/iclab/" + module.replace(".", "/") + ".py"


def config_text(module: str, tests: list[str]) -> str:
    command = f"{sys.executable} -m pytest -x -q -n 0 -p no:cacheprovider {' '.join(tests)}"
    excluded = ", ".join(json.dumps(pattern) for pattern in EXCLUDED)
    return (f'[cosmic-ray]\nmodule-path = "{source_path(module)}"\ntimeout = {TIMEOUT_S}\nexcluded-modules = []\n'
            f'test-command = "{command}"\n\n[cosmic-ray.distributor]\nname = "local"\n\n'
            f'[cosmic-ray.filters.operators-filter]\nexclude-operators = [{excluded}]\n')


def function_lines(source: str, names: list[str], module: str) -> dict[str, tuple[int, int]]:
    """Each named function's lines in ``source``, decorators included: ``name`` is a function's or a method's name,
    or ``Class.method``. Raises ValueError naming any name the module does not define."""
    found: dict[str, tuple[int, int]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qualified = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                    for name in names:
                        if name in (qualified, child.name):
                            found[qualified] = (first, child.end_lineno)
                visit(child, qualified + ".")

    visit(ast.parse(source), "")
    missing = [name for name in names if not any(name in (q, q.rpartition(".")[2]) for q in found)]
    if missing:
        raise ValueError(f"--functions: {', '.join(missing)} not defined in iclab.{module}")
    return found


def skip_outside(session: Path, spans: list[tuple[int, int]]) -> None:
    """Mark every pending mutant whose line lies outside ``spans`` skipped, as cosmic-ray's own filters do."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    with use_db(str(session), WorkDB.Mode.open) as db:
        for item in list(db.pending_work_items):
            line = item.mutations[0].start_pos[0]
            if not any(first <= line <= last for first, last in spans):
                db.set_result(item.job_id, WorkResult(output="outside the named functions",
                                                      worker_outcome=WorkerOutcome.SKIPPED))


def cosmic_ray(work: Path, *args: str) -> None:
    bin_dir = Path(sys.executable).parent
    env = os.environ | {"PYTHONPATH": str(work / "src"), "HF_HUB_OFFLINE": "1"}
    subprocess.run([str(bin_dir / args[0]), *args[1:]], cwd=work, env=env, check=True)


def outcomes(session: Path, source: list[str]) -> list[dict]:
    """Each mutant run: its operator, line, source line and outcome (killed, survived or incompetent)."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome

    found = []
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            mutation = item.mutations[0]
            line = mutation.start_pos[0]
            outcome = result.test_outcome.value if result.worker_outcome == WorkerOutcome.NORMAL else "incompetent"
            found.append({"operator": mutation.operator_name.removeprefix("core/"), "occurrence": mutation.occurrence,
                          "line": line, "source": source[line - 1].strip(), "outcome": outcome})
    return found


def justification(module: str, survivor: dict) -> str | None:
    """The recorded reason a survivor cannot be killed, matched on its module, source line and operator."""
    for entry in json.loads(JUSTIFIED.read_text()) if JUSTIFIED.is_file() else []:
        if (entry["module"], entry["source"], entry["operator"]) == (module, survivor["source"], survivor["operator"]):
            return entry["reason"]
    return None


def run(module: str, tests: list[str], spans: dict[str, tuple[int, int]] | None = None) -> dict:
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="iclab-mutation-") as tmp:
        work = Path(tmp)
        copy_tree(work)
        (work / "mutation.toml").write_text(config_text(module, tests))
        session = work / "session.sqlite"
        cosmic_ray(work, "cosmic-ray", "init", "mutation.toml", str(session))
        cosmic_ray(work, "cr-filter-operators", str(session), "mutation.toml")
        if spans:
            skip_outside(session, list(spans.values()))
        cosmic_ray(work, "cosmic-ray", "baseline", "mutation.toml")  # the unmutated module must pass its tests
        cosmic_ray(work, "cosmic-ray", "exec", "mutation.toml", str(session))
        runs = outcomes(session, (work / source_path(module)).read_text().splitlines())
    counts = {outcome: sum(r["outcome"] == outcome for r in runs) for outcome in ("killed", "survived", "incompetent")}
    survivors = [r | {"reason": justification(module, r)} for r in runs if r["outcome"] == "survived"]
    decided = counts["killed"] + counts["survived"]
    named = {"functions": sorted(spans)} if spans else {}
    return {"module": f"iclab.{module}", **named, "tests": tests, "excluded_operators": EXCLUDED, "counts": counts,
            "score": counts["killed"] / decided if decided else None,
            "unexplained_survivors": sum(s["reason"] is None for s in survivors),
            "wall_s": round(time.perf_counter() - start, 1), "survivors": sorted(survivors, key=lambda s: s["line"])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("module", help="a module under iclab, dotted: stats.looks")
    parser.add_argument("--tests", nargs="+", help="test files to run (default: those that import the module)")
    parser.add_argument("--functions", nargs="+", metavar="NAME",
                        help="mutate only these functions (a name, or Class.method) of the module")
    args = parser.parse_args(argv)
    module = args.module.removeprefix("iclab.")
    if not (ROOT / source_path(module)).is_file():
        parser.error(f"module: no {source_path(module)} (name one module file under src/iclab, dotted: stats.looks)")
    if shutil.which("cosmic-ray", path=str(Path(sys.executable).parent)) is None:
        parser.error("cosmic-ray is not installed in this environment: pip install -e '.[mutation]'")
    spans = None
    if args.functions:
        try:
            spans = function_lines((ROOT / source_path(module)).read_text(), args.functions, module)
        except ValueError as error:
            parser.error(str(error))
    tests = args.tests or tests_naming(module)
    if not tests:
        parser.error(f"module: no test file imports iclab.{module}; name them with --tests")
    report = run(module, tests, spans)
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / (f"{module}.functions.json" if spans else f"{module}.json")
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    tmp.replace(out)
    c = report["counts"]
    print(f"iclab.{module}: {c['killed']} killed, {c['survived']} survived ({report['unexplained_survivors']} "
          f"unexplained), {c['incompetent']} incompetent; score {report['score']:.1%}; {report['wall_s']:.0f} s; "
          f"{out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
