"""Claims of Oko, Song, Suzuki, Wu 2024, stage 1, on the single_index_subspace cube (its largest d): one
gradient step on W finds the task subspace."""

from iclab.claims import Claim, Estimate, over_seeds

SOURCE = "Oko, Song, Suzuki, Wu 2024, stage 1"
BASIS = "95% band over seeds"


def claims(cube):
    d = int(cube.d.max())
    at = cube.sel(d=d)
    few, many = int(at.t1.min()), int(at.t1.max())
    energy = at.subspace_energy
    rows = [
        Claim(f"after stage 1 the rows of W carry more energy in V than random rows (r/d) (d = {d}, T₁ = {many})",
              SOURCE, over_seeds(energy.sel(t1=many)), ">",
              Estimate(float(at.subspace_energy_chance.sel(t1=many))), BASIS + "; chance r/d exact"),
    ]
    if few < many:
        rows.append(Claim(f"more stage-1 prompts align W better with V (T₁ = {many} against {few}, d = {d})", SOURCE,
                          over_seeds(energy.sel(t1=many)), ">", over_seeds(energy.sel(t1=few)), BASIS))
    return rows
