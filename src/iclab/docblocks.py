"""Marked blocks of the docs, written from committed records and never typed (docs that cannot drift).

A block in README.md or a page under docs/ reads::

    <!-- iclab:NAME ARG -->
    …what GENERATORS[NAME](ARG, root) writes…
    <!-- /iclab:NAME -->

``python -m iclab docs`` rewrites every block from its record; ``--check`` names the stale ones and exits 1
(``tests/test_docblocks.py`` runs it on the repository). A record is a committed file a run or a benchmark wrote:
``docs/gallery/cubes.json`` (the default run's cube layouts, written by the gallery stage),
``docs/gallery/claims.md`` (its claims table) and ``benchmarks/results/mutation/*.json`` (``benchmarks/mutation.py``'s
scores).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from iclab.atomic import write_text
from iclab.errors import UsageError

BLOCK = re.compile(r"(<!-- iclab:(?P<name>[\w-]+)(?: (?P<arg>[^>]*?))? -->\n)(?P<body>.*?)(<!-- /iclab:(?P=name) -->)",
                   re.S)
CUBE_LAYOUTS = Path("docs/gallery/cubes.json")
MUTATION_RESULTS = Path("benchmarks/results/mutation")
CLAIMS_TABLE = Path("docs/gallery/claims.md")  # the default run's claims table, as the gallery stage copied it
SHOWN_VALUES = 6  # a coordinate's values shown before "…"


def shown_values(values: list) -> str:
    """The first ``SHOWN_VALUES`` of a coordinate (floats to 6 significant digits), separated by semicolons (a value
    may hold commas), then the count."""
    head = "; ".join(f"{value:.6g}" if isinstance(value, float) else str(value) for value in values[:SHOWN_VALUES])
    return head + (f"; … ({len(values)})" if len(values) > SHOWN_VALUES else "")


def cube_layout(experiment: str, root: Path) -> str:
    """The dimensions, coordinates and variables of ``experiment``'s cube, from ``CUBE_LAYOUTS``."""
    layouts = json.loads((root / CUBE_LAYOUTS).read_text())["experiments"]
    if experiment not in layouts:
        raise UsageError(f"block cube-layout {experiment}: no such experiment in {CUBE_LAYOUTS} "
                         f"(it has {', '.join(sorted(layouts))})")
    layout = layouts[experiment]
    lines = ["| dimension | size | coordinate values |", "|---|---|---|"]
    for dim, size in layout["dims"].items():
        values = layout["coords"].get(dim)
        lines.append(f"| `{dim}` | {size} | {shown_values(values) if values is not None else f'(no coordinate: 0 … {size - 1})'} |")
    lines += ["", "| variable | dimensions |", "|---|---|"]
    lines += [f"| `{name}` | {', '.join(dims) or '(scalar)'} |" for name, dims in layout["variables"].items()]
    return "\n".join(lines) + "\n"


def mutation_scores(_: str, root: Path) -> str:
    """Each module's mutation score from ``MUTATION_RESULTS`` (``benchmarks/mutation.py``'s records), and each
    survivor's reason."""
    lines = ["| module | tests | killed | survived | score | wall |", "|---|---|---|---|---|---|"]
    survivors = []
    for path in sorted((root / MUTATION_RESULTS).glob("*.json")):
        record = json.loads(path.read_text())
        counts = record["counts"]
        tests = ", ".join(f"`{test}`" for test in record["tests"])
        lines.append(f"| `{record['module']}` | {tests} | {counts['killed']} | {counts['survived']} | "
                     f"{record['score']:.1%} | {record['wall_s']:.0f} s |")
        survivors += [f"- `{record['module']}` line {s['line']}, {s['operator']} on `{s['source']}`: "
                      f"{s['reason'] or 'not yet explained'}" for s in record["survivors"]]
    return "\n".join(lines + ["", "Survivors:", ""] + survivors) + "\n"


def claims_of(experiments: str, root: Path) -> str:
    """The rows of the run's claims table (``CLAIMS_TABLE``, the gallery's copy) for each of ``experiments`` (names
    separated by spaces), each under its heading's count, as the table has them."""
    sections = re.split(r"^## ", (root / CLAIMS_TABLE).read_text(), flags=re.M)[1:]
    by_name = {section.split(":", 1)[0]: section for section in sections}
    parts = []
    for name in experiments.split():
        if name not in by_name:
            raise UsageError(f"block claims-of {name}: no such experiment in {CLAIMS_TABLE}")
        heading, _, table = by_name[name].partition("\n")
        parts.append(f"**{heading.strip()}**\n\n{table.strip()}\n")
    return "\n".join(parts)


GENERATORS: dict[str, Callable[[str, Path], str]] = {"cube-layout": cube_layout, "mutation-scores": mutation_scores,
                                                     "claims-of": claims_of}


def render(text: str, root: Path) -> str:
    """``text`` with every block rewritten by its generator."""
    def rewrite(match: re.Match) -> str:
        generator = GENERATORS.get(match["name"])
        if generator is None:
            raise UsageError(f"block iclab:{match['name']}: no generator of that name (known: "
                             f"{', '.join(sorted(GENERATORS))})")
        return match.group(1) + generator(match["arg"] or "", root) + match.group(5)

    return BLOCK.sub(rewrite, text)


def pages(root: Path) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def stale(root: Path) -> list[str]:
    """The pages (relative to ``root``) whose blocks differ from what their records give."""
    return [str(page.relative_to(root)) for page in pages(root) if render(page.read_text(), root) != page.read_text()]


def write(root: Path) -> list[str]:
    """Rewrite every stale page's blocks; the pages rewritten."""
    rewritten = stale(root)
    for name in rewritten:
        write_text(root / name, render((root / name).read_text(), root))
    return rewritten
