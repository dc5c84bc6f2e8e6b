"""argparse ``type=`` validators (a bad numeric flag is refused while parsing, naming the allowed range; a missing
input folder or file too, in the one line the later check would give) and defaults that depend on the machine."""

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


def data_folder(text: str) -> Path:
    """An existing folder (``--data-dir``), else the one-line error of
    :func:`experiment_1.data.shards.missing_data_dir`, raised while the flags are parsed: a typo is named in
    seconds, before any model is built. Only a given flag is checked: the default (``$MOE_DATA``,
    ``imagenet-1k/data``) is checked where the run reads it."""
    from experiment_1.data.shards import missing_data_dir  # the data modules import torch; this module stays light

    path = Path(text)
    if not path.is_dir():
        raise missing_data_dir(path, given=True)
    return path


def sample_list_file(text: str) -> Path:
    """An existing file (``--sample-index``), else the one-line error of
    :func:`experiment_1.data.sample_list.missing_sample_list`, raised while the flags are parsed. A default that is
    not a string is never passed here (argparse converts string defaults only): the step's default list is
    checked where the run reads it."""
    from experiment_1.data.sample_list import missing_sample_list

    path = Path(text)
    if not path.exists():
        raise missing_sample_list(path)
    return path
