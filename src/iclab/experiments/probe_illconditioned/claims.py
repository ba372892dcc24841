"""Claims of Fu, Chen, Jia, Sharan 2024, §5 (ill-conditioned covariates), on the probe_illconditioned cube (its
first condition number and d); intervals and censoring as probe_similarity's."""

import numpy as np

from iclab.claims import Claim, has
from iclab.experiments.probe_similarity.claims import basis, best_count, similarity, statistic

SOURCE = "Fu, Chen, Jia, Sharan 2024, §5"


def claims(cube):
    at = cube.isel(condition_number=0, d=0, probed=0)
    kappa, last = int(cube.condition_number[0]), int(at.layer.max())
    if not has(at, layer=1):
        return []
    top, note = best_count(*similarity(at, "soe_newton", layer=last))
    first, _ = best_count(*similarity(at, "soe_newton", layer=1))
    highest = lambda x: np.max(x, axis=-1)  # noqa: E731
    return [
        Claim(f"at κ = {kappa} the best-matching Newton iteration count still grows with depth (layer {last} "
              "against layer 1; paper ~21 at the top)", SOURCE, top, ">", first, basis(at), notes=note),
        Claim(f"at κ = {kappa} the last layer matches Newton at least as well as GD (best Similarity of Errors "
              "over each grid)", SOURCE, statistic(*similarity(at, "soe_newton", layer=last), highest), "≥",
              statistic(*similarity(at, "soe_gd", layer=last), highest), basis(at)),
    ]
