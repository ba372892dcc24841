"""Experiments: each module turns its config section into sweep points, names its theory
curves, and draws its figure from the aggregated cube (``sweep``, ``theory``, ``figure``)."""

from __future__ import annotations

from iclab.experiments import (
    lsa_convergence,
    lsa_rates,
    lsa_shifts,
    ltb_gap,
    ltb_table1,
    random_covariance,
    single_index,
    single_index_subspace,
    zfb_figure1,
)

EXPERIMENTS = {
    "ltb_gap": ltb_gap,
    "lsa_convergence": lsa_convergence,
    "lsa_rates": lsa_rates,
    "lsa_shifts": lsa_shifts,
    "random_covariance": random_covariance,
    "ltb_table1": ltb_table1,
    "zfb_figure1": zfb_figure1,
    "single_index": single_index,
    "single_index_subspace": single_index_subspace,
}
