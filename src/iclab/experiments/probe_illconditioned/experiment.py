"""Fu, Chen, Jia, Sharan 2024, §5 (ill-conditioned data): ``probe_similarity``'s analysis for a
GPT-2 trained and evaluated on covariates with κ(Σ) = ``condition_number`` (their 100: half the
eigenvalues κ, half 1, trace d, a random eigenbasis per prompt). They find the Transformer still
matches about as many Newton iterations per layer as on well-conditioned data, while gradient descent
needs many more steps (~2000).

The sweep point is ``probe_similarity``'s with the ill-conditioned task (so a model of its own) and
``condition_number`` as a second coordinate. With ``well_conditioned``, a second point at κ = 1 is
``probe_similarity``'s own (x ~ N(0, I): the κ = 1 spectrum in any eigenbasis is the identity), so its model, data
and seed 0 are shared by hash with ``probe_layers`` and only its evaluation is added: §5's comparison of the two
runs is then read from one cube.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from iclab.errors import ExperimentError
from iclab.experiments.base import Experiment, SweepPoint
from iclab.experiments.probe_similarity.experiment import derived
from iclab.experiments.probe_similarity.experiment import sweep as similarity_sweep

WELL_CONDITIONED = 1.0  # κ of the comparison run


def sweep(cfg: dict[str, Any]) -> list[SweepPoint]:
    """The configured κ's point, then (``well_conditioned``) the κ = 1 point: probe_similarity's isotropic task."""
    points = similarity_sweep(cfg)
    if cfg.get("well_conditioned", False):
        if cfg["condition_number"] == WELL_CONDITIONED:
            raise ExperimentError(
                "probe_illconditioned: well_conditioned adds the κ = 1 run beside condition_number, which is 1 "
                "already; allowed: condition_number > 1 with well_conditioned, or well_conditioned: false"
            )
        isotropic = {key: value for key, value in cfg.items() if key != "condition_number"}
        points += [
            replace(point, coords=point.coords | {"condition_number": WELL_CONDITIONED})
            for point in similarity_sweep(isotropic)
        ]
    return points


EXPERIMENT = Experiment(name="probe_illconditioned", sweep=sweep, derived=derived)
