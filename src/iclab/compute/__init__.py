"""Compute planning and the GPU: what a job asks a cluster for, a tier's cost from its smoke run, packing
trainings on one GPU, the second look's plan within a budget, and the GPU checks (``gpu-check``, ``gpu-pack``).

Layer 8: may import the pipeline and everything below; the GPU tools import torch, the planning modules do not.
"""
