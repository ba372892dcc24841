"""The numbers the docs quote from the single_index_subspace cube (Oko, Song, Suzuki, Wu 2024, stage 1): how well one
gradient step's rows of W find the subspace V, the smallest principal cosine and the rows' energy in V (means over
seeds, as the figure draws them), over every (d, T₁) and at the points the claims compare."""

from iclab.report.quotes import Quote, fixed, span


def two(value: float) -> str:
    return fixed(value, 2)


def three(value: float) -> str:
    """Cosines to 3 places: near 1, two would round 0.995 up to a perfect 1.00."""
    return fixed(value, 3)


def smallest_cosine(cube):
    """The smallest principal cosine between W's top-r span and V, mean over seeds: (d, t1)."""
    return cube.principal_cosines.min("principal_angle").mean("seed")


def quotes(cube) -> list[Quote]:
    energy = cube.subspace_energy.mean("seed")  # (d, t1)
    d, small = int(cube.d.max()), int(cube.d.min())
    few, many = int(cube.t1.min()), int(cube.t1.max())
    middle = int(cube.t1.values[len(cube.t1) // 2])  # the claims' fixed T₁
    return [
        Quote("cosine_span", span(smallest_cosine(cube).values.ravel(), three),
              "the smallest principal cosine between W's top-r span and V, mean over seeds, lowest–highest over "
              "every d and T₁ (principal_cosines)"),
        Quote("energy_span", span(energy.values.ravel(), two),
              "the rows' mean energy in V, mean over seeds, lowest–highest over every d and T₁ (subspace_energy)"),
        Quote("cosine_largest", three(smallest_cosine(cube).sel(d=d, t1=many)),
              f"the smallest principal cosine, mean over seeds (d = {d}, T₁ = {many}; principal_cosines)"),
        *[Quote(f"energy_d{size}_t{t}", two(energy.sel(d=size, t1=t)),
                f"the rows' energy in V, mean over seeds (d = {size}, T₁ = {t}; subspace_energy)")
          for size, t in sorted({(d, few), (d, many), (small, middle), (d, middle)})],  # a tiny cube's may coincide
    ]
