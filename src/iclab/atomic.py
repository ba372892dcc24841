"""Atomic file writes: a crash never leaves a file that looks complete.

Every output of iclab (cubes, checkpoints, figures, tables) is written to a temporary file in the
target's own folder and renamed over the target (``os.replace`` is atomic on POSIX file systems).
The file gets the mode a plain ``open`` would give it (0666 less the user's umask), so that a group
sharing ``results/`` can read it: ``mkstemp`` alone leaves 0600.
"""

from __future__ import annotations

import glob
import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def current_umask() -> int:
    """The process's umask (reading it means setting it: set it back at once)."""
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def atomic_write(path: str | os.PathLike, write: Callable[[Path], None]) -> None:
    """Call ``write(tmp)`` on a temporary path beside ``path``, then rename it to ``path``.

    The temporary file keeps the target's suffix (writers such as matplotlib pick the format from it)
    and is removed if ``write`` fails; the temporaries of earlier writes to ``path`` that were killed go first.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers(path)  # of an earlier write to it that was killed
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=f".tmp{path.suffix}", dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def remove_leftovers(path: str | os.PathLike) -> None:
    """Remove the temporary files that writes to ``path`` left when their process was killed (SIGKILL runs no
    clean-up): ``.<name>.<random>.tmp<suffix>`` beside it. ``atomic_write`` calls it; call it where a target is
    deleted instead of written again, once nothing writes it."""
    path = Path(path)
    for leftover in path.parent.glob(f".{glob.escape(path.name)}.*.tmp{glob.escape(path.suffix)}"):
        leftover.unlink(missing_ok=True)


def write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write(path, lambda tmp: tmp.write_text(text))
