"""Marked blocks of the docs, written from committed records and never typed (docs that cannot drift).

A block in README.md or a page under docs/ reads::

    <!-- iclab:NAME ARG -->
    …what GENERATORS[NAME](ARG, root) writes…
    <!-- /iclab:NAME -->

or, for one number inside a sentence or a table cell, on one line:
``<!-- iclab:value default-pipeline.wall -->52 min 20 s<!-- /iclab:value -->`` (GitHub hides the comments).

``python -m iclab docs`` rewrites every block from its record; ``--check`` names the stale ones and exits 1
(``tests/test_docblocks.py`` runs it on the repository). A record is a committed file a run or a benchmark wrote:
``docs/gallery/cubes.json`` (the default run's cube layouts, written by the gallery stage),
``docs/gallery/claims.md`` (its claims table), ``docs/gallery/quotes.json`` (the numbers each experiment's
``quotes.py`` reads off its cube), ``docs/measurements.yaml`` (the numbers of docs/measurements.md's
records that other pages quote), ``benchmarks/results/runs/*.json`` (finished runs), and what benchmarks and the
cost and GPU stages wrote under ``benchmarks/results``: JSON records (``record``), cost tables (``cost`` sums the CSV,
``table`` reads a cell of the markdown), ``gpu_node_power.json`` (``power-table``) and ``mutation/*.json``.

A number in a record's format (``RECORD_FORMATS``: a wall time, job-seconds, GPU-hours, verdict counts, tests passed,
jobs, a run's memory, a share decided, a claim's interval, seeds or prompts to decide, a packing gain, a step's time)
outside a block is refused by ``unblocked`` on every page but the records themselves (``RECORD_PAGES``).
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import yaml

from iclab.atomic import write_text
from iclab.claims import POWER
from iclab.errors import UsageError
from iclab.quotes import MINUS

# a line break after the opening: a block of lines; none: one number inline
BLOCK = re.compile(r"(?P<open><!-- iclab:(?P<name>[\w-]+)(?: (?P<arg>[^>]*?))? -->(?P<newline>\n?))(?P<body>.*?)"
                   r"(?P<close><!-- /iclab:(?P=name) -->)", re.S)
CUBE_LAYOUTS = Path("docs/gallery/cubes.json")
MUTATION_RESULTS = Path("benchmarks/results/mutation")
CLAIMS_TABLE = Path("docs/gallery/claims.md")  # the default run's claims table, as the gallery stage copied it
MEASUREMENTS = Path("docs/measurements.yaml")  # the numbers of docs/measurements.md's records that pages quote
RUN_RECORDS = Path("benchmarks/results/runs")  # benchmarks/run_record.py's records of finished runs
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


LISTED_UNEXPLAINED = 20  # beyond this a module's unexplained survivors are counted on the page, listed in its record


def mutation_scores(_: str, root: Path) -> str:
    """Each module's mutation score from ``MUTATION_RESULTS`` (``benchmarks/mutation.py``'s records), and each
    survivor's reason; a module with more than ``LISTED_UNEXPLAINED`` survivors not yet explained gives their count."""
    lines = ["| module | tests | killed | survived | score | wall |", "|---|---|---|---|---|---|"]
    survivors, unexplained_lines = [], []
    for path in sorted((root / MUTATION_RESULTS).glob("*.json")):
        record = json.loads(path.read_text())
        counts = record["counts"]
        tests = ", ".join(f"`{test}`" for test in record["tests"])
        lines.append(f"| `{record['module']}` | {tests} | {counts['killed']} | {counts['survived']} | "
                     f"{record['score']:.1%} | {record['wall_s']:.0f} s |")
        unexplained = [s for s in record["survivors"] if not s["reason"]]
        if len(unexplained) > LISTED_UNEXPLAINED:  # a module not yet worked through: its count, the record lists them
            unexplained_lines.append(f"- `{record['module']}`: {len(unexplained)} survivors not yet explained, each "
                                     f"listed in `{MUTATION_RESULTS / path.name}`")
        survivors += [(record["module"], s["line"], s["operator"], s["source"], s["reason"] or "not yet explained")
                      for s in record["survivors"] if s["reason"] or len(unexplained) <= LISTED_UNEXPLAINED]
    counted = Counter(survivors)  # two mutants of one operator on one line (two `<` in it) read the same: one entry
    listed = []
    for (module, line, operator, source, reason), count in counted.items():  # in the order first found
        times = f" ({count} mutants)" if count > 1 else ""
        listed.append(f"- `{module}` line {line}, {operator} on `{source}`{times}: {reason}")
    return "\n".join(lines + ["", "Survivors:", ""] + listed + unexplained_lines) + "\n"


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


def measured_value(key: str, root: Path) -> str:
    """One number of a record: ``key`` is ``RECORD.FIELD`` of ``MEASUREMENTS``."""
    return shown(select(yaml.safe_load((root / MEASUREMENTS).read_text()), key, MEASUREMENTS, f"value {key}"))


def shown(value: object) -> str:
    """A record's value as the pages write it: integers with thousands separated by commas, text as it stands."""
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def run_value(key: str, root: Path) -> str:
    """One number of a run's record: ``key`` is ``NAME.FIELD[.FIELD…]`` of ``RUN_RECORDS``/NAME.json."""
    name, _, field = key.partition(".")
    path = root / RUN_RECORDS / f"{name}.json"
    if not path.is_file():
        raise UsageError(f"block run {key}: no record {RUN_RECORDS / (name + '.json')} (there: "
                         f"{', '.join(sorted(p.stem for p in (root / RUN_RECORDS).glob('*.json')))})")
    return shown(select(json.loads(path.read_text()), field, RUN_RECORDS / f"{name}.json", f"run {key}"))


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


QUOTES = Path("docs/gallery/quotes.json")  # written by the gallery stage: iclab.quotes of each experiment's cube


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
    sections = {section.split(":", 1)[0]: section for section in
                re.split(r"^## ", (root / CLAIMS_TABLE).read_text(), flags=re.M)[1:]}
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


BENCHMARK_RESULTS = Path("benchmarks/results")  # what benchmarks/*.py and the cost and GPU stages wrote
SELECTOR = re.compile(r"(?P<field>[^.\[]+)(?:\[(?P<key>[^=\]]+)=(?P<value>[^\]]+)\])?")


def record_file(name: str, root: Path, block: str) -> Path:
    """``BENCHMARK_RESULTS``/``name``, or an error naming the block and the records of that folder."""
    path = root / BENCHMARK_RESULTS / name
    if not path.is_file():
        folder = path.parent if path.parent.is_dir() else root / BENCHMARK_RESULTS
        there = ", ".join(sorted(p.name for p in folder.iterdir() if p.is_file()))
        raise UsageError(f"block {block}: no record {BENCHMARK_RESULTS / name} (in {folder.relative_to(root)}: {there})")
    return path


def select(record: object, key: str, path: Path, block: str) -> object:
    """``record``'s value at ``key``: fields separated by dots (a field whose name holds dots is read whole), a list's
    element chosen by one of its fields (``effects[experiment=ltb_table1]``: the one element whose ``experiment`` is
    ``ltb_table1``)."""
    value, parts, depth = record, key.split("."), 0
    while depth < len(parts):
        width = next((w for w in range(len(parts) - depth, 1, -1)  # the longest run of parts that is one field
                      if isinstance(value, dict) and ".".join(parts[depth:depth + w]) in value), 1)
        field, chooser, chosen_value = ".".join(parts[depth:depth + width]), None, None
        if width == 1:
            match = SELECTOR.fullmatch(field)
            if match is None:
                raise UsageError(f"block {block}: {field!r} is neither a field nor field[key=value]")
            field, chooser, chosen_value = match["field"], match["key"], match["value"]
        if not isinstance(value, dict) or field not in value:
            known = ", ".join(sorted(value)) if isinstance(value, dict) else "none: it is a value"
            raise UsageError(f"block {block}: {path} has no field {field!r} at "
                             f"{'.'.join(parts[:depth]) or 'the top level'} (there: {known})")
        value = value[field]
        if chooser is not None:
            chosen = [item for item in value if isinstance(item, dict) and str(item.get(chooser)) == chosen_value]
            if len(chosen) != 1:
                raise UsageError(f"block {block}: {path}'s {field} has {len(chosen)} elements whose {chooser} is "
                                 f"{chosen_value!r} (choose exactly one)")
            value = chosen[0]
        depth += width
    return value


def formatted(value: object, spec: str, block: str) -> str:
    """``value`` by the format ``spec`` (Python's: ``.2f``, ``,.0f``, ``.0%``; a minus sign for a negative number, an
    exponent without leading zeros), or as ``shown`` without one."""
    if not spec:
        return shown(value)
    try:
        text = format(value, spec)
    except (TypeError, ValueError) as error:
        raise UsageError(f"block {block}: {value!r} cannot be written as {spec!r} ({error})") from None
    text = re.sub(r"e([+-])0*(\d)", lambda m: "e" + m[1].replace("+", "") + m[2], text)  # 1e-04 → 1e-4
    return MINUS + text[1:] if text.startswith("-") else text


def benchmark_value(arg: str, root: Path) -> str:
    """One number of a JSON record under ``BENCHMARK_RESULTS``: ``FILE|FIELD[|FORMAT]``, ``FIELD`` as ``select``
    reads it (``gpu_node_power.json|effects[experiment=ltb_table1].as_run.power|.2f``)."""
    name, field, spec = (arg.split("|") + [""])[:3]
    path = record_file(name, root, f"record {arg}")
    value = select(json.loads(path.read_text()), field, BENCHMARK_RESULTS / name, f"record {arg}")
    return formatted(value, spec, f"record {arg}")


COST_FIELDS = ("jobs", "trainings", "gpu_trainings", "cpu_hours", "gpu_hours", "cluster_cpu_hours", "peak_host_gb")


def cost_value(arg: str, root: Path) -> str:
    """One number of a cost table (``iclab cost``'s CSV under ``BENCHMARK_RESULTS``) as ``cost.totals`` sums it:
    ``FILE|EXPERIMENT|FIELD[|FORMAT]``, ``EXPERIMENT`` one of the table's or ``tier``, ``FIELD`` one of
    ``COST_FIELDS`` (``trainings``: its train jobs; ``gpu_trainings``: those that ask for a GPU)."""
    import pandas as pd

    from iclab import cost

    name, experiment, field, spec = (arg.split("|") + [""])[:4]
    table = pd.read_csv(record_file(name, root, f"cost {arg}"), keep_default_na=False, na_values=[""])
    table["experiment"] = table["experiment"].fillna("")
    sums = cost.totals(table)
    trains = table["rule"] == "train"
    for count, jobs in (("trainings", trains), ("gpu_trainings", trains & table["gpu_seconds"].notna())):
        sums[count] = table[jobs].groupby("experiment").size()
        sums.loc["tier", count] = int(jobs.sum())
    if experiment not in sums.index or field not in COST_FIELDS:
        raise UsageError(f"block cost {arg}: choose an experiment of {name} ({', '.join(sums.index)}) and a field "
                         f"({', '.join(COST_FIELDS)})")
    value = sums.loc[experiment, field]
    value = 0 if pd.isna(value) else value
    return formatted(int(value) if field in ("jobs", "trainings", "gpu_trainings") else float(value), spec,
                     f"cost {arg}")


def markdown_tables(text: str) -> list[tuple[list[str], dict[str, list[str]]]]:
    """Each pipe table of ``text``: its header's cells and its rows by their first cell."""
    tables, lines = [], text.splitlines()
    for at, line in enumerate(lines[:-1]):
        if line.startswith("|") and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[at + 1].strip()):
            cells = [[cell.strip() for cell in row.strip().strip("|").split("|")]
                     for row in itertools.takewhile(lambda row: row.startswith("|"), lines[at + 2:])]
            tables.append(([cell.strip() for cell in line.strip().strip("|").split("|")],
                           {row[0]: row for row in cells}))
    return tables


def table_value(arg: str, root: Path) -> str:
    """One cell of a markdown record under ``BENCHMARK_RESULTS`` (``iclab cost``'s tables): ``FILE|ROW|COLUMN[|FORMAT]``,
    the row named by its first cell, in the one table that has both; a number's thousands commas are read, and
    ``FORMAT`` writes it anew."""
    name, row, column, spec = (arg.split("|") + [""])[:4]
    tables = [(header, rows) for header, rows in markdown_tables(record_file(name, root, f"table {arg}").read_text())
              if column in header and row in rows]
    if len(tables) != 1:
        raise UsageError(f"block table {arg}: {len(tables)} tables of {BENCHMARK_RESULTS / name} have a column "
                         f"{column!r} and a row {row!r} (choose exactly one)")
    header, rows = tables[0]
    cell = rows[row][header.index(column)]
    if not spec:
        return cell
    try:
        return formatted(float(cell.replace(",", "")), spec, f"table {arg}")
    except ValueError:
        raise UsageError(f"block table {arg}: the cell {cell!r} is not a number to write as {spec!r}") from None


def power_table(name: str, root: Path) -> str:
    """The effects of a ``benchmarks/gpu_node_power.py`` record (``BENCHMARK_RESULTS``/``name``) as the tier runs
    them: each truth (an equivalence's least favourable one inside or outside its margin), the seeds and prompts run
    (with the paper's size's own design where it needs fewer) and the power of what runs under each truth, in bold
    below the power a design aims at (``claims.POWER``)."""
    power = json.loads(record_file(name, root, f"power-table {name}").read_text())
    lines = ["| effect | experiment | paper's size | least favourable | seeds run | prompts run | power, paper's size "
             "| power, least favourable |", "|---|---|---|---|---|---|---|---|"]
    for effect in power["effects"]:
        spread, paper, worst = effect["spread"], effect["design"], effect["least_favourable"]["design"]
        ran = effect["as_run"]
        truth = f"{paper['truth']:.3g}".replace("-", MINUS)
        if "no size stated" in effect["truth_source"]:
            truth = f"none stated: the CPU's {truth}"
        least = f"{worst['truth']:.3g}".replace("-", MINUS)
        if spread["relation"] == "≈":
            side = "inside" if abs(worst["truth"]) < spread["margin"] else "outside"
            least += f" ({side} the margin ±{spread['margin']:.2g})"
        seeds = f"{ran['seeds']}" + (f" ({paper['seeds']} at the paper's size)" if paper["seeds"] < ran["seeds"] else "")
        prompts = f"{ran['prompts']:,}" + (f" ({paper['prompts']:,} at the paper's size)"
                                           if paper["prompts"] < ran["prompts"] else "")
        powers = [f"{p:.2f}" if p >= POWER else f"**{p:.2f}**" for p in (ran["power"], ran["power_least_favourable"])]
        row = [effect["effect"], effect["experiment"], truth, least, seeds, prompts, *powers]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def powered(name: str, root: Path) -> str:
    """How many effects of a ``benchmarks/gpu_node_power.py`` record the tier runs at the power a design aims at
    (``claims.POWER``) under both truths, out of how many: "8 of 9"."""
    effects = json.loads(record_file(name, root, f"powered {name}").read_text())["effects"]
    enough = sum(min(e["as_run"]["power"], e["as_run"]["power_least_favourable"]) >= POWER for e in effects)
    return f"{enough} of {len(effects)}"


GENERATORS: dict[str, Callable[[str, Path], str]] = {"cube-layout": cube_layout, "mutation-scores": mutation_scores,
                                                     "claims-of": claims_of, "value": measured_value,
                                                     "run": run_value, "claims-count": claims_count,
                                                     "gallery": gallery_value, "quote": quote_value,
                                                     "quotes": quotes_table, "record": benchmark_value,
                                                     "cost": cost_value, "power-table": power_table,
                                                     "table": table_value, "claim": claim_cell,
                                                     "powered": powered}


def render(text: str, root: Path) -> str:
    """``text`` with every block rewritten by its generator."""
    def rewrite(match: re.Match) -> str:
        generator = GENERATORS.get(match["name"])
        if generator is None:
            raise UsageError(f"block iclab:{match['name']}: no generator of that name (known: "
                             f"{', '.join(sorted(GENERATORS))})")
        body = generator(match["arg"] or "", root)
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
