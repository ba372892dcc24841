"""The docs' generated blocks (``iclab.docblocks``): each is what its record gives, a stale one is found, and the
cube-layout block is worked out by hand from a small record."""

import json
import shutil
from pathlib import Path

import pytest

from iclab import docblocks
from iclab.errors import UsageError

ROOT = Path(__file__).resolve().parents[1]


def test_every_generated_block_of_the_docs_is_current():
    assert docblocks.stale(ROOT) == []


def test_a_planted_stale_block_is_found_and_rewritten(tmp_path):
    """docs/cubes.md with one number of a block changed by hand: stale names the page, write restores it."""
    (tmp_path / "docs" / "gallery").mkdir(parents=True)
    shutil.copy(ROOT / docblocks.CUBE_LAYOUTS, tmp_path / docblocks.CUBE_LAYOUTS)
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
    (tmp_path / docblocks.CUBE_LAYOUTS).write_text(json.dumps(record))
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
    """One module's record: 9 killed, 1 survived with its reason: a score of 90.0%, the survivor listed."""
    results = tmp_path / docblocks.MUTATION_RESULTS
    results.mkdir(parents=True)
    (results / "demo.json").write_text(json.dumps({
        "module": "iclab.demo", "tests": ["tests/test_demo.py"], "counts": {"killed": 9, "survived": 1},
        "score": 0.9, "wall_s": 12.4, "survivors": [{"line": 3, "operator": "NumberReplacer", "source": "x = 1",
                                                     "reason": "equivalent"}]}))
    text = "<!-- iclab:mutation-scores -->\n<!-- /iclab:mutation-scores -->"
    assert docblocks.render(text, tmp_path) == (
        "<!-- iclab:mutation-scores -->\n| module | tests | killed | survived | score | wall |\n"
        "|---|---|---|---|---|---|\n| `iclab.demo` | `tests/test_demo.py` | 9 | 1 | 90.0% | 12 s |\n\nSurvivors:\n\n"
        "- `iclab.demo` line 3, NumberReplacer on `x = 1`: equivalent\n<!-- /iclab:mutation-scores -->")


def test_the_claims_of_block_copies_an_experiments_rows_by_hand(tmp_path):
    """A claims table of two experiments: the block for the second quotes its heading and rows only; an unknown name
    is an error naming the table."""
    (tmp_path / "docs" / "gallery").mkdir(parents=True)
    (tmp_path / docblocks.CLAIMS_TABLE).write_text(
        "intro\n\n## a: 1 claim, 1 hold\n\n| claim |\n|:--|\n| a holds |\n\n"
        "## b: 1 claim, 1 inconclusive\n\n| claim |\n|:--|\n| b is open |\n")
    text = "<!-- iclab:claims-of b -->\n<!-- /iclab:claims-of -->"
    assert docblocks.render(text, tmp_path) == (
        "<!-- iclab:claims-of b -->\n**b: 1 claim, 1 inconclusive**\n\n| claim |\n|:--|\n| b is open |\n"
        "<!-- /iclab:claims-of -->")
    with pytest.raises(UsageError, match="block claims-of c: no such experiment in docs/gallery/claims.md"):
        docblocks.render(text.replace("of b", "of c"), tmp_path)
