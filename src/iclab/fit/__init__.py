"""Fitters, registered by model name: the config class of a model's ``train`` section and the
function that fits it.

- ``sgd``: gradient steps on fresh prompts or a finite pretraining set (LSA, LTB, GD-β, GPT-2, LSTM, the
  feature-map attention of Kim, Nakamaki, Suzuki).
- ``two_stage``: the two-stage algorithm of Oko, Song, Suzuki, Wu 2024 (one gradient step, then ridge).
- ``mean_field``: the particle dynamics of Kim & Suzuki 2024 (attention, static, modified).
"""

from __future__ import annotations

from typing import Any

from iclab.fit import mean_field, sgd, two_stage
from iclab.fit.base import Fitter, TrainingDiverged

SGD = Fitter(config=sgd.TrainConfig, fit=sgd.fit)
TWO_STAGE = Fitter(config=two_stage.TwoStageConfig, fit=two_stage.fit_job)
MEAN_FIELD = Fitter(config=mean_field.MeanFieldTrainConfig, fit=mean_field.fit)

FITTERS: dict[str, Fitter] = {
    "lsa": SGD,
    "ltb": SGD,
    "gd_beta": SGD,
    "gpt2": SGD,
    "lstm": SGD,
    "two_stage": TWO_STAGE,
    "mean_field": MEAN_FIELD,
    "feature_attention": SGD,
}


def fitter(model_name: str) -> Fitter:
    if model_name not in FITTERS:
        raise ValueError(f"no fitter for model {model_name!r}; fitted models: {', '.join(FITTERS)}")
    return FITTERS[model_name]


def train_config(model_name: str, fields: dict[str, Any]):
    """The typed ``train`` section of a training spec for model ``model_name``."""
    return fitter(model_name).config(**fields)


__all__ = ["FITTERS", "MEAN_FIELD", "SGD", "TWO_STAGE", "Fitter", "TrainingDiverged", "fitter", "train_config"]
