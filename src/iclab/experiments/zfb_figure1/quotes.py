"""The numbers the docs quote from the zfb_figure1 cube (Figure 1) at its largest N: GPT-2's error/d at M = N per test
covariance after either training, at the longest M, the gain of training on random covariances, and the LSA limit's
error/d on the scaled tests."""

from iclab.report.quotes import Quote, fixed, percent, significant, span


TRAININGS = ("fixed", "random")  # the two trainings the gain compares


def scale_of(test: str) -> float:
    """The test covariance's scale c ("random c=4" → 4; the fixed covariance: 1)."""
    return float(test.split("c=")[1]) if "c=" in test else 1.0


def gpt2_error(at, position: int):
    """GPT-2's error/d at ``position``, mean over seeds: (test, train)."""
    return (at.risk.sel(learner="gpt2", position=position) / at.d).mean("seed")


def random_helps(error, top: str) -> list[Quote]:
    """How much less the GPT-2 trained on random covariances errs on ``top`` (none where a run trained one only)."""
    if not set(TRAININGS) <= set(error.train.values):
        return []
    gain = 1 - float(error.sel(test=top, train="random") / error.sel(test=top, train="fixed"))
    return [Quote("random_helps_top", percent(gain),
                  f"how much less GPT-2 trained on random covariances errs at M = N on {top} than the one trained on "
                  "the fixed one (1 − ratio of the seed means of risk / d)")]


def quotes(cube) -> list[Quote]:
    at = cube.sel(n=cube.n.max())
    n, last = int(at.n), int(at.position.max())
    error = gpt2_error(at, n)  # (test, train)
    shifted = [str(t) for t in at.test.values if t != "fixed"]
    scaled = [t for t in shifted if scale_of(t) > 1]
    limit = at.lsa_limit_error.sel(position=n, test=scaled)  # (test, train): already error/d
    top = shifted[-1]
    return [
        Quote("error_fixed", significant(error.sel(test="fixed", train="fixed")),
              f"GPT-2 trained and tested on the fixed covariance: error/d at M = N = {n}, mean over seeds (risk / d)"),
        Quote("error_fixed_last", significant(gpt2_error(at, last).sel(test="fixed", train="fixed")),
              f"the same at M = {last}"),
        *[Quote(f"error_{test.replace(' c=', '_c').replace('.', 'p')}", span(error.sel(test=test).values, significant),
                f"GPT-2's error/d at M = N tested on {test}, mean over seeds, over the two trainings (risk / d)")
          for test in shifted],
        *random_helps(error, top),
        *[Quote(f"lsa_limit_scaled_{train}", span(limit.sel(train=train).values, lambda v: fixed(v, 0)),
                f"the LSA limit's error/d at M = N, trained on {train} covariances, over the tests with c > 1 "
                "(lsa_limit_error)") for train in at.train.values],
    ]
