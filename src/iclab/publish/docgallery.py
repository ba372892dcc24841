"""Blocks of the docs read from the gallery's records (``iclab.publish.docblocks`` registers them): the default run's
claims table (``docs/gallery/claims.md``), its cubes' layouts (``cubes.json``), the numbers each experiment's
``quotes.py`` reads off its cube (``quotes.json``) and the gallery's manifest. The gallery stage writes all four.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from iclab.stats.claims import HOLM_ALPHA
from iclab.publish.docrecords import markdown_tables
from iclab.errors import UsageError

CUBE_LAYOUTS = Path("docs/gallery/cubes.json")
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
        shown = shown_values(values) if values is not None else f"(no coordinate: 0 … {size - 1})"
        lines.append(f"| `{dim}` | {size} | {shown} |")
    lines += ["", "| variable | dimensions |", "|---|---|"]
    lines += [f"| `{name}` | {', '.join(dims) or '(scalar)'} |" for name, dims in layout["variables"].items()]
    return "\n".join(lines) + "\n"


def claims_sections(root: Path) -> dict[str, str]:
    """The run's claims table (``CLAIMS_TABLE``) by experiment: each "## name: counts" heading's line and table."""
    sections = re.split(r"^## ", (root / CLAIMS_TABLE).read_text(), flags=re.M)[1:]
    return {section.split(":", 1)[0]: section for section in sections}


def claims_of(experiments: str, root: Path) -> str:
    """The rows of the run's claims table (``CLAIMS_TABLE``, the gallery's copy) for each of ``experiments`` (names
    separated by spaces), each under its heading's count, as the table has them."""
    by_name = claims_sections(root)
    parts = []
    for name in experiments.split():
        if name not in by_name:
            raise UsageError(f"block claims-of {name}: no such experiment in {CLAIMS_TABLE}")
        heading, _, table = by_name[name].partition("\n")
        parts.append(f"**{heading.strip()}**\n\n{table.strip()}\n")
    return "\n".join(parts)


GALLERY_MANIFEST = Path("docs/gallery/manifest.json")  # written by the gallery stage


def gallery_value(field: str, root: Path) -> str:
    """What the gallery shows (``GALLERY_MANIFEST``): ``drawn_by`` (the commit that drew it, short), ``cube_commit``
    (the commit that made its cubes, short; an error if they differ), ``images`` (their count), ``megabytes``."""
    manifest = json.loads((root / GALLERY_MANIFEST).read_text())
    commits = {image["cube_commit"] for image in manifest["images"]}
    if field == "cube_commit" and len(commits) != 1:
        raise UsageError(f"block gallery cube_commit: the gallery's cubes were made at {len(commits)} commits "
                         f"({', '.join(sorted(c[:7] for c in commits))}): draw it from one run")
    values = {"drawn_by": manifest["drawn_by"][:7], "cube_commit": min(commits)[:7],
              "images": str(len(manifest["images"])), "megabytes": f"{manifest['total_bytes'] / 1e6:.2f}"}
    if field not in values:
        raise UsageError(f"block gallery {field}: no such field (known: {', '.join(values)})")
    return values[field]


QUOTES = Path("docs/gallery/quotes.json")  # written by the gallery stage: iclab.report.quotes of each experiment's cube


def quoted(experiment: str, root: Path, block: str) -> dict[str, dict[str, str]]:
    """``experiment``'s quotes in ``QUOTES`` (name → text and meaning); a ``UsageError`` naming those there are."""
    record = json.loads((root / QUOTES).read_text())["experiments"]
    if experiment not in record:
        raise UsageError(f"block {block}: no quotes of experiment {experiment!r} in {QUOTES} (it has "
                         f"{', '.join(sorted(record))}); give the experiment a quotes.py and redraw the gallery")
    return record[experiment]


def quote_value(key: str, root: Path) -> str:
    """One number of an experiment's cube as the gallery's run gives it: ``EXPERIMENT.NAME`` in ``QUOTES``."""
    experiment, _, name = key.partition(".")
    found = quoted(experiment, root, f"quote {key}")
    if name not in found:
        raise UsageError(f"block quote {key}: {experiment} quotes no {name!r} (it quotes {', '.join(found)})")
    return found[name]["text"]


def quotes_table(experiment: str, root: Path) -> str:
    """Every number ``experiment``'s quotes.py gives, as a table of what it is and its value."""
    found = quoted(experiment, root, f"quotes {experiment}")
    rows = [f"| {quote['meaning']} | {quote['text']} |" for quote in found.values()]
    return "\n".join(["| quantity (from the gallery's cube) | value |", "|---|---|", *rows]) + "\n"


CLAIMS_SUMMARY = re.compile(r"^(?P<claims>\d+) claims: (?P<hold>\d+) hold, (?P<fail>\d+) fail, (?P<inconclusive>\d+) "
                            r"inconclusive .*?Holm-adjusted.*?: (?P<holm_hold>\d+) hold,(?:.*? (?P<verifications>\d+) "
                            r"verifications)?", re.M)


def experiment_counts(experiment: str, table: str) -> dict[str, int]:
    """The counts of ``experiment``'s heading in the claims table ("## name: 9 claims, 8 hold, 1 inconclusive"); a
    verdict the heading leaves out counts 0."""
    heading = re.search(rf"^## {re.escape(experiment)}: (.*)$", table, flags=re.M)
    if heading is None:
        raise UsageError(f"block claims-count {experiment}.…: no such experiment in {CLAIMS_TABLE}")
    counts = {"claims": 0, "hold": 0, "fail": 0, "inconclusive": 0}
    for number, word in re.findall(r"(\d+) (claims?|hold|fail|inconclusive)\b", heading[1]):
        counts["claims" if word.startswith("claim") else word] = int(number)
    return counts


def claims_count(key: str, root: Path) -> str:
    """A count of the run's claims table (``CLAIMS_TABLE``): ``FIELD`` of its first line or ``EXPERIMENT.FIELD`` of
    an experiment's heading; fields ``claims``, ``hold``, ``fail``, ``inconclusive``, ``holm_hold`` and
    ``verifications`` (the table's only), and ``decided``, the share of claims that hold or fail, in whole percent."""
    table = (root / CLAIMS_TABLE).read_text()
    experiment, _, field = key.rpartition(".")
    if experiment:
        counts = experiment_counts(experiment, table)
    else:
        summary = CLAIMS_SUMMARY.search(table)
        if summary is None:
            raise UsageError(f"block claims-count: {CLAIMS_TABLE} has no line 'N claims: N hold, N fail, "
                             "N inconclusive … Holm-adjusted …: N hold'")
        counts = {name: int(value) for name, value in summary.groupdict().items() if value is not None}
    if field == "decided":
        return f"{(counts['hold'] + counts['fail']) / counts['claims']:.0%}"
    if field not in counts:
        raise UsageError(f"block claims-count {key}: no such count (known: {', '.join(counts)}, decided)")
    return str(counts[field])


CLAIM_FIELDS = {  # what a claim block reads off a row's seeds cell ("3; to decide: 20", "… (~97× the prompts)")
    "seeds": r"^(\d+)", "to decide": r"to decide: (\d+)", "prompts": r"~(\d+)× the prompts"}


def claim_cell(arg: str, root: Path) -> str:
    """One row of the run's claims table (``CLAIMS_TABLE``): ``EXPERIMENT|TEXT|FIELD``, the one row of
    ``EXPERIMENT``'s whose claim holds ``TEXT``; ``FIELD`` ``verdict``, or one of ``CLAIM_FIELDS`` read off its seeds
    cell (the seeds run, the seeds that would decide it, the prompts' factor that would)."""
    experiment, text, field = (arg.split("|") + ["", ""])[:3]
    sections = claims_sections(root)
    if experiment not in sections:
        raise UsageError(f"block claim {arg}: no experiment {experiment!r} in {CLAIMS_TABLE}")
    header, rows = markdown_tables(sections[experiment])[0]
    chosen = [row for claim, row in rows.items() if text in claim]
    if len(chosen) != 1:
        raise UsageError(f"block claim {arg}: {len(chosen)} of {experiment}'s claims hold {text!r} (choose one)")
    if field == "verdict":
        return chosen[0][header.index("verdict")]
    found = re.search(CLAIM_FIELDS.get(field, "(?!)"), chosen[0][header.index("seeds")])
    if found is None:
        raise UsageError(f"block claim {arg}: the row's seeds cell {chosen[0][header.index('seeds')]!r} gives no "
                         f"{field!r} (fields: verdict, {', '.join(CLAIM_FIELDS)})")
    return found[1]


def holm_quantile(seeds: str, root: Path) -> str:
    """The Student-t quantile at which the first row of the run's Holm descent is judged when its interval rests on
    ``seeds`` seeds: one-sided at ``claims.HOLM_ALPHA`` ÷ the table's claim count, on ``seeds`` − 1 degrees of
    freedom, to the nearest whole number."""
    from scipy import special

    if not seeds.isdigit() or int(seeds) < 2:
        raise UsageError(f"block holm-quantile {seeds}: give the seeds, a whole number of at least 2")
    claims = int(claims_count("claims", root))
    return f"{special.stdtrit(int(seeds) - 1, 1 - HOLM_ALPHA / claims):.0f}"
