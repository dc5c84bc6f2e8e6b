"""Benchmarks, profiling and the GPU check: tools that measure the core on this machine, not steps of an experiment."""

from __future__ import annotations

import argparse

from experiment_1.run import run_config

SHARED_FLAGS = {
    "resolution": ("input size in pixels", run_config.positive_int),
    "mask_chunk": ("engine chunk size", run_config.power_of_two),
    "threads": ("intra-op threads", run_config.positive_int),
    "seed": ("seed for weights and images", run_config.seed),
}
"""The flags several tools share, each declared here once: what it sets and how its value is checked."""


def add_shared_flags(parser: argparse.ArgumentParser, **defaults: int) -> None:
    """Add the :data:`SHARED_FLAGS` named by ``defaults`` (``mask_chunk=256`` → ``--mask-chunk``, default 256)."""
    for name, default in defaults.items():
        what, parse = SHARED_FLAGS[name]
        option = "--" + name.replace("_", "-")
        parser.add_argument(option, type=parse, default=default, help=f"{what} (default: %(default)s)")
