"""Claim of the toy experiment: the probe prompts' label power is E y² = d + σ² (for each σ)."""

from iclab.claims import Claim, Estimate, with_sem


def claims(cube):
    return [
        Claim(f"label power is d + σ² (σ = {sigma:g})", "closed form", with_sem(at.label_power, at.label_power_sem),
              "≈", Estimate(float(at.theory_label_power)), "95% interval of the Monte-Carlo mean over probe prompts")
        for sigma, at in ((float(s), cube.sel(sigma=s)) for s in cube.sigma.values)
    ]
