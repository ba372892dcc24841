"""Claims of Zhang, Frei, Bartlett 2024, Figure 1, on the zfb_figure1 cube (its largest N): GPT-2 trained on a
fixed covariance, tested on it and on scaled random covariances."""

from iclab.claims import Claim, Estimate, has, over_seeds

SOURCE = "Zhang, Frei, Bartlett 2024, Figure 1"
BASIS = "95% band of the error/d (seeds, evaluation prompts)"


def claims(cube):
    n = int(cube.n.max())
    if not has(cube, train="fixed", test="fixed", learner="gpt2"):
        return []
    at = cube.sel(n=n, train="fixed", learner="gpt2")
    d = float(cube.d.sel(n=n, train="fixed").isel(test=0))
    shifted = [t for t in cube.test.values if t != "fixed"]

    def error(test: str, position: int):
        point = {"test": test, "position": position}
        return over_seeds(at.risk.sel(point) / d, at.risk_sem.sel(point) / d)

    rows = [
        Claim(f"GPT-2 trained and tested on the fixed covariance is near least squares at M = N = {n} "
              f"(least squares is exact for N ≥ d = {d:g})", SOURCE, error("fixed", n), "≈",
              Estimate(0.0), BASIS + "; least squares exact"),
    ]
    if shifted:
        rows.append(Claim(f"GPT-2's error at M = N grows on scaled random covariances ({shifted[-1]})", SOURCE,
                          error(shifted[-1], n), ">", error("fixed", n), BASIS))
    if int(at.position.max()) > n:
        last = int(at.position.max())
        rows.append(Claim(f"beyond the training length the error spikes (M = {last} against M = N = {n}, fixed)",
                          SOURCE, error("fixed", last), ">", error("fixed", n), BASIS))
    return rows
