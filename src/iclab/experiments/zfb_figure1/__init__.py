"""Experiment zfb_figure1: see experiment.py."""
