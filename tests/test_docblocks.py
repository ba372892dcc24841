"""The docs' generated blocks (``iclab.publish.docblocks``): each is what its record gives, a stale one is found, and
the cube-layout block is worked out by hand from a small record."""

import functools
import importlib.util
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from iclab.publish import docblocks, docgallery, docrecords
from iclab.errors import UsageError

ROOT = Path(__file__).resolve().parents[1]


def test_every_generated_block_of_the_docs_is_current():
    assert docblocks.stale(ROOT) == []


def test_a_planted_stale_block_is_found_and_rewritten(tmp_path):
    """docs/cubes.md with one number of a block changed by hand: stale names the page, write restores it."""
    (tmp_path / "docs" / "gallery").mkdir(parents=True)
    shutil.copy(ROOT / docgallery.CUBE_LAYOUTS, tmp_path / docgallery.CUBE_LAYOUTS)
    (tmp_path / "README.md").write_text("no blocks\n")
    page = (ROOT / "docs" / "cubes.md").read_text()
    assert "| `beta_star_norm` | 4 |" in page
    (tmp_path / "docs" / "cubes.md").write_text(page.replace("| `beta_star_norm` | 4 |", "| `beta_star_norm` | 5 |", 1))
    assert docblocks.stale(tmp_path) == ["docs/cubes.md"]
    assert docblocks.write(tmp_path) == ["docs/cubes.md"]
    assert (tmp_path / "docs" / "cubes.md").read_text() == page and docblocks.stale(tmp_path) == []


def test_the_cube_layout_block_by_hand(tmp_path):
    """A record of one cube (dims seed 3 and prompt_group 32 without coordinate, learner of 8 names) gives its
    tables: the first six names then the count (semicolons: a value may hold commas), the uncoordinated dimension's
    index range."""
    record = {"cube_commits": ["abc"], "experiments": {"demo": {
        "dims": {"learner": 8, "seed": 3, "prompt_group": 32},
        "coords": {"learner": list("abcdefgh"), "seed": [0, 1, 2]},
        "variables": {"risk": ["learner", "seed"], "total": []}}}}
    (tmp_path / "docs" / "gallery").mkdir(parents=True)
    (tmp_path / docgallery.CUBE_LAYOUTS).write_text(json.dumps(record))
    text = "x\n<!-- iclab:cube-layout demo -->\nold\n<!-- /iclab:cube-layout -->\ny\n"
    assert docblocks.render(text, tmp_path) == (
        "x\n<!-- iclab:cube-layout demo -->\n"
        "| dimension | size | coordinate values |\n|---|---|---|\n"
        "| `learner` | 8 | a; b; c; d; e; f; … (8) |\n| `seed` | 3 | 0; 1; 2 |\n"
        "| `prompt_group` | 32 | (no coordinate: 0 … 31) |\n\n"
        "| variable | dimensions |\n|---|---|\n| `risk` | learner, seed |\n| `total` | (scalar) |\n"
        "<!-- /iclab:cube-layout -->\ny\n")
    with pytest.raises(UsageError, match="block cube-layout nowhere: no such experiment .* \\(it has demo\\)"):
        docblocks.render(text.replace("demo", "nowhere"), tmp_path)
    with pytest.raises(UsageError, match="block iclab:made-up: no generator of that name"):
        docblocks.render("<!-- iclab:made-up -->\n<!-- /iclab:made-up -->", tmp_path)


def test_the_mutation_scores_block_by_hand(tmp_path):
    """One module's record: 8 killed, 2 survived: a score of 80.0%; the survivors are two mutants of one operator on
    one line (two `1`s in it), listed once with their count, then one on another line. A second module with 21
    unexplained survivors (one more than are listed): its explained one listed, the others counted."""
    results = tmp_path / docrecords.MUTATION_RESULTS
    results.mkdir(parents=True)
    twin = {"line": 3, "operator": "NumberReplacer", "source": "x = 1 + 1", "reason": "equivalent"}
    (results / "demo.json").write_text(json.dumps({
        "module": "iclab.demo", "tests": ["tests/test_demo.py"], "counts": {"killed": 8, "survived": 3},
        "score": 0.8, "wall_s": 12.4, "survivors": [twin, {**twin, "line": 9, "reason": ""}, twin]}))
    text = "<!-- iclab:mutation-scores -->\n<!-- /iclab:mutation-scores -->"
    assert docblocks.render(text, tmp_path) == (
        "<!-- iclab:mutation-scores -->\n| module | tests | killed | survived | score | wall |\n"
        "|---|---|---|---|---|---|\n| `iclab.demo` | `tests/test_demo.py` | 8 | 3 | 80.0% | 12 s |\n\nSurvivors:\n\n"
        "- `iclab.demo` line 3, NumberReplacer on `x = 1 + 1` (2 mutants): equivalent\n"
        "- `iclab.demo` line 9, NumberReplacer on `x = 1 + 1`: not yet explained\n<!-- /iclab:mutation-scores -->")
    many = [{**twin, "line": line, "reason": ""} for line in range(10, 10 + docrecords.LISTED_UNEXPLAINED + 1)]
    (results / "wide.json").write_text(json.dumps({
        "module": "iclab.wide", "tests": ["tests/test_wide.py"], "counts": {"killed": 9, "survived": 22},
        "score": 0.29, "wall_s": 5.0, "survivors": [twin, *many]}))
    page = docblocks.render(text, tmp_path)
    assert "- `iclab.wide` line 3, NumberReplacer on `x = 1 + 1`: equivalent\n" in page  # explained: listed
    assert "iclab.wide` line 10" not in page
    assert page.endswith("- `iclab.wide`: 21 survivors not yet explained, each listed in "
                         "`benchmarks/results/mutation/wide.json`\n<!-- /iclab:mutation-scores -->")
    (results / "wide.json").write_text(json.dumps({  # exactly as many as are listed: each listed
        "module": "iclab.wide", "tests": ["tests/test_wide.py"], "counts": {"killed": 9, "survived": 20},
        "score": 0.31, "wall_s": 5.0, "survivors": many[:-1]}))
    page = docblocks.render(text, tmp_path)
    assert "- `iclab.wide` line 29, NumberReplacer on `x = 1 + 1`: not yet explained\n" in page
    assert "survivors not yet explained, each listed" not in page
    (results / "wide.json").write_text(json.dumps({  # a run on named functions names them beside the module
        "module": "iclab.wide", "functions": ["f", "C.g"], "tests": ["tests/test_wide.py"],
        "counts": {"killed": 9, "survived": 0}, "score": 1.0, "wall_s": 5.0, "survivors": []}))
    assert "| `iclab.wide` (functions f, C.g) | `tests/test_wide.py` | 9 | 0 | 100.0% | 5 s |\n" in docblocks.render(
        text, tmp_path)


def test_the_claims_of_block_copies_an_experiments_rows_by_hand(tmp_path):
    """A claims table of two experiments: the block for the second quotes its heading and rows only; an unknown name
    is an error naming the table."""
    (tmp_path / "docs" / "gallery").mkdir(parents=True)
    (tmp_path / docgallery.CLAIMS_TABLE).write_text(
        "intro\n\n## a: 1 claim, 1 hold\n\n| claim |\n|:--|\n| a holds |\n\n"
        "## b: 1 claim, 1 inconclusive\n\n| claim |\n|:--|\n| b is open |\n")
    text = "<!-- iclab:claims-of b -->\n<!-- /iclab:claims-of -->"
    assert docblocks.render(text, tmp_path) == (
        "<!-- iclab:claims-of b -->\n**b: 1 claim, 1 inconclusive**\n\n| claim |\n|:--|\n| b is open |\n"
        "<!-- /iclab:claims-of -->")
    first = "<!-- iclab:claims-of a -->\n<!-- /iclab:claims-of -->"  # the table's first experiment too
    assert "| a holds |" in docblocks.render(first, tmp_path)
    with pytest.raises(UsageError, match="block claims-of c: no such experiment in docs/gallery/claims.md"):
        docblocks.render(text.replace("of b", "of c"), tmp_path)


def test_no_page_types_a_number_in_a_records_format_outside_a_block():
    assert docblocks.typed_numbers(ROOT) == {}


@pytest.mark.parametrize("typed, kind", [
    ("rc 0 in 52 min 20 s", "wall time: 52 min 20 s"), ("it cost 6,267 job-s", "job-seconds: 6,267 job-s"),
    ("~444 GPU-hours", "GPU- or CPU-hours: 444 GPU-hours"), ("97 CPU-h", "GPU- or CPU-hours: 97 CPU-h"),
    ("70 claims: 53 hold; Holm", "verdict count: 53 hold"), ("739 passed", "tests passed: 739 passed"),
    ("298 jobs", "job count: 298 jobs"), ("largest process 1.38 GB", "a run's memory: largest process 1.38 GB"),
    ("0.94 GB resident", "a run's memory: 0.94 GB resident"), ("80% decided", "share decided: 80% decided"),
    ("5.00, [4.73, 5.26] against", "claim interval: [4.73, 5.26]"),
    ("3; to decide: 20", "seeds to decide: to decide: 20"),
    ("error (~97× the prompts)", "seeds to decide: ~97× the prompts"),
    ("1.49× at k = 2", "a packing gain: 1.49× at k = 2"),
    ("took 0.05 s a step", "a step's time: 0.05 s a step")])
def test_a_planted_number_in_each_records_format_is_found_outside_a_block_only(typed, kind, tmp_path):
    """Each format typed on a page is found; the same in a value block, in code, or on a record page is not; near
    misses (a budget in minutes alone, an integer range, a bare count) are not numbers of a record's format."""
    assert docblocks.unblocked(f"text {typed} text") == [kind]
    assert docblocks.unblocked(f"text <!-- iclab:value a.b -->{typed}<!-- /iclab:value --> text") == []
    assert docblocks.unblocked(f"text `{typed}` text\n```\n{typed}\n```\n") == []
    assert docblocks.unblocked("the budget is 20 min; d = [64, 80]; 53 claims; 14 seeds; 2 GB of RAM") == []
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text(f"x {typed}\n")
    (tmp_path / "docs" / "measurements.md").write_text(f"the record: {typed}\n")
    assert docblocks.typed_numbers(tmp_path) == {"README.md": [kind]}


def write_records(root: Path) -> None:
    (root / "docs" / "gallery").mkdir(parents=True)
    (root / docrecords.MEASUREMENTS).write_text("tests:\n  wall: 5 min 35 s\n  passed: 739\ndefault:\n  job_s: 6267\n")
    (root / docrecords.RUN_RECORDS).mkdir(parents=True)
    (root / docrecords.RUN_RECORDS / "smoke.json").write_text(json.dumps({"disk_mb": 292.5, "by_rule": {"train": {
        "job_s": 1081}}}))
    (root / docgallery.CLAIMS_TABLE).write_text(
        "70 claims: 53 hold, 1 fail, 16 inconclusive (96% intervals); Holm-adjusted over the 70 (2.5% a side): "
        "29 hold, "
        "0 fail, 41 inconclusive.\n\n## a: 9 claims, 8 hold, 1 inconclusive\n\n| claim |\n\n## b: 1 claim, 1 fail\n")


def test_value_run_and_claims_count_blocks_by_hand(tmp_path):
    """Inline blocks: a record's integer with its thousands comma, text as typed, a run record's nested field, the
    table's and an experiment heading's counts (a verdict the heading leaves out is 0), and the share decided:
    (53 hold + 1 fail) / 70 = 77% (not 53/70 = 76%, nor 54/69 = 78%)."""
    write_records(tmp_path)

    def inline(name: str, arg: str) -> str:
        text = f"| <!-- iclab:{name} {arg} -->old<!-- /iclab:{name} --> |"
        return docblocks.render(text, tmp_path).removeprefix(f"| <!-- iclab:{name} {arg} -->").removesuffix(
            f"<!-- /iclab:{name} --> |")

    assert inline("value", "default.job_s") == "6,267" and inline("value", "tests.wall") == "5 min 35 s"
    assert inline("run", "smoke.by_rule.train.job_s") == "1,081" and inline("run", "smoke.disk_mb") == "292.5"
    assert [inline("claims-count", key) for key in ("claims", "hold", "fail", "holm_hold", "decided")] == [
        "70", "53", "1", "29", "77%"]
    assert [inline("claims-count", f"a.{key}") for key in ("claims", "hold", "fail", "inconclusive", "decided")] == [
        "9", "8", "0", "1", "89%"]
    assert [inline("claims-count", f"b.{key}") for key in ("claims", "hold", "fail", "inconclusive")] == [
        "1", "0", "1", "0"]
    with pytest.raises(UsageError, match=r"block value tests.nope: docs/measurements.yaml has no field 'nope' at "
                                         r"tests \(there: passed, wall\)"):
        inline("value", "tests.nope")
    with pytest.raises(UsageError, match=r"block run gone.x: no record benchmarks/results/runs/gone.json "
                                         r"\(there: smoke\)"):
        inline("run", "gone.x")
    with pytest.raises(UsageError, match="block claims-count c.…: no such experiment in docs/gallery/claims.md"):
        inline("claims-count", "c.hold")
    with pytest.raises(UsageError, match="block iclab:claims-of a: written inline, but it gives several lines"):
        inline("claims-of", "a")


def test_a_planted_stale_inline_value_is_found_and_rewritten(tmp_path):
    write_records(tmp_path)
    page = "The tests: <!-- iclab:value tests.passed -->739<!-- /iclab:value --> passed.\n"
    (tmp_path / "README.md").write_text(page.replace(">739<", ">738<"))
    assert docblocks.stale(tmp_path) == ["README.md"]
    assert docblocks.write(tmp_path) == ["README.md"] and (tmp_path / "README.md").read_text() == page


def test_the_run_record_of_a_hand_made_results_folder(tmp_path):
    """benchmarks/run_record.py on three benchmark files and two data files: job-seconds by rule, the largest
    max_rss, the bytes on disk by folder."""
    spec = importlib.util.spec_from_file_location("run_record", ROOT / "benchmarks" / "run_record.py")
    run_record = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_record)
    header = "s\th:m:s\tmax_rss\n"
    for rule, job, seconds, rss in [("train", "a", 10.4, 300.0), ("train", "b", 5.0, 900.0), ("data", "c", 2.2, 50.0)]:
        (tmp_path / "benchmarks" / rule).mkdir(parents=True, exist_ok=True)
        (tmp_path / "benchmarks" / rule / f"{job}.tsv").write_text(f"{header}{seconds}\t0:00:10\t{rss}\n")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "m.pt").write_bytes(b"x" * 3_000_000)
    (tmp_path / "models" / "n.pt").write_bytes(b"x" * 1_500_000)
    found = run_record.record(tmp_path, None, 60.0, "hand")
    assert found["by_rule"] == {"data": {"jobs": 1, "job_s": 2}, "train": {"jobs": 2, "job_s": 15}}
    assert (found["benchmarked_jobs"], found["job_s"], found["largest_job_max_rss_mb"]) == (3, 18, 900)
    assert found["disk_mb_by_folder"]["models"] == 4.5 and found["disk_mb"] == 4.5


def test_the_gallery_block_by_hand(tmp_path):
    """A manifest of two images made at one commit: the short commits, the count, 1,267,979 bytes as 1.27 MB; two
    cube commits are an error naming both."""
    (tmp_path / "docs" / "gallery").mkdir(parents=True)
    images = [{"image": "a.png", "cube_commit": "d0f9edd7dc"}, {"image": "b.png", "cube_commit": "d0f9edd7dc"}]
    manifest = {"drawn_by": "16bf08152138", "total_bytes": 1267979, "images": images}
    (tmp_path / docgallery.GALLERY_MANIFEST).write_text(json.dumps(manifest))
    assert [docgallery.gallery_value(field, tmp_path) for field in ("drawn_by", "cube_commit", "images", "megabytes")] \
        == ["16bf081", "d0f9edd", "2", "1.27"]
    images[1]["cube_commit"] = "5044389abc"
    (tmp_path / docgallery.GALLERY_MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(UsageError, match=r"made at 2 commits \(5044389, d0f9edd\)"):
        docgallery.gallery_value("cube_commit", tmp_path)
    assert [docgallery.gallery_value(field, tmp_path) for field in ("drawn_by", "images")] == ["16bf081", "2"]


def test_the_record_block_of_a_hand_made_benchmark_record(tmp_path):
    """A JSON record of two effects: a list element is chosen by one of its fields, written by a format or as shown
    (thousands by commas); no element, two elements, no file and a bad format are errors naming what is there."""
    folder = tmp_path / docrecords.BENCHMARK_RESULTS / "gpu_run"
    folder.mkdir(parents=True)
    (folder / "power.json").write_text(json.dumps({"effects": [
        {"experiment": "a", "power": 0.8649, "prompts": 20000}, {"experiment": "b", "power": 0.07, "prompts": 4000},
        {"experiment": "b2", "power": 0.5, "prompts": 1}]}))
    (folder / "looks.json").write_text(json.dumps({"s.e. at 2.5%": {"rate": 0.0011}, "s": {"e": 1}, "gap": -8.858}))
    value = functools.partial(docrecords.benchmark_value, root=tmp_path)
    assert value("gpu_run/looks.json|s.e. at 2.5%.rate|.1e") == "1.1e-3" and value("gpu_run/looks.json|s.e") == "1"
    assert value("gpu_run/looks.json|gap|.3g") == "\u22128.86"
    (folder / "dotted.json").write_text(json.dumps({"a.b": 5, "c.d": {"e": 7}}))
    assert value("gpu_run/dotted.json|a.b") == "5" and value("gpu_run/dotted.json|c.d.e") == "7"
    with pytest.raises(UsageError, match=r"no record benchmarks/results/nowhere/x.json \(in benchmarks/results: \)"):
        value("nowhere/x.json|a")
    assert value("gpu_run/power.json|effects[experiment=a].power|.2f") == "0.86"
    assert value("gpu_run/power.json|effects[experiment=b].power|.0%") == "7%"
    assert value("gpu_run/power.json|effects[experiment=b2].power|-.0e") == "5e-1"
    assert value("gpu_run/power.json|effects[experiment=b2].prompts|+.1f") == "+1.0"
    assert value("gpu_run/power.json|effects[experiment=a].prompts") == "20,000"
    with pytest.raises(UsageError, match=r"effects has 0 elements whose experiment is 'c'"):
        value("gpu_run/power.json|effects[experiment=c].power")
    (folder / "twice.json").write_text(json.dumps({"runs": [{"k": 1}, {"k": 1}]}))
    with pytest.raises(UsageError, match=r"runs has 2 elements whose k is '1'"):
        value("gpu_run/twice.json|runs[k=1]")
    with pytest.raises(UsageError, match=r"no record benchmarks/results/gpu_run/pow.json "
                                         r"\(in benchmarks/results/gpu_run: "
                                         r"dotted.json, looks.json, power.json, twice.json\)"):
        value("gpu_run/pow.json|effects")
    with pytest.raises(UsageError, match=r"has no field 'size' at effects\[experiment=a\] "
                                         r"\(there: experiment, power, prompts\)"):
        value("gpu_run/power.json|effects[experiment=a].size")
    with pytest.raises(UsageError, match=r"'a' cannot be written as '.2f'"):
        value("gpu_run/power.json|effects[experiment=a].experiment|.2f")


def test_the_cost_block_sums_a_hand_made_cost_table(tmp_path):
    """Five jobs: a's training (2 GPU-hours, 1 hour of CPU here), a's data job (half an hour of CPU, no GPU: a
    cluster's CPU job), b's two trainings (1 and 0.5 GPU-hours), c2's CPU training. By hand: a 2 jobs, 1 training, 2
    GPU-hours, 1.5 CPU-hours here, 0.5 on a cluster's CPUs; the tier 3.5 GPU-hours and 4 trainings; the largest job
    2.5 GB; the longest GPU training 2 h over the tier, 1 h in b (their sums would be 3.5 and 1.5)."""
    (tmp_path / docrecords.BENCHMARK_RESULTS).mkdir(parents=True)
    (tmp_path / docrecords.BENCHMARK_RESULTS / "cost.csv").write_text(
        "experiment,rule,job,cpu_seconds,gpu_seconds,peak_host_mb\n"
        "a,train,j1,3600,7200,1000\na,data,j2,1800,,2500\nb,train,j3,900,3600,500\nc2,train,j4,60,,100\n"
        "b,train,j5,450,1800,200\n")
    value = functools.partial(docrecords.cost_value, root=tmp_path)
    assert [value(f"cost.csv|a|{field}") for field in ("jobs", "trainings")] == ["2", "1"]
    assert [value(f"cost.csv|a|{field}|.2f") for field in ("gpu_hours", "cpu_hours", "cluster_cpu_hours")] == [
        "2.00", "1.50", "0.50"]
    assert value("cost.csv|tier|gpu_hours|.1f") == "3.5" and value("cost.csv|tier|trainings") == "4"
    assert value("cost.csv|a|gpu_trainings") == "1" and value("cost.csv|c2|gpu_trainings") == "0"
    assert value("cost.csv|tier|peak_host_gb|.1f") == "2.5" and value("cost.csv|b|cluster_cpu_hours|.1f") == "0.0"
    # the longest GPU training: a's 2 h over the tier, b's 1 h in b (sums: 3.5, 1.5), none in c2
    assert [value(f"cost.csv|{e}|longest_gpu_hours|.4f") for e in ("tier", "b", "c2")] == ["2.0000", "1.0000", "0.0000"]
    with pytest.raises(UsageError, match=r"choose an experiment of cost.csv \(a, b, c2, tier\) and a field"):
        value("cost.csv|c|jobs")


def test_the_power_table_block_of_a_hand_made_power_record(tmp_path):
    """Two effects. An equivalence (margin 0.05) whose least favourable truth 0.07 lies outside it, run at 5 seeds
    where the paper's size needs 3, its least favourable power 0.5 below claims.POWER (bold); an ordering whose paper
    states no size (the CPU's −0.5 stands in), run at the design's seeds and prompts; an equivalence whose least
    favourable truth lies on its margin (outside: inside is strict); an ordering "≥" (no margin written); an effect
    not in the day (``as_run`` None), neither run nor counted."""
    def effect(name, relation, margin, source, truth, worst, seeds, ran, power_worst):
        return {"effect": name, "experiment": "x", "truth_source": source,
                "spread": {"relation": relation, "margin": margin},
                "design": {"truth": truth, "seeds": seeds, "prompts": 2000},
                "least_favourable": {"design": {"truth": worst}},
                "as_run": {"seeds": ran, "prompts": 2000, "power": 0.9, "power_least_favourable": power_worst}}
    (tmp_path / docrecords.BENCHMARK_RESULTS).mkdir(parents=True)
    (tmp_path / docrecords.BENCHMARK_RESULTS / "power.json").write_text(json.dumps({"effects": [
        effect("near", "≈", 0.05, "paper: difference 0", 0.0, 0.07, 3, 5, 0.5),
        effect("helps", "<", 0.0, "paper: no size stated", -0.5, -0.5, 4, 4, 0.8),
        effect("edge", "≈", 0.05, "paper: difference 0", 0.0, -0.05, 3, 3, 0.9),
        effect("at least", "≥", 0.0, "paper: 1", 1.0, 0.5, 3, 3, 0.9),
        effect("far", "<", 0.0, "paper: −2", -2.0, -1.0, 3, 3, 0.1) | {"as_run": None}]}, ensure_ascii=False))
    assert docrecords.power_table("power.json", tmp_path).splitlines()[2:] == [
        "| near | x | 0 | 0.07 (outside the margin ±0.05) | 5 (3 at the paper's size) | 2,000 | 0.90 | **0.50** |",
        "| helps | x | none stated: the CPU's −0.5 | −0.5 | 4 | 2,000 | 0.90 | 0.80 |",
        "| edge | x | 0 | −0.05 (outside the margin ±0.05) | 3 | 2,000 | 0.90 | 0.90 |",
        "| at least | x | 1 | 0.5 | 3 | 2,000 | 0.90 | 0.90 |",
        "| far | x | −2 | −1 | not in the day |  |  |  |"]
    # 'near' at 0.50 under its least favourable truth; 'far' is not in the day (its experiment at CPU size)
    assert docrecords.powered("power.json", tmp_path) == "3 of 4"


def test_the_power_bound_table_block_of_a_hand_made_power_record(tmp_path):
    """Two effects with the seed spread at its 80% upper bound: one from three seeds (2 degrees of freedom, sd 0.1 →
    0.2117: 2.12×), its power at the paper's size 0.9, at its least favourable truth 0.3 (bold) on the failing side
    ("to refute"), no design within the seed cap there; one from two seeds (1 → 3.95×), a power of exactly 0.80 not
    bold, designs of 4 and 6 seeds; one not in the day, its designs only. The edge's probabilities to three
    places."""
    def effect(name, dof, sd, bound, powers, sides, designs):
        return {"effect": name, "spread": {"sd": sd},
                "upper_bound": {"dof": dof, "sd": bound, "design": designs[0],
                                "least_favourable": {"design": designs[1]}},
                "as_run": {"power_upper": powers[0], "power_least_favourable_upper": powers[1], "side": sides[0],
                           "side_least_favourable": sides[1], "edge": {"holds": 0.0198, "fails": 0.01234},
                           "edge_upper": {"holds": 0.0191, "fails": 0.0186}}}
    (tmp_path / docrecords.BENCHMARK_RESULTS).mkdir(parents=True)
    (tmp_path / docrecords.BENCHMARK_RESULTS / "power.json").write_text(json.dumps({"effects": [
        effect("gap", 2, 0.1, 0.21169, (0.9, 0.3), ("holds", "fails"),
               ({"seeds": 3, "reason": ""}, {"seeds": 21, "reason": "over 20 seeds"})),
        effect("flat", 1, 1.0, 3.9472, (0.8, 0.79), ("holds", "holds"),
               ({"seeds": 4, "reason": ""}, {"seeds": 6, "reason": ""})),
        effect("far", 2, 0.5, 1.05847, (0.0, 0.0), ("holds", "holds"),
               ({"seeds": 13, "reason": ""}, {"seeds": 13, "reason": ""})) | {"as_run": None}]}))
    assert docrecords.power_bound_table("power.json", tmp_path).splitlines()[2:] == [
        "| gap | 2 | 2.12× | 0.90 | **0.30** (to refute) | 0.020, 0.012; 0.019, 0.019 | 3; over 20 seeds |",
        "| flat | 1 | 3.95× | 0.80 | **0.79** | 0.020, 0.012; 0.019, 0.019 | 4; 6 |",
        "| far | 2 | 2.12× | not in the day |  |  | 13; 13 |"]


def test_the_table_block_reads_one_cell_of_a_hand_made_markdown_record(tmp_path):
    """Two tables (pandas' markdown, right-aligned): a cell found by its row's first cell and its column, commas read
    when a format writes it anew; a row and column both tables have, or a text cell with a format, is an error."""
    (tmp_path / docrecords.BENCHMARK_RESULTS).mkdir(parents=True)
    (tmp_path / docrecords.BENCHMARK_RESULTS / "cost.md").write_text(
        "# Cost\n\n| family | jobs | packed hours |\n|:--|--:|--:|\n| gpt2 | 91 | 1,409.4 |\n| lstm | 4 | 24.8 |\n\n"
        "text\n\n| without | jobs | a day |\n|:--|--:|:--|\n| lstm | 87 | 16× over |\n")
    value = functools.partial(docrecords.table_value, root=tmp_path)
    assert value("cost.md|gpt2|packed hours") == "1,409.4" and value("cost.md|gpt2|packed hours|,.0f") == "1,409"
    assert value("cost.md|lstm|a day") == "16× over" and value("cost.md|lstm|packed hours|.0f") == "25"
    with pytest.raises(UsageError, match=r"2 tables of benchmarks/results/cost.md have a column 'jobs' "
                                         r"and a row 'lstm'"):
        value("cost.md|lstm|jobs")
    with pytest.raises(UsageError, match=r"the cell '16× over' is not a number to write as '.0f'"):
        value("cost.md|lstm|a day|.0f")
    with pytest.raises(UsageError, match=r"0 tables of benchmarks/results/cost.md have a column 'jobs' "
                                         r"and a row 'tpu'"):
        value("cost.md|tpu|jobs")


def test_the_claim_block_reads_a_hand_made_claims_tables_row(tmp_path):
    """An experiment of three rows: the seeds run, the seeds that would decide it and the prompts' factor come off the
    seeds cell of the one row whose claim holds the text; a text two rows hold, a field the cell lacks and an unknown
    experiment are errors. The table's first line gives its verifications (5)."""
    (tmp_path / "docs" / "gallery").mkdir(parents=True)
    (tmp_path / docgallery.CLAIMS_TABLE).write_text(
        "3 claims: 1 hold, 0 fail, 2 inconclusive (96% intervals); Holm-adjusted over the 3 (2.5% a side): 1 hold, "
        "0 fail, 2 inconclusive. 5 verifications of the theory's computation (not counted): 5 pass.\n\n"
        "## a: 3 claims, 1 hold, 2 inconclusive\n\n| claim (source) | verdict | seeds |\n|:--|:--|--:|\n"
        "| MLP helps (paper) | inconclusive | 3; to decide: 20 |\n| MLP costs more (paper) | inconclusive | 3; to "
        "decide: none: the Monte-Carlo error alone is too large (~97× the prompts) |\n| limit reached | holds | 4 |\n")
    cell = functools.partial(docgallery.claim_cell, root=tmp_path)
    assert [cell(f"a|MLP helps|{field}") for field in ("seeds", "to decide", "verdict")] == ["3", "20", "inconclusive"]
    assert cell("a|costs more|prompts") == "97" and cell("a|limit|seeds") == "4"
    assert docgallery.claims_count("verifications", tmp_path) == "5"
    with pytest.raises(UsageError, match=r"2 of a's claims hold 'MLP' \(choose one\)"):
        cell("a|MLP|seeds")
    with pytest.raises(UsageError, match=r"0 of a's claims hold 'nothing' \(choose one\)"):
        cell("a|nothing|seeds")
    with pytest.raises(UsageError, match=r"gives no 'zzz' \(fields: verdict, seeds, to decide, prompts\)"):
        cell("a|limit|zzz")
    with pytest.raises(UsageError, match=r"the row's seeds cell '4' gives no 'to decide'"):
        cell("a|limit|to decide")
    with pytest.raises(UsageError, match=r"no experiment 'b' in docs/gallery/claims.md"):
        cell("b|limit|seeds")


def test_the_cube_comparison_record_of_a_hand_made_report():
    """compare_cubes' report of five cubes: one equal, one within round-off (2e-6 and 9.9e-6: the larger counts), one
    trained (0.35), one missing a variable and one missing (no size): 1 equal, 1 more by round-off, the largest
    0.35 in 'c'."""
    spec = importlib.util.spec_from_file_location("cube_comparison", ROOT / "benchmarks" / "cube_comparison.py")
    cube_comparison = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cube_comparison)
    report = ("a.nc: equal\nb.nc: DIFFERS\n  - variable 'x': 5 of 9 values differ (max abs 1e-07, max rel 2.0e-06)\n"
              "  - variable 'y': 1 of 9 values differ (max abs 1e-07, max rel 9.9e-06)\n"
              "c.nc: DIFFERS\n  - variable 'risk': 3 of 9 values differ (max abs 0.6, max rel 3.5e-01)\n"
              "d.nc: DIFFERS\n  - variable 'z' missing\ne.nc: MISSING in new\n1 of 5 cubes equal (rtol 1e-06)\n")
    largest = cube_comparison.largest_differences(report)
    assert largest == {"a": 0.0, "b": 9.9e-06, "c": 0.35, "d": None, "e": None}
    summary = cube_comparison.summary(largest)
    assert (summary["cubes"], summary["equal"], summary["round_off"]) == (5, 1, 1)
    assert (summary["largest_relative"], summary["largest_relative_cube"]) == (0.35, "c")
    # verdicts: three claims both tables judge (one changes) and a verification that changes, which is not a claim;
    # a claim only one table has is not compared
    table = pd.DataFrame({"experiment": ["e"] * 4, "kind": ["claim"] * 3 + ["verification"],
                          "claim": ["p", "q", "r", "v"], "verdict": ["holds", "holds", "fails", "holds"]})
    new = table.assign(verdict=["holds", "inconclusive", "fails", "fails"])
    new = pd.concat([new, pd.DataFrame({"experiment": ["e"], "kind": ["claim"], "claim": ["s"], "verdict": ["holds"]})])
    assert cube_comparison.verdicts_compared(table, new) == {"claims": 3, "differ": 1,
                                                             "changed": ["e: q: holds → inconclusive"]}


def test_the_holm_quantile_block_by_the_closed_form_of_t_on_two_degrees_of_freedom(tmp_path):
    """A table of 10 claims: the first Holm row is judged one-sided at p = 1 − 0.025/10 = 0.9975. On 2 degrees of
    freedom t_p = (2p − 1)/√(2p(1 − p)) = 0.995/√0.0049875 = 14.09 → "14" (two-sided, p = 0.99875: 19.96 → "20"; 3
    degrees of freedom: 7.45 → "7"; the normal quantile 2.81 → "3"). 3 seeds give 2 degrees of freedom."""
    (tmp_path / "docs" / "gallery").mkdir(parents=True)
    (tmp_path / docgallery.CLAIMS_TABLE).write_text(
        "10 claims: 4 hold, 0 fail, 6 inconclusive (96% intervals); Holm-adjusted over the 10 (2.5% a side): 2 hold, "
        "0 fail, 8 inconclusive.\n")
    assert docblocks.render("<!-- iclab:holm-quantile 3 --><!-- /iclab:holm-quantile -->", tmp_path) \
        == "<!-- iclab:holm-quantile 3 -->14<!-- /iclab:holm-quantile -->"
    with pytest.raises(UsageError, match=r"holm-quantile 1: give the seeds, a whole number of at least 2"):
        docgallery.holm_quantile("1", tmp_path)
    # 2 seeds, 1 degree of freedom: the Cauchy quantile tan(π(p − ½)) = 1/tan(0.0025π) = 127.3
    assert docgallery.holm_quantile("2", tmp_path) == "127"


def test_the_count_block_counts_a_csvs_data_rows_and_a_json_list(tmp_path):
    """A CSV of a header and 3 rows gives 3 (its lines are 4); a JSON list of 2 effects gives 2 (the record has 3
    top-level fields); a field that is not a list is an error."""
    results = tmp_path / docrecords.BENCHMARK_RESULTS
    results.mkdir(parents=True)
    (results / "rates.csv").write_text("card,key\nh,a\nh,b\nh,c\n")
    (results / "power.json").write_text(json.dumps({"level": 0.99, "commit": "x", "effects": [{"e": 1}, {"e": 2}]}))
    assert docblocks.render("<!-- iclab:count rates.csv --><!-- /iclab:count --> and "
                            "<!-- iclab:count power.json|effects --><!-- /iclab:count -->", tmp_path) == (
        "<!-- iclab:count rates.csv -->3<!-- /iclab:count --> and <!-- iclab:count power.json|effects -->2"
        "<!-- /iclab:count -->")
    with pytest.raises(UsageError, match=r"'level' of benchmarks/results/power.json is not a list"):
        docrecords.counted("power.json|level", tmp_path)
