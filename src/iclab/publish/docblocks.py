"""Marked blocks of the docs, written from committed records and never typed (docs that cannot drift).

A block in README.md or a page under docs/ reads::

    <!-- iclab:NAME ARG -->
    …what GENERATORS[NAME](ARG, root) writes…
    <!-- /iclab:NAME -->

or, for one number inside a sentence or a table cell, on one line:
``<!-- iclab:value default-pipeline.wall -->52 min 20 s<!-- /iclab:value -->`` (GitHub hides the comments). Inside a
table row an argument's ``|`` is written ``\\|``: GFM splits a cell at every other pipe, even inside a comment
(``tests/test_docs_render.py`` counts the cells). A line never begins with an inline block: a line that begins with
a comment opens a raw-HTML block, which cuts its paragraph and shows the line's Markdown raw.

``python -m iclab docs`` rewrites every block from its record; ``--check`` names the stale ones and exits 1
(``tests/test_docblocks.py`` runs it on the repository). A record is a committed file a run or a benchmark wrote:
``iclab.publish.docgallery``'s generators read the gallery's (the default run's claims table, cube layouts, quotes and
manifest), ``iclab.publish.docrecords``' read docs/measurements.yaml, the run records and what benchmarks and the cost
and GPU stages wrote under benchmarks/results.

A number in a record's format (``RECORD_FORMATS``: a wall time, job-seconds, GPU-hours, verdict counts, tests passed,
jobs, a run's memory, a share decided, a claim's interval, seeds or prompts to decide, a packing gain, a step's time)
outside a block is refused by ``unblocked`` on every page but the records themselves (``RECORD_PAGES``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from iclab.publish import docgallery, docrecords
from iclab.atomic import write_text
from iclab.errors import UsageError

# a line break after the opening: a block of lines; none: one number inline
BLOCK = re.compile(r"(?P<open><!-- iclab:(?P<name>[\w-]+)(?: (?P<arg>[^>]*?))? -->(?P<newline>\n?))(?P<body>.*?)"
                   r"(?P<close><!-- /iclab:(?P=name) -->)", re.S)
GENERATORS: dict[str, Callable[[str, Path], str]] = {  # a block's name → what writes it from its argument
    "cube-layout": docgallery.cube_layout, "claims-of": docgallery.claims_of, "claims-count": docgallery.claims_count,
    "claim": docgallery.claim_cell, "holm-quantile": docgallery.holm_quantile, "gallery": docgallery.gallery_value,
    "quote": docgallery.quote_value, "quotes": docgallery.quotes_table, "value": docrecords.measured_value,
    "run": docrecords.run_value, "record": docrecords.benchmark_value, "count": docrecords.counted,
    "cost": docrecords.cost_value, "table": docrecords.table_value, "power-table": docrecords.power_table,
    "power-bound-table": docrecords.power_bound_table, "powered": docrecords.powered,
    "mutation-scores": docrecords.mutation_scores}


def render(text: str, root: Path) -> str:
    """``text`` with every block rewritten by its generator."""
    def rewrite(match: re.Match) -> str:
        generator = GENERATORS.get(match["name"])
        if generator is None:
            raise UsageError(f"block iclab:{match['name']}: no generator of that name (known: "
                             f"{', '.join(sorted(GENERATORS))})")
        body = generator((match["arg"] or "").replace("\\|", "|"), root)  # a table row's escaped pipe
        if not match["newline"]:  # inline: one line, no line break of its own
            body = body.rstrip("\n")
            if "\n" in body:
                raise UsageError(f"block iclab:{match['name']} {match['arg']}: written inline, but it gives several "
                                 "lines (put a line break after its opening comment)")
        return match["open"] + body + match["close"]

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


RECORD_PAGES = ("docs/measurements.md", "docs/measurements-history.md", "docs/gallery/README.md",
                "docs/gallery/claims.md")  # the records themselves (and history), and the gallery stage's own pages
RECORD_FORMATS = {  # the shapes in which a run's or a benchmark's numbers are written
    "wall time": r"\b\d+ min \d+ s\b",
    "job-seconds": r"\b\d[\d,]*(?:\.\d+)? job-s\b",
    "GPU- or CPU-hours": r"\b\d[\d,]*(?:\.\d+)? (?:GPU|CPU)-h(?:ours)?\b",
    "verdict count": r"\b\d+ (?:hold|holds|fail|fails|inconclusive)\b",
    "tests passed": r"\b\d+ passed\b",
    "job count": r"\b\d+ jobs\b",
    "a run's memory": r"\blargest process (?:of )?\d+(?:\.\d+)? [GM]B\b|\b\d+(?:\.\d+)? [GM]B resident\b",
    "share decided": r"\b\d+% decided\b",
    "claim interval": r"\[-?\d+\.\d+(?:e-?\d+)?, -?\d+\.\d+(?:e-?\d+)?\]",
    "seeds to decide": r"\bto decide: \d+|~\d+× the prompts",
    "a packing gain": r"\b\d+\.\d+× at k = \d+",
    "a step's time": r"\b\d+\.\d{2,} s a step\b",
}
UNCHECKED = re.compile(r"```.*?```|`[^`\n]*`", re.S)  # code: commands and names, not a record's numbers


def unblocked(text: str) -> list[str]:
    """The numbers in a record's format that ``text`` writes outside its blocks and its code, each as
    'format: text'."""
    prose = UNCHECKED.sub("", BLOCK.sub("", text))
    return [f"{name}: {found}" for name, pattern in RECORD_FORMATS.items() for found in re.findall(pattern, prose)]


QUOTING_PAGES = re.compile(r"README\.md|docs/experiments/.*\.md")  # the pages that quote the gallery's cubes
CUBE_VALUE = re.compile(r"(?<![\w.:/-])[−-]?\d+\.\d{3,}(?![\w.])")  # a value read off a cube: 3+ decimals…
LINKS = re.compile(r"\]\([^)]*\)")  # a link's target (an arXiv id is a decimal with 5 digits)


def unquoted(text: str) -> list[str]:
    """The values read off a cube (``CUBE_VALUE``, …of 2 or more significant digits: a setting such as 0.001 has
    one) that ``text`` types outside its blocks, code and link targets, each as 'a cube's value: text'."""
    prose = LINKS.sub("", UNCHECKED.sub("", BLOCK.sub("", text)))
    return [f"a cube's value: {found}" for found in CUBE_VALUE.findall(prose)
            if len(re.sub(r"\D", "", found).lstrip("0")) >= 2]


def typed_numbers(root: Path) -> dict[str, list[str]]:
    """Each page (but ``RECORD_PAGES``) with the numbers in a record's format that it types outside a block, and on
    ``QUOTING_PAGES`` the values read off a cube it types outside a quote."""
    found = {}
    for page in pages(root):
        name = str(page.relative_to(root))
        text = page.read_text()
        found[name] = unblocked(text) + (unquoted(text) if QUOTING_PAGES.fullmatch(name) else [])
    return {page: numbers for page, numbers in found.items() if numbers and page not in RECORD_PAGES}
