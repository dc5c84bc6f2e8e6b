"""argparse ``type=`` validators: a bad numeric flag is refused while parsing, naming the allowed range."""
from __future__ import annotations

import argparse
from pathlib import Path


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
        raise argparse.ArgumentTypeError(f"the name '{long[0][:40]}…' has {len(long[0].encode())} bytes; file systems allow at most {NAME_MAX} per name — choose a shorter one")
    return Path(text)
