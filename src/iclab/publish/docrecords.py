"""Blocks of the docs read from measurement and benchmark records (``iclab.publish.docblocks`` registers them):
``docs/measurements.yaml`` (``value``), ``benchmarks/results/runs/*.json`` (``run``), and what the benchmarks and the
cost and GPU stages wrote under ``benchmarks/results``: JSON records (``record``), cost tables (``cost`` sums the CSV,
``table`` reads a cell of the markdown), ``gpu_node_power.json`` (``power-table``, ``power-bound-table``,
``powered``) and ``mutation/*.json`` (``mutation-scores``). One field reader, ``select``, and one number writer,
``formatted``, serve them all.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections import Counter
from pathlib import Path

import pandas as pd
import yaml

from iclab.stats.claims import POWER
from iclab.errors import UsageError
from iclab.report.quotes import MINUS

MEASUREMENTS = Path("docs/measurements.yaml")  # the numbers of docs/measurements.md's records that pages quote
RUN_RECORDS = Path("benchmarks/results/runs")  # benchmarks/run_record.py's records of finished runs
BENCHMARK_RESULTS = Path("benchmarks/results")  # what benchmarks/*.py and the cost and GPU stages wrote
SELECTOR = re.compile(r"(?P<field>[^.\[]+)(?:\[(?P<key>[^=\]]+)=(?P<value>[^\]]+)\])?")
MUTATION_RESULTS = Path("benchmarks/results/mutation")
LISTED_UNEXPLAINED = 20  # beyond this a module's unexplained survivors are counted on the page, listed in its record


def mutation_scores(_: str, root: Path) -> str:
    """Each module's mutation score from ``MUTATION_RESULTS`` (``benchmarks/mutation.py``'s records; a run on named
    functions names them), and each survivor's reason; a module with more than ``LISTED_UNEXPLAINED`` survivors not yet explained gives their count."""
    lines = ["| module | tests | killed | survived | score | wall |", "|---|---|---|---|---|---|"]
    survivors, unexplained_lines = [], []
    for path in sorted((root / MUTATION_RESULTS).glob("*.json")):
        record = json.loads(path.read_text())
        counts = record["counts"]
        tests = ", ".join(f"`{test}`" for test in record["tests"])
        named = f" (functions {', '.join(record['functions'])})" if record.get("functions") else ""
        lines.append(f"| `{record['module']}`{named} | {tests} | {counts['killed']} | {counts['survived']} | "
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


def record_file(name: str, root: Path, block: str) -> Path:
    """``BENCHMARK_RESULTS``/``name``, or an error naming the block and the records of that folder."""
    path = root / BENCHMARK_RESULTS / name
    if not path.is_file():
        folder = path.parent if path.parent.is_dir() else root / BENCHMARK_RESULTS
        there = ", ".join(sorted(p.name for p in folder.iterdir() if p.is_file()))
        raise UsageError(f"block {block}: no record {BENCHMARK_RESULTS / name} "
                         f"(in {folder.relative_to(root)}: {there})")
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


def json_field(name: str, field: str, root: Path, block: str) -> object:
    """The value at ``field`` (as ``select`` reads it) of the JSON record ``BENCHMARK_RESULTS``/``name``."""
    path = record_file(name, root, block)
    return select(json.loads(path.read_text()), field, BENCHMARK_RESULTS / name, block)


def benchmark_value(arg: str, root: Path) -> str:
    """One number of a JSON record under ``BENCHMARK_RESULTS``: ``FILE|FIELD[|FORMAT]``, ``FIELD`` as ``select``
    reads it (``gpu_node_power.json|effects[experiment=ltb_table1].as_run.power|.2f``)."""
    name, field, spec = (arg.split("|") + [""])[:3]
    return formatted(json_field(name, field, root, f"record {arg}"), spec, f"record {arg}")


def counted(arg: str, root: Path) -> str:
    """How many rows a record under ``BENCHMARK_RESULTS`` holds: ``FILE.csv`` its data rows (a timing a row, a job a
    row), ``FILE.json|FIELD`` the length of the list at ``FIELD`` (as ``select`` reads it)."""
    name, _, field = arg.partition("|")
    if name.endswith(".csv"):
        return str(len(pd.read_csv(record_file(name, root, f"count {arg}"))))
    found = json_field(name, field, root, f"count {arg}")
    if not isinstance(found, list):
        raise UsageError(f"block count {arg}: {field!r} of {BENCHMARK_RESULTS / name} is not a list")
    return str(len(found))


COST_FIELDS = ("jobs", "trainings", "gpu_trainings", "cpu_hours", "gpu_hours", "gpu_hours_central",
               "gpu_hours_optimistic", "cluster_cpu_hours", "peak_host_gb", "longest_gpu_hours")


@functools.lru_cache(maxsize=8)
def cost_sums(path: Path, _mtime_ns: int) -> pd.DataFrame:
    """A cost table's sums by experiment and for the ``tier``, as ``cost.totals`` gives them, with its ``trainings``
    and ``gpu_trainings`` and its longest GPU training's hours, ``longest_gpu_hours`` (read once a version of the
    file: a page quotes one table many times)."""
    from iclab.compute import cost

    table = pd.read_csv(path, keep_default_na=False, na_values=[""])
    table["experiment"] = table["experiment"].fillna("")
    sums = cost.totals(table)
    trains = table["rule"] == "train"
    for count, jobs in (("trainings", trains), ("gpu_trainings", trains & table["gpu_seconds"].notna())):
        sums[count] = table[jobs].groupby("experiment").size()
        sums.loc["tier", count] = int(jobs.sum())
    longest = table[trains].groupby("experiment")["gpu_seconds"].max() / 3600
    sums["longest_gpu_hours"] = longest
    sums.loc["tier", "longest_gpu_hours"] = longest.max()
    return sums


def cost_value(arg: str, root: Path) -> str:
    """One number of a cost table (``iclab cost``'s CSV under ``BENCHMARK_RESULTS``) as ``cost.totals`` sums it:
    ``FILE|EXPERIMENT|FIELD[|FORMAT]``, ``EXPERIMENT`` one of the table's or ``tier``, ``FIELD`` one of
    ``COST_FIELDS`` (``trainings``: its train jobs; ``gpu_trainings``: those that ask for a GPU; ``gpu_hours``
    and its ``_central`` and ``_optimistic``: a batched group's range, ``cluster.BATCHED_SCENARIOS``;
    ``longest_gpu_hours``: the most GPU-hours of one of them, 0 where none asks for a GPU)."""
    name, experiment, field, spec = (arg.split("|") + [""])[:4]
    path = record_file(name, root, f"cost {arg}")
    sums = cost_sums(path, path.stat().st_mtime_ns)
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
    """One cell of a markdown record under ``BENCHMARK_RESULTS`` (``iclab cost``'s tables):
    ``FILE|ROW|COLUMN[|FORMAT]``, the row named by its first cell, in the one table that has both; a number's
    thousands commas are read, and ``FORMAT`` writes it anew."""
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
    below the power a design aims at (``claims.POWER``); "not in the day" where the tier runs the effect's
    experiment at CPU size (``as_run`` None)."""
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
        if ran is None:  # not in the day: its experiment runs at CPU size there
            row = [effect["effect"], effect["experiment"], truth, least, "not in the day", "", "", ""]
            lines.append("| " + " | ".join(row) + " |")
            continue
        seeds = f"{ran['seeds']}" + (f" ({paper['seeds']} at the paper's size)"
                                     if paper["seeds"] < ran["seeds"] else "")
        prompts = f"{ran['prompts']:,}" + (f" ({paper['prompts']:,} at the paper's size)"
                                           if paper["prompts"] < ran["prompts"] else "")
        powers = [f"{p:.2f}" if p >= POWER else f"**{p:.2f}**" for p in (ran["power"], ran["power_least_favourable"])]
        row = [effect["effect"], effect["experiment"], truth, least, seeds, prompts, *powers]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def power_bound_table(name: str, root: Path) -> str:
    """The same record's effects with each seed spread at its 80% upper confidence bound (``power.upper_spread``):
    the degrees of freedom behind it and its factor over the estimate, the tier's power at the bound under each truth
    (bold below ``claims.POWER``; "to refute" where that truth lies on the claim's failing side), P(holds) and
    P(fails) at the region's edge (at the spread measured and at its bound), and the seeds a design at the bound
    needs under each truth ("over N" past ``power.MAX_SEEDS``); "not in the day" where the tier does not run the
    effect at the papers' shapes."""
    power = json.loads(record_file(name, root, f"power-bound-table {name}").read_text())

    def shown(power: float, side: str) -> str:
        text = f"{power:.2f}" if power >= POWER else f"**{power:.2f}**"
        return text + (" (to refute)" if side == "fails" else "")

    def seeds(design: dict) -> str:
        return f"{design['seeds']}" if not design["reason"] else design["reason"]

    lines = ["| effect | spread's degrees of freedom | its bound, × the estimate | power at the bound, paper's size "
             "| power at the bound, least favourable | at the edge: P(holds), P(fails) at the spread measured; at its "
             "bound | seeds a design at the bound needs (paper's size; least favourable) |",
             "|---|---|---|---|---|---|---|"]
    for effect in power["effects"]:
        bound, ran = effect["upper_bound"], effect["as_run"]
        designs = f"{seeds(bound['design'])}; {seeds(bound['least_favourable']['design'])}"
        if ran is None:
            row = [effect["effect"], f"{bound['dof']}", f"{bound['sd'] / effect['spread']['sd']:.2f}×",
                   "not in the day", "", "", designs]
            lines.append("| " + " | ".join(row) + " |")
            continue

        row = [effect["effect"], f"{bound['dof']}", f"{bound['sd'] / effect['spread']['sd']:.2f}×",
               shown(ran["power_upper"], ran["side"]),
               shown(ran["power_least_favourable_upper"], ran["side_least_favourable"]),
               f"{ran['edge']['holds']:.3f}, {ran['edge']['fails']:.3f}; "
               f"{ran['edge_upper']['holds']:.3f}, {ran['edge_upper']['fails']:.3f}", designs]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def powered(name: str, root: Path) -> str:
    """How many effects of a ``benchmarks/gpu_node_power.py`` record the tier runs at the power a design aims at
    (``claims.POWER``) under both truths, out of how many it runs (those of the day): "2 of 3"."""
    effects = [e for e in json.loads(record_file(name, root, f"powered {name}").read_text())["effects"]
               if e["as_run"] is not None]
    enough = sum(min(e["as_run"]["power"], e["as_run"]["power_least_favourable"]) >= POWER for e in effects)
    return f"{enough} of {len(effects)}"
