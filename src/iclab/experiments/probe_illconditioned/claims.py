"""Claims of Fu, Chen, Jia, Sharan 2024, §5 (ill-conditioned covariates), on the probe_illconditioned cube (its
first condition number, d and seed). No interval is stored for similarities: compared as measured."""

from iclab.claims import Claim, Estimate, has

SOURCE = "Fu, Chen, Jia, Sharan 2024, §5"
BASIS = "no interval stored for similarities and best counts: compared as measured"


def claims(cube):
    at = cube.isel(condition_number=0, d=0, seed=0, probed=0)
    kappa, last = int(cube.condition_number[0]), int(at.layer.max())
    if not has(at, layer=1):
        return []
    newton = at.soe_newton.sel(layer=last)
    first = at.soe_newton.sel(layer=1)

    def best(soe) -> Estimate:
        return Estimate(float(soe.newton_iterations[int(soe.argmax("newton_iterations"))]))

    return [
        Claim(f"at κ = {kappa} the best-matching Newton iteration count still grows with depth (layer {last} "
              "against layer 1; paper ~21 at the top)", SOURCE, best(newton), ">", best(first), BASIS),
        Claim(f"at κ = {kappa} the last layer matches Newton at least as well as GD (best Similarity of Errors "
              "over each grid)", SOURCE, Estimate(float(newton.max())), "≥",
              Estimate(float(at.soe_gd.sel(layer=last).max())), BASIS),
    ]
