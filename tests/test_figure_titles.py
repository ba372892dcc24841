"""Figure titles no stronger than the claims table: a title (the figure's or a panel's) that asserts an effect does
so through a phrase its figure declares in ``TITLE_CLAIMS``, mapped to a row of the run's claims table
(``docs/gallery/claims.md``) whose verdict is "holds"; every other title describes what is drawn. The titles are
those drawn on tests/test_figure_seeds.py's hand-built cubes (their words do not depend on the values)."""

from __future__ import annotations

import importlib
import re
import sys

import pytest
from conftest import REPO
from test_figure_seeds import CUBES, synthetic_cube

from iclab.report import plots

ASSERTING = re.compile(r"\b(must|learns|reaches|beats|tolerated|helps|grows|needs|moves|finds|converges|matches|stays|"
                       r"stops|follows|degrades|depends|spikes|falls|covers|spans)\b")


def verdicts(table: str) -> dict[str, str]:
    """Each row of a claims table (Markdown): its claim text → its verdict (the first word: holds, fails, …)."""
    rows = {}
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 5 and cells[3] and not set(cells[0]) <= {":", "-"}:
            rows[cells[0]] = cells[3].split()[0]
    return rows


def unbacked(titles: list[str], declared: dict[str, str], rows: dict[str, str]) -> list[str]:
    """The asserting words of ``titles`` outside a declared phrase, and the declared phrases whose row is missing or
    does not hold, each as a message."""
    problems = []
    for title in titles:
        for word in ASSERTING.finditer(title):
            covering = [phrase for phrase in declared
                        if 0 <= word.start() - title.find(phrase) < len(phrase) and phrase in title]
            if not covering:
                problems.append(f"{title!r}: {word[0]!r} asserts, and no TITLE_CLAIMS phrase covers it")
    for phrase, claim in declared.items():
        found = [verdict for text, verdict in rows.items() if text.startswith(claim)]
        if found != ["holds"] * len(found) or not found:
            problems.append(f"{phrase!r} → {claim!r}: rows {found or 'none'} (a title may state only a row that holds)")
    return problems


def titles_of(name: str, monkeypatch) -> list[str]:
    import matplotlib.pyplot as plt

    module = importlib.import_module(f"iclab.experiments.{name}.figure")
    drawn = []
    for loaded in list(sys.modules.values()):  # the module that draws it may be another experiment's
        if loaded is not plots and getattr(loaded, "save", None) is plots.save:
            monkeypatch.setattr(loaded, "save", lambda fig, png, cube: drawn.append(fig))
    if name == "single_index":  # its panel of claims needs seeds that differ (tests/test_figure_seeds.py)
        monkeypatch.setattr(module, "d_claims", lambda fig, cube: None)
    module.figure(synthetic_cube(name), "unused.png")
    fig = drawn.pop()
    titles = [fig._suptitle.get_text() if fig._suptitle else ""] + [ax.get_title() for ax in fig.axes]
    plt.close(fig)
    return [title for title in titles if title]


def test_the_rule_by_hand():
    rows = {"LTB reaches the optimum (n = 20) (paper)": "holds", "the span covers the basis (paper)": "inconclusive"}
    assert unbacked(["LTB reaches the optimum; risk against n"], {"LTB reaches the optimum": "LTB reaches"}, rows) == []
    assert unbacked(["risk against n, and the error"], {}, rows) == []
    assert unbacked(["pretraining learns the basis"], {}, rows) == [
        "'pretraining learns the basis': 'learns' asserts, and no TITLE_CLAIMS phrase covers it"]
    assert unbacked(["the span covers the basis"], {"the span covers the basis": "the span covers"}, rows) == [
        "'the span covers the basis' → 'the span covers': rows ['inconclusive'] (a title may state only a row that "
        "holds)"]


@pytest.mark.parametrize("name", sorted(CUBES))
def test_each_figures_titles_state_only_claims_that_hold(name, monkeypatch):
    module = importlib.import_module(f"iclab.experiments.{name}.figure")
    rows = verdicts((REPO / "docs" / "gallery" / "claims.md").read_text())
    assert len(rows) > 70
    assert unbacked(titles_of(name, monkeypatch), module.TITLE_CLAIMS, rows) == []
