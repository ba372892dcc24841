"""The front page and the reference in docs/: every relative link and image path resolves, to a file and, where the
link names one, to a heading of it (GitHub's anchors)."""

import re
from pathlib import Path

import pytest
from conftest import REPO

from iclab.publish.docblocks import BLOCK

PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")  # [text](target) and ![alt](image)
TARGET = re.compile(r"^(#|[\w./-]*\.(md|png|svg|pdf|yaml|txt|py)(#|$)|[\w./-]+/$)")  # a page, a file, a folder


def anchors(page: Path) -> set[str]:
    """GitHub's anchor of every heading of ``page``: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def test_anchors_follow_githubs_rule():
    page = REPO / "docs" / "claims.md"
    assert "the-claims-table" in anchors(page)
    assert re.sub(r"[^\w\- ]", "", "Claims with three verdicts (2026-11-25, issue 45: x)".lower()).replace(" ", "-") \
        == "claims-with-three-verdicts-2026-11-25-issue-45-x"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_and_image_resolves(page: Path):
    broken = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+://|mailto:", target) or not TARGET.match(target):
            continue  # external (no network at test time), or not a link target (test_docs_markup refuses those)
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target} (no file {file})")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target} (no heading #{anchor} in {file.name})")
    assert not broken, f"{page.relative_to(REPO)}: " + "; ".join(broken)


def readme_terms(text: str) -> set[str]:
    """The README's terms in code font outside code blocks: single names (an experiment, a program) and options;
    paths, file names and whole commands are left out (they are not words to define)."""
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    spans = set(re.findall(r"`([^`\n]+)`", prose))
    names = {span for span in spans if re.fullmatch(r"[A-Za-z_][\w]*", span) and not (REPO / span).exists()}
    options = {span.split()[0] for span in spans if span.startswith("--")}
    return names | options


def test_the_glossary_defines_every_term_the_readme_sets_in_code_font():
    glossary = (REPO / "docs" / "glossary.md").read_text()
    terms = readme_terms((REPO / "README.md").read_text())
    assert {"ltb_gap", "squeue", "--replace-workflow-config"} <= terms  # the rule reads what it should
    missing = sorted(term for term in terms if f"`{term}`" not in glossary)
    assert not missing, f"docs/glossary.md does not define {missing}"
    assert "[glossary](docs/glossary.md)" in (REPO / "README.md").read_text().lower()


def test_the_gallery_page_quotes_each_claim_with_the_verdict_of_the_gallerys_claims_table():
    """docs/gallery/README.md (made by the gallery target) against docs/gallery/claims.md (the run's table)."""
    rows = {}
    for line in (REPO / "docs" / "gallery" / "claims.md").read_text().splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 5 and not set(cells[0]) <= {":", "-"}:
            rows[cells[0]] = cells[3]  # "claim (source)" → verdict
    quoted = re.findall(r"^- \*\*(\w+)\*\* \([^)]*\) · (.+?): measured ", (REPO / "docs" / "gallery" / "README.md")
                        .read_text(), flags=re.MULTILINE)
    assert len(quoted) > 50
    for verdict, claim in quoted:
        matches = [row_verdict for text, row_verdict in rows.items() if text.startswith(claim + " (")]
        assert matches and all(v.split()[0] == verdict for v in matches), (claim, verdict, matches)


MEASUREMENTS = REPO / "docs" / "measurements.md"
RECORD = re.compile(r"\]\((?:docs/)?measurements\.md#([\w-]+)\)")  # a link to a record of docs/measurements.md
NUMBER = re.compile(r"(?<![\w.,])\d+(?:,\d{3})*(?:\.\d+)?(?![\w])")  # 75, 8,990, 13.8; not a hash's digits


def records() -> dict[str, str]:
    """docs/measurements.md's sections by GitHub anchor: each heading's text up to the next heading."""
    parts = re.split(r"^#+ (.+)$", MEASUREMENTS.read_text(), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-"): text
            for heading, text in zip(parts[1::2], parts[2::2])}


def unrecorded(claim: str, known: dict[str, str]) -> list[str]:
    """The numbers of ``claim`` (links, code and generated blocks aside: ``test_docblocks`` checks those against
    their records) that no record it cites holds, or a note that it cites none."""
    cited = RECORD.findall(claim)
    if not cited:
        return ["no record cited"]
    missing = [anchor for anchor in cited if anchor not in known]
    if missing:
        return [f"no record #{anchor}" for anchor in missing]
    recorded = set().union(*(NUMBER.findall(known[anchor]) for anchor in cited))
    prose = re.sub(r"\[[^\]]*\]\([^)]*\)", "", BLOCK.sub("", claim))  # links; blocks, written from their records
    return [number for number in NUMBER.findall(prose) if number not in recorded]


def how_long_rows() -> list[str]:
    """The README's "What it takes" and "How long" tables, a row each (their headers and rules aside)."""
    text = (REPO / "README.md").read_text()
    rows = []
    for header in ("| run | time | memory | disk | record |", "| what | time | record |"):
        rows += text[text.index(header):].split("\n\n")[0].splitlines()[2:]
    return rows


def cluster_paragraphs() -> list[str]:
    """The paragraphs of docs/cluster.md that state a measurement: those citing a record."""
    return [part for part in (REPO / "docs" / "cluster.md").read_text().split("\n\n") if RECORD.search(part)]


def test_every_number_of_the_readmes_how_long_table_is_in_the_record_its_row_cites():
    known = records()
    rows = how_long_rows()
    assert len(rows) >= 6
    bad = {row.split("|")[1].strip(): unrecorded(row, known) for row in rows}
    assert not any(bad.values()), {row: numbers for row, numbers in bad.items() if numbers}


def test_every_number_of_the_cluster_pages_measured_paragraphs_is_in_the_records_they_cite():
    known = records()
    paragraphs = cluster_paragraphs()
    assert len(paragraphs) >= 2
    bad = {paragraph[:60]: unrecorded(paragraph, known) for paragraph in paragraphs}
    assert not any(bad.values()), {start: numbers for start, numbers in bad.items() if numbers}


def test_a_number_with_no_record_and_a_row_citing_none_are_caught():
    known = {"ci": "rc 0 in 10 min 28 s (651 passed), SLURM leg 284 s"}
    assert unrecorded("| CI | 10 min 28 s, SLURM leg 284 s | [CI](docs/measurements.md#ci) |", known) == []
    assert unrecorded("| CI | 10 min 29 s, SLURM leg 284 s | [CI](docs/measurements.md#ci) |", known) == ["29"]
    assert unrecorded("| CI | 9,990 job-s | [CI](docs/measurements.md#ci) |", known) == ["9,990"]
    assert unrecorded("| CI | 10 min 28 s | 2026-11-27 |", known) == ["no record cited"]
    assert unrecorded("| CI | 10 min | [CI](docs/measurements.md#cii) |", known) == ["no record #cii"]
