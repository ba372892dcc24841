"""Closed forms and ODEs, each naming the paper equation or theorem it implements.

- ``linear_block``: Zhang, Wu, Bartlett 2024 — GD-β risk, its gradient flow and optimum, the LSA class's
  exact risk and optimum, Bayes risk.
- ``lsa``: Zhang, Frei, Bartlett 2024 — LSA gradient flow, its limit, test error under shifts.
- ``mean_field``: Kim & Suzuki 2024 — the two-timescale objective, the misaligned floor, principal angles.
- ``nonparametric``: Kim, Nakamaki, Suzuki 2024 — the known-basis Bayes risk, the linear-attention risk with the
  true features and its optimal Γ, the rate exponent, the features' residual and principal angles.
"""

from iclab.theory.linear_block import (
    GDBetaFlow,
    GDBetaOptimum,
    LSAOptimum,
    MCEstimate,
    bayes_risk,
    bayes_risk_curve,
    expected_sample_cov_sandwich,
    gd_beta_flow,
    gd_beta_optimum,
    gd_beta_risk,
    gd_beta_risk_gradient,
    lsa_class_optimum,
    lsa_class_risk,
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
from iclab.theory.mean_field import largest_principal_angle, misaligned_floor, two_timescale_objective

__all__ = [
    "balanced_init",
    "bayes_risk",
    "bayes_risk_curve",
    "expected_error",
    "expected_sample_cov_sandwich",
    "exponential_kq_limit",
    "exponential_moments",
    "flow_rhs",
    "FlowPath",
    "gamma_matrix",
    "gd_beta_flow",
    "gd_beta_optimum",
    "gd_beta_risk",
    "gd_beta_risk_gradient",
    "GDBetaFlow",
    "GDBetaOptimum",
    "integrate_flow",
    "largest_principal_angle",
    "limit_error_over_covariances",
    "limit_prediction_gap",
    "limit_predictions",
    "limit_weights",
    "lsa_class_optimum",
    "lsa_class_risk",
    "LSAOptimum",
    "MCEstimate",
    "mean_over_tasks",
    "misaligned_floor",
    "population_loss",
    "random_covariance_kq_limit",
    "relative_distance_to_limit",
    "relu_label_moments",
    "relu_theorem5_error",
    "theorem5_error",
    "theorem5_error_linear",
    "two_timescale_objective",
]
