"""A toy experiment for the contract test: label noise σ swept, an LSA and baselines, an extra
data set, a derived variable and a theory curve. Copied into ``iclab/experiments/toy_noise``."""
