"""The learners beside the trained models: closed-form and fitted estimators (least squares, ridge, Bayes, GD-β,
Newton's and GD's iterations), the baselines every evaluation scores, the prompt-only learners (kernel ridge, a
two-layer net) and their tuning, and the probes and similarities that read a model's layers (Fu et al.).

Layer 3: may import the base modules at the package root (``iclab.errors``, ``iclab.numerics``, …), ``iclab.tasks``,
``iclab.theory`` and ``iclab.models``; nothing above (no training, storage, experiment or pipeline code).
"""
