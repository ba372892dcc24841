"""Figures drawn from experiment cubes only: no training, no evaluation."""

from __future__ import annotations

from iclab.plots import (
    lsa_convergence,
    lsa_rates,
    lsa_shifts,
    ltb_gap,
    random_covariance,
    single_index,
    single_index_subspace,
    zfb_figure1,
)

FIGURES = {
    "ltb_gap": ltb_gap.figure,
    "lsa_convergence": lsa_convergence.figure,
    "lsa_rates": lsa_rates.figure,
    "lsa_shifts": lsa_shifts.figure,
    "random_covariance": random_covariance.figure,
    "zfb_figure1": zfb_figure1.figure,
    "single_index": single_index.figure,
    "single_index_subspace": single_index_subspace.figure,
}
