"""Claims of Fu, Chen, Jia, Sharan 2024, §4, on the probe_layers cube (its first d): what the per-layer
readouts of GPT-2 reach past d examples, where least squares is exact."""


from iclab.claims import Claim, Estimate, has, over_seeds

SOURCE = "Fu, Chen, Jia, Sharan 2024, §4"
BASIS = "95% band of the mean error past d examples (seeds, evaluation prompts; prompt s.e. averaged over positions)"


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
    return [
        Claim(f"the readout of GPT-2's last layer ({last}) errs less than that of layer 1 (d = {d})", SOURCE,
              tail(probe.sel(layer=last), probe_sem.sel(layer=last), d), "<",
              tail(probe.sel(layer=1), probe_sem.sel(layer=1), d), BASIS),
        Claim(f"GPT-2's output reaches least squares past d examples (d = {d})", SOURCE, output, "≈",
              Estimate(0.0), BASIS),
        Claim(f"the last layer's readout errs no more than GPT-2's own output (d = {d})", SOURCE,
              tail(probe.sel(layer=last), probe_sem.sel(layer=last), d), "≤", output, BASIS),
    ]


