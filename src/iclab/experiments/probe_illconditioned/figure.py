"""Figure ``probe_illconditioned``: ``probe_similarity``'s figure (Fu et al. 2024, Figs. 2–3) for
covariates with κ(Σ) = 100, the condition number in its title."""

from iclab.experiments.probe_similarity.figure import TITLE_CLAIMS, figure

__all__ = ["TITLE_CLAIMS", "figure"]
