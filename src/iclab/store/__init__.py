"""What a run stores and how it is named: training jobs and their hashes, the trained models read back from
their checkpoints, the evaluation sets, the LSA class optima and the cubes (netCDF).

Layer 5: may import ``iclab.fit``, ``iclab.models``, ``iclab.tasks``, ``iclab.theory`` and the base modules; never
the experiments, the pipeline or anything above.
"""
