"""Experiment ltb_gap: see experiment.py."""
