"""Claims of Oko, Song, Suzuki, Wu 2024, stage 1, on the single_index_subspace cube: one gradient step on W finds
the task subspace V, with enough stage-1 prompts T₁ = Θ(d^{Q+1})."""

from iclab.stats.claims import REACHES, REACHES_SOURCE, Claim
from iclab.stats.estimates import exact, over_seeds

SOURCE = "Oko, Song, Suzuki, Wu 2024, stage 1"
BASIS = "per seed (t; paired where two settings are compared)"


def claims(cube):
    d = int(cube.d.max())
    at = cube.sel(d=d)
    few, many = int(at.t1.min()), int(at.t1.max())
    energy = at.subspace_energy
    rows = [
        Claim(f"after stage 1 the rows of W carry more energy in V than random rows (r/d) (d = {d}, T₁ = {many})",
              SOURCE, over_seeds(energy.sel(t1=many)), ">",
              exact(float(at.subspace_energy_chance.sel(t1=many))), BASIS + "; chance r/d exact"),
        Claim(f"stage 1 finds all of V: the smallest principal cosine between W's top-r span and V reaches 1 "
              f"(d = {d}, T₁ = {many})", SOURCE, over_seeds(at.principal_cosines.sel(t1=many).min("principal_angle")),
              "≥", exact(1.0), BASIS, REACHES, REACHES_SOURCE),
    ]
    if few < many:
        rows.append(Claim(f"more stage-1 prompts align W better with V (T₁ = {many} against {few}, d = {d})", SOURCE,
                          over_seeds(energy.sel(t1=many)), ">", over_seeds(energy.sel(t1=few)), BASIS))
    small = int(cube.d.min())
    if small < d:
        t1 = int(cube.t1.values[len(cube.t1) // 2])
        rows.append(Claim(f"T₁ must grow with d: at a fixed T₁ = {t1} the rows of W carry less of V at d = {d} than "
                          f"at d = {small}", SOURCE, over_seeds(cube.subspace_energy.sel(d=d, t1=t1)), "<",
                          over_seeds(cube.subspace_energy.sel(d=small, t1=t1)), BASIS))
    return rows
