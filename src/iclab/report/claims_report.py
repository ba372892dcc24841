"""The claims table's files: its summary line, markdown (by experiment, the verifications last), HTML (verdicts
coloured) and CSV (every column at full precision), from ``iclab.stats.claims.claims_table``'s rows.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from iclab.atomic import write_text
from iclab.stats.claims import HOLM_ALPHA, KINDS, LOOK_LEVELS, SMOKE_VERDICT, VERDICTS

INTERVAL_COLUMN = f"difference [{LOOK_LEVELS[0]:.0%} interval; {LOOK_LEVELS[1]:.0%} at look 2]"


def summary(table: pd.DataFrame) -> str:
    """'N claims: a hold, b fail, c inconclusive (96% intervals)' and the verifications' count, or a smoke run's
    warning."""
    if (table["verdict"] == SMOKE_VERDICT).any():
        return (
            f"SMOKE RUN: {len(table)} claims, none judged. The models trained a few steps on one seed "
            "(iclab.pipeline.smoke): "
            "the values below only show that every claim computes at these shapes."
        )
    claims, checks = (table[table["kind"] == kind] for kind in KINDS)
    counts, holm = ({v: int((claims[column] == v).sum()) for v in VERDICTS} for column in ("verdict", "holm_verdict"))
    text = (
        f"{len(claims)} claims: {counts['holds']} hold, {counts['fails']} fail, {counts['inconclusive']} "
        f"inconclusive ({LOOK_LEVELS[0]:.0%} intervals of measured − expected); Holm-adjusted over the {len(claims)} "
        f"({HOLM_ALPHA:.1%} family-wise a side): {holm['holds']} hold, {holm['fails']} fail, "
        f"{holm['inconclusive']} inconclusive."
    )
    if len(checks):
        passed = int((checks["verdict"] == "holds").sum())
        text += f" {len(checks)} verifications of the theory's computation (not counted): {passed} pass."
    return text

NUMBERS = ("measured", "expected", "difference", "low", "high", "margin")


def shown(table: pd.DataFrame) -> pd.DataFrame:
    out = table.copy()
    for column in NUMBERS:
        out[column] = [f"{v:.4g}" for v in out[column]]
    return out

VERIFICATIONS = "Verifications (deterministic checks of the theory's computation; not counted among the claims):"
PLURAL = {"holds": "hold", "fails": "fail"}  # "3 hold", as the summary counts
FULL_COLUMNS = ("Every column (the interval's basis, the margin's source, full precision) is in claims.csv and "
                "claims.html beside this page.")


def markdown(table: pd.DataFrame) -> str:
    """The table for people: the count of each verdict, then per experiment its counts and one line a claim (the
    claim and its source; measured against expected, with the margin; the difference's interval; the verdict and
    Holm's; the seeds, and how many would decide it), then the verifications. Numbers to 4 significant digits."""
    claims, checks = (table[table["kind"] == kind] for kind in KINDS)
    parts = [summary(table), FULL_COLUMNS]
    for experiment, rows in claims.groupby("experiment", sort=False):
        counts = ", ".join(f"{n} {PLURAL.get(verdict, verdict)}" for verdict in (*VERDICTS, SMOKE_VERDICT)
                           if (n := int((rows["verdict"] == verdict).sum())))
        title = f"## {experiment}: {len(rows)} claim{'s' * (len(rows) > 1)}, {counts}"
        parts += [title, readable(rows).to_markdown(index=False)]
    if len(checks):
        parts += [f"## {VERIFICATIONS}", readable(checks).to_markdown(index=False)]
    return "\n\n".join(parts) + "\n"

NO_SEEDS = "closed form or Monte Carlo only"  # a row's seeds where no trained model is behind it (seeds 0)


def number(value: float) -> str:
    """A value as the human tables print it: four significant digits."""
    return f"{value:.4g}"



def readable(rows: pd.DataFrame) -> pd.DataFrame:
    """One plain line a row: five columns instead of the CSV's seventeen."""
    def compared(row) -> str:
        room = f" (margin {number(row.margin)})" if row.margin > 0 else ""
        return f"{number(row.measured)} {row.relation} {number(row.expected)}{room}"

    def verdict(row) -> str:
        holm = row.holm_verdict
        return row.verdict + (f" (Holm: {holm})" if holm not in ("—", row.verdict) else "")

    def seeds(row) -> str:
        trained = NO_SEEDS if row.seeds == 0 else str(row.seeds)
        return trained + (f"; to decide: {row.seeds_needed}" if row.seeds_needed else "")

    return pd.DataFrame({
        "claim (source)": [f"{row.claim} ({row.source})" for row in rows.itertuples()],
        "measured vs expected": [compared(row) for row in rows.itertuples()],
        INTERVAL_COLUMN: [f"{number(row.difference)} [{number(row.low)}, {number(row.high)}]"
                          for row in rows.itertuples()],
        "verdict": [verdict(row) for row in rows.itertuples()],
        "seeds": [seeds(row) for row in rows.itertuples()],
    })

COLOURS = {
    "fails": "background: #fde2e2",
    "inconclusive": "background: #fff4d6",
    "holds": "",
    SMOKE_VERDICT: "background: #e8e8e8",
}


def html(table: pd.DataFrame) -> str:
    """The table as a standalone HTML page (what the Snakemake report shows): failing rows red, inconclusive
    ones yellow. The styles' ids are fixed (pandas draws random ones), so one table always writes the same page."""
    claims, checks = (
        shown(table[table["kind"] == kind]).style.set_uuid(kind).hide(axis="index").apply(
            lambda row: [COLOURS[row["verdict"]]] * len(row), axis=1
        ).to_html()
        for kind in KINDS
    )
    verifications = f"<p>{VERIFICATIONS}</p>{checks}" if (table["kind"] == "verification").any() else ""
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>iclab claims</title><style>"
        "body{font-family:sans-serif;font-size:13px}td,th{padding:3px 6px;border-bottom:1px solid #ddd}</style>"
        f"</head><body><p>{summary(table)}</p>{claims}{verifications}</body></html>\n"
    )


def write_claims(table: pd.DataFrame, stem: Path) -> None:
    """``stem``.csv (full precision), ``stem``.md and ``stem``.html, each written atomically."""
    write_text(stem.with_suffix(".csv"), table.to_csv(index=False, float_format="%.10g"))
    write_text(stem.with_suffix(".md"), markdown(table))
    write_text(stem.with_suffix(".html"), html(table))

