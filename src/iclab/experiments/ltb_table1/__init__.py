"""Experiment ltb_table1: see experiment.py."""
