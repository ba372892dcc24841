"""The claims table: one row per reproduced claim of every experiment, each stating whether it holds.

Each experiment package has ``claims.py`` with ``claims(cube) -> list[Claim]``, reading the experiment's cube
only (torch-free, like its figure). A claim compares a measured value with what the paper or its theory says:

- ``≈``: |measured − expected| ≤ tolerance (the theory's value is reproduced);
- ``<`` / ``>``: measured < expected − tolerance / measured > expected + tolerance (an ordering the paper
  states, shown beyond the noise);
- ``≤`` / ``≥``: measured ≤ expected + tolerance / measured ≥ expected − tolerance (a bound not violated).

The tolerance is never taken from the measured value's size: it is the half-width at ``LEVEL`` of the
measured value's error (the spread between training seeds and the evaluation set's Monte-Carlo error, as in
``iclab.intervals``) and of the expected value's own Monte-Carlo error, added in quadrature, plus a slack the
theory states (e.g. the 1/M term a finite test prompt leaves above an M → ∞ limit), named in ``basis``.
At ``LEVEL`` = 95% (the figures' bands) a true ``≈`` claim fails by chance in at most about 1 row in 20.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import xarray as xr

from iclab import experiments, intervals
from iclab.errors import ExperimentError, UsageError
from iclab.atomic import write_text

LEVEL = intervals.LEVEL  # the level of the bands drawn in the figures
RELATIONS = ("≈", "<", ">", "≤", "≥")
COLUMNS = ("experiment", "claim", "source", "measured", "relation", "expected", "tolerance", "holds", "basis")


@dataclass(frozen=True)
class Estimate:
    """A value and the half-width of its ``LEVEL`` interval (0 for an exact value)."""

    value: float
    half_width: float = 0.0


def over_seeds(values: xr.DataArray, sems: xr.DataArray | None = None, seed_dim: str = "seed") -> Estimate:
    """The mean over training seeds of a scalar-per-seed ``values`` and its ``LEVEL`` half-width: Student-t
    over seeds plus the evaluation set's s.e. (``iclab.intervals.band``)."""
    if seed_dim not in values.dims:
        values, sems = values.expand_dims(seed_dim), None if sems is None else sems.expand_dims(seed_dim)
    per_seed = values.transpose(..., seed_dim).values
    sem = None if sems is None else sems.transpose(..., seed_dim).values
    mean, low, high = intervals.band(per_seed, sem, level=LEVEL)
    return Estimate(float(mean), float(high - mean))


def has(cube: xr.Dataset, **coords) -> bool:
    """Whether the cube has every given coordinate value (a claim about a learner, a case or a sweep value that
    this config did not run is left out)."""
    return all(dim in cube.coords and value in cube[dim].values for dim, value in coords.items())


def difference(a: Estimate, b: Estimate) -> Estimate:
    """a − b of two independent estimates (half-widths added in quadrature)."""
    return Estimate(a.value - b.value, math.hypot(a.half_width, b.half_width))


def with_sem(value: float, sem: float) -> Estimate:
    """A Monte-Carlo estimate with standard error ``sem`` (a theory's integral over designs)."""
    return Estimate(float(value), intervals.quantile(1, LEVEL) * float(sem))


@dataclass(frozen=True)
class Claim:
    claim: str
    source: str  # paper and result: "Zhang, Wu, Bartlett 2024, Thm 4.1"
    measured: Estimate
    relation: str
    expected: Estimate
    basis: str  # where the tolerance comes from
    slack: float = 0.0  # a term the theory itself leaves (stated in basis)

    def __post_init__(self):
        if self.relation not in RELATIONS:
            raise ValueError(f"relation {self.relation!r}: allowed {', '.join(RELATIONS)}")

    @property
    def tolerance(self) -> float:
        return math.hypot(self.measured.half_width, self.expected.half_width) + self.slack

    @property
    def holds(self) -> bool:
        m, e, t = self.measured.value, self.expected.value, self.tolerance
        return {
            "≈": abs(m - e) <= t,
            "<": m < e - t,
            ">": m > e + t,
            "≤": m <= e + t,
            "≥": m >= e - t,
        }[self.relation]

    def row(self, experiment: str) -> dict:
        return {
            "experiment": experiment,
            "claim": self.claim,
            "source": self.source,
            "measured": self.measured.value,
            "relation": self.relation,
            "expected": self.expected.value,
            "tolerance": self.tolerance,
            "holds": "yes" if self.holds else "no",
            "basis": self.basis,
        }


def experiment_claims(name: str, cube: xr.Dataset) -> list[Claim]:
    """The claims of experiment ``name`` that its cube can check (none where its config ran too little)."""
    path = experiments.claims_file(name)
    if not path.is_file():
        raise UsageError(f"experiment {name!r} has no claims ({path} missing)")
    found = importlib.import_module(f"iclab.experiments.{name}.claims").claims(cube)
    if not isinstance(found, list) or not all(isinstance(c, Claim) for c in found):
        raise ExperimentError(f"{path}: claims(cube) must return a list of Claim")
    return found


def claims_table(cubes: dict[str, xr.Dataset]) -> pd.DataFrame:
    """One row per claim of every experiment in ``cubes`` (name → cube), in the given order."""
    rows = [claim.row(name) for name, cube in cubes.items() for claim in experiment_claims(name, cube)]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def markdown(table: pd.DataFrame) -> str:
    """The table as Markdown, numbers to 4 significant digits, with a count of the claims that hold."""
    shown = table.copy()
    for column in ("measured", "expected", "tolerance"):
        shown[column] = [f"{v:.4g}" for v in shown[column]]
    held = int((table["holds"] == "yes").sum())
    summary = f"{held} of {len(table)} claims hold (tolerances at {LEVEL:.0%})."
    return summary + "\n\n" + shown.to_markdown(index=False) + "\n"


def html(table: pd.DataFrame) -> str:
    """The table as a standalone HTML page (what the Snakemake report shows), rows that fail in red."""
    shown = table.copy()
    for column in ("measured", "expected", "tolerance"):
        shown[column] = [f"{v:.4g}" for v in shown[column]]
    body = shown.style.hide(axis="index").apply(
        lambda row: ["background: #fde2e2" if row["holds"] == "no" else ""] * len(row), axis=1
    ).to_html()
    held = int((table["holds"] == "yes").sum())
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>iclab claims</title><style>"
        "body{font-family:sans-serif;font-size:13px}td,th{padding:3px 6px;border-bottom:1px solid #ddd}</style>"
        f"</head><body><p>{held} of {len(table)} claims hold (tolerances at {LEVEL:.0%}).</p>{body}</body></html>\n"
    )


def write_claims(table: pd.DataFrame, stem: Path) -> None:
    """``stem``.csv (full precision), ``stem``.md and ``stem``.html, each written atomically."""
    write_text(stem.with_suffix(".csv"), table.to_csv(index=False, float_format="%.10g"))
    write_text(stem.with_suffix(".md"), markdown(table))
    write_text(stem.with_suffix(".html"), html(table))
