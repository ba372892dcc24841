"""What every command of ``python -m iclab`` shares: argument types, reading a job's spec, torch's threads."""

from __future__ import annotations

import argparse
import json


def json_arg(text: str) -> dict:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"not valid JSON: {err}") from err


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or a positive integer, got {text!r}")
    return value


def from_spec(cls, spec: dict, what: str):
    """``cls.from_dict(spec)``, or a ``UsageError`` saying that ``--spec`` is not a ``what`` spec."""
    from iclab.errors import UsageError

    try:
        return cls.from_dict(spec)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise UsageError(
            f"--spec is not a valid {what} spec ({type(err).__name__}: {err}); the workflow's plan writes it: "
            "run this stage through Snakemake, or copy the iclab_spec attribute of a cube it made"
        ) from None


def set_threads(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
