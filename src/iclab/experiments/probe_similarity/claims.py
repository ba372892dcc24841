"""Claims of Fu, Chen, Jia, Sharan 2024, §4 (their Def. 3.4 and reported similarities), on the probe_similarity
cube (its first d and seed). Similarities are means over the evaluation prompts and counts are argmaxes over
the iteration grid; the cube stores no interval for them, so these comparisons have no tolerance."""

from iclab.claims import Claim, Estimate, has

SOURCE = "Fu, Chen, Jia, Sharan 2024"
BASIS = "no interval stored for similarities and best counts: compared as measured"


def best_newton(cube, probed: str, layer: int) -> Estimate:
    soe = cube.soe_newton.sel(probed=probed, layer=layer)
    return Estimate(float(soe.newton_iterations[int(soe.argmax("newton_iterations"))]))


def output_similarity(cube, probed: str, algorithm: str) -> Estimate:
    soe = cube[f"output_soe_{algorithm}"].sel(probed=probed)
    return Estimate(float(soe.max()))  # best over the algorithm's grid (a scalar for online GD)


def claims(cube):
    at = cube.isel(d=0, seed=0)
    last = int(at.layer.max())
    rows = []
    if has(at, probed="gpt2", layer=1):
        rows.append(Claim(
            f"the best-matching Newton iteration count grows with depth (GPT-2 layer {last} against layer 1; "
            "paper 21 against 1)", f"{SOURCE}, §4, Def. 3.4", best_newton(at, "gpt2", last), ">",
            best_newton(at, "gpt2", 1), BASIS))
    if has(at, probed="gpt2"):
        rows.append(Claim(
            "GPT-2's output is more similar to Newton than to online GD (paper 0.991 against 0.806)", f"{SOURCE}, §4",
            output_similarity(at, "gpt2", "newton"), ">", output_similarity(at, "gpt2", "online_gd"), BASIS))
    if has(at, probed="lstm"):
        rows.append(Claim(
            "the LSTM's output is more similar to online GD than to Newton (paper 0.954 against 0.920)",
            f"{SOURCE}, §4", output_similarity(at, "lstm", "online_gd"), ">",
            output_similarity(at, "lstm", "newton"), BASIS))
    return rows
