"""Experiment lsa_convergence: see experiment.py."""
