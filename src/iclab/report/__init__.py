"""How results are shown: the figures' shared drawing and layout checks (seaborn), the numbers the docs quote
from a cube, written as text, and the claims table's files.

Layer 4: may import ``iclab.stats`` and the base modules; never an experiment, the store or the pipeline.
"""
