"""How the test-prompt-only baselines (``iclab.learners.prompt_only``) are tuned: which of them, on how many held-out
prompts of the task (its ``HOLDOUT_STREAM``), drawn from which seed. No torch: the plan reads ``TUNED`` to hand them
``evaluation.holdout_prompts``."""

HOLDOUT_SEED = 0
HOLDOUT_PROMPTS = 512
# The baselines tuned on held-out prompts: each takes ``holdout_prompts`` (a smoke run caps it).
TUNED = ("krr", "two_layer_net", "random_features_ridge")
