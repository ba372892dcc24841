"""End to end: the Snakemake workflow on the tiny config, run once in a scratch directory with a scratch
copy of the iclab package (tests edit its files, never the repository's), and what is checked on that run.

Its tests run in one process, in order (Snakemake locks its working directory); the workflow runs that need
no finished tiny run are in test_workflow_runs.py, so that pytest-xdist runs them beside this one.
"""

import collections
import importlib
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
import yaml
from conftest import TINY, hand_gamma_inverse, hand_theorem8_limit, job_counts, run_cli, snakemake

from iclab.config import load
from iclab.store.cubes import read_cube
from iclab.store.datasets import load_data
from iclab.pipeline.evaluate import evaluate_setting
from iclab.experiments.base import Evaluation
from iclab.experiments.probe_layers.experiment import layer_predictions
from iclab.models import numpy_predictor
from iclab.pipeline.plan import build_plan


PACKED_GPUS = 2  # the run packs at most this many trainings that ask for a GPU, on 3 job slots (docs/gpu_node.md)


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory, scratch_src: Path):
    workdir = tmp_path_factory.mktemp("e2e")
    result = snakemake(workdir, scratch_src, "--cores", "3", "--resources", f"gpu={PACKED_GPUS}")
    assert result.returncode == 0, result.stdout + result.stderr
    return workdir


def running_gpu_trainings(log: str) -> list[int]:
    """From a Snakemake log: how many jobs that ask for a GPU were running after each job started or finished."""
    gpu_jobs, running, counts = set(), 0, []
    for block in log.split("\n["):
        if block.lstrip().startswith(("localrule ", "rule ")) or "\nlocalrule " in block or "\nrule " in block:
            jobid = int(block.split("jobid: ")[1].split()[0])
            if "gpu=1" in block.split("resources: ")[1].splitlines()[0].split(", "):
                gpu_jobs.add(jobid)
                running += 1
        elif "Finished jobid: " in block:
            running -= int(block.split("Finished jobid: ")[1].split()[0]) in gpu_jobs
        else:
            continue
        counts.append(running)
    return counts


@pytest.mark.e2e
def test_local_run_packs_as_many_gpu_trainings_as_the_gpu_resource_allows(finished_run: Path):
    """`--resources gpu=2` with 3 job slots: two trainings that ask for a GPU ran at once, never three (14 of the tiny
    config's trainings ask for one, all ready from the start)."""
    log = min((finished_run / ".snakemake" / "log").glob("*.snakemake.log"))  # the run's (later tests add theirs)
    counts = running_gpu_trainings(log.read_text())
    assert max(counts) == PACKED_GPUS and counts[-1] == 0, counts


@pytest.mark.e2e
def test_workflow_makes_every_target(finished_run: Path):
    from iclab.experiments import product_names

    for name in yaml.safe_load(TINY.read_text())["experiments"]:
        targets = [f"results/cubes/{name}.nc"]
        targets += [f"results/figures/{name}.{ext}" for ext in ("png", "pdf") if name in product_names("figure")]
        targets += [f"results/tables/{name}.{ext}" for ext in ("csv", "md", "tex") if name in product_names("table")]
        assert len(targets) > 1, f"{name} makes neither a figure nor a table"
        for target in targets:
            assert (finished_run / target).stat().st_size > 0, target
        if name in product_names("figure"):  # a run records a figure's layout problems; the tests allow none
            assert (finished_run / f"results/figures/{name}.layout.txt").read_text() == "", name
    for target in ("results/tables/claims.csv", "results/tables/claims.md", "results/tables/claims.html"):
        assert (finished_run / target).stat().st_size > 0, target
    cube = read_cube(finished_run / "results/cubes/ltb_gap.nc", kind="experiment")
    assert list(cube.beta_star_norm.values) == [0.0, 2.0] and list(cube.n.values) == [6]
    learners = {"lsa", "ltb", "gd_beta", "bayes", "gd_beta_optimal", "lsa_optimal", "ridge", "ols", "zero"}
    assert set(cube.learner.values) == learners
    assert list(cube.seed.values) == [0]
    assert not np.isnan(cube.query_risk.values).any()
    # Paired evaluation: the empirical GD-β optimum agrees with its closed form (eval-set MC error only).
    empirical = cube.query_risk.sel(learner="gd_beta_optimal").isel(seed=0)
    closed = cube.theory_risk.sel(theory="gd_beta_optimum")
    np.testing.assert_allclose(empirical, closed, rtol=0.1)
    lsa_optimum = cube.theory_risk.sel(theory="lsa_optimum")
    np.testing.assert_allclose(cube.query_risk.sel(learner="lsa_optimal").isel(seed=0), lsa_optimum, rtol=0.1)
    np.testing.assert_allclose(lsa_optimum.sel(beta_star_norm=0.0), closed.sel(beta_star_norm=0.0), rtol=1e-9)
    assert (lsa_optimum.sel(beta_star_norm=2.0) > 1.2 * closed.sel(beta_star_norm=2.0)).all()  # Theorem 4.1's gap
    # Bayes is never beaten on average by the zero predictor.
    assert (cube.query_risk.sel(learner="bayes") < cube.query_risk.sel(learner="zero")).all()
    for log in (finished_run / "results/logs/train").iterdir():
        assert "(100%)" in log.read_text(), log
    assert list((finished_run / "results/benchmarks/train").iterdir())
    assert not list((finished_run / "results").rglob("*.tmp*"))


def cube_of(run: Path, name: str):
    return read_cube(run / f"results/cubes/{name}.nc", kind="experiment")


def within(value, reference, sem, what, slack=0.0):
    """|value − reference| < 4 standard errors (+ ``slack``), elementwise."""
    value, reference, sem = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (value, reference, sem)))
    bad = ~(np.abs(value - reference) < 4 * sem + slack)
    assert not bad.any(), f"{what}: {value[bad]} vs {reference[bad]} (4 s.e. {4 * sem[bad]})"


@pytest.mark.e2e
def test_every_cube_agrees_with_independent_references(finished_run: Path):
    """Each experiment's tiny cube against facts that do not come from the code that wrote it: exact
    identities (least squares is exact for M ≥ d without noise), the prompts' law (E y²), closed forms
    written out here, and measured risks against the exact error of the same trained weights."""
    config = yaml.safe_load(TINY.read_text())["experiments"]

    # lsa_convergence: SGD and the ODE start at the same point; Γ⁻¹ of Theorem 4 by hand
    cube = cube_of(finished_run, "lsa_convergence")
    start = cube.sgd_distance.isel(snapshot_time=0)  # (spectrum, seed)
    np.testing.assert_allclose(start, cube.flow_distance.isel(flow_time=0).broadcast_like(start), rtol=1e-5)
    for spectrum, values in config["lsa_convergence"]["spectra"].items():
        lam, n = np.asarray(values), config["lsa_convergence"]["n"]
        np.testing.assert_allclose(cube.gamma_inverse.sel(spectrum=spectrum), hand_gamma_inverse(lam, n), rtol=1e-12)

    # lsa_rates: the measured risk of each trained LSA is the exact error of its own weights
    cube = cube_of(finished_run, "lsa_rates")
    measured = cube.risk.sel(learner="lsa").isel(position=slice(1, None))
    exact = cube.trained_theory_error.isel(position=slice(1, None))
    sem = cube.risk_sem.sel(learner="lsa").isel(position=slice(1, None))
    within(measured, exact.transpose(*measured.dims), sem, "lsa_rates")
    np.testing.assert_allclose(cube.theory_error.isel(position=0), sum(config["lsa_rates"]["spectrum"]))

    # lsa_shifts: least squares is exact without noise; the gain of any LSA scales as c² exactly
    cube = cube_of(finished_run, "lsa_shifts")
    d = len(config["lsa_shifts"]["spectrum"])
    for c in config["lsa_shifts"]["covariate_scales"]:
        condition = f"covariate c={c:g}"
        assert float(cube.covariate_scale.sel(condition=condition)) == pytest.approx(c)
        assert (cube.risk.sel(condition=condition, learner="ols").isel(position=slice(d + 1, None)) < 1e-10).all()
    gains = cube.lsa_gain.sel(condition=["covariate c=1", "covariate c=2"]).values  # (2, seeds)
    np.testing.assert_allclose(gains[1] / gains[0], 4.0, rtol=1e-4)  # ŷ is cubic and y linear in x
    assert np.isnan(cube.covariate_scale.sel(condition="noisy labels"))

    # random_covariance: least squares is exact; K of Theorem 8 by hand (E λᵏ = k!)
    cube = cube_of(finished_run, "random_covariance")
    d, n = config["random_covariance"]["d"], config["random_covariance"]["n"][0]
    assert (cube.risk.sel(learner="ols").isel(position=slice(d + 1, None)) < 1e-10).all()
    np.testing.assert_allclose(cube.product_limit.isel(n=0), hand_theorem8_limit(d, n), rtol=1e-10)
    assert list(cube.seed.values) == [0, 1] and np.isfinite(cube.risk.sel(learner="lsa")).all()

    # zfb_figure1: least squares exact; the zero predictor's risk is E y² = c·d; GPT-2's error/d is its risk/d
    cube = cube_of(finished_run, "zfb_figure1")
    d = config["zfb_figure1"]["d"]
    assert (cube.risk.sel(learner="ols").isel(position=slice(d + 1, None)) < 1e-10).all()
    zero = cube.risk.sel(learner="zero")
    scales = xr.DataArray([1.0, 4.0], coords={"test": ["fixed", "random c=4"]})
    within(zero, (scales * d).broadcast_like(zero), cube.risk_sem.sel(learner="zero"), "zfb_figure1 zero")
    np.testing.assert_allclose(cube.gpt2_error, cube.risk.sel(learner="gpt2").mean("seed") / d, rtol=1e-12)

    # ltb_gap: the Bayes predictor's measured risk is the Bayes risk (closed form, its own Monte Carlo)
    cube = cube_of(finished_run, "ltb_gap")
    bayes = cube.query_risk.sel(learner="bayes").isel(seed=0)
    sem = np.hypot(cube.query_risk_sem.sel(learner="bayes").isel(seed=0), cube.theory_risk_sem.sel(theory="bayes"))
    within(bayes, cube.theory_risk.sel(theory="bayes"), sem, "ltb_gap bayes")

    # ltb_bayes_gap: at every n and SNR, GD-β at its closed-form optimum and the posterior mean, run on the
    # evaluation prompts, have the closed-form GD-β risk and the Bayes risk (averaged over other designs)
    cube = cube_of(finished_run, "ltb_bayes_gap")
    sem = np.hypot(cube.mc_risk_sem, cube.theory_risk_sem)
    within(cube.mc_risk, cube.theory_risk.transpose(*cube.mc_risk.dims), sem, "ltb_bayes_gap")
    assert cube.risk.dims == ("snr", "learner", "position")  # no training, so no seed dimension
    np.testing.assert_allclose(cube.risk.sel(learner="bayes"), cube.mc_risk.sel(predictor="bayes"), rtol=1e-12)
    b = config["ltb_bayes_gap"]
    signal = b["d"] * b["psi"]  # tr(HΨ)
    np.testing.assert_allclose(cube.noise_variance, signal / cube.snr, rtol=1e-12)  # σ² = tr(HΨ)/SNR
    null = (cube.noise_variance + signal).broadcast_like(cube.theory_risk.isel(position=0))  # no example yet
    np.testing.assert_allclose(cube.theory_risk.isel(position=0), null, rtol=1e-9)

    # gdbeta_flow: SGD and the flow start at the same point; with a zero in H neither moves the kernel part
    cube = cube_of(finished_run, "gdbeta_flow")
    first = cube.sgd_excess.isel(snapshot_time=0)
    np.testing.assert_allclose(first, cube.flow_excess.isel(flow_time=0).broadcast_like(first), rtol=1e-9)
    assert (cube.flow_drift.sel(case="rank_deficient_h") < 1e-12).all()
    assert (cube.sgd_drift.sel(case="rank_deficient_h") == 0).all()  # the null coordinate of x is exactly 0

    # ltb_training: the last snapshot is the final model, which it shares with ltb_gap (same spec, same evaluation
    # set); GD-β starts at 0, where the risk is E y² = σ² + tr(Ψ) + ‖β*‖² (H = I)
    cube = cube_of(finished_run, "ltb_training")
    gap = cube_of(finished_run, "ltb_gap").sel(n=config["ltb_training"]["n"])
    final = cube.training_risk.isel(step=-1).rename(trained="learner")
    shared = gap.query_risk.sel(learner=final.learner).transpose(*final.dims)
    np.testing.assert_allclose(final, shared, rtol=1e-6)  # float32 forward passes, final query only vs every position
    t = config["ltb_training"]
    start = cube.training_risk.sel(trained="gd_beta").isel(step=0)
    signal = t["sigma"] ** 2 + t["d"] * t["psi"] + cube.beta_star_norm**2
    within(start, signal.broadcast_like(start), cube.training_risk_sem.sel(trained="gd_beta").isel(step=0), "E y²")
    assert cube.step.values[0] == 0 and cube.step.values[-1] == t["train"]["steps"]

    # ltb_table1: the table holds the cube's mean risk over seeds, and the GD-β optimum by hand (β₀ = β*)
    cube = cube_of(finished_run, "ltb_table1")
    table = pd.read_csv(finished_run / "results/tables/ltb_table1.csv")
    np.testing.assert_allclose(table["GPT2"], cube.query_risk.sel(learner="gpt2").mean("seed"), rtol=1e-9)
    np.testing.assert_allclose(table["GPT2-noMLP"], cube.query_risk.sel(learner="gpt2_nomlp").mean("seed"), rtol=1e-9)
    t = config["ltb_table1"]
    n, d, psi, sigma = t["n"], t["d"], t["psi"], t["sigma"]
    gamma = psi / ((1 + 1 / n) * psi + (d * psi + sigma**2) / n)  # Γ* = γI for Ψ = ψI, H = I
    np.testing.assert_allclose(table["GD-β optimum"], sigma**2 + d * psi - d * gamma * psi, rtol=1e-9)

    # single_index: each case is scored on its own prompts (the zero predictor's risk is their mean y²;
    # the labels are too heavy-tailed for E y² = 1 + σ² at 40 prompts); chance energy r/d
    cube = cube_of(finished_run, "single_index")
    for setting in build_plan(load(TINY)).settings["single_index"].values():
        ys = load_data(finished_run / f"results/data/{setting.data['eval']}.nc").ys  # (B, K)
        zero = cube.risk.sel(learner="zero", case=setting.coords["case"]).isel(seed=0)
        np.testing.assert_allclose(zero, np.mean(ys**2, axis=0), rtol=1e-12)
    for name in ("single_index", "single_index_subspace"):
        cube = cube_of(finished_run, name)
        r = cube.r if "r" in cube else config[name]["r"]
        chance = cube.subspace_energy_chance
        np.testing.assert_allclose(chance, (r / cube.d).broadcast_like(chance))

    # mean_field: the zero predictor's risk is the mean y² of each case's own prompts; the last snapshot is
    # the final model (its risk at the final query is the evaluation's); on linear tasks population risks are at
    # least the global minimum's (0, or the misaligned floor), and the teacher's features beat the zero predictor
    cube = cube_of(finished_run, "mean_field")
    for setting in build_plan(load(TINY)).settings["mean_field"].values():
        ys = load_data(finished_run / f"results/data/{setting.data['eval']}.nc").ys  # (B, K)
        at = cube.sel(case=setting.coords["case"])
        np.testing.assert_allclose(at.risk.sel(learner="zero").isel(seed=0), np.mean(ys**2, axis=0), rtol=1e-12)
        final = at.training_risk.isel(step=-1).rename(trained="learner")
        np.testing.assert_allclose(final, at.query_risk.sel(learner=final.learner), rtol=1e-5)
        if setting.eval_task.target == "linear":
            assert (at.population_risk >= at.global_minimum_risk - 1e-9).all()
        assert ((0 <= at.principal_angle) & (at.principal_angle <= 90)).all()
    realisable = cube.sel(case="realisable").query_risk
    assert float(realisable.sel(learner="teacher_attention").mean()) < float(realisable.sel(learner="zero").mean())

    # nonparametric_icl: the zero predictor's risk is the mean y² of the evaluation prompts; the known-basis
    # posterior mean on those prompts has the theory's Bayes risk (its own average over sampled designs) at every n;
    # the coverage measures are a share and an angle
    cube = cube_of(finished_run, "nonparametric_icl")
    setting = next(iter(build_plan(load(TINY)).settings["nonparametric_icl"].values()))
    ys = load_data(finished_run / f"results/data/{setting.data['eval']}.nc").ys  # (B, K)
    at = cube.isel(pretraining_tasks=0)
    np.testing.assert_allclose(at.risk.sel(learner="zero").isel(seed=0), np.mean(ys**2, axis=0), rtol=1e-12)
    bayes = at.sel(learner="basis_bayes").isel(seed=0)
    within(bayes.risk, at.bayes_risk, np.hypot(bayes.risk_sem, at.bayes_risk_sem), "basis_bayes vs Bayes risk")
    assert ((0 <= cube.feature_residual) & (cube.feature_residual <= 1)).all()
    assert ((0 <= cube.principal_angle) & (cube.principal_angle <= 90)).all()


def drawn_figure(finished_run: Path, name: str, tmp_path: Path, monkeypatch):
    """The matplotlib figure that experiment ``name``'s figure function draws from its tiny cube."""
    figure = importlib.import_module(f"iclab.experiments.{name}.figure").figure
    figures = []  # ``save`` is patched where the figure function is defined (it may be another experiment's)
    monkeypatch.setattr(sys.modules[figure.__module__], "save", lambda fig, png, cube: figures.append(fig))
    figure(cube_of(finished_run, name), tmp_path / f"{name}.png")
    (fig,) = figures
    return fig


@pytest.mark.e2e
def test_slopes_printed_on_figures_are_the_fits_of_the_cube(finished_run: Path, tmp_path: Path, monkeypatch):
    """The exponents written on lsa_shifts (gain against c) and lsa_rates (floor against N) are the
    least-squares slopes of the cube's values on log-log axes, fitted here with numpy."""
    fit = lambda x, y: np.polyfit(np.log(x), np.log(y), 1)[0]  # noqa: E731
    texts = lambda fig: " ".join([fig._suptitle.get_text() if fig._suptitle else ""]  # noqa: E731
                                 + [t.get_text() for ax in fig.axes for t in [*ax.texts, ax.title]])

    cube = cube_of(finished_run, "lsa_shifts")
    covariate = [str(c) for c in cube.condition.values if str(c).startswith("covariate")]
    scales = cube.covariate_scale.sel(condition=covariate).values
    gain = cube.lsa_gain.sel(condition=covariate).mean("seed").values
    written = texts(drawn_figure(finished_run, "lsa_shifts", tmp_path, monkeypatch))
    assert f"fitted exponent {fit(scales, gain):.3f}" in written

    cube = cube_of(finished_run, "lsa_rates")
    ns = cube.n.values[-2:]
    floor = cube.theory_floor.sel(n=ns).values
    trained = cube.trained_theory_floor.sel(n=ns).mean("seed").values
    expected = f"slope over the last two N: theory {fit(ns, floor):.2f}, trained {fit(ns, trained):.2f}"
    assert expected in texts(drawn_figure(finished_run, "lsa_rates", tmp_path, monkeypatch))

    cube = cube_of(finished_run, "nonparametric_icl")
    fitted = cube.bin_first.values >= int(cube.fit_from.isel(pretraining_tasks=0))
    centres = np.sqrt(cube.bin_first.values * cube.bin_last.values)[fitted]
    excess = cube.binned_risk.isel(position_bin=np.flatnonzero(fitted)) - cube.noise_variance
    figure = drawn_figure(finished_run, "nonparametric_icl", tmp_path, monkeypatch)
    legends = [ax.get_legend() for ax in figure.axes if ax.get_legend() is not None]
    (legend,) = [found for found in legends if found.get_title().get_text() == "(a)"]  # (a)'s, in a panel of its own
    legend = " ".join(t.get_text() for t in legend.get_texts())
    for t in cube.pretraining_tasks.values:
        mean = excess.sel(pretraining_tasks=t, learner="feature_attention").mean("seed").values
        assert f"pretrained, T = {t} (slope {fit(centres, mean):.2f})" in legend


@pytest.mark.e2e
@pytest.mark.parametrize("name", ["zfb_figure1", "lsa_shifts", "random_covariance"])
def test_evaluation_runs_each_trained_model_once_per_chunk(finished_run: Path, name: str, monkeypatch):
    """Every module built from a trained model is counted: the derived variables reuse the
    evaluation's predictions instead of running the models again."""
    from iclab.experiments import experiment
    from iclab.store.trained import TrainedModel

    config = load(TINY)
    calls = collections.Counter()
    build = TrainedModel.build

    def counted_build(model: TrainedModel):
        module = build(model)
        module.register_forward_pre_hook(lambda *_: calls.update([(model.label, model.seed)]))
        return module

    monkeypatch.setattr(TrainedModel, "build", counted_build)
    plan = build_plan(config)
    for setting in plan.settings[name].values():
        calls.clear()
        results = finished_run / "results"
        data = {key: load_data(results / f"data/{h}.nc", h) for key, h in setting.data.items()}
        models = {(m["label"], m["seed"]): TrainedModel.open(model_file(results, plan, m)) for m in setting.models}
        chunk_size = math.ceil(len(data["eval"].ys) / 3)  # three chunks of prompts per model
        evaluate_setting(experiment(name), setting, data, models, chunk_size=chunk_size)
        assert models and dict(calls) == {key: 3 for key in models}, setting.coords


def model_file(results: Path, plan, model: dict) -> Path:
    """Where the workflow wrote a setting's model: in its training group's folder."""
    return results / "models" / plan.group_of[model["hash"]] / f"{model['hash']}.nc"


def reevaluate(run: Path, name: str) -> tuple:
    """The one setting of experiment ``name`` evaluated again from the run's files, beside its cube."""
    from iclab.experiments import experiment
    from iclab.store.trained import TrainedModel

    plan = build_plan(load(TINY))
    (setting,) = plan.settings[name].values()
    results = run / "results"
    data = {key: load_data(results / f"data/{h}.nc", h) for key, h in setting.data.items()}
    models = {(m["label"], m["seed"]): TrainedModel.open(model_file(results, plan, m)) for m in setting.models}
    return evaluate_setting(experiment(name), setting, data, models), cube_of(run, name), (setting, data, models)


@pytest.mark.e2e
def test_probes_and_similarities_are_deterministic_and_consistent(finished_run: Path):
    """Evaluating the probe experiments again gives bit-identical probes and similarities; the table is
    the cube's best counts; the two experiments' probes (the same model, data and readouts) agree."""
    again, cube, _ = reevaluate(finished_run, "probe_similarity")
    for name in ("soe_newton", "siw_gd", "soe_online_gd", "output_soe_newton"):
        np.testing.assert_array_equal(again[name].values, cube[name].values)
    table = pd.read_csv(finished_run / "results/tables/probe_similarity.csv")
    for row, label in enumerate(["gpt2", "lstm"]):  # one row per probed model, in the cube's order
        at = cube.isel(d=0).sel(probed=label).mean("seed")
        assert table["Newton"][row] == pytest.approx(float(at.output_soe_newton.max()), rel=1e-12)
        assert table["GD steps"][row] == int(at.gd_steps[int(np.argmax(at.output_soe_gd.values))])
        assert table["online GD"][row] == pytest.approx(float(at.output_soe_online_gd), rel=1e-12)
    layers, probe_cube, (setting, data, models) = reevaluate(finished_run, "probe_layers")
    np.testing.assert_array_equal(layers.probe_risk.values, probe_cube.probe_risk.values)
    # the last layer's probe (fitted on other prompts) and the model's own read-out of the same states:
    # their paired errors agree within 4 standard errors at every position
    batch = data["eval"]
    evaluation = Evaluation(setting=setting, data=data, predictions={}, models=models)
    for label in ("gpt2", "lstm"):
        last = layer_predictions(evaluation, label)[0, -1]  # (B, K)
        own_predictions = numpy_predictor(models[label, 0].module, 256)(batch.xs, batch.ys)
        gap = (last - batch.ys) ** 2 - (own_predictions - batch.ys) ** 2  # (B, K)
        within(gap.mean(axis=0), 0.0, gap.std(axis=0, ddof=1) / np.sqrt(len(gap)), f"last probe vs {label}")
    # Newton's risk at each count is the risk of the literal iteration on the evaluation prompts
    for j in probe_cube.newton_iterations.values:
        manual = np.zeros(batch.ys.shape)
        for b in range(len(batch.ys)):
            for k in range(1, batch.ys.shape[1]):
                X, y = batch.xs[b, :k], batch.ys[b, :k]
                S = X.T @ X
                M = S / np.linalg.norm(S @ S.T, "fro")
                for _ in range(j):
                    M = 2 * M - M @ S @ M
                manual[b, k] = batch.xs[b, k] @ M @ X.T @ y
        expected = np.mean((manual - batch.ys) ** 2, axis=0)
        np.testing.assert_allclose(probe_cube.newton_risk.sel(newton_iterations=j).squeeze(), expected, rtol=1e-8)


@pytest.mark.e2e
def test_figures_redraw_without_retraining(finished_run: Path, scratch_src: Path):
    """A figure redraws from its cube alone (``python -m iclab figure``, the figure job), its .png and .pdf; the
    tiny run's figure jobs have checked every figure's panels and text (iclab.report.plots.save, tested in
    test_plots)."""
    png, pdf = finished_run / "results/figures/ltb_gap.png", finished_run / "results/figures/ltb_gap.pdf"
    png.unlink(), pdf.unlink()
    result = snakemake(finished_run, scratch_src, "results/figures/ltb_gap.png")
    assert result.returncode == 0, result.stderr
    assert job_counts(result) == {"figure": 1, "total": 1}  # the jobs it ran: the figure's only
    assert png.stat().st_size > 0 and pdf.stat().st_size > 0
    nothing = snakemake(finished_run, scratch_src, "-n")
    assert "Nothing to be done" in nothing.stdout + nothing.stderr


@pytest.mark.e2e
def test_gallery_target_stamps_every_figure_of_the_run_without_redrawing(finished_run: Path, scratch_src: Path):
    result = snakemake(finished_run, scratch_src, "gallery")
    assert result.returncode == 0, result.stderr
    assert job_counts(result) == {"gallery": 1, "total": 1}
    manifest = json.loads((finished_run / "docs/gallery/manifest.json").read_text())
    figures = sorted(path.name for path in (finished_run / "results/figures").glob("*.png"))
    assert sorted(entry["image"] for entry in manifest["images"]) == figures
    assert manifest["config"]["files"] == [str(TINY)]
    for entry in manifest["images"]:
        assert entry["cube_commit"] == cube_of(finished_run, Path(entry["image"]).stem).attrs["iclab_git_commit"]
        assert entry["bytes"] == (finished_run / "docs/gallery" / entry["image"]).stat().st_size
    assert manifest["total_bytes"] == sum(entry["bytes"] for entry in manifest["images"])
    copied = (finished_run / "docs/gallery/claims.md").read_text()
    assert copied.endswith((finished_run / "results/tables/claims.md").read_text())


@pytest.mark.e2e
@pytest.mark.parametrize(
    "edited, experiment",
    [("theory/lsa.py", "lsa_shifts"), ("experiments/random_covariance/experiment.py", "random_covariance")],
)
def test_editing_theory_code_reruns_only_theory_aggregate_and_figure(finished_run, scratch_src, edited, experiment):
    source = scratch_src / "iclab" / edited
    text, stat = source.read_text(), source.stat()
    # An edit, not a touch: Snakemake ignores a newer input whose checksum is the recorded one.
    source.write_text(text + "\n# edited\n")
    os.utime(source, (stat.st_atime, time.time() + 60))
    try:
        dry = snakemake(finished_run, scratch_src, "-n", f"results/figures/{experiment}.png")
    finally:
        source.write_text(text)
        os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert dry.returncode == 0, dry.stderr
    assert job_counts(dry) == {"aggregate": 1, "figure": 1, "theory": 1, "total": 3}


@pytest.mark.e2e
def test_claims_table_lists_every_experiment_with_a_verdict_its_interval_supports(finished_run: Path):
    table = pd.read_csv(finished_run / "results/tables/claims.csv", keep_default_na=False)
    assert list(dict.fromkeys(table.experiment)) == list(load(TINY)["experiments"])
    numbers = table[["measured", "expected", "difference", "low", "high", "margin"]].to_numpy(dtype=float)
    assert np.isfinite(numbers).all()
    assert set(table.verdict) <= {"holds", "fails", "inconclusive"} and set(table.relation) <= set("≈<>≤≥")
    equivalent = table[table.relation == "≈"]
    assert (equivalent.margin > 0).all() and (equivalent.margin_source != "—").all()  # every ≈ names its margin
    held = table[(table.relation == "≈") & (table.verdict == "holds")]
    assert (held.high - held.low <= 2 * held.margin).all()  # no interval wider than its margin holds
    assert (table[table.verdict == "inconclusive"].seeds_needed != "").all()
    # a row's numbers are the cube's: the GD-β/Bayes ratio of the Monte-Carlo risks at the largest SNR and n
    cube = cube_of(finished_run, "ltb_bayes_gap").isel(position=-1).sel(snr=4.0)
    (row,) = table[table.claim.str.startswith("the GD-β/Bayes risk ratio grows with the SNR")].to_dict("records")
    mc = cube.mc_risk.sel(predictor="gd_beta_optimum") / cube.mc_risk.sel(predictor="bayes")
    assert row["measured"] == pytest.approx(float(mc))
    assert set(table.kind) <= {"claim", "verification"}
    claims = table[table.kind == "claim"]  # the verifications are listed apart, not counted
    counts = {v: int((claims.verdict == v).sum()) for v in ("holds", "fails", "inconclusive")}
    summary = f"{len(claims)} claims: {counts['holds']} hold, {counts['fails']} fail, {counts['inconclusive']} "
    assert summary + "inconclusive" in (finished_run / "results/tables/claims.md").read_text()


@pytest.mark.e2e
def test_report_holds_every_figure_and_table_with_its_caption(finished_run: Path, scratch_src: Path, tmp_path: Path):
    from iclab.experiments import product_caption, product_names

    report = tmp_path / "report.html"
    result = snakemake(finished_run, scratch_src, "--report", str(report))
    assert result.returncode == 0, result.stdout + result.stderr
    html = report.read_text()
    configured = load(TINY)["experiments"]
    products = [(name, "figure", "png") for name in product_names("figure") if name in configured]
    products += [(name, "table", "csv") for name in product_names("table") if name in configured]
    assert len(products) == len(configured) + 1  # probe_similarity has both
    for name, product, suffix in products:
        assert f"{name}.{suffix}" in html, name
        first_line = product_caption(name, product).splitlines()[0]
        plain = max(first_line.split("``"), key=len).strip()[:20]  # RST ``code`` renders as <code>
        assert json.dumps(plain)[1:-1] in html, (name, plain)
    assert "iclab regenerates the tables and figures of four works" in html
    assert "claims.html" in html and "Every reproduced claim of the experiments of this run" in html


@pytest.mark.e2e
def test_truncated_input_cube_fails_with_a_clear_message(finished_run: Path, tmp_path: Path):
    model = next((finished_run / "results/models").rglob("*.nc"))
    broken = tmp_path / model.name
    broken.write_bytes(model.read_bytes()[:200])
    cube = tmp_path / "cube.nc"
    result = run_cli("figure", "ltb_gap", "--cube", str(broken), "--out", str(tmp_path / "x.png"), check=False)
    assert result.returncode == 1
    assert f"{broken}: not a readable NetCDF file" in result.stderr
    assert "Traceback" not in result.stderr
    assert not cube.exists()


def test_a_second_look_trains_only_new_seeds_and_judges_both_looks(finished_run: Path, scratch_src: Path):
    """``iclab decide`` on the tiny run's claims table and benchmarks, at a budget that takes its cheapest
    experiment only, then the same workflow on the config it wrote: that experiment's new seeds alone are trained
    and evaluated, under results/look2/; look 1's files are left as they were; the look-2 table holds every look-1
    row, with look 2's where look 1 left the row inconclusive and look 2 measured it."""
    from iclab.compute import decide

    table = pd.read_csv(finished_run / "results/tables/claims.csv", keep_default_na=False)
    config = load(TINY)
    looks = decide.look2(table, config, build_plan(config), finished_run / "results", budget_s=math.inf)
    cheapest = min(looks, key=lambda look: look.job_seconds)
    look1_files = {path: path.stat().st_mtime_ns for path in (finished_run / "results").rglob("*") if path.is_file()}
    run_cli("decide", "--config", str(TINY), "--budget-s", str(cheapest.job_seconds), "--out", "look2.yaml",
            cwd=finished_run)
    overlay = yaml.safe_load((finished_run / "look2.yaml").read_text())
    assert list(overlay["experiments"]) == [cheapest.experiment]
    result = snakemake(finished_run, scratch_src, "results/look2/tables/claims.csv", config=finished_run / "look2.yaml")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    look2 = build_plan(load(finished_run / "look2.yaml"))
    assert {job.seed for job in look2.train.values()} == set(cheapest.new_seeds)
    assert job_counts(result)["train"] == len(look2.groups)  # the new seeds' models, nothing of look 1
    assert {path: path.stat().st_mtime_ns for path in look1_files} == look1_files
    both = pd.read_csv(finished_run / "results/look2/tables/claims.csv", keep_default_na=False)
    assert both[["experiment", "claim"]].values.tolist() == table[["experiment", "claim"]].values.tolist()
    took = both["look"] == 2
    assert took.any() and (both[took]["experiment"] == cheapest.experiment).all()
    assert (table[took.values]["verdict"] == "inconclusive").all()
    assert (both[~took].drop(columns=["holm_verdict"]) == table[~took.values].drop(columns=["holm_verdict"])).all().all()
