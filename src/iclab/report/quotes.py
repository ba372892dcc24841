"""The numbers the docs quote from a run's cubes, each named and computed here, never typed.

An experiment whose docs quote its cube has a ``quotes.py`` in its package with ``quotes(cube) -> list[Quote]``. The
gallery stage writes every experiment's quotes of the gallery's run to ``docs/gallery/quotes.json``;
``iclab.publish.docblocks``' ``quote`` blocks (one number inline) and ``quotes`` blocks (an experiment's table) read it,
so a page says what the gallery's cubes say, and a redraw rewrites both.

The formatting helpers write numbers as the docs do: a Unicode minus (−) and an en dash (–) for a range.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

MINUS = "\u2212"


@dataclass(frozen=True)
class Quote:
    """One quoted number (or short list of numbers) of an experiment's cube."""

    name: str  # the block's key after the experiment: <!-- iclab:quote ltb_gap.lsa_gap -->
    text: str  # as the docs show it
    meaning: str  # what it is, and which of the cube's variables it is read from


def signed(text: str) -> str:
    """``text`` with a leading hyphen-minus written as the minus sign."""
    return MINUS + text[1:] if text.startswith("-") else text


def fixed(value: float, places: int) -> str:
    """``value`` to ``places`` decimals (a negative zero shown as 0)."""
    rounded = round(float(value), places)
    return signed(f"{rounded + 0.0:.{places}f}")


def significant(value: float, digits: int = 2) -> str:
    """``value`` to ``digits`` significant digits, in plain or scientific notation as ``g`` chooses."""
    return signed(f"{float(value):.{digits}g}")


def kept(value: float, digits: int = 2) -> str:
    """``value`` to ``digits`` significant digits, trailing zeros kept (0.10, not 0.1; 10, not 10.)."""
    return signed(f"{float(value):#.{digits}g}").rstrip(".")


def percent(value: float, places: int = 0) -> str:
    """A fraction as a percentage: 0.114 → 11% (``places`` = 0)."""
    return fixed(100 * float(value), places) + "%"


def listed(values: Iterable[float], show) -> str:
    """Each value shown by ``show``, comma-separated."""
    return ", ".join(show(value) for value in values)


def span(values: Iterable[float], show) -> str:
    """The smallest and largest of ``values`` as 'low–high' (one value where they show the same)."""
    finite = np.asarray(list(values), dtype=float)
    low, high = show(np.min(finite)), show(np.max(finite))
    return low if low == high else f"{low}–{high}"
