"""The progress line of long jobs: work done, share, speed, time left, and the job's own fields."""

from __future__ import annotations

import logging
import time

log = logging.getLogger("iclab.progress")


class Progress:
    """Logs a line every ``every`` units of work and at the end.

    ``total`` units (steps, prompts) are to be done, ``start`` of them were done before this process
    (a resumed job); the speed counts only this process's work.
    """

    def __init__(self, name: str, total: int, *, start: int = 0, every: int = 1, unit: str = "steps"):
        self.name, self.total, self.start, self.every, self.unit = name, total, start, every, unit
        self.t0 = time.perf_counter()

    def due(self, done: int) -> bool:
        return done % self.every == 0 or done == self.total

    def update(self, done: int, prefix: str = "", suffix: str = "") -> None:
        """Log after ``done`` units (if due): '[name] <prefix>done/total unit (pct) <suffix> rate eta elapsed'
        (elapsed: seconds since this process started its share, to the millisecond: ``iclab.compute.cost`` reads the
        seconds per step of a smoke run from them)."""
        if not self.due(done):
            return
        elapsed = time.perf_counter() - self.t0
        rate = (done - self.start) / max(elapsed, 1e-9)
        eta = (self.total - done) / max(rate, 1e-9)
        log.info(
            "[%s] %s%d/%d %s (%3.0f%%)%s %.3g %s/s eta %.0fs elapsed %.3fs",
            self.name,
            prefix,
            done,
            self.total,
            self.unit,
            100 * done / self.total,
            f" {suffix}" if suffix else "",
            rate,
            self.unit,
            eta,
            elapsed,
        )
