"""Benchmarks and profiling — how fast the engines run on this machine, and where a pass spends its time.

Question: one command, four measurements, each answering its own question (``… bench MEASUREMENT --help`` states it):

- ``engines``: naive vs prefix-tree all-mask evaluation, against the work they do (:mod:`.bench_engines`);
- ``family``: the family walk's rate against the dense tree pass's, in one run (:mod:`.bench_family`);
- ``allocator``: the default allocator setting against glibc's tunables and against none (:mod:`.bench_allocator`);
- ``profile``: where one tree pass spends its time, per part of the network and per operator (:mod:`.profile_tree`).

Inputs:  none (random weights and images).
Outputs: a table on stdout; ``--json`` also writes it with the command and package versions, which
         ``python -m paper.make_tables`` puts into experiment_1/PERFORMANCE.md.

    python -m experiment_1.tools.bench engines --images 1 --resolution 64 --json experiment_1/results_bench/bench_cpu.json
    python -m experiment_1.tools.bench family --rounds 3 --threads 1
    python -m experiment_1.tools.bench allocator --rounds 3
    python -m experiment_1.tools.bench profile --arch efficientnet_lite0
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from experiment_1.errors import run_cli
from experiment_1.files import atomic_write_json, package_versions
from experiment_1.tools import bench_allocator, bench_engines, bench_family, profile_tree

MEASUREMENTS = {"engines": bench_engines, "family": bench_family, "allocator": bench_allocator, "profile": profile_tree}
"""Each measurement's module: ``add_arguments(parser)`` declares its flags, ``run(args)`` prints its table and
returns the record ``--json`` writes."""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m experiment_1.tools.bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    output = argparse.ArgumentParser(add_help=False)
    output.add_argument("--json", type=Path, default=None, help="also write the record to this JSON file")
    measurements = parser.add_subparsers(dest="measurement", required=True)
    for name, module in MEASUREMENTS.items():
        module.add_arguments(
            measurements.add_parser(
                name,
                parents=[output],
                help=module.__doc__.splitlines()[0],
                description=module.__doc__,
                formatter_class=argparse.RawDescriptionHelpFormatter,
            )
        )
    args = parser.parse_args(argv)
    record = MEASUREMENTS[args.measurement].run(args)
    if args.json:
        command = "python -m experiment_1.tools.bench " + " ".join(sys.argv[1:] if argv is None else argv)
        atomic_write_json(args.json, {"command": command, "versions": package_versions(), **record})


if __name__ == "__main__":
    run_cli(main)
