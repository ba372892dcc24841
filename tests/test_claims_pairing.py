"""Which learner each claim row reads: every experiment whose claims pair a trained model with a limit or an optimum,
run on a hand-built cube of 3 seeds in which the right partner and every wrong one give different verdicts.

Each cube has, per group of prompts, a difficulty shared by every learner and seed (one evaluation set: sd 0.8 a
group, so that unpaired, against the exact value, a row's interval is ~±0.28, wider than any 5% margin here), each
learner's own mean at each sweep point (set apart by ≥ 0.2 from every other learner's, and from its own at another
point), and for trained learners a little noise per seed (sd 0.004). A row that reads the right learners holds; one
paired with another learner, another sweep point or the exact value (unpaired) does not. Each mutation of a claims
module that pairs a row with another predictor (the LTB with the LSA's optimum, a shift with the base condition's
limit, the limit with least squares, no partner) fails here. The experiments whose rows compare learners with one
another (ltb_table1, mean_field, zfb_figure1, single_index) are listed too: each row reads the learners, cases and
points its words name. Every other experiment (issue 96) has its test on a cube whose cells each hold their own value
(``coded``), so a row read at another layer, κ, T, octave, norm, step or learner reads another value: the probes
(probe_layers, probe_similarity, probe_illconditioned, probe_hidden_size), nonparametric_icl, single_index_subspace,
ltb_training, ltb_bayes_gap, gdbeta_flow and lsa_convergence; a last test keeps it so for every experiment."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import xarray as xr

from iclab import experiments
from iclab.stats.claims import Claim
from iclab.stats.estimates import exact, over_seeds

SEEDS, GROUPS = 3, 32
PROMPT_SD, SEED_SD = 0.8, 0.004


def paired_cube(rng, sweep: dict[str, list], learners: dict[str, str], mean) -> xr.Dataset:
    """risk, risk_sem, risk_groups over (*sweep, learner, seed, [prompt_group]) and query_risk(_sem) at the last
    position: ``sweep`` the cube's sweep dimensions with ``position`` last, ``learners`` name → kind ("trained" or
    "baseline"), ``mean(learner, point)`` the learner's value at a sweep point (a dict)."""
    shape = [len(values) for values in sweep.values()]
    prompts = PROMPT_SD * rng.standard_normal(shape + [1, GROUPS])  # (*sweep, seed, G): shared by all learners
    per_learner = []
    for name, kind in learners.items():
        means = np.reshape([mean(name, dict(zip(sweep, point))) for point in itertools.product(*sweep.values())],
                           shape)  # (*sweep,)
        seeds = SEED_SD * rng.standard_normal(shape + [SEEDS]) if kind == "trained" else np.zeros(shape + [SEEDS])
        per_learner.append(means[..., None, None] + seeds[..., None] + prompts)  # (*sweep, S, G)
    dims = (*sweep, "learner", "seed", "prompt_group")
    groups = xr.DataArray(np.stack(per_learner, axis=len(shape)), dims=dims,  # (*sweep, L, S, G)
                          coords={**sweep, "learner": list(learners), "seed": range(SEEDS)})
    groups = groups.transpose(*(d for d in dims if d not in ("position", "prompt_group")), "position", "prompt_group")
    truths = xr.DataArray(np.stack([[mean(name, dict(zip(sweep, point))) for name in learners]
                                    for point in itertools.product(*sweep.values())]).reshape(shape + [len(learners)]),
                          dims=(*sweep, "learner"))  # (*sweep, L): each learner's mean without the prompts' error
    risk = groups.mean("prompt_group")
    risk_sem = groups.std("prompt_group", ddof=1) / np.sqrt(GROUPS)
    last = {"position": sweep["position"][-1]}
    return xr.Dataset(
        {"risk": risk, "risk_sem": risk_sem, "risk_groups": groups, "truth": truths,
         "query_risk": risk.sel(last, drop=True), "query_risk_sem": risk_sem.sel(last, drop=True)},
        coords={"learner_kind": ("learner", list(learners.values()))},
    )


def means_at(cube: xr.Dataset, learner: str, **point) -> tuple[float, ...]:
    """A learner's risk per seed at ``point`` (one value for a baseline)."""
    values = cube.risk.sel(learner=learner, **point).transpose("seed").values
    return tuple(values) if str(cube.learner_kind.sel(learner=learner).values) == "trained" else (values[0],)


def estimate(cube: xr.Dataset, learner: str, prompts: str, **point):
    """What a claim reads for ``learner`` at ``point``: its risk per seed, paired by the groups of ``prompts``."""
    at = {"learner": learner, **point}
    return over_seeds(cube.risk.sel(at), cube.risk_sem.sel(at), prompts, cube.risk_groups.sel(at))


def check_rows(rows: list[Claim], cube: xr.Dataset, expected: dict[str, tuple[tuple, tuple]]) -> None:
    """Each row named in ``expected`` (a fragment of its claim → the (learner, point) its measured side reads and the
    (learner, point) it is paired with) reads exactly those values, paired prompt by prompt, and holds; a wrong
    partner (each other learner at the point, or the right one at another point) or none (the exact value alone)
    would not hold."""
    for fragment, ((learner, point), (partner, partner_point)) in expected.items():
        (row,) = [row for row in rows if fragment in row.claim]
        assert row.measured.per_seed == pytest.approx(means_at(cube, learner, **point)), fragment
        assert row.expected.per_seed == pytest.approx(means_at(cube, partner, **partner_point)), fragment
        assert row.expected.groups is not None, f"{fragment}: not paired prompt by prompt"
        assert row.verdict == "holds", (fragment, row.difference.interval(), row.margin)
        wrong = [(other, partner_point) for other in cube.learner.values if other not in (learner, partner)]
        wrong += [(partner, other) for other in other_points(cube, partner_point)]
        truth = exact(float(cube.truth.sel(learner=partner, **partner_point)))
        for mispaired in [estimate(cube, other, row.expected.prompts, **at) for other, at in wrong] + [truth]:
            claim = Claim(row.claim, row.source, row.measured, row.relation, mispaired, row.basis, row.margin,
                          row.margin_source)
            assert claim.verdict != "holds", (fragment, mispaired)


def other_points(cube: xr.Dataset, point: dict) -> list[dict]:
    """The same point with one sweep coordinate moved to another of its values (a row read at the wrong point)."""
    moved = []
    for dim, value in point.items():
        moved += [point | {dim: other} for other in cube[dim].values.tolist() if other != value]
    return moved


def ltb_gap_cube(rng) -> xr.Dataset:
    """ltb_gap at ‖β*‖ ∈ {0, 2}, n ∈ {10, 20}: the LTB at the GD-β optimum (1.0 at the top), the LSA at its class's
    (1.4); at β* = 0 the LSA at GD-β's (0.8), where its class's predictor is set apart (1.1; in theory they meet
    there) so that the two partners give different verdicts; every value × 1.5 at n = 10."""
    top = {"ltb": 1.0, "lsa": 1.4, "gd_beta": 1.9, "gd_beta_optimal": 1.0, "lsa_optimal": 1.4, "ols": 2.4,
           "zero": 3.0}
    zero = {"ltb": 0.6, "lsa": 0.8, "gd_beta": 1.5, "gd_beta_optimal": 0.8, "lsa_optimal": 1.1, "ols": 2.4,
            "zero": 2.0}
    kinds = {name: "trained" if name in ("ltb", "lsa", "gd_beta") else "baseline" for name in top}

    def mean(learner, point):
        return (top if point["beta_star_norm"] else zero)[learner] * (1.5 if point["n"] == 10 else 1.0)

    cube = paired_cube(rng, {"beta_star_norm": [0.0, 2.0], "n": [10, 20], "position": [20]}, kinds, mean)
    theory = {"gd_beta_optimum": "gd_beta_optimal", "lsa_optimum": "lsa_optimal", "bayes": "zero"}
    exact = [[[mean(learner, {"beta_star_norm": b, "n": n}) for learner in theory.values()] for n in (10, 20)]
             for b in (0.0, 2.0)]
    return cube.assign(theory_risk=(("beta_star_norm", "n", "theory"), exact),
                       theory_risk_sem=(("beta_star_norm", "n", "theory"), np.zeros_like(exact))
                       ).assign_coords(theory=list(theory))


def test_ltb_gap_pairs_each_trained_model_with_the_predictor_at_the_optimum_its_claim_names():
    cube = ltb_gap_cube(np.random.default_rng(1))
    rows = experiments.claims("ltb_gap", cube)
    top, zero = ({"beta_star_norm": norm, "n": 20, "position": 20} for norm in (2.0, 0.0))
    check_rows(rows, cube, {
        "trained LTB reaches the GD-β optimum": (("ltb", top), ("gd_beta_optimal", top)),
        "trained LSA reaches the LSA class's optimum": (("lsa", top), ("lsa_optimal", top)),
        "with β* = 0 the trained LSA reaches the GD-β optimum": (("lsa", zero), ("gd_beta_optimal", zero)),
    })
    assert len(rows) == 4  # and the verification against GD-β's exact optimum
    margins = {row.claim.split(" (")[0]: row.margin for row in rows}  # 5% of the exact optimum each row names
    assert margins["trained LTB reaches the GD-β optimum"] == pytest.approx(0.05 * 1.0)
    assert margins["trained LSA reaches the LSA class's optimum"] == pytest.approx(0.05 * 1.4)
    assert margins["with β* = 0 the trained LSA reaches the GD-β optimum"] == pytest.approx(0.05 * 0.8)
    edges = {row.claim.split(" (")[0]: row.row("ltb_gap")["basis"] for row in rows}
    assert sum("one edge: the risk cannot lie below the optimum of its class" in basis for basis in edges.values()) == 3
    assert "one edge" not in edges["trained LSA stays above the GD-β optimum when β* ≠ 0"]  # an ordering, no edge


def limit_cube(rng, sweep: dict[str, list], learners: dict[str, str], mean) -> xr.Dataset:
    """A cube with the trained LSA, its limit predictor on the same prompts and decoys, and the limit's exact error
    (``theory_error``) over the sweep, at every position the learners' means."""
    cube = paired_cube(rng, sweep, learners, mean)
    return cube.assign(theory_error=cube.truth.sel(learner="lsa_limit", drop=True))


def test_lsa_rates_pairs_the_trained_lsa_with_its_limit_at_the_largest_n_and_m():
    def mean(learner, point):
        base = {"lsa": 1.0, "lsa_limit": 1.0, "ols": 1.5}[learner]
        return base * (2.0 if point["n"] == 10 else 1.0) * (1.0 if point["position"] == 40 else 1.4)

    cube = limit_cube(np.random.default_rng(2), {"n": [10, 20], "position": [20, 40]},
                      {"lsa": "trained", "lsa_limit": "baseline", "ols": "baseline"}, mean)
    floors = np.array([0.2, 0.05])  # (n,): the slope row's exact and per-seed floors
    cube = cube.assign(theory_floor=("n", floors),
                       trained_theory_floor=(("n", "seed"), floors[:, None] * (1 + 0.01 * np.arange(SEEDS))))
    rows = experiments.claims("lsa_rates", cube)
    at = {"n": 20, "position": 40}
    check_rows(rows, cube, {"the trained LSA's error is that of the limit": (("lsa", at), ("lsa_limit", at))})


def test_lsa_shifts_pairs_the_trained_lsa_with_its_limit_under_each_shift():
    conditions = ["covariate c=1", "covariate c=2", "query covariance", "relu labels"]
    limits = dict(zip(conditions, (1.0, 3.0, 1.6, 2.2)))

    def mean(learner, point):
        limit = limits[point["condition"]] * (1.0 if point["position"] == 10 else 1.5)
        return {"lsa": limit, "lsa_limit": limit, "gpt2": 0.5 * limit, "ols": limit + 0.5}[learner]

    learners = {"lsa": "trained", "gpt2": "trained", "ols": "baseline", "lsa_limit": "baseline"}
    cube = limit_cube(np.random.default_rng(3), {"condition": conditions, "position": [5, 10]}, learners, mean)
    cube = cube.assign(covariate_scale=("condition", [1.0, 2.0, np.nan, np.nan]), train_n=("condition", [10] * 4))
    rows = experiments.claims("lsa_shifts", cube)
    check_rows(rows, cube, {
        what: (("lsa", at), ("lsa_limit", at))
        for what, at in (("under covariate scaling c = 2", {"condition": "covariate c=2", "position": 10}),
                         ("with a shifted query covariance", {"condition": "query covariance", "position": 10}),
                         ("with ReLU labels", {"condition": "relu labels", "position": 10}))
    })


def test_random_covariance_pairs_the_trained_lsa_with_the_limit_model():
    def mean(learner, point):
        return {"lsa": 1.2, "lsa_limit": 1.2, "ols": 0.2}[learner] * (1.0 if point["position"] == 40 else 1.6)

    learners = {"lsa": "trained", "ols": "baseline", "lsa_limit": "baseline"}
    cube = limit_cube(np.random.default_rng(4), {"n": [20], "position": [20, 40]}, learners, mean)
    learned = np.eye(3) + 0.01 * np.random.default_rng(5).standard_normal((1, SEEDS, 3, 3))  # (n, seed, row, col)
    cube = cube.assign(product_learned=(("n", "seed", "row", "col"), learned),
                       product_limit=(("n", "row", "col"), np.eye(3)[None]))
    rows = experiments.claims("random_covariance", cube)
    at = {"n": 20, "position": 40}
    check_rows(rows, cube, {"the trained LSA has the limit model's error": (("lsa", at), ("lsa_limit", at))})


def reads(row: Claim, measured: tuple[float, ...], expected: tuple[float, ...]) -> None:
    """A row compares exactly these per-seed values (a baseline's or a closed form's: one value)."""
    assert row.measured.per_seed == pytest.approx(measured), row.claim
    assert row.expected.per_seed == pytest.approx(expected), row.claim


def minus(a: tuple[float, ...], b: tuple[float, ...]) -> tuple[float, ...]:
    return tuple(np.subtract(a, b))


def test_ltb_table1_compares_gpt2_with_and_without_its_mlp_at_the_norms_its_words_name():
    """Table 1's rows on a hand-built cube: with the MLP 1.0 against 2.0 without it at ‖β*‖ = 3, 0.5 and 0.55 at
    β* = 0 (the Bayes risk 0.5): each row reads the learners and norms it names, and the paired orderings hold."""
    values = {3.0: {"gpt2": 1.0, "gpt2_nomlp": 2.0}, 0.0: {"gpt2": 0.5, "gpt2_nomlp": 0.55}}
    cube = paired_cube(np.random.default_rng(6), {"beta_star_norm": [0.0, 3.0], "position": [4]},
                       {"gpt2": "trained", "gpt2_nomlp": "trained"},
                       lambda learner, point: values[point["beta_star_norm"]][learner])
    theory = [[0.5, 2.0], [0.5, 11.0]]  # (‖β*‖, theory): the Bayes risk and E y_q²
    cube = cube.assign(theory_risk=(("beta_star_norm", "theory"), theory),
                       theory_risk_sem=(("beta_star_norm", "theory"), np.zeros((2, 2)))
                       ).assign_coords(theory=["bayes", "zero"])
    with_mlp, without = ({norm: means_at(cube, learner, beta_star_norm=norm, position=4) for norm in (0.0, 3.0)}
                         for learner in ("gpt2", "gpt2_nomlp"))
    beats, costs, near, near_without = experiments.claims("ltb_table1", cube)
    reads(beats, with_mlp[3.0], without[3.0])
    reads(costs, minus(without[3.0], with_mlp[3.0]), minus(without[0.0], with_mlp[0.0]))
    reads(near, with_mlp[0.0], (0.5,))
    reads(near_without, without[0.0], (0.5,))
    assert "without MLP" in near_without.claim and "without" not in near.claim
    assert beats.verdict == costs.verdict == "holds"
    assert all("cannot lie below the Bayes risk" in row.row("ltb_table1")["basis"] for row in (near, near_without))
    assert not any("one edge" in row.row("ltb_table1")["basis"] for row in (beats, costs))


def test_mean_field_compares_the_attention_model_with_the_learners_its_words_name():
    """The mean-field rows that compare learners, on a hand-built cube of three cases: each reads the case and the
    learners it names (every learner's value distinct in each case)."""
    cases = ["realisable", "misaligned", "norm_sq"]
    learners = {"attention": "trained", "zero": "baseline", "random_features_ridge": "baseline", "krr": "baseline"}
    means = {"realisable": (0.5, 2.0, 1.0, 1.5), "misaligned": (1.2, 2.5, 1.8, 0.8), "norm_sq": (2.0, 2.05, 3.0, 2.6)}
    cube = paired_cube(np.random.default_rng(7), {"case": cases, "position": [20]}, learners,
                       lambda learner, point: dict(zip(learners, means[point["case"]]))[learner])
    trained, steps = ["attention"], [0, 60]
    end = 0.05 * (1 + 0.1 * np.arange(SEEDS))  # (seed,): the population risk falls about 20-fold from 1
    population = np.stack(np.broadcast_arrays(1.0, end), axis=-1) * np.ones((3, 1, 1, 1))  # (case, trained, seed, step)
    angles = 5.0 + np.arange(SEEDS) * np.ones((3, 1, 1))  # (case, trained, seed), degrees
    cube = cube.assign(population_risk=(("case", "trained", "seed", "step"), population),
                       principal_angle=(("case", "trained", "seed"), angles)).assign_coords(trained=trained, step=steps)
    rows = experiments.claims("mean_field", cube)

    def at(case: str, learner: str) -> tuple[float, ...]:
        return means_at(cube, learner, case=case, position=20)

    expected = {
        "the attention model beats the zero predictor": (at("realisable", "attention"), at("realisable", "zero")),
        "learned features beat random ones": (at("realisable", "attention"),
                                              at("realisable", "random_features_ridge")),
        "misaligned (k° > k)": (at("misaligned", "krr"), at("misaligned", "attention")),
        "nonlinear task ‖f°‖²": (at("norm_sq", "attention"), at("norm_sq", "zero")),
    }
    for fragment, (measured, partner) in expected.items():
        (row,) = [row for row in rows if fragment in row.claim]
        reads(row, measured, partner)
        assert row.verdict == "holds", fragment


def test_zfb_figure1_compares_the_tests_and_trainings_its_words_name():
    """Zhang–Frei–Bartlett's Figure 1 rows on a hand-built cube (d = 2, N = 4, positions 4 and 6): GPT-2's error/d
    at each (train, test, M) distinct; each row reads the training, test and length it names."""
    tests, trains = ["fixed", "random c=4"], ["fixed", "random"]
    base = {("fixed", "fixed"): 0.2, ("fixed", "random c=4"): 1.6, ("random", "fixed"): 0.4,
            ("random", "random c=4"): 0.9}

    def mean(learner, point):
        value = base[point["train"], point["test"]] * (3.0 if point["position"] == 6 else 1.0)
        return {"gpt2": value, "zero": 4.0}[learner]

    cube = paired_cube(np.random.default_rng(8), {"n": [4], "test": tests, "train": trains, "position": [4, 6]},
                       {"gpt2": "trained", "zero": "baseline"}, mean)
    cube = cube.assign(d=(("n", "test", "train"), np.full((1, 2, 2), 2.0)))
    rows = experiments.claims("zfb_figure1", cube)

    def error(test: str, position: int, train: str = "fixed") -> tuple[float, ...]:
        return tuple(np.divide(means_at(cube, "gpt2", n=4, test=test, train=train, position=position), 2.0))

    expected = {
        "near least squares at M = N": (error("fixed", 4), (0.0,)),
        "grows on scaled random covariances": (error("random c=4", 4), error("fixed", 4)),
        "training on random covariances helps": (error("random c=4", 4, "random"), error("random c=4", 4)),
        "beyond the training length the error spikes": (error("fixed", 6), error("fixed", 4)),
    }
    assert len(rows) == len(expected)
    for fragment, (measured, partner) in expected.items():
        (row,) = [row for row in rows if fragment in row.claim]
        reads(row, measured, partner)


def test_single_index_compares_the_cases_and_learners_its_words_name():
    """Oko, Song, Suzuki, Wu's rows on a hand-built cube of three cases (d = 3 and 4 at r = 1; r = 2 at d = 3): risks
    over the zero predictor's, on the last bin of prompt lengths (binned) or at the final query (the two-layer net);
    each row reads the cases and learners it names."""
    cases, bins = ["d=3, r=1", "d=4, r=1", "d=3, r=2"], [0, 1, 2]
    learners = {"two_stage": "trained", "gpt2": "trained", "krr": "baseline", "two_layer_net": "baseline",
                "zero": "baseline"}
    base = dict(zip(learners, (0.3, 0.4, 0.9, 1.1, 2.0)))

    def mean(learner, point):
        return base[learner] * (1 + 0.3 * cases.index(point["case"])) * (1 + 0.1 * point["position"])

    binned = paired_cube(np.random.default_rng(9), {"case": cases, "position": bins}, learners, mean)
    binned = binned[["risk", "risk_sem", "risk_groups"]].rename(position="position_bin")
    binned = binned.rename(risk="binned_risk", risk_sem="binned_risk_sem", risk_groups="binned_risk_groups")
    at_query = paired_cube(np.random.default_rng(10), {"case": cases, "position": [8]}, learners, mean)
    cube = xr.merge([binned, at_query.drop_vars("truth")], compat="no_conflicts", join="outer").assign_coords(
        bin_first=("position_bin", [4, 5, 6]), bin_last=("position_bin", [4, 5, 8]))
    cube = cube.assign(d=("case", [3, 4, 3]), r=("case", [1, 1, 2]))
    rows = experiments.claims("single_index", cube)

    def relative(case: str, learner: str) -> tuple[float, ...]:
        """The last bin's risk per seed over the zero predictor's (its mean over seeds)."""
        at = cube.binned_risk.sel(case=case, position_bin=2)
        values = at.sel(learner=learner).values / float(at.sel(learner="zero").mean())
        return tuple(values) if learners[learner] == "trained" else (values[0],)

    def final(case: str, learner: str) -> tuple[float, ...]:
        zero = float(cube.query_risk.sel(case=case, learner="zero").mean())
        return tuple(np.divide(means_at(cube, learner, case=case, position=8), zero))

    low, high, wider = cases
    expected = {
        "two-stage transformer's risk does not depend on d": (minus(relative(high, "two_stage"),
                                                                    relative(low, "two_stage")), (0.0,)),
        "GPT-2's risk does not depend on d": (minus(relative(high, "gpt2"), relative(low, "gpt2")), (0.0,)),
        "kernel ridge on the test prompt degrades": (relative(high, "krr"), relative(low, "krr")),
        "two-stage transformer beats kernel ridge": (relative(high, "two_stage"), relative(high, "krr")),
        "GPT-2 beats kernel ridge": (relative(high, "gpt2"), relative(high, "krr")),
        "a two-layer net trained on the test prompt degrades": (final(high, "two_layer_net"),
                                                                final(low, "two_layer_net")),
        "two-stage transformer beats the two-layer net": (final(high, "two_stage"), final(high, "two_layer_net")),
        "GPT-2 beats the two-layer net": (final(high, "gpt2"), final(high, "two_layer_net")),
        "risk grows with r": (relative(wider, "two_stage"), relative(low, "two_stage")),
    }
    assert len(rows) == len(expected)
    for fragment, (measured, partner) in expected.items():
        (row,) = [row for row in rows if fragment in row.claim]
        reads(row, measured, partner)


def test_ltb_bayes_gap_reads_each_ratio_at_the_snr_and_n_its_words_name_as_verifications():
    """ltb_bayes_gap on a hand-made cube whose risks differ at every (SNR, predictor, n): the "bounded in n" row is
    GD-β's closed form over the Bayes integral at the largest SNR, n = 8 against n = 2 (8 // 4); the "grows with the
    SNR" row the Monte-Carlo risks (a cube variable of their own) at n = 8, the largest SNR against the smallest. Both
    are verifications (closed-form predictors, no training: they cannot come out otherwise by chance), not claims."""
    rng = np.random.default_rng(7)
    snr, positions, predictors = [0.5, 2.0], np.arange(9), ["gd_beta_optimum", "bayes"]
    theory, mc = rng.uniform(1.0, 10.0, (2, len(snr), len(predictors), len(positions)))  # (S, P, N) each
    dims = ("snr", "predictor", "position")
    cube = xr.Dataset({"theory_risk": (dims, theory), "theory_risk_sem": (dims, 1e-6 * theory),
                       "mc_risk": (dims, mc), "mc_risk_sem": (dims, 1e-6 * mc)},
                      coords={"snr": snr, "predictor": predictors, "position": positions})
    bounded, grows = experiments.claims("ltb_bayes_gap", cube)
    assert "SNR 2, n = 8 against n = 2" in bounded.claim and "SNR 2 against 0.5, n = 8" in grows.claim
    assert bounded.measured.value == pytest.approx(theory[1, 0, 8] / theory[1, 1, 8])
    assert bounded.expected.value == pytest.approx(theory[1, 0, 2] / theory[1, 1, 2])
    assert grows.measured.value == pytest.approx(mc[1, 0, 8] / mc[1, 1, 8])
    assert grows.expected.value == pytest.approx(mc[0, 0, 8] / mc[0, 1, 8])
    assert bounded.verification and grows.verification


def coded(rng, shape: tuple[int, ...]) -> np.ndarray:
    """Distinct values in (0.1, 0.9) for every cell of ``shape``: a row that reads another cell reads another value."""
    return 0.1 + 0.8 * rng.permutation(np.prod(shape)).reshape(shape) / np.prod(shape)


def test_single_index_subspace_reads_the_d_and_t1_its_words_name():
    """single_index_subspace on a cube whose energy and cosines differ in every (d, T₁, seed, angle): each row
    reads the largest d at the largest T₁ (the fewest for "more prompts"; the middle T₁ and both ends of d for "T₁
    must grow with d"), and the smallest principal cosine over the angles."""
    rng = np.random.default_rng(8)
    d, t1 = [8, 16, 32], [128, 512, 2048, 8192]
    energy, cosines = coded(rng, (3, 4, SEEDS)), coded(rng, (3, 4, SEEDS, 2))
    cube = xr.Dataset({"subspace_energy": (("d", "t1", "seed"), energy),
                       "principal_cosines": (("d", "t1", "seed", "principal_angle"), cosines),
                       "subspace_energy_chance": (("d", "t1"), np.repeat([[0.25], [0.125], [0.0625]], 4, axis=1))},
                      coords={"d": d, "t1": t1, "seed": range(SEEDS), "principal_angle": [0, 1]})
    carries, finds, more, grows = experiments.claims("single_index_subspace", cube)
    assert "d = 32, T₁ = 8192" in carries.claim and carries.measured.per_seed == pytest.approx(energy[2, 3])
    assert carries.expected.value == 0.0625
    assert "d = 32, T₁ = 8192" in finds.claim and finds.measured.per_seed == pytest.approx(cosines[2, 3].min(-1))
    assert "T₁ = 8192 against 128, d = 32" in more.claim
    assert more.measured.per_seed == pytest.approx(energy[2, 3])
    assert more.expected.per_seed == pytest.approx(energy[2, 0])
    assert "T₁ = 2048" in grows.claim and "d = 32 than at d = 8" in grows.claim  # t1[4 // 2]
    assert grows.measured.per_seed == pytest.approx(energy[2, 2])
    assert grows.expected.per_seed == pytest.approx(energy[0, 2])


def illconditioned_layers_cube(rng) -> tuple[xr.Dataset, dict]:
    """probe_illconditioned at κ = 100 and κ = 1, 4 layers, 3 seeds: each (κ, layer) peaks at its own Newton count
    and its own GD similarity, so a row read at another κ or layer reads another count or height."""
    newton, steps = np.arange(12), np.array([1, 2, 4, 8])
    best = {(100.0, layer): 2 + layer for layer in range(4)} | {(1.0, layer): 6 + layer for layer in range(4)}
    gd_height = {key: 0.80 + 0.01 * i for i, key in enumerate(best)}
    data = {}
    for name, grid, peak_of, height_of in (("newton", newton, best, lambda key: 0.9),
                                           ("gd", steps, {key: 4 for key in best}, gd_height.get)):
        values = np.stack([[height_of((kappa, layer)) - 0.03 * np.abs(grid - peak_of[(kappa, layer)])
                            for layer in range(4)] for kappa in (100.0, 1.0)])  # (κ, layer, J)
        groups = (values[:, None, :, :, None] + 0.001 * rng.standard_normal((2, SEEDS, 4, len(grid), GROUPS)))
        dims = ("condition_number", "seed", "layer", f"{'newton_iterations' if name == 'newton' else 'gd_steps'}")
        data[f"soe_{name}_groups"] = (dims + ("prompt_group",), groups)
        data[f"soe_{name}"] = (dims, groups.mean(-1))
    cube = xr.Dataset(data, coords={"condition_number": [100.0, 1.0], "seed": range(SEEDS), "layer": range(4),
                                    "newton_iterations": newton, "gd_steps": steps})
    return cube.expand_dims(d=[5], probed=["gpt2"]), {"best": best, "gd_height": gd_height}


def test_probe_illconditioned_reads_the_kappa_and_layers_its_words_name():
    """Its rows on a hand-built cube: "still grows with depth" reads κ = 100's best Newton count at the last layer (5)
    against layer 1 (3); "at least as well as GD" the last layer's best similarities at κ = 100 (0.9 against GD's
    0.83); the cross-run row κ = 100's last layer (5) against κ = 1's (9)."""
    cube, truth = illconditioned_layers_cube(np.random.default_rng(9))
    grows, as_well, cross = experiments.claims("probe_illconditioned", cube)
    assert "at κ = 100" in grows.claim and "layer 3 against layer 1" in grows.claim
    assert grows.measured.per_seed == (truth["best"][(100.0, 3)],) * SEEDS
    assert grows.expected.per_seed == (truth["best"][(100.0, 1)],) * SEEDS
    assert as_well.measured.value == pytest.approx(0.9, abs=0.002)
    assert as_well.expected.value == pytest.approx(truth["gd_height"][(100.0, 3)], abs=0.002)
    assert cross.measured.per_seed == (truth["best"][(100.0, 3)],) * SEEDS
    assert cross.expected.per_seed == (truth["best"][(1.0, 3)],) * SEEDS


def nonparametric_cube(rng) -> xr.Dataset:
    """nonparametric_icl at T = 2, 16, 1024 with the pretrained model, kernel ridge and a decoy (the Bayes posterior
    mean), 5 octaves of context lengths (1, 2–3, 4–7, 8–15, 16–32): every (T, learner, seed, octave) risk, every
    pretraining risk, residual and angle its own value; prompt groups centred on the binned risks."""
    tasks, learners, bins = [2, 16, 1024], ["feature_attention", "krr", "basis_bayes"], 5
    binned = 1.0 + coded(rng, (3, 3, SEEDS, bins))  # (T, L, S, B)
    noise = rng.standard_normal((3, 3, SEEDS, bins, GROUPS)) * 0.01
    groups = binned[..., None] + noise - noise.mean(-1, keepdims=True)  # group means average to the binned risk
    positions = np.arange(33)
    per_t = lambda value: ("pretraining_tasks", np.full(3, value))  # noqa: E731
    return xr.Dataset(
        {"binned_risk": (("pretraining_tasks", "learner", "seed", "position_bin"), binned),
         "binned_risk_sem": (("pretraining_tasks", "learner", "seed", "position_bin"), np.full(binned.shape, 0.002)),
         "binned_risk_groups": (("pretraining_tasks", "learner", "seed", "position_bin", "prompt_group"), groups),
         "risk": (("pretraining_tasks", "learner", "seed", "position"), 2.0 + coded(rng, (3, 3, SEEDS, 33))),
         "single_gamma_risk": (("pretraining_tasks", "position"), 0.5 + coded(rng, (3, 33))),
         "bayes_risk": (("pretraining_tasks", "position"), 0.4 + coded(rng, (3, 33))),
         "pretraining_risk": (("pretraining_tasks", "seed"), 0.5 + coded(rng, (3, SEEDS))),
         "pretraining_risk_sem": (("pretraining_tasks", "seed"), np.full((3, SEEDS), 0.001)),
         "feature_residual": (("pretraining_tasks", "seed"), 0.1 * coded(rng, (3, SEEDS))),
         "principal_angle": (("pretraining_tasks", "seed"), 90 * coded(rng, (3, SEEDS))),
         "noise_variance": per_t(0.3), "fit_from": per_t(4), "angle_functions": per_t(4)},
        coords={"pretraining_tasks": tasks, "learner": learners, "seed": range(SEEDS), "position_bin": range(bins),
                "position": positions, "bin_first": ("position_bin", [1, 2, 4, 8, 16]),
                "bin_last": ("position_bin", [1, 3, 7, 15, 32])})


def test_nonparametric_icl_reads_the_tasks_learners_and_octaves_its_words_name():
    """Each row on a hand-built cube: (a) reads T = 1024's pretrained model over the last octave (n = 16–32), against
    1.5× the known-basis class's excess over that window and against kernel ridge there; the slopes over the octaves
    from n = 4 of the model and of kernel ridge; (b) the pretraining risk and the new tasks' at T = 2 and at 1024;
    (c) the residual and the angle at 1024 against 2, and the residual at 1024 against 5%. The decoy learner and
    T = 16 are never read."""
    from iclab.experiments.nonparametric_icl.rates import fitted_slope

    cube = nonparametric_cube(np.random.default_rng(10))
    rows = experiments.claims("nonparametric_icl", cube)
    binned = lambda t, learner, at=-1: cube.binned_risk.sel(pretraining_tasks=t, learner=learner).isel(  # noqa: E731
        position_bin=at).values
    within, beats, slower, memorises, generalises, falls, covers_more, angle, covers = rows
    assert "T = 1024" in within.claim and "n = 16–32" in within.claim and "small T = 2" in memorises.claim
    assert within.measured.per_seed == pytest.approx(binned(1024, "feature_attention") - 0.3)
    window = cube.single_gamma_risk.sel(pretraining_tasks=1024, position=slice(16, 32)).values
    assert within.expected.value == pytest.approx(1.5 * (window.mean() - 0.3))
    assert beats.measured.per_seed == pytest.approx(binned(1024, "feature_attention"))
    assert beats.expected.per_seed == pytest.approx(binned(1024, "krr")) and beats.expected.groups is not None
    centres = np.sqrt([4 * 7, 8 * 15, 16 * 32])  # the octaves from n = 4: geometric centres
    for row, learner in ((slower.measured, "feature_attention"), (slower.expected, "krr")):
        risk = cube.binned_risk.sel(pretraining_tasks=1024, learner=learner).isel(position_bin=[2, 3, 4]).values
        assert row.per_seed == pytest.approx(fitted_slope(centres, risk - 0.3), rel=1e-6), learner
    pretraining = cube.pretraining_risk.sel
    assert memorises.measured.per_seed == pytest.approx(np.log(pretraining(pretraining_tasks=2).values))
    assert memorises.expected.per_seed == pytest.approx(np.log(binned(2, "feature_attention")))
    assert generalises.measured.per_seed == pytest.approx(pretraining(pretraining_tasks=1024).values)
    assert generalises.expected.per_seed == pytest.approx(binned(1024, "feature_attention"))
    assert generalises.margin == pytest.approx(0.05 * cube.risk.sel(learner="feature_attention", position=0).mean())
    assert falls.measured.per_seed == pytest.approx(np.log(binned(1024, "feature_attention")))
    assert falls.expected.per_seed == pytest.approx(np.log(binned(2, "feature_attention")))
    for row, name in ((covers_more, "feature_residual"), (angle, "principal_angle")):
        assert row.measured.per_seed == pytest.approx(cube[name].sel(pretraining_tasks=1024).values), name
        assert row.expected.per_seed == pytest.approx(cube[name].sel(pretraining_tasks=2).values), name
    assert covers.measured.per_seed == pytest.approx(cube.feature_residual.sel(pretraining_tasks=1024).values)
    assert covers.expected.value == 0.05


def test_probe_layers_reads_the_layers_and_positions_its_words_name():
    """probe_layers on a cube whose readout and output risks differ at every (layer, seed, position): the last
    layer's readout against layer 1's, each averaged over the positions past d (k ≥ 3 here), and the output over the
    same positions against least squares' exact 0, with the zero predictor's risk read at position 0 for the margin."""
    rng = np.random.default_rng(12)
    layers, positions, d = range(4), np.arange(6), 3
    probe, output = coded(rng, (4, SEEDS, 6)), coded(rng, (2, SEEDS, 6))
    cube = xr.Dataset({"probe_risk": (("probed", "layer", "seed", "position"), probe[None]),
                       "probe_risk_sem": (("probed", "layer", "seed", "position"), np.full((1, 4, SEEDS, 6), 1e-3)),
                       "risk": (("learner", "seed", "position"), output),
                       "risk_sem": (("learner", "seed", "position"), np.full((2, SEEDS, 6), 1e-3))},
                      coords={"probed": ["gpt2"], "layer": layers, "seed": range(SEEDS), "position": positions,
                              "learner": ["gpt2", "ols"]}).expand_dims(d=[d])
    readout, reaches = experiments.claims("probe_layers", cube)
    assert "last layer (3)" in readout.claim and "layer 1" in readout.claim
    assert readout.measured.per_seed == pytest.approx(probe[3, :, 3:].mean(-1))
    assert readout.expected.per_seed == pytest.approx(probe[1, :, 3:].mean(-1))
    assert reaches.measured.per_seed == pytest.approx(output[0, :, 3:].mean(-1)) and reaches.expected.value == 0.0
    assert reaches.margin == pytest.approx(0.05 * output[1, :, 0].mean())


def test_probe_hidden_size_reads_the_narrowest_and_widest_its_words_name():
    """probe_hidden_size on a cube whose error past d differs at every (hidden, seed): the narrowest (2) and the
    widest (16) against least squares' exact 0, the margin 5% of least squares' risk at position 0."""
    rng = np.random.default_rng(13)
    tail, ols = coded(rng, (4, SEEDS)), coded(rng, (SEEDS, 4))
    cube = xr.Dataset({"tail_risk": (("hidden", "seed"), tail), "tail_risk_sem": (("hidden", "seed"), 1e-3 + 0 * tail),
                       "risk": (("learner", "seed", "position"), ols[None])},
                      coords={"hidden": [2, 4, 8, 16], "seed": range(SEEDS), "learner": ["ols"],
                              "position": range(4)}).expand_dims(d=[5])
    narrow, wide = experiments.claims("probe_hidden_size", cube)
    assert "hidden 2" in narrow.claim and narrow.measured.per_seed == pytest.approx(tail[0])
    assert "hidden 16" in wide.claim and wide.measured.per_seed == pytest.approx(tail[3])
    assert narrow.margin == wide.margin == pytest.approx(0.05 * ols[:, 0].mean())


def test_probe_similarity_reads_the_models_layers_and_algorithms_its_words_name():
    """probe_similarity on a cube (no prompt groups: t over seeds) where each (model, layer) peaks at its own Newton
    count and GD step (seed 1 one grid step further), and each model's output has its own similarity to Newton and
    to online GD: GPT-2's counts at its last layer against layer 1, GPT-2's output Newton against online GD, and the
    LSTM's online GD against Newton."""
    rng = np.random.default_rng(14)
    newton, steps, layers = np.arange(12), np.array([1, 2, 4, 8, 16]), range(4)
    peak = {("gpt2", layer): (1 + 3 * layer, min(layer, 4)) for layer in layers}
    peak |= {("lstm", layer): (2 + layer, 4 - layer) for layer in layers}  # (Newton count, GD step index)

    def curve(grid, at):  # (S, J): seed 1's peak one grid step past the others', a little noise
        peaks = np.array([at, min(at + 1, len(grid) - 1), at])[:, None]
        return 0.9 - 0.02 * np.abs(np.arange(len(grid)) - peaks) + 1e-4 * rng.standard_normal((SEEDS, len(grid)))

    soe = {name: np.stack([np.stack([curve(grid, peak[(model, layer)][i]) for layer in layers], axis=1)
                           for model in ("gpt2", "lstm")]) for i, (name, grid) in enumerate((("newton", newton),
                                                                                             ("gd", steps)))}
    output = {(model, algorithm): coded(rng, (SEEDS,)) for model in ("gpt2", "lstm")
              for algorithm in ("newton", "online_gd")}
    cube = xr.Dataset(
        {"soe_newton": (("probed", "seed", "layer", "newton_iterations"), soe["newton"]),
         "soe_gd": (("probed", "seed", "layer", "gd_steps"), soe["gd"]),
         "output_soe_newton": (("probed", "seed", "newton_iterations"),
                               np.stack([np.tile(output[(m, "newton")][:, None], 12) for m in ("gpt2", "lstm")])),
         "output_soe_online_gd": (("probed", "seed"), np.stack([output[(m, "online_gd")] for m in ("gpt2", "lstm")]))},
        coords={"probed": ["gpt2", "lstm"], "seed": range(SEEDS), "layer": layers, "newton_iterations": newton,
                "gd_steps": steps}).expand_dims(d=[5])
    newton_row, gd_row, gpt2_output, lstm_output = experiments.claims("probe_similarity", cube)
    assert "layer 3 against layer 1" in newton_row.claim
    assert newton_row.measured.per_seed == (10.0, 11.0, 10.0) and newton_row.expected.per_seed == (4.0, 5.0, 4.0)
    assert gd_row.measured.per_seed == (8.0, 16.0, 8.0) and gd_row.expected.per_seed == (2.0, 4.0, 2.0)
    assert gpt2_output.measured.per_seed == pytest.approx(output[("gpt2", "newton")])
    assert gpt2_output.expected.per_seed == pytest.approx(output[("gpt2", "online_gd")])
    assert lstm_output.measured.per_seed == pytest.approx(output[("lstm", "online_gd")])
    assert lstm_output.expected.per_seed == pytest.approx(output[("lstm", "newton")])


def test_ltb_training_reads_gd_beta_at_the_largest_norm_and_last_step():
    """ltb_training on a cube whose training risk differs at every (norm, learner, step, seed): GD-β's last snapshot
    at the largest ‖β*‖ against the GD-β optimum's closed form at that norm."""
    rng = np.random.default_rng(15)
    risk, optimum = 1.0 + coded(rng, (2, 3, 4, SEEDS)), 1.0 + coded(rng, (2, 2))
    cube = xr.Dataset({"training_risk": (("beta_star_norm", "trained", "step", "seed"), risk),
                       "training_risk_sem": (("beta_star_norm", "trained", "step", "seed"), 1e-3 + 0 * risk),
                       "theory_risk": (("beta_star_norm", "theory"), optimum),
                       "theory_risk_sem": (("beta_star_norm", "theory"), np.zeros((2, 2)))},
                      coords={"beta_star_norm": [0.0, 3.0], "trained": ["lsa", "gd_beta", "ltb"],
                              "step": [0, 10, 20, 30], "seed": range(SEEDS),
                              "theory": ["lsa_optimum", "gd_beta_optimum"]})
    (row,) = experiments.claims("ltb_training", cube)
    assert "‖β*‖ = 3, step 30" in row.claim
    assert row.measured.per_seed == pytest.approx(risk[1, 1, 3]) and row.expected.value == pytest.approx(optimum[1, 1])


def test_gdbeta_flow_and_lsa_convergence_read_the_ends_their_words_name():
    """gdbeta_flow: the flow's largest end over its start across cases and starts, and SGD's last snapshot's excess
    over R* (the last evaluation risk less that excess), the largest case per seed; lsa_convergence: per spectrum
    the ODE's last distance and the log of SGD's last snapshot's distance per seed."""
    rng = np.random.default_rng(16)
    flow, sgd, query = coded(rng, (2, SEEDS, 3)), 0.01 * coded(rng, (2, SEEDS, 4)), 1.0 + coded(rng, (2, SEEDS))
    flow[..., 0] += 1.0  # the starts, above every end
    cube = xr.Dataset({"flow_excess": (("case", "seed", "flow_time"), flow),
                       "sgd_excess": (("case", "seed", "snapshot_time"), sgd),
                       "query_risk": (("learner", "case", "seed"), query[None])},
                      coords={"case": ["a", "b"], "seed": range(SEEDS), "flow_time": [0.0, 1.0, 2.0],
                              "snapshot_time": [0, 1, 2, 3], "learner": ["gd_beta"]})
    flow_row, sgd_row = experiments.claims("gdbeta_flow", cube)
    assert "t = 2" in flow_row.claim and flow_row.measured.value == pytest.approx((flow[..., 2] / flow[..., 0]).max())
    minimum = query - sgd[..., 3]  # (case, seed)
    assert sgd_row.measured.per_seed == pytest.approx((sgd[..., 3] / minimum).max(0))
    distance, ode = coded(rng, (2, SEEDS, 3)), coded(rng, (2, 4))
    convergence = xr.Dataset({"sgd_distance": (("spectrum", "seed", "snapshot_time"), distance),
                              "flow_distance": (("spectrum", "flow_time"), ode)},
                             coords={"spectrum": ["isotropic", "anisotropic"], "seed": range(SEEDS),
                                     "snapshot_time": [0, 1, 2], "flow_time": [0.0, 1.0, 2.0, 5.0]})
    rows = experiments.claims("lsa_convergence", convergence)
    for i, spectrum in enumerate(("isotropic", "anisotropic")):
        ode_row, sgd_row = rows[2 * i : 2 * i + 2]
        assert spectrum in ode_row.claim and "t = 5" in ode_row.claim and ode_row.measured.value == ode[i, 3]
        assert spectrum in sgd_row.claim and sgd_row.measured.per_seed == pytest.approx(np.log(distance[i, :, 2]))


def test_every_experiment_with_claims_has_its_pairing_tested_here():
    """A test of this module names each experiment whose claims.py exists: a new experiment's rows get theirs."""
    import inspect
    import sys

    tested = " ".join(name for name, _ in inspect.getmembers(sys.modules[__name__], inspect.isfunction)
                      if name.startswith("test_"))
    with_claims = [name for name in experiments.names() if experiments.claims_file(name).is_file()]
    assert len(with_claims) == 18 and [name for name in with_claims if name not in tested] == []
