"""Each model's fitter: its ``train`` config class (``iclab.fit.configs.CONFIGS``) with the function that fits it."""

from __future__ import annotations

from iclab.fit import mean_field, sgd, two_stage
from iclab.fit.base import Fitter
from iclab.fit.configs import CONFIGS, MeanFieldTrainConfig, TrainConfig, TwoStageConfig

FITS = {TrainConfig: sgd.fit, TwoStageConfig: two_stage.fit_job, MeanFieldTrainConfig: mean_field.fit}
# sgd makes its batches step by step (ahead, by its thread or producers); the others read them in chunks
LOOP_OPTIONS = {TrainConfig: ("prefetch", "producers")}
FITTERS: dict[str, Fitter] = {
    name: Fitter(config=config, fit=FITS[config], loop_options=LOOP_OPTIONS.get(config, ()))
    for name, config in CONFIGS.items()
}


def fitter(model_name: str) -> Fitter:
    if model_name not in FITTERS:
        raise ValueError(f"no fitter for model {model_name!r}; fitted models: {', '.join(FITTERS)}")
    return FITTERS[model_name]
