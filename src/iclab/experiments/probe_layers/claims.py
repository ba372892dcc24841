"""Claims of Fu, Chen, Jia, Sharan 2024, §4, on the probe_layers cube (its first d): what the per-layer
readouts of GPT-2 reach past d examples, where least squares is exact. Readouts and output are scored on the same
prompts and model (paired)."""

from iclab.stats.claims import NULL_FRACTION, NULL_SOURCE, ONE_EDGE, Claim
from iclab.stats.estimates import Estimate, exact, has, over_seeds, zero_predictor_risk

SOURCE = "Fu, Chen, Jia, Sharan 2024, §4"
BASIS = "mean error past d examples per seed (t) and evaluation prompts (normal; prompt s.e. averaged over positions)"


def tail(risk, sem, d: int) -> Estimate:
    """Mean over positions k ≥ d of a per-seed risk, with the mean of its standard errors (an upper bound for
    positively correlated positions)."""
    past = {"position": risk.position >= d}
    return over_seeds(risk.sel(past).mean("position"), sem.sel(past).mean("position"))


def claims(cube):
    at = cube.isel(d=0)
    d, last = int(at.d), int(at.layer.max())
    if not has(at, probed="gpt2", learner="gpt2", layer=1):
        return []
    probe = at.probe_risk.sel(probed="gpt2")
    probe_sem = at.probe_risk_sem.sel(probed="gpt2")
    output = tail(at.risk.sel(learner="gpt2"), at.risk_sem.sel(learner="gpt2"), d)
    rows = [
        Claim(f"the readout of GPT-2's last layer ({last}) errs less than that of layer 1 (d = {d})", SOURCE,
              tail(probe.sel(layer=last), probe_sem.sel(layer=last), d), "<",
              tail(probe.sel(layer=1), probe_sem.sel(layer=1), d), BASIS),
    ]
    if has(at, learner="ols"):
        null = zero_predictor_risk(at.risk.sel(learner="ols"))
        rows.append(Claim(f"GPT-2's output reaches least squares past d examples: within 5% of the zero predictor's "
                          f"error ({null:.3g}) of it (d = {d}; least squares is exact there)", SOURCE, output, "≈",
                          exact(0.0), BASIS + "; least squares exact", NULL_FRACTION * null, NULL_SOURCE,
                          notes=(ONE_EDGE.format("least squares' exact 0"),)))
    return rows
