"""The statistics: confidence bands over seeds and prompts, estimates and the intervals of their differences, the
claims table's verdicts (three verdicts, two looks, Holm), the two-look simulation and the power of a design.

Layer 3: may import only the base modules at the package root (``iclab.atomic``, ``iclab.errors``, …); numpy,
pandas, xarray and scipy, never torch.
"""
