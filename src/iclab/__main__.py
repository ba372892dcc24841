"""Command-line stages called by the Snakemake rules: ``python -m iclab <stage> --help``.

Each stage is a thin wrapper beside the code it drives: parse arguments, call library functions, write one cube.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never download weights or data
# cuBLAS's deterministic workspace, read when cuBLAS makes its handle: set before any CUDA call of every stage
# (fit.sgd.deterministic_kernels refuses to train on CUDA without it)
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

log = logging.getLogger("iclab")


# the modules whose COMMANDS tables (name → help, arguments, body) make the parser, beside the code they drive
COMMANDS = ("iclab.pipeline.commands", "iclab.compute.commands", "iclab.publish.commands")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m iclab", description=__doc__)
    sub = p.add_subparsers(dest="stage", required=True)
    for module in COMMANDS:
        for name, (help_, arguments, run) in importlib.import_module(module).COMMANDS.items():
            s = sub.add_parser(name, help=help_)
            arguments(s)
            s.set_defaults(run=run)
    return p


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    args = parser().parse_args(argv)  # before the heavy imports: --help and usage errors answer at once
    from iclab.errors import IclabError

    try:
        args.run(args)
    except IclabError as err:
        log.error("%s", err)
        raise SystemExit(1) from None
    log_peak_memory()


PEAK_MEMORY_LINE = "peak memory: host {host:.0f} MB, device {device:.0f} MB"  # read back by iclab.compute.cost


def log_peak_memory() -> None:
    """The process's peak resident memory (the kernel's exact high-water mark, which a sampling benchmark can miss)
    and, where CUDA ran, the peak of torch's device allocations."""
    import resource

    host_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    torch = sys.modules.get("torch")
    cuda = torch is not None and torch.cuda.is_initialized()
    device_mb = torch.cuda.max_memory_allocated() / 2**20 if cuda else 0.0
    log.info(PEAK_MEMORY_LINE.format(host=host_mb, device=device_mb))


if __name__ == "__main__":
    main()
