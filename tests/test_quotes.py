"""Numbers the docs quote from a run's cubes (iclab.report.quotes, experiments' quotes.py, the quote blocks): formatting
and ltb_gap's quotes worked by hand, and the blocks read from a hand-written quotes.json."""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr

from iclab.publish import docblocks, docgallery
from iclab.errors import ExperimentError, UsageError
from iclab.experiments import quotes
from iclab.report.quotes import MINUS, Quote, fixed, kept, listed, percent, significant, span


def test_numbers_are_written_as_the_docs_write_them():
    assert fixed(-0.374, 2) == MINUS + "0.37"  # the minus sign, not a hyphen
    assert fixed(-0.001, 2) == "0.00"  # no negative zero
    assert fixed(2.8164, 3) == "2.816"
    assert significant(0.00614, 1) == "0.006" and significant(-1.62e-11, 2) == MINUS + "1.6e-11"
    assert kept(0.1) == "0.10" and significant(0.1) == "0.1"  # trailing zeros kept, or not
    assert kept(10.2) == "10" and kept(-0.00341) == MINUS + "0.0034" and kept(0.0996, 3) == "0.0996"
    assert percent(0.114) == "11%" and percent(1.003, 1) == "100.3%"
    assert listed([0.0, 0.114, 0.458], percent) == "0%, 11%, 46%"
    assert span([0.9, 0.85, 0.99], lambda v: fixed(v, 2)) == "0.85–0.99"  # smallest first, en dash
    assert span([0.501, 0.499], lambda v: fixed(v, 2)) == "0.50"  # one value where both ends show the same


def ltb_gap_cube() -> xr.Dataset:
    """Two ‖β*‖ (0, 3), two n (10, 20), two seeds; the trained LSA and LTB and the two optima's baselines.

    At n = 20, ‖β*‖ = 3: LSA 2.816 and 2.820 (mean 2.818) against lsa_optimal 2.800, LTB 1.4220 and 1.4240 (mean
    1.4230) against gd_beta_optimal 1.4200, closed forms: GD-β 1.44, LSA 2.88; at ‖β*‖ = 0 every risk is 1.40 and
    the LSA's 1.40 and 1.42 (1.4%)."""
    learners = ["lsa", "ltb", "gd_beta_optimal", "lsa_optimal"]
    risk = np.zeros((2, 2, 4, 2))  # (beta_star_norm, n, learner, seed)
    risk[:, 0] = 9.0  # n = 10: never the largest n, never quoted but through the gap
    risk[0, 1] = [[1.40, 1.42], [1.40, 1.40], [1.40, 1.40], [1.40, 1.40]]
    risk[1, 1] = [[2.816, 2.820], [1.4220, 1.4240], [1.4200, 1.4200], [2.800, 2.800]]
    sem = np.full_like(risk, 0.02)
    theory = np.array([[[1.44, 1.44], [1.44, 1.44]],  # (beta_star_norm, n, theory): GD-β, LSA optimum
                       [[1.44, 2.88], [1.44, 2.88]]])
    theory[1, 0, 1] = 3.00  # n = 10's LSA optimum at ‖β*‖ = 3: a gap of 3.00/1.44 - 1 = 108.3%
    return xr.Dataset(
        {"query_risk": (("beta_star_norm", "n", "learner", "seed"), risk),
         "query_risk_sem": (("beta_star_norm", "n", "learner", "seed"), sem),
         "theory_risk": (("beta_star_norm", "n", "theory"), theory)},
        coords={"beta_star_norm": [0.0, 3.0], "n": [10, 20], "learner": learners, "seed": [0, 1],
                "theory": ["gd_beta_optimum", "lsa_optimum"]})


def test_ltb_gaps_quotes_by_hand():
    found = {q.name: q.text for q in quotes("ltb_gap", ltb_gap_cube())}
    assert found["lsa_gap"] == "0%, 100%"  # 2.88 / 1.44 - 1 at n = 20 (n = 10's 108% is not the largest n)
    assert found["lsa_gap_n10"] == "0.0%, 108.3%" and found["lsa_gap_n20"] == "0.0%, 100.0%"
    assert found["lsa_trained"] == "2.818"  # the mean of 2.816 and 2.820, not seed 0's 2.816
    assert found["lsa_optimal"] == "2.800"
    assert found["ltb_trained"] == "1.4230" and found["gd_beta_on_prompts"] == "1.4200"
    assert found["gd_beta_exact"] == "1.440"
    assert found["gd_beta_prompts_off"] == "1.4%"  # 1 - 1.42 / 1.44 = 1.39%, below: not 1.42/1.44 - 1's −1.4%
    # the LSA over its optimum per ‖β*‖, mean over seeds: (1.41/1.40 - 1) = 0.71%, (2.818/2.8 - 1) = 0.64%
    assert found["lsa_above_optimal"] == "0.64%–0.71%"
    assert found["lsa_above_optimal_seed"] == "1.43%"  # seed 1 at ‖β*‖ = 0: 1.42/1.40 - 1, the largest single seed
    # both optima on the set against exact: GD-β 1 - 1.40/1.44 = 2.8%, 1 - 1.42/1.44 = 1.4%; LSA 1 - 1.4/1.44 = 2.8%,
    # 1 - 2.8/2.88 = 2.8%; in standard errors (0.02): 2.0, 1.0, 2.0, 4.0
    assert found["optima_under_exact"] == "1.4%–2.8%" and found["optima_under_exact_se"] == "1.0–4.0"


def test_a_quotes_py_naming_a_quote_twice_or_giving_no_quotes_is_refused(monkeypatch):
    import iclab.experiments.ltb_gap.quotes as module

    monkeypatch.setattr(module, "quotes", lambda cube: [Quote("a", "1", "m"), Quote("a", "2", "m")])
    with pytest.raises(ExperimentError, match=r"names a quote twice \(\['a', 'a'\]\)"):
        quotes("ltb_gap", None)
    monkeypatch.setattr(module, "quotes", lambda cube: [("a", "1")])
    with pytest.raises(ExperimentError, match="must return a list of Quote"):
        quotes("ltb_gap", None)


def test_an_experiment_without_a_quotes_py_quotes_nothing(tmp_path, monkeypatch):
    import iclab.experiments as experiments

    monkeypatch.setattr(experiments, "HERE", tmp_path)
    assert quotes("ltb_gap", None) == []


def write_quotes(root, experiments: dict) -> None:
    (root / "docs" / "gallery").mkdir(parents=True)
    (root / "docs" / "gallery" / "quotes.json").write_text(json.dumps({"experiments": experiments}))


def test_quote_and_quotes_blocks_by_hand(tmp_path):
    write_quotes(tmp_path, {"e": {"gap": {"text": "0%, 11%", "meaning": "the gap"},
                                  "risk": {"text": "2.816", "meaning": "the risk"}}})
    page = "x <!-- iclab:quote e.risk -->old<!-- /iclab:quote --> y\n<!-- iclab:quotes e -->\n<!-- /iclab:quotes -->\n"
    assert docblocks.render(page, tmp_path) == (
        "x <!-- iclab:quote e.risk -->2.816<!-- /iclab:quote --> y\n<!-- iclab:quotes e -->\n"
        "| quantity (from the gallery's cube) | value |\n|---|---|\n| the gap | 0%, 11% |\n| the risk | 2.816 |\n"
        "<!-- /iclab:quotes -->\n")
    with pytest.raises(UsageError, match="block quote e.slope: e quotes no 'slope' \\(it quotes gap, risk\\)"):
        docgallery.quote_value("e.slope", tmp_path)
    with pytest.raises(UsageError, match="block quotes f: no quotes of experiment 'f' in docs/gallery/quotes.json "
                                         "\\(it has e\\)"):
        docgallery.quotes_table("f", tmp_path)


def test_table_1s_paper_values_are_the_papers():
    """Zhang, Wu, Bartlett 2024, Table 1 (../shared/reference/papers.md): GPT2 0.003 and 0.024 without / with the
    MLP removed at β* = 0, 0.013 and 8.871 at β* ≠ 0."""
    from iclab.experiments.ltb_table1.quotes import paper_quotes

    assert {q.name: q.text for q in paper_quotes()} == {
        "paper_gpt2_beta0": "0.003", "paper_gpt2_nomlp_beta0": "0.024",
        "paper_gpt2_beta5": "0.013", "paper_gpt2_nomlp_beta5": "8.871"}


def test_a_value_read_off_a_cube_typed_on_a_quoting_page_is_found_outside_a_quote_only(tmp_path):
    """Planted: a 4-digit value is found; the same in a quote block, in code, in a link's target, a one-digit
    setting (0.001), an arXiv id and a two-decimal value are not; only README and the experiment pages are read."""
    typed = "the risk is 1.4405 here"
    assert docblocks.unquoted(typed) == ["a cube's value: 1.4405"]
    assert docblocks.unquoted(f"{MINUS}0.815 and 2.000") == [f"a cube's value: {MINUS}0.815", "a cube's value: 2.000"]
    assert docblocks.unquoted("0.045 and 0.005") == ["a cube's value: 0.045"]  # two significant digits, not one
    assert docblocks.unquoted("<!-- iclab:quote e.r -->1.4405<!-- /iclab:quote --> `1.4405` [a](x/1.4405)") == []
    assert docblocks.unquoted("a step of 0.001, arXiv:2402.14951, [p](https://arxiv.org/abs/2402.14951), 0.37") == []
    (tmp_path / "docs" / "experiments").mkdir(parents=True)
    for page in ("README.md", "docs/experiments/a.md", "docs/cubes.md"):
        (tmp_path / page).write_text(typed)
    assert docblocks.typed_numbers(tmp_path) == {page: ["a cube's value: 1.4405"]
                                                 for page in ("README.md", "docs/experiments/a.md")}
