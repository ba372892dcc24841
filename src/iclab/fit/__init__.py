"""Fitters: the config class of a model's ``train`` section (``configs``, torch-free) and the function that fits it
(``fitters``), registered by model name.

- ``sgd``: gradient steps on fresh prompts or a finite pretraining set (LSA, LTB, GD-β, GPT-2, LSTM, the
  feature-map attention of Kim, Nakamaki, Suzuki).
- ``two_stage``: the two-stage algorithm of Oko, Song, Suzuki, Wu 2024 (one gradient step, then ridge).
- ``mean_field``: the particle dynamics of Kim & Suzuki 2024 (attention, static, modified).
"""

from __future__ import annotations

from iclab.fit.base import Fitter, TrainingDiverged
from iclab.fit.configs import CONFIGS, train_config

__all__ = ["CONFIGS", "Fitter", "TrainingDiverged", "train_config"]
