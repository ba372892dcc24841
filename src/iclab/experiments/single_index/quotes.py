"""The numbers the docs quote from the single_index cube (Oko, Song, Suzuki, Wu 2024, §5): each learner's risk over
the zero predictor's per case (d, r) as the claims read it (the last bin of n*, the two-layer net at the final
query), GPT-2's also at n* ∈ [64, 80], stage 1's row energy in V, and the same across d and across r."""

import numpy as np

from iclab.experiments.single_index.claims import at_query, relative
from iclab.report.quotes import Quote, fixed, listed, span

MID_N = 64  # GPT-2 is quoted also over the bin of n* that holds this length ([64, 80])
SHORT_N = 32  # "short prompts": the bins of n* that start below this
LEARNERS = {"two_stage": "the two-stage model", "krr": "kernel ridge", "gpt2": "GPT-2"}


def learners_in(cube) -> dict[str, str]:
    """The quoted learners the cube holds (a smoke or tiny run may leave some out)."""
    return {learner: words for learner, words in LEARNERS.items() if learner in cube.learner.values}


def two(value: float) -> str:
    return fixed(value, 2)


def slug(case: str) -> str:
    """'d=8, r=2' → 'd8_r2' (a quote's name)."""
    return case.replace("=", "").replace(", ", "_")


def ordered_cases(cube, held: str, varies: str) -> list[str]:
    """The cases at the value of ``held`` that most cases share, by increasing ``varies`` (as the claims and the
    figure pick them)."""
    values = [int(v) for v in cube[held].values]
    common = max(set(values), key=values.count)
    cases = [str(c) for c, v in zip(cube.case.values, values) if v == common]
    return sorted(cases, key=lambda c: int(cube[varies].sel(case=c)))


def mid_bin(cube) -> int | None:
    """The index of the bin of n* that holds MID_N (None where the prompts are shorter: a tiny run)."""
    holding = np.flatnonzero((cube.bin_first.values <= MID_N) & (cube.bin_last.values >= MID_N))
    return int(holding[0]) if holding.size else None


def at_mid(cube, case: str, learner: str):
    """``relative`` (which reads the last bin) over the bin that holds MID_N: the bins after it cut off."""
    return relative(cube.isel(position_bin=slice(None, mid_bin(cube) + 1)), case, learner)


def per_case(cube, case: str) -> list[Quote]:
    name, where = slug(case), f"({case}"
    last = f"n* ∈ [{int(cube.bin_first[-1])}, {int(cube.bin_last[-1])}]"
    found = [Quote(f"{learner}_{name}", two(relative(cube, case, learner).value),
                   f"{words}'s risk over the zero predictor's, {last}, mean over seeds {where}; binned_risk)")
             for learner, words in learners_in(cube).items()]
    if "two_layer_net" in cube.learner.values:
        found.append(Quote(f"two_layer_net_{name}", two(at_query(cube, case, "two_layer_net").value),
                           f"the two-layer net's risk over the zero predictor's at n* = {int(cube.position.max())} "
                           f"{where}; query_risk)"))
    if "gpt2" in cube.learner.values:
        found.append(Quote(f"gpt2_seeds_{name}", listed(relative(cube, case, "gpt2").per_seed, lambda v: fixed(v, 3)),
                           f"GPT-2's, {last}, per seed {where}; binned_risk)"))
    if "gpt2" in cube.learner.values and mid_bin(cube) is not None:
        mid = f"n* ∈ [{int(cube.bin_first[mid_bin(cube)])}, {int(cube.bin_last[mid_bin(cube)])}]"
        found.append(Quote(f"gpt2_mid_{name}", two(at_mid(cube, case, "gpt2").value),
                           f"GPT-2's risk over the zero predictor's, {mid}, mean over seeds {where}; binned_risk)"))
    found.append(Quote(f"energy_{name}", two(cube.subspace_energy.sel(case=case).mean("seed")),
                       f"stage 1's mean row energy in V, mean over seeds {where}; subspace_energy)"))
    return found


def short_bins_highest(cube, cases: list[str]) -> str:
    """In how many of the bins of n* starting below SHORT_N the two-stage model's mean over seeds at the last of
    ``cases`` (the largest d) is above every other case's: 'k of m'."""
    risk = cube.binned_risk.sel(case=cases).mean("seed")  # (case, learner, position_bin)
    ratio = risk.sel(learner="two_stage") / risk.sel(learner="zero")  # (case, position_bin)
    short = ratio.isel(position_bin=np.flatnonzero(cube.bin_first.values < SHORT_N)).values  # (case, bin)
    highest = (short[-1] > short[:-1].max(axis=0)).sum()
    return f"{highest} of {short.shape[1]}"


def across(cube, cases: list[str], varies: str) -> list[Quote]:
    """Each learner's risk over the cases where ``varies`` changes, in increasing order."""
    values = ", ".join(f"{varies} = {int(cube[varies].sel(case=c))}" for c in cases)
    found = [Quote(f"{learner}_over_{varies}", listed([relative(cube, c, learner).value for c in cases], two),
                   f"{words}'s risk over the zero predictor's, last bin of n*, mean over seeds, at {values} "
                   "(binned_risk)")
             for learner, words in learners_in(cube).items()]
    if varies == "d" and "gpt2" in cube.learner.values:
        seeds = [s for c in cases for s in relative(cube, c, "gpt2").per_seed]
        found.append(Quote("gpt2_seeds_span_over_d", span(seeds, two),
                           f"GPT-2's, last bin of n*, every seed at {values}, lowest–highest (binned_risk)"))
        if mid_bin(cube) is not None:
            found.append(Quote("gpt2_mid_over_d", listed([at_mid(cube, c, "gpt2").value for c in cases], two),
                               f"GPT-2's over the bin of n* that holds {MID_N}, mean over seeds, at {values} "
                               "(binned_risk)"))
    if varies == "d":
        found.append(Quote("short_bins_largest_d_highest", short_bins_highest(cube, cases),
                           f"the bins of n* starting below {SHORT_N} where the two-stage model's mean over seeds at "
                           "the largest d is above the other d's (binned_risk over the zero predictor's)"))
    return found


def quotes(cube) -> list[Quote]:
    cases = [str(c) for c in cube.case.values]
    return [*[q for case in cases for q in per_case(cube, case)],
            *across(cube, ordered_cases(cube, "r", "d"), "d"), *across(cube, ordered_cases(cube, "d", "r"), "r")]
