"""Experiment random_covariance: see experiment.py."""
