"""Claims of Zhang, Frei, Bartlett 2024, Figure 1, on the zfb_figure1 cube (its largest N): GPT-2 trained on a
fixed or on random covariances, tested on the fixed one and on scaled random ones. A seed's comparisons are
paired (the same model, or models trained on the same seed's batches); each test has its own prompts."""

from iclab.stats.claims import NULL_FRACTION, NULL_SOURCE, Claim
from iclab.stats.estimates import exact, groups_at, has, over_seeds

SOURCE = "Zhang, Frei, Bartlett 2024, Figure 1"
BASIS = "error/d per seed (t, paired) and evaluation prompts (normal)"


def claims(cube):
    n = int(cube.n.max())
    if not has(cube, train="fixed", test="fixed", learner="gpt2"):
        return []
    at = cube.sel(n=n)
    d = float(cube.d.sel(n=n, train="fixed").isel(test=0))
    shifted = [t for t in cube.test.values if t != "fixed"]

    def error(test: str, position: int, train: str = "fixed"):
        point = {"train": train, "test": test, "position": position, "learner": "gpt2"}
        groups = groups_at(at, **point)
        groups = None if groups is None else groups / d
        return over_seeds(at.risk.sel(point) / d, at.risk_sem.sel(point) / d, test, groups)

    rows = []
    if has(cube, learner="zero"):
        null = float(at.risk.sel(train="fixed", test="fixed", position=n, learner="zero").mean("seed")) / d
        rows.append(Claim(f"GPT-2 trained and tested on the fixed covariance is near least squares at M = N = {n} "
                          f"(least squares is exact for N ≥ d = {d:g}; the zero predictor's error/d {null:.3g})",
                          SOURCE, error("fixed", n), "≈", exact(0.0), BASIS + "; least squares exact",
                          NULL_FRACTION * null, NULL_SOURCE))
    if shifted:
        top = shifted[-1]
        rows.append(Claim(f"GPT-2's error at M = N grows on scaled random covariances ({top} against fixed)",
                          SOURCE, error(top, n), ">", error("fixed", n), BASIS))
        if has(cube, train="random"):
            rows.append(Claim(f"training on random covariances helps on them: the model trained on random ones errs "
                              f"less at M = N ({top})", SOURCE, error(top, n, "random"), "<", error(top, n), BASIS))
    if int(at.position.max()) > n:
        last = int(at.position.max())
        rows.append(Claim(f"beyond the training length the error spikes (M = {last} against M = N = {n}, fixed)",
                          SOURCE, error("fixed", last), ">", error("fixed", n), BASIS))
    return rows
