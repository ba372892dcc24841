"""Claim of the toy experiment: the probe prompts' label power is E y² = d + σ² (for each σ)."""

from iclab.stats.claims import Claim
from iclab.stats.estimates import exact, with_sem

WITHIN = 0.1  # the toy's stated margin: within 10% of d + σ²


def claims(cube):
    return [
        Claim(f"label power is d + σ² (σ = {sigma:g})", "closed form", with_sem(at.label_power, at.label_power_sem),
              "≈", exact(float(at.theory_label_power)), "Monte-Carlo mean over probe prompts (normal)",
              WITHIN * float(at.theory_label_power), "the toy's: within 10% of d + σ²")
        for sigma, at in ((float(s), cube.sel(sigma=s)) for s in cube.sigma.values)
    ]
