"""Fu, Chen, Jia, Sharan 2024, Section 4 and Table 1: how alike each layer of a GPT-2 (and of an
LSTM, if configured) is to iterative Newton, gradient descent and online GD, by Similarity of Errors
and of Induced Weights of its linear probe, at every count of each algorithm's grid; the
best-matching count per layer (their Def. 3.4); and each model's output similarity to each
algorithm (their Table 1).

The sweep point, models and data sets are ``probe_layers``'s (shared by hash), plus ``queries``:
fresh queries (``queries_per_prefix`` per prefix) for the induced weights of ``weights_prompts``
evaluation prompts. Every variable has the probed models on ``probed`` and NaN past a model's last
layer.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from iclab.learners import estimators
from iclab.experiments.base import Evaluation, Experiment
from iclab.experiments.probe_layers.experiment import CHUNK, PROBED, check_gd_lr, pad_layers, sweep
from iclab.learners.probing import fit_readouts_in_chunks, readouts_in_chunks
from iclab.stats.intervals import PROMPT_GROUPS
from iclab.learners.similarity import errors_similarity_groups, induced_weights, weights_similarity


def algorithm_weights(xs: np.ndarray, ys: np.ndarray, options: dict) -> dict[str, np.ndarray]:
    """Each algorithm's weights at every count of its grid: name → (J, B, K, d)."""
    return {
        "newton": estimators.newton_weights(xs, ys, iterations=options["newton_iterations"]),
        "gd": estimators.gd_weights(xs, ys, steps=options["gd_steps"], lr=options["gd_lr"]),
        "online_gd": estimators.online_gd_weights(xs, ys)[None],
        "ols": estimators.ols_weights(xs, ys)[None],
    }


def fresh_queries(evaluation: Evaluation, n_prompts: int) -> np.ndarray:
    """The ``queries`` data set as T fresh queries per prefix of the first prompts: (W, K, T, d)."""
    xs = evaluation.data["queries"].xs  # (W·T, K, d)
    return xs.reshape(n_prompts, -1, *xs.shape[1:]).transpose(0, 2, 1, 3)


def model_similarities(evaluation: Evaluation, model, algorithms: dict, queries: np.ndarray) -> dict[str, np.ndarray]:
    """One trained model's layers (and output) against every algorithm: name → (L+1, J) or (J,), and the
    Similarities of Errors per group of prompts: (L+1, J, G) or (J, G)."""
    from iclab.models import numpy_layer_states, numpy_query_layer_states  # torch: the plan imports this module

    batch, fit, w = evaluation.batch, evaluation.data["probe"], len(queries)
    states = numpy_layer_states(model.module, CHUNK)
    readouts = fit_readouts_in_chunks(states, fit.xs, fit.ys)  # (L+1, E+1)
    layers = readouts_in_chunks(readouts, states, batch.xs, batch.ys)  # (L+1, B, K)
    query_states = numpy_query_layer_states(model.module, CHUNK)
    at_queries = readouts_in_chunks(readouts, query_states, batch.xs[:w], batch.ys[:w], queries)  # (L+1, W, K, T)
    layer_weights = induced_weights(queries, at_queries)  # (L+1, W, K, d)
    own = evaluation.predictions[model.label, model.seed][None]  # (1, B, K)
    out = {}
    for name, weights in algorithms.items():
        predictions = estimators.predict_linear(batch.xs, weights)  # (J, B, K)
        out[f"soe_{name}"], out[f"soe_{name}_groups"] = errors_similarity_groups(
            layers, predictions, batch.ys, PROMPT_GROUPS
        )
        out[f"siw_{name}"] = weights_similarity(layer_weights, weights[:, :w])
        output, output_groups = errors_similarity_groups(own, predictions, batch.ys, PROMPT_GROUPS)
        out[f"output_soe_{name}"], out[f"output_soe_{name}_groups"] = output[0], output_groups[0]
    return out


def derived(evaluation: Evaluation) -> xr.Dataset:
    batch, options = evaluation.batch, evaluation.setting.analysis
    check_gd_lr(batch.xs, options["gd_lr"])
    algorithms = algorithm_weights(batch.xs, batch.ys, options)
    queries = fresh_queries(evaluation, options["weights_prompts"])
    labels = evaluation.setting.labels
    per_model = [  # per probed model, per seed: name → (L+1, J)
        [model_similarities(evaluation, m, algorithms, queries) for m in evaluation.trained_models(label)]
        for label in labels
    ]
    grids = {"newton": ("newton_iterations",), "gd": ("gd_steps",), "online_gd": (), "ols": ()}
    data = {}
    for name, grid in grids.items():
        for measure in ("soe", "siw"):
            values = pad_layers([np.stack([s[f"{measure}_{name}"] for s in seeds]) for seeds in per_model])
            data[f"{measure}_{name}"] = ((PROBED, "seed", "layer", *grid), values if grid else values[..., 0])
        output = np.stack([np.stack([s[f"output_soe_{name}"] for s in seeds]) for seeds in per_model])  # (P, S, J)
        data[f"output_soe_{name}"] = ((PROBED, "seed", *grid), output if grid else output[..., 0])
        groups = pad_layers([np.stack([s[f"soe_{name}_groups"] for s in seeds]) for seeds in per_model])
        data[f"soe_{name}_groups"] = ((PROBED, "seed", "layer", *grid, "prompt_group"),
                                      groups if grid else groups[..., 0, :])
        output = np.stack([np.stack([s[f"output_soe_{name}_groups"] for s in seeds]) for seeds in per_model])
        data[f"output_soe_{name}_groups"] = ((PROBED, "seed", *grid, "prompt_group"),
                                             output if grid else output[..., 0, :])  # (P, S, J, G)
    return xr.Dataset(
        data,
        coords={
            PROBED: labels,
            "seed": evaluation.setting.seeds,
            "layer": np.arange(data["soe_newton"][1].shape[2]),
            "newton_iterations": options["newton_iterations"],
            "gd_steps": options["gd_steps"],
        },
    )


EXPERIMENT = Experiment(name="probe_similarity", sweep=sweep, derived=derived, products=("figure", "table"))
