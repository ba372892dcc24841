"""Experiment lsa_rates: see experiment.py."""
