"""Every page as GitHub and PyPI render it (issue 94): GitHub's own parser (cmark-gfm, through ``cmarkgfm``) for every
page, and PyPI's (``readme_renderer``, comrak then nh3) for README.md, the project's ``readme``. A page renders right
when its shown text has no marker and no raw Markdown, every table row of its source has its header's number of
cells as GFM counts them (GFM pads a short row and drops a long row's extra cells, so the HTML cannot tell), and no
line begins with a marker that has text beside it (such a line opens a raw-HTML block: the paragraph is cut there and
the line is shown raw). Each check is shown to catch a planted page first.

The history page (docs/measurements-history.md) is left out: it is kept as it was written, session by session, and
its old markers are not rewritten (tests/test_docs_markup.py leaves it out for the same reason)."""

import re
from html.parser import HTMLParser
from pathlib import Path

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from readme_renderer.markdown import render as pypi_render

ROOT = Path(__file__).resolve().parents[1]
HISTORY = ROOT / "docs" / "measurements-history.md"
PAGES = [page for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))] if page != HISTORY]

FENCE = re.compile(r"^ {0,3}(```|~~~)")
# What shown text must not hold: a marker (its comment shown as text), Markdown left raw (bold, a link, a code span,
# an emphasised word)
RAW = {"a marker": re.compile(r"<!--|-->|iclab:"), "raw bold": re.compile(r"\*\*|__"),
       "a raw link": re.compile(r"\]\("), "a raw code span": re.compile(r"`"),
       "raw emphasis": re.compile(r"(?<![\w*])\*[^\s*](?:[^*\n]*[^\s*])?\*(?![\w*])")}
# A line's start as a block sees it: indentation, block quotes, list markers (a list item's text is a block of its own)
LINE_START = re.compile(r"^(?: {0,3}>)* *(?:(?:[-+*]|\d{1,9}[.)]) +)*")
COMMENT = re.compile(r"<!--.*?-->")


class ShownText(HTMLParser):
    """The text a reader sees: every text node outside code and preformatted blocks; comments are hidden."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.code_depth, self.lines = 0, []

    def handle_starttag(self, tag, attrs):
        self.code_depth += tag in ("code", "pre")

    def handle_endtag(self, tag):
        self.code_depth -= tag in ("code", "pre")

    def handle_data(self, data):
        if not self.code_depth:
            self.lines.append(data)


def shown_text(html: str) -> str:
    parser = ShownText()
    parser.feed(html)
    return "".join(parser.lines)


def github_html(markdown: str) -> str:
    """The page as GitHub renders it: cmark-gfm with its extensions, raw HTML kept (GitHub hides comments)."""
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


def shown_faults(html: str) -> list[str]:
    """Each piece of raw Markdown or marker in the text ``html`` shows, with its line of shown text."""
    faults = []
    for line in shown_text(html).splitlines():
        faults += [f"{kind}: {line.strip()[:100]!r}" for kind, pattern in RAW.items() if pattern.search(line)]
    return faults


def outside_fences(markdown: str) -> list[tuple[int, str]]:
    """The numbered lines of ``markdown`` outside fenced code."""
    lines, fenced = [], False
    for number, line in enumerate(markdown.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append((number, line))
    return lines


def cells(row: str) -> int:
    """A table row's cells as GFM counts them: split at every pipe not escaped by a backslash, even inside code spans
    and HTML comments; a leading and a trailing pipe open and close the row."""
    parts = re.split(r"(?<!\\)\|", row.strip())
    return len(parts) - (parts[0] == "") - (len(parts) > 1 and parts[-1] == "")


DELIMITER = re.compile(r"^ {0,3}\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")


def table_faults(markdown: str) -> list[str]:
    """Each table row of the source whose cell count is not its header's (a row ends a table at a blank line)."""
    lines, faults = outside_fences(markdown), []
    for at in range(1, len(lines)):
        number, line = lines[at]
        header_number, header = lines[at - 1]
        if not (DELIMITER.match(line) and "|" in line and "|" in header):
            continue
        width = cells(header)
        for row_number, row in lines[at + 1:]:
            if not row.strip() or "|" not in row:
                break
            if cells(row) != width:
                faults.append(f"{row_number}: {cells(row)} cells under a header of {width}: {row.strip()[:80]!r}")
    return faults


def cut_faults(markdown: str) -> list[str]:
    """Each line that begins with a comment and shows text beside it: it opens a raw-HTML block, which cuts the
    paragraph there and shows the line's Markdown raw. A line of comments alone (a block's opening or closing
    marker) shows nothing and is allowed."""
    faults = []
    for number, line in outside_fences(markdown):
        text = line[LINE_START.match(line).end():]
        if text.startswith("<!--") and COMMENT.sub("", text).strip():
            faults.append(f"{number}: a line that begins with a marker: {line.strip()[:80]!r}")
    return faults


def page_faults(markdown: str) -> list[str]:
    return shown_faults(github_html(markdown)) + table_faults(markdown) + cut_faults(markdown)


# planted pages: one fault of each kind, each beside a correct version of itself
TABLE = "| run | time |\n|---|---|\n| a | <!-- iclab:record r.json{}field -->5 s<!-- /iclab:record --> |\n"
PARAGRAPH = ("The run took\n{}<!-- iclab:value run.wall -->5 s<!-- /iclab:value --> on **two** cores, as "
             "[recorded](docs/measurements.md).\n")


@pytest.mark.parametrize("page, fixed, kinds", [
    (TABLE.format("|"), TABLE.format(r"\|"), {"a marker", "cells under a header"}),
    (PARAGRAPH.format(""), PARAGRAPH.format("took "), {"raw bold", "a raw link", "begins with a marker"}),
    ("Text with *emphasis* left `raw`\n\n    an indented `code` block\n", "Text with *emphasis*, shown\n", None),
], ids=["a pipe in a table's marker", "a line that begins with a marker", "raw Markdown in a raw HTML block"])
def test_a_planted_fault_of_each_kind_is_caught_and_its_fix_passes(page, fixed, kinds):
    found = page_faults(page)
    if kinds is None:  # a raw HTML block shows its Markdown as typed; code shows none
        html_block = f"<div>\nText with *emphasis* left `raw` and **bold**\n</div>\n\n{page}"
        found = page_faults(html_block)
        assert {f.split(":")[0] for f in found} == {"raw emphasis", "a raw code span", "raw bold"}, found
    else:
        assert {kind for kind in kinds if any(kind in fault for fault in found)} == kinds, found
    assert page_faults(fixed) == []


def test_gfm_counts_a_pipe_inside_a_code_span_or_comment_as_a_cell_break():
    """The cell count is GFM's own: a row that cmark-gfm renders with fewer cells than it has is one that
    ``cells`` counts long (the header's 2 cells, a row of 3 by the pipe in its comment)."""
    page = "| a | b |\n|---|---|\n| `x|y` | 2 |\n"
    assert cells("| `x|y` | 2 |") == 3 and cells(r"| `x\|y` | 2 |") == 2
    assert github_html(page).count("<td>") == 2  # GFM keeps the header's 2 cells: the row's third is dropped
    assert len(table_faults(page)) == 1


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_every_page_renders_as_github_shows_it(page):
    assert page_faults(page.read_text()) == []


def test_readme_renders_as_pypi_shows_it():
    """PyPI renders README.md (pyproject's ``readme``) with comrak and cleans it with nh3: the same shown-text check."""
    html = pypi_render((ROOT / "README.md").read_text())
    assert html is not None and "<table>" in html
    assert shown_faults(html) == []


def test_a_table_rows_escaped_pipe_is_its_arguments_pipe():
    """``\\|`` in a table row's marker reads the record ``|`` reads in a sentence: the same value, and the row keeps
    its header's cells (with the plain pipe it would not)."""
    from iclab.publish.docblocks import render

    arg = "bf16_lstm_paths.json{}torch_cpu_capability"
    sentence = f"On <!-- iclab:record {arg.format('|')} -->?<!-- /iclab:record -->.\n"
    row = f"| cpu | capability |\n|---|---|\n| here | <!-- iclab:record {arg.format(chr(92) + '|')} -->?<!-- /iclab:record --> |\n"
    value = re.search(r"-->(.*?)<!--", render(sentence, ROOT)).group(1)
    assert value in ("AVX2", "AVX512", "AVX512_VNNI", "DEFAULT") or value.startswith(("AVX", "SVE", "ZVECTOR"))
    assert re.search(r"-->(.*?)<!--", render(row, ROOT)).group(1) == value
    assert table_faults(render(row, ROOT)) == [] and len(table_faults(row.replace(chr(92), ""))) == 1


def test_the_front_page_stays_short_and_names_its_licence_and_citation_on_its_first_screen():
    """README.md within 250 lines; its first screen (the title's paragraph) links the licence and CITATION.cff."""
    text = (ROOT / "README.md").read_text()
    first_screen = text.split("\n## ", 1)[0]
    assert len(text.splitlines()) <= 250
    assert "[LICENSE](LICENSE)" in first_screen and "[CITATION.cff](CITATION.cff)" in first_screen
