"""Experiment single_index_subspace: see experiment.py."""
