"""argparse ``type=`` validators (a bad numeric flag is refused while parsing, naming the allowed range) and
defaults that depend on the machine."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

MAX_DEFAULT_WORKERS = 4


def default_num_workers(cores: int | None = None) -> int:
    """``--num-workers`` by default: one data-loader worker per core this process may use, leaving one core
    to the evaluation, at most :data:`MAX_DEFAULT_WORKERS` (0 on one core: load in the main process)."""
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(0, min(cores - 1, MAX_DEFAULT_WORKERS))


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None


def positive_int(text: str) -> int:
    """An integer ≥ 1."""
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not allowed; use an integer ≥ 1")
    return value


def non_negative_int(text: str) -> int:
    """An integer ≥ 0."""
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is not allowed; use an integer ≥ 0")
    return value


def power_of_two(text: str) -> int:
    """An integer 1, 2, 4, 8, …"""
    value = _integer(text)
    if value < 1 or value & (value - 1):
        raise argparse.ArgumentTypeError(f"{value} is not a power of two; use 1, 2, 4, …, e.g. 256")
    return value


def seed(text: str) -> int:
    """A seed numpy accepts: an integer in [0, 2^32)."""
    value = _integer(text)
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"{value} is not allowed; use an integer in [0, 2^32)")
    return value


NAME_MAX = 255  # bytes per file or folder name on Linux and macOS file systems


def output_path(text: str) -> Path:
    """A path whose every file or folder name fits the file system (at most 255 bytes each)."""
    long = [part for part in Path(text).parts if len(part.encode()) > NAME_MAX]
    if long:
        raise argparse.ArgumentTypeError(
            f"the name '{long[0][:40]}…' has {len(long[0].encode())} bytes; file systems allow at most {NAME_MAX} per name — choose a shorter one"
        )
    return Path(text)
