"""Every figure that aggregates over training seeds draws the aggregate its caption names, on a hand-built cube of
3 seeds whose arithmetic mean, geometric mean, median and first seed all differ.

Each cube holds, for every quantity that depends on training (a trained learner's risk, a probe's, a training curve,
a read-out of the trained weights), the values 0.5x, 0.5x and 2x at its three seeds (x a fixed positive value per
entry): arithmetic mean x, geometric mean 0.79x, median 0.5x. Baselines and theory are x at every seed. The figure is
drawn on it and on a reference cube whose three seeds all hold the aggregate every caption names, the arithmetic mean
x (on a log axis too: its band is made multiplicative, its line stays the mean): every line and heatmap drawn must be
the same. A figure that took another aggregate (the geometric mean, the median, one seed) draws something else
wherever it draws a trained quantity. (That each figure here draws one is not checked by a third drawing, to keep the
file near 12 s: planting the median in ``intervals.band``, one seed in lsa_rates and probe_similarity, and the median
in gdbeta_flow and single_index_subspace each failed here.)

The schemas (coordinates and dims) follow the tiny config's cubes; the values are synthetic. Not here: ltb_bayes_gap
(no training seeds)."""

from __future__ import annotations

import importlib
import sys
from typing import NamedTuple

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
import xarray as xr

from iclab.report import plots

NAN = float("nan")
SEED_VALUES = np.array([0.5, 0.5, 2.0])  # × x at seeds 0, 1, 2
ARITHMETIC = SEED_VALUES.mean()  # 1: the geometric mean 0.79, the median 0.5
NOT_DATA = {"lsa_convergence": {"y = x (Theorem 4)"}}  # reference lines whose extent follows the scatter's range


class Schema(NamedTuple):
    coords: dict  # dimension → its values (or its length), in the cube's order; seed and prompt_group aside
    variables: dict  # name → its dims, beside risk, risk_sem, query_risk and query_risk_sem (over the dims before
    # ``learner``, then learner, seed and position)
    fixed: dict  # name → (dims, values): coordinates and small seed-free variables as the tiny run has them


CUBES = {
    'gdbeta_flow': Schema(
        {'case': ['isotropic', 'rank_deficient_h'], 'learner': ['gd_beta'], 'position': [0, 1, 2, 3, 4],
         'flow_time': np.linspace(0, 2, 400), 'snapshot_time': [0, 0.4, 0.8, 1.2, 1.6, 2]},
        {'flow_excess': 'case seed flow_time', 'flow_distance': 'case seed flow_time',
         'flow_drift': 'case seed flow_time', 'sgd_excess': 'case seed snapshot_time',
         'sgd_distance': 'case seed snapshot_time', 'sgd_drift': 'case seed snapshot_time'},
        {'learner_kind': ('learner', ['trained']), 'image_rank': ('case', [2, 1]), 'dimension': ('case', [2, 2])},
    ),
    'lsa_convergence': Schema(
        {'spectrum': ['isotropic', 'anisotropic'], 'learner': ['lsa'], 'position': [0, 1, 2, 3, 4],
         'flow_time': np.linspace(0, 2, 400), 'snapshot_time': [0, 0.4, 0.8, 1.2, 1.6, 2], 'row': [0, 1],
         'col': [0, 1]},
        {'flow_distance': 'spectrum flow_time', 'flow_loss': 'spectrum flow_time',
         'sgd_distance': 'spectrum seed snapshot_time', 'kq_learned': 'spectrum seed row col',
         'kq_limit': 'spectrum row col', 'product_learned': 'spectrum seed row col',
         'gamma_inverse': 'spectrum row col'},
        {'learner_kind': ('learner', ['trained']), 'covariance': ('spectrum row', [[1, 1], [2, 0.5]]),
         'n_train': ('spectrum', [4, 4])},
    ),
    'lsa_rates': Schema(
        {'n': [4, 8], 'learner': ['lsa', 'lsa_limit'], 'position': range(31)},
        {'theory_error': 'n position', 'trained_theory_error': 'n seed position', 'trained_theory_floor': 'n seed'},
        {'learner_kind': ('learner', ['trained', 'baseline']), 'theory_floor': ('n', [0.2729, 0.1122])},
    ),
    'lsa_shifts': Schema(
        {'condition': ['covariate c=1', 'covariate c=2', 'noisy labels', 'relu labels', 'query covariance',
                       'orthogonal query'],
         'learner': ['lsa', 'gpt2', 'bayes', 'ridge', 'ols', 'lsa_limit'], 'position': range(13)},
        {'lsa_gain': 'condition seed', 'theory_error': 'condition position'},
        {'learner_kind': ('learner', ['trained', 'trained', 'baseline', 'baseline', 'baseline', 'baseline']),
         'theory_gain': ('condition', [0.5714, 2.286, NAN, NAN, NAN, NAN]),
         'covariate_scale': ('condition', [1, 2, NAN, NAN, NAN, NAN]), 'train_n': ('condition', [4, 4, 4, 4, 4, 4])},
    ),
    'ltb_gap': Schema(
        {'beta_star_norm': [0, 2], 'n': [6],
         'learner': ['lsa', 'ltb', 'gd_beta', 'bayes', 'gd_beta_optimal', 'lsa_optimal', 'ridge', 'ols', 'zero'],
         'position': range(7), 'theory': ['gd_beta_optimum', 'lsa_optimum', 'bayes']},
        {},
        {'learner_kind': ('learner', ['trained'] * 3 + ['baseline'] * 6),
         'theory_risk': ('beta_star_norm n theory', [[[1.494, 1.494, 0.5189]], [[1.494, 2.761, 0.5189]]]),
         'theory_risk_sem': ('beta_star_norm n theory', [[[0, 0, 0.002233]], [[0, 0, 0.002233]]])},
    ),
    'ltb_training': Schema(
        {'beta_star_norm': [0, 2], 'learner': ['lsa', 'ltb', 'gd_beta', 'gd_beta_optimal', 'lsa_optimal'],
         'position': range(7), 'theory': ['gd_beta_optimum', 'lsa_optimum', 'bayes'],
         'trained': ['lsa', 'ltb', 'gd_beta'], 'step': [0, 100, 200, 300]},
        {'training_risk': 'beta_star_norm trained seed step', 'training_risk_sem': 'beta_star_norm trained seed step'},
        {'learner_kind': ('learner', ['trained', 'trained', 'trained', 'baseline', 'baseline']),
         'theory_risk': ('beta_star_norm theory', [[1.494, 1.494, 0.5189], [1.494, 2.761, 0.5189]]),
         'theory_risk_sem': ('beta_star_norm theory', [[0, 0, 0.002233], [0, 0, 0.002233]])},
    ),
    'mean_field': Schema(
        {'case': ['realisable'],
         'learner': ['attention', 'static', 'modified', 'teacher_attention', 'random_features_ridge', 'zero'],
         'position': range(21), 'trained': ['attention', 'static', 'modified'], 'step': [0, 20, 40, 60]},
        {'training_risk': 'case trained seed step', 'training_risk_sem': 'case trained seed step',
         'population_risk': 'case trained seed step', 'principal_angle': 'case trained seed'},
        {'learner_kind': ('learner', ['trained', 'trained', 'trained', 'baseline', 'baseline', 'baseline']),
         'global_minimum_risk': ('case', [0])},
    ),
    'nonparametric_icl': Schema(
        {'pretraining_tasks': [2, 64], 'learner': ['feature_attention', 'basis_bayes', 'krr', 'zero'],
         'position': range(17), 'position_bin': [0, 1, 2, 3]},
        {'binned_risk': 'pretraining_tasks learner seed position_bin',
         'binned_risk_sem': 'pretraining_tasks learner seed position_bin', 'bayes_risk': 'pretraining_tasks position',
         'bayes_risk_sem': 'pretraining_tasks position', 'attention_optimum_risk': 'pretraining_tasks position',
         'single_gamma_risk': 'pretraining_tasks position', 'pretraining_risk': 'pretraining_tasks seed',
         'pretraining_risk_sem': 'pretraining_tasks seed', 'feature_residual': 'pretraining_tasks seed',
         'principal_angle': 'pretraining_tasks seed'},
        {'learner_kind': ('learner', ['trained', 'baseline', 'baseline', 'baseline']),
         'bin_first': ('position_bin', [1, 2, 4, 8]), 'bin_last': ('position_bin', [1, 3, 7, 16]),
         'rate_exponent': ('pretraining_tasks', [-0.6667, -0.6667]),
         'noise_variance': ('pretraining_tasks', [0.1, 0.1]), 'fit_from': ('pretraining_tasks', [4, 4]),
         'angle_functions': ('pretraining_tasks', [2, 2])},
    ),
    'probe_hidden_size': Schema(
        {'d': [2], 'learner': ['hidden_2', 'hidden_4', 'ols'], 'position': [0, 1, 2, 3, 4], 'hidden': [2, 4]},
        {'hidden_risk': 'd hidden seed position', 'hidden_risk_sem': 'd hidden seed position',
         'tail_risk': 'd hidden seed', 'tail_risk_sem': 'd hidden seed'},
        {'learner_kind': ('learner', ['trained', 'trained', 'baseline'])},
    ),
    'probe_illconditioned': Schema(
        {'condition_number': [100, 1], 'd': [2], 'learner': ['gpt2'], 'position': [0, 1, 2, 3, 4], 'probed': ['gpt2'],
         'layer': [0, 1, 2], 'newton_iterations': [0, 1, 2, 4], 'gd_steps': [1, 4, 16]},
        {'soe_newton': 'condition_number d probed seed layer newton_iterations',
         'siw_newton': 'condition_number d probed seed layer newton_iterations',
         'output_soe_newton': 'condition_number d probed seed newton_iterations',
         'soe_gd': 'condition_number d probed seed layer gd_steps',
         'siw_gd': 'condition_number d probed seed layer gd_steps',
         'output_soe_gd': 'condition_number d probed seed gd_steps',
         'soe_online_gd': 'condition_number d probed seed layer',
         'siw_online_gd': 'condition_number d probed seed layer',
         'output_soe_online_gd': 'condition_number d probed seed', 'soe_ols': 'condition_number d probed seed layer',
         'siw_ols': 'condition_number d probed seed layer', 'output_soe_ols': 'condition_number d probed seed'},
        {'learner_kind': ('learner', ['trained'])},
    ),
    'probe_layers': Schema(
        {'d': [2], 'learner': ['gpt2', 'lstm', 'ols', 'online_gd'], 'position': [0, 1, 2, 3, 4],
         'probed': ['gpt2', 'lstm'], 'layer': [0, 1, 2], 'newton_iterations': [0, 1, 2, 4], 'gd_steps': [1, 4, 16]},
        {'probe_risk': 'd probed seed layer position', 'probe_risk_sem': 'd probed seed layer position',
         'newton_risk': 'd newton_iterations position', 'newton_risk_sem': 'd newton_iterations position',
         'gd_risk': 'd gd_steps position', 'gd_risk_sem': 'd gd_steps position'},
        {'learner_kind': ('learner', ['trained', 'trained', 'baseline', 'baseline']), 'gd_lr': ('d', [0.05])},
    ),
    'probe_similarity': Schema(
        {'d': [2], 'learner': ['gpt2', 'lstm'], 'position': [0, 1, 2, 3, 4], 'probed': ['gpt2', 'lstm'],
         'layer': [0, 1, 2], 'newton_iterations': [0, 1, 2, 4], 'gd_steps': [1, 4, 16]},
        {'soe_newton': 'd probed seed layer newton_iterations', 'siw_newton': 'd probed seed layer newton_iterations',
         'output_soe_newton': 'd probed seed newton_iterations', 'soe_gd': 'd probed seed layer gd_steps',
         'siw_gd': 'd probed seed layer gd_steps', 'output_soe_gd': 'd probed seed gd_steps',
         'soe_online_gd': 'd probed seed layer', 'siw_online_gd': 'd probed seed layer',
         'output_soe_online_gd': 'd probed seed', 'soe_ols': 'd probed seed layer', 'siw_ols': 'd probed seed layer',
         'output_soe_ols': 'd probed seed'},
        {'learner_kind': ('learner', ['trained', 'trained'])},
    ),
    'random_covariance': Schema(
        {'n': [4], 'learner': ['lsa', 'ols', 'lsa_limit'], 'position': range(13), 'row': [0, 1], 'col': [0, 1]},
        {'prediction_gap': 'n seed position', 'prediction_gap_sem': 'n seed position',
         'product_learned': 'n seed row col', 'theory_gap': 'n position', 'theory_error': 'n position'},
        {'learner_kind': ('learner', ['trained', 'baseline', 'baseline']),
         'product_limit': ('n row col', [[[0.2105, 0], [0, 0.2105]]])},
    ),
    'single_index': Schema(
        {'case': ['d=3, r=1', 'd=4, r=1', 'd=3, r=2'],
         'learner': ['two_stage', 'gpt2', 'krr', 'two_layer_net', 'zero'], 'position': range(9),
         'position_bin': [0, 1, 2], 'principal_angle': [1, 2], 'prompt_group': 4},
        {'binned_risk': 'case learner seed position_bin', 'binned_risk_sem': 'case learner seed position_bin',
         'binned_risk_groups': 'case learner seed position_bin prompt_group',
         'risk_groups': 'case learner seed position prompt_group',
         'principal_cosines': 'case seed principal_angle', 'subspace_energy': 'case seed'},
        {'learner_kind': ('learner', ['trained', 'trained', 'baseline', 'baseline', 'baseline']),
         'bin_first': ('position_bin', [4, 5, 6]), 'bin_last': ('position_bin', [4, 5, 8]),
         'subspace_energy_chance': ('case', [0.3333, 0.25, 0.6667]), 'd': ('case', [3, 4, 3]),
         'r': ('case', [1, 1, 2])},
    ),
    'zfb_figure1': Schema(
        {'n': [4], 'test': ['fixed', 'random c=2'], 'train': ['fixed', 'random'], 'learner': ['gpt2', 'ols', 'zero'],
         'position': range(6)},
        {'lsa_limit_error': 'n test train position'},
        {'learner_kind': ('learner', ['trained', 'baseline', 'baseline']), 'd': ('n test train', [[[2, 2], [2, 2]]])},
    ),
    'single_index_subspace': Schema(
        {'d': [3, 4], 't1': [16, 64], 'learner': ['two_stage'], 'position': range(9), 'principal_angle': [1]},
        {'principal_cosines': 'd t1 seed principal_angle', 'subspace_energy': 'd t1 seed'},
        {'learner_kind': ('learner', ['trained']),
         'subspace_energy_chance': ('d t1', [[0.3333, 0.3333], [0.25, 0.25]])},
    ),
}


def synthetic_cube(name: str, aggregated: bool = False) -> xr.Dataset:
    """The experiment's cube with synthetic values: a trained quantity's seeds at SEED_VALUES × x, or (``aggregated``)
    all three at the aggregate its figure takes; every other quantity x at every seed."""
    schema = CUBES[name]
    coords = {dim: list(values) for dim, values in schema.coords.items() if not isinstance(values, int)}
    sizes = {dim: len(values) if not isinstance(values, int) else values for dim, values in schema.coords.items()}
    sizes["seed"] = len(SEED_VALUES)
    sweep = list(schema.coords)[: list(schema.coords).index("learner")]
    standard = {"risk": [*sweep, "learner", "seed", "position"], "query_risk": [*sweep, "learner", "seed"]}
    standard |= {f"{key}_sem": dims for key, dims in standard.items()}
    trained = np.array([kind == "trained" for kind in schema.fixed["learner_kind"][1]])  # (L,)
    rng = np.random.default_rng(0)
    data = {}
    for variable, dims in (standard | {key: dims.split() for key, dims in schema.variables.items()}).items():
        x = 0.2 + rng.uniform(size=[1 if dim == "seed" else sizes[dim] for dim in dims])
        if "seed" in dims:
            seeds = np.full(len(SEED_VALUES), ARITHMETIC) if aggregated else SEED_VALUES
            factor = seeds.reshape([-1 if dim == "seed" else 1 for dim in dims])
            if "learner" in dims:  # a baseline's values repeat along the seeds
                factor = np.where(trained.reshape([-1 if dim == "learner" else 1 for dim in dims]), factor, 1.0)
            x = x * factor
        data[variable] = (dims, x)
    data |= {key: (dims.split(), np.asarray(values)) for key, (dims, values) in schema.fixed.items()}
    return xr.Dataset(data, coords=coords | {"seed": range(len(SEED_VALUES))})


@pytest.fixture
def captured(monkeypatch) -> list[plt.Figure]:
    """The figures that ``plots.save`` is handed, kept instead of written (after its blank-panel check), in every
    loaded module that calls it (a figure may call another experiment's drawing code)."""
    for name in sorted(CUBES):
        importlib.import_module(f"iclab.experiments.{name}.figure")
    figures = []
    for loaded in list(sys.modules.values()):
        if loaded is not plots and getattr(loaded, "save", None) is plots.save:
            monkeypatch.setattr(loaded, "save", lambda fig, png, cube: (plots.check_panels(fig), figures.append(fig)))
    # single_index's panel of claims draws the claims table's intervals (tests/test_claims.py's), not a seed aggregate:
    # on a cube whose seeds all hold one value the table refuses to judge (one model repeated)
    monkeypatch.setattr(sys.modules["iclab.experiments.single_index.figure"], "d_claims", lambda fig, cube: None)
    return figures


def drawn(name: str, cube: xr.Dataset, captured: list[plt.Figure]) -> list[tuple[str, np.ndarray]]:
    """What the figure draws on ``cube``: each line's y values (but error bars' caps) and each heatmap's cells, in
    drawing order, labelled."""
    importlib.import_module(f"iclab.experiments.{name}.figure").figure(cube, "unused.png")
    fig = captured.pop()
    elements = []
    for i, ax in enumerate(fig.axes):
        elements += [(f"panel {i}: {line.get_label()}", np.asarray(line.get_ydata(), dtype=float))
                     for line in ax.get_lines() if line.get_label() != "_nolegend_" and len(line.get_ydata())
                     and line.get_label() not in NOT_DATA.get(name, ())]
        elements += [(f"panel {i}: heatmap", plots.values(mesh).ravel()) for mesh in ax.collections
                     if isinstance(mesh, matplotlib.collections.QuadMesh)]
    plt.close(fig)
    return elements


@pytest.mark.parametrize("name", sorted(CUBES))
def test_each_figure_draws_the_seed_aggregate_its_caption_names(name, captured):
    seeds, aggregate = (drawn(name, synthetic_cube(name, aggregated), captured) for aggregated in (False, True))
    assert [label for label, _ in seeds] == [label for label, _ in aggregate]
    for (label, got), (_, expected) in zip(seeds, aggregate):
        np.testing.assert_allclose(got, expected, rtol=1e-9, equal_nan=True, err_msg=f"{name}, {label}")


def test_every_figure_is_checked_here_or_named_as_drawing_no_seed_aggregate():
    from iclab.experiments import HERE

    figures = {path.parent.name for path in HERE.glob("*/figure.py")}
    assert figures == set(CUBES) | {"ltb_bayes_gap"}
