"""The numbers the docs quote from the lsa_convergence cube (Theorem 4): where SGD and the reduced gradient flow end,
measured as ‖u₋₁U₁₁ − Γ⁻¹‖/‖Γ⁻¹‖, per covariance spectrum."""

from iclab.report.quotes import Quote, fixed, signed, span


def scientific(value: float) -> str:
    """One significant digit in scientific notation, the exponent unpadded: 1.3e-09 → 1e-9."""
    mantissa, exponent = f"{float(value):.0e}".split("e")
    return signed(f"{mantissa}e{int(exponent)}")


def sgd_end(cube):
    """The SGD-trained LSA's distance at the last snapshot, mean over seeds as the figure annotates it: (spectrum,)."""
    return cube.sgd_distance.isel(snapshot_time=-1).mean("seed")


def quotes(cube) -> list[Quote]:
    sgd = sgd_end(cube)  # (spectrum,)
    flow = cube.flow_distance.isel(flow_time=-1)  # (spectrum,)
    time = float(cube.flow_time[-1])
    return [
        Quote("sgd_end", span(sgd.values, lambda v: fixed(v, 4)),
              "SGD's relative distance of u₋₁U₁₁ to Γ⁻¹ at the last snapshot, mean over seeds, over the spectra "
              "(sgd_distance)"),
        *[Quote(f"sgd_end_{spectrum}", fixed(sgd.sel(spectrum=spectrum), 4),
                f"the same, {spectrum} spectrum") for spectrum in cube.spectrum.values],
        *[Quote(f"flow_end_{spectrum}", scientific(flow.sel(spectrum=spectrum)),
                f"the reduced gradient flow's relative distance to Γ⁻¹ at t = {time:g}, {spectrum} spectrum "
                "(flow_distance)") for spectrum in cube.spectrum.values],
    ]
