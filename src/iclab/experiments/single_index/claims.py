"""Claims of Oko, Song, Suzuki, Wu 2024 (§5) and Suzuki's 2024 talk on the single_index cube: risk over the zero
predictor's, pooled over the last bin of test prompt lengths n*. Each case (d, r) has its own evaluation prompts;
a seed's models of two cases train on the same seed (paired)."""

from iclab.stats.claims import NULL_FRACTION, NULL_SOURCE, Claim
from iclab.stats.estimates import exact, groups_at, has, over_seeds
from iclab.stats.estimates import difference as minus

SOURCE = "Oko, Song, Suzuki, Wu 2024, §5; Suzuki 2024"
BASIS = "risk over the zero predictor's per seed (t, paired) and evaluation prompts (normal)"
PRETRAINED = {"two_stage": "two-stage transformer", "gpt2": "GPT-2"}  # the pretrained learners, in words


def relative(cube, case: str, learner: str):
    at = cube.sel(case=case).isel(position_bin=-1)
    zero = at.binned_risk.sel(learner="zero").mean("seed")
    groups = groups_at(at, "binned_risk_groups", learner=learner)
    return over_seeds(at.binned_risk.sel(learner=learner) / zero, at.binned_risk_sem.sel(learner=learner) / zero,
                      f"single_index {case}", None if groups is None else groups / zero)


def at_query(cube, case: str, learner: str):
    """Risk at the final query over the zero predictor's there (the two-layer net is fitted at a few lengths
    only, the final one among them)."""
    at = cube.sel(case=case)
    last = int(at.position.max())
    zero = at.query_risk.sel(learner="zero").mean("seed")
    groups = groups_at(at, learner=learner, position=last)
    return over_seeds(at.query_risk.sel(learner=learner) / zero, at.query_risk_sem.sel(learner=learner) / zero,
                      f"single_index {case}", None if groups is None else groups / zero)


def varied(cube, held: str, varies: str) -> tuple[str, str] | None:
    """The cases with the smallest and largest ``varies`` at the value of ``held`` that has most cases."""
    values = [int(v) for v in cube[held].values]
    common = max(set(values), key=values.count)
    cases = [c for c, v in zip(cube.case.values, values) if v == common]
    if len(cases) < 2:
        return None
    ordered = sorted(cases, key=lambda c: int(cube[varies].sel(case=c)))
    return str(ordered[0]), str(ordered[-1])


def claims(cube):
    if not has(cube, learner="zero"):  # the risks are relative to the zero predictor's
        return []
    bins = f"n* ∈ [{int(cube.bin_first[-1])}, {int(cube.bin_last[-1])}]"
    pretrained = [m for m in PRETRAINED if has(cube, learner=m)]
    rows = []
    over_d, over_r = varied(cube, "r", "d"), varied(cube, "d", "r")
    if over_d:
        low, high = over_d
        for learner in pretrained:
            name = PRETRAINED[learner]
            rows.append(Claim(f"the pretrained {name}'s risk does not depend on d ({high} against {low}, {bins})",
                              SOURCE, minus(relative(cube, high, learner), relative(cube, low, learner)),
                              "≈", exact(0.0), BASIS, NULL_FRACTION, NULL_SOURCE))
        if has(cube, learner="krr"):
            rows.append(Claim(f"kernel ridge on the test prompt degrades as d grows ({high} against {low}, {bins})",
                              SOURCE, relative(cube, high, "krr"), ">", relative(cube, low, "krr"), BASIS))
            rows += [
                Claim(f"the pretrained {PRETRAINED[learner]} beats kernel ridge at the largest d ({high}, {bins})",
                      SOURCE, relative(cube, high, learner), "<", relative(cube, high, "krr"), BASIS)
                for learner in pretrained
            ]
        if has(cube, learner="two_layer_net"):
            n_star = f"n* = {int(cube.position.max())}"
            rows.append(Claim(f"a two-layer net trained on the test prompt degrades as d grows ({high} against {low}, "
                              f"{n_star})", SOURCE, at_query(cube, high, "two_layer_net"), ">",
                              at_query(cube, low, "two_layer_net"), BASIS))
            rows += [
                Claim(f"the pretrained {PRETRAINED[learner]} beats the two-layer net on the test prompt at the largest "
                      f"d ({high}, {n_star})", SOURCE, at_query(cube, high, learner), "<",
                      at_query(cube, high, "two_layer_net"), BASIS)
                for learner in pretrained
            ]
    if over_r and has(cube, learner="two_stage"):
        low, high = over_r
        rows.append(Claim(f"the two-stage transformer's risk grows with r ({high} against {low}, {bins})", SOURCE,
                          relative(cube, high, "two_stage"), ">", relative(cube, low, "two_stage"), BASIS))
    return rows
