"""Closed forms and ODEs, each naming the paper equation or theorem it implements.

- ``linear_block``: Zhang, Wu, Bartlett 2024 — GD-β risk and optimum, Bayes risk.
- ``lsa``: Zhang, Frei, Bartlett 2024 — LSA gradient flow, its limit, test error under shifts.
"""

from iclab.theory.linear_block import (
    GDBetaOptimum,
    MCEstimate,
    bayes_risk,
    bayes_risk_curve,
    expected_sample_cov_sandwich,
    gd_beta_optimum,
    gd_beta_risk,
)
from iclab.theory.lsa import (
    FlowPath,
    balanced_init,
    expected_error,
    exponential_kq_limit,
    exponential_moments,
    flow_rhs,
    gamma_matrix,
    integrate_flow,
    limit_error_over_covariances,
    limit_prediction_gap,
    limit_predictions,
    limit_weights,
    mean_over_tasks,
    population_loss,
    random_covariance_kq_limit,
    relative_distance_to_limit,
    relu_label_moments,
    relu_theorem5_error,
    theorem5_error,
    theorem5_error_linear,
)

__all__ = [
    "FlowPath",
    "GDBetaOptimum",
    "MCEstimate",
    "balanced_init",
    "bayes_risk",
    "bayes_risk_curve",
    "expected_error",
    "expected_sample_cov_sandwich",
    "exponential_kq_limit",
    "exponential_moments",
    "flow_rhs",
    "gamma_matrix",
    "gd_beta_optimum",
    "gd_beta_risk",
    "integrate_flow",
    "limit_error_over_covariances",
    "limit_prediction_gap",
    "limit_predictions",
    "limit_weights",
    "mean_over_tasks",
    "population_loss",
    "random_covariance_kq_limit",
    "relative_distance_to_limit",
    "relu_label_moments",
    "relu_theorem5_error",
    "theorem5_error",
    "theorem5_error_linear",
]
