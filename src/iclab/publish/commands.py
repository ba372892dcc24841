"""Publishing as commands: the gallery's images and the docs' generated blocks.

Each command: its arguments (``arguments_<name>``) and its body (``run_<name>``), registered in ``COMMANDS``,
which ``iclab.__main__`` turns into the parser. Heavy imports stay inside the bodies: ``--help`` answers at once.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from iclab.cli import json_arg

log = logging.getLogger("iclab")


def arguments_gallery(s: argparse.ArgumentParser) -> None:
    s.add_argument("--figures", type=Path, nargs="+", required=True, help="results/figures/<name>.png")
    s.add_argument("--cubes", type=Path, nargs="+", required=True, help="results/cubes/<name>.nc of each figure")
    s.add_argument("--config", type=json_arg, required=True, help="the run's resolved config, as JSON")
    s.add_argument("--config-files", nargs="+", required=True, help="the config files the run was given")
    s.add_argument("--claims", type=Path, help="the run's results/tables/claims.md, copied beside the images")
    s.add_argument("--out-dir", type=Path, required=True)


def run_gallery(args: argparse.Namespace) -> None:
    from iclab.publish.gallery import make_gallery

    manifest = make_gallery(args.figures, args.cubes, args.out_dir, args.config, args.config_files, args.claims)
    log.info("wrote %d images (%.2f MB) and %s/manifest.json", len(manifest["images"]), manifest["total_bytes"] / 1e6,
             args.out_dir)


def arguments_docs(s: argparse.ArgumentParser) -> None:
    s.add_argument("--check", action="store_true", help="only name the stale blocks (exit 1 if any)")
    s.add_argument("--root", type=Path, default=Path("."), help="the repository (default: here)")


def run_docs(args: argparse.Namespace) -> None:
    from iclab.publish.docblocks import stale, write

    if args.check:
        found = stale(args.root)
        if found:
            log.error("stale generated blocks in %s: run `python -m iclab docs`", ", ".join(found))
            raise SystemExit(1)
        log.info("every generated block is current")
        return
    log.info("rewrote the generated blocks of %s", ", ".join(write(args.root)) or "no page (all current)")


COMMANDS = {  # name → (help, its arguments, its body)
    "gallery": ("the front page's images: figures downscaled and stamped with their provenance", arguments_gallery,
                run_gallery),
    "docs": ("rewrite the docs' generated blocks from their committed records", arguments_docs, run_docs),
}
