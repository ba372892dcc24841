"""Several trainings at once on one GPU (a local run with ``--resources gpu=k gpu_mem_mb=<the card's>``): the tier's
GPU jobs packed at the throughput gain ``gpu-pack`` measured, and whether they fit in a day.

The card's busy time, not a schedule: k trainings packed at once finish, together, ``gain`` times the work an hour
of one alone (``gpu-pack``'s throughput gain, k over its slowdown). A family's packed hours are its jobs' hours
alone (``cluster.estimated_seconds``: measured, fitted or estimated) over its gain; the families' hours add. A
family that no ``gpu-pack`` result measured runs one at a time (gain 1): packing is not assumed to gain anything it
was not seen to gain. A result's gain holds at its k only where k of the family's largest reservation fit the card
(``cluster.group_device_memory_mb``, the training rule's ``gpu_mem_mb``), else that family too runs one at a time.
Batched groups are a family of their own ("gpt2 batched", ``packing_family``): a gain measured for models alone is
not theirs (a batched step is one launch stream of G members' work), so they run one at a time until ``gpu-pack``
measures batched groups.

A day's design is one that packs into ``PACKED_DAY_S``, 20 hours: the card's 24 less ``MARGIN_S``, 4 hours kept for
start-up, the captures, the CPU jobs' tail and a retry. Every verdict against "a day" reads these 20 hours.

The card's peak is a floor no packing or faster loop goes below: the tier's FLOPs at ``cluster.CARD_PEAK_FLOPS``
for each job's arithmetic. Where that floor alone passes the 20 hours, the tier "cannot fit at any rate".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from iclab.compute import cluster

DEVICE_MEMORY_MB = 80_000  # one 80 GB card (H100, A100 80 GB)
DAY_S = 24 * 3600.0  # the card for a day
MARGIN_S = 4 * 3600.0  # kept for start-up, the captures, the CPU jobs' tail and a retry
PACKED_DAY_S = DAY_S - MARGIN_S  # what a day's design may pack: 20 hours


@dataclass(frozen=True)
class Gain:
    """A throughput gain ``gpu-pack`` measured: ``k`` copies of ``experiment``'s training on ``card``."""

    family: str
    k: int
    gain: float
    card: str
    experiment: str

    @classmethod
    def of(cls, result: dict[str, Any]) -> Gain:
        """From a ``gpu_pack_<shape>_<card>.json`` (its spec a job's, or a batched group's list)."""
        group = result["spec"] if isinstance(result["spec"], list) else [result["spec"]]
        return cls(packing_family(group), result["k"], result["throughput_gain"], result["card"],
                   result["experiment"])


def packing_family(group: list[dict[str, Any]]) -> str:
    """The family a GPU job packs in: its model's name, with " batched" for a batched group (``cluster.batched``)."""
    name = group[0]["model"]["name"]
    return f"{name} batched" if cluster.batched(group) else name


def gains(results: list[dict[str, Any]]) -> dict[str, Gain]:
    """Each family's gain from ``gpu-pack`` results: the smallest measured where several were."""
    by_family: dict[str, Gain] = {}
    for gain in map(Gain.of, results):
        if gain.family not in by_family or gain.gain < by_family[gain.family].gain:
            by_family[gain.family] = gain
    return by_family


@dataclass(frozen=True)
class FamilyPacking:
    """One model family's GPU jobs on one card: hours alone, the k and gain they pack at, and the k memory allows."""

    family: str
    jobs: int
    alone_s: float
    by_memory: int
    measured: Gain | None

    @property
    def packs(self) -> bool:
        """Whether the measured gain applies: measured, and its k fits the card's memory."""
        return self.measured is not None and self.measured.k <= self.by_memory

    @property
    def k(self) -> int:
        return self.measured.k if self.packs else 1

    @property
    def gain(self) -> float:
        return self.measured.gain if self.packs else 1.0

    @property
    def packed_s(self) -> float:
        return self.alone_s / self.gain

    @property
    def basis(self) -> str:
        if self.measured is None:
            return "not measured: one at a time"
        if not self.packs:
            return f"k = {self.measured.k} measured does not fit the card: one at a time"
        return f"measured on {self.measured.card} at {self.measured.experiment}'s shape"


def family_packing(groups: list[list[dict[str, Any]]], alone_s: list[float], measured: dict[str, Gain],
                   device_mb: int = DEVICE_MEMORY_MB, rates: cluster.GpuRates | None = None) -> list[FamilyPacking]:
    """The GPU training jobs ``groups`` (each a job's models), of ``alone_s`` seconds each alone, by family."""
    by_family: dict[str, list[int]] = {}
    for index, group in enumerate(groups):
        by_family.setdefault(packing_family(group), []).append(index)
    rows = []
    for family, members in by_family.items():
        largest = max(cluster.group_device_memory_mb(groups[i], rates=rates) for i in members)
        rows.append(FamilyPacking(family, len(members), sum(alone_s[i] for i in members),
                                  max(1, device_mb // largest), measured.get(family)))
    return rows


def packed_seconds(families: list[FamilyPacking]) -> float:
    """The card's busy seconds over every family, each packed at its gain."""
    return sum(family.packed_s for family in families)


def floor_seconds(groups: list[list[dict[str, Any]]]) -> float:
    """The GPU jobs' FLOPs at the card's dense peak for each job's arithmetic (``cluster.CARD_PEAK_FLOPS``): no card
    of that peak, packed or not, runs them faster."""
    total = 0.0
    for group in groups:
        for job in group:
            size = cluster.model_size(job)
            total += size.steps * size.flops_per_step / cluster.CARD_PEAK_FLOPS[cluster.arithmetic(job)]
    return total


def day_verdict(packed_s: float, floor_s: float, day_s: float = PACKED_DAY_S) -> str:
    """Whether the packed GPU jobs fit in ``day_s`` (a day's 20 packed hours): "cannot fit at any rate" where the
    peak's floor alone passes it, else within it, or the speed-up their steps would need."""
    if floor_s > day_s:
        return (f"cannot fit at any rate: their FLOPs alone take {floor_s / 3600:,.1f} h at the card's peak, "
                f"a day's design {day_s / 3600:g}")
    if packed_s <= day_s:
        return f"fits: {packed_s / 3600:,.1f} h of a day's {day_s / 3600:g}"
    return (f"{packed_s / day_s:.2g}× over: their steps would have to run {packed_s / day_s:.2g}× faster "
            f"(the card's peak allows up to {packed_s / floor_s:,.0f}×)")
