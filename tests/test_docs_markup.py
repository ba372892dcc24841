"""The docs render as written on GitHub, and every repository path they or the configs' comments name exists. Each
check is shown to fail on a planted line before it passes on the pages."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
PAGES = [page for page in PAGES if page.name != "measurements-history.md"]  # history: kept as it was written
CONFIGS = [ROOT / "config.yaml", *sorted((ROOT / "config").glob("*.yaml"))]

FENCED = re.compile(r"^```.*?^```", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`]*`")  # a code span may run over a line break
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\n]*)\)")
LINK_TARGET = re.compile(r"https?://\S+|#[\w-]+|[\w./-]+(#[\w-]+)?")  # a URL, an anchor or a repository path
HTML_TAG = re.compile(r"<[A-Za-z/][^>\n]*>")  # what GitHub takes for a tag (and strips); comments are hidden
REPO_PATH = re.compile(
    r"(?<![\w/.~-])((?:src|tests|benchmarks|docs|config|workflow|cluster|profiles|\.ci)/[\w./-]*)(?![\w<{*])")


def prose(markdown: str) -> str:
    """``markdown`` without its fenced blocks and code spans (blanked, so that line numbers hold)."""
    blank = lambda match: re.sub(r"[^\n]", " ", match.group(0))  # noqa: E731
    return CODE_SPAN.sub(blank, FENCED.sub(blank, markdown))


def markup_faults(markdown: str) -> list[str]:
    """Each line of prose that GitHub would render wrongly: a bracket pair followed by a parenthesis that is not a
    link (a formula such as E[Λ²](E[ΓΛ²])⁻¹ loses half to a link), an HTML-tag-like <word> (stripped), raw TeX
    ``^{`` or ``_{`` (shown as typed, braces and all)."""
    faults = []
    for number, line in enumerate(prose(markdown).splitlines(), 1):
        faults += [f"{number}: link-shaped {m.group(0)!r}" for m in LINK.finditer(line)
                   if not LINK_TARGET.fullmatch(m.group(1))]
        faults += [f"{number}: tag-shaped {m.group(0)!r}" for m in HTML_TAG.finditer(line)]
        faults += [f"{number}: raw TeX {line.strip()[:60]!r}" for _ in range(line.count("^{") + line.count("_{"))]
    return faults


def missing_paths(text: str) -> list[str]:
    """The repository paths ``text`` names that do not exist (a stem names the files it begins: ``--out`` stems)."""
    missing = []
    for match in REPO_PATH.finditer(text):
        path = match.group(1).rstrip(".")
        if not (ROOT / path).exists() and not list((ROOT / path).parent.glob(Path(path).name + ".*")):
            missing.append(path)
    return missing


def config_comments(path: Path) -> str:
    return "\n".join(line.split("#", 1)[1] for line in path.read_text().splitlines() if "#" in line)


@pytest.mark.parametrize("planted", ["K = E[Λ²](E[ΓΛ²])⁻¹ is the limit", "gpu_pack_<card>.json is written",
                                     "frequencies 2^{s_jk}", "the gradient ∇_{θ_m}L"])
def test_a_planted_markup_fault_is_found_and_its_code_span_is_not(planted):
    assert len(markup_faults(f"text\n{planted}\n")) == 1
    assert markup_faults(f"text `{planted}`\n") == []


def test_every_page_renders_as_written():
    faults = {page.relative_to(ROOT).as_posix(): markup_faults(page.read_text()) for page in PAGES}
    assert {page: found for page, found in faults.items() if found} == {}


def test_every_repository_path_in_the_docs_and_config_comments_exists():
    assert missing_paths("see `benchmarks/results/no_such_file.json` and src/iclab/stats/looks.py") == [
        "benchmarks/results/no_such_file.json"]
    named = {page.relative_to(ROOT).as_posix(): missing_paths(page.read_text()) for page in PAGES}
    named |= {path.relative_to(ROOT).as_posix(): missing_paths(config_comments(path)) for path in CONFIGS}
    assert {where: paths for where, paths in named.items() if paths} == {}
