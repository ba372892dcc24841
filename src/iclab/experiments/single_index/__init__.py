"""Experiment single_index: see experiment.py."""
