"""Experiment lsa_shifts: see experiment.py."""
