"""Depth ladder, step 1 — the same statistics of several networks side by side, and the depth claims.

Question: do the interaction statistics move with depth (and not with width), as the paper claims —
"the peak order grows with depth" (ResNet-18, L = 8, peaks at order 5; ResNet-34, L = 16, at 10) and
"prediction-preserving sparsity weakens with depth"? Reads each network's Experiment 2 and 3
summaries and per-image arrays and Experiment 4's overlap.json (paper.depth_ladder), puts L, the
peak order, κ (also / L), C≤3, the trunk share, K_eff / 2^L, Γ_K at 1/8, 1/4 and 1/2 of 2^L, the
smallest K / 2^L keeping 90 % top-1 agreement and the 1-NN accuracy side by side, and decides each
claim on the images two networks share (paired, deeper − shallower), with the width control (two
networks of equal L) beside it. Evaluates nothing.

Inputs:  experiment_{2,3,4}/results_<arch><suffix>/ for every --ladder arch (missing ones are "not run"); with
         --resolution-control SUFFIX, experiment_{2,3}/results_<first arch><SUFFIX>/ (the first network at the next
         one's input size: depth and resolution separated).
Outputs: --output (depth.json: the rows, the paired comparisons, the verdicts block and the rule's parameters).

    python -m paper.depth_compare --ladder efficientnet_lite0 efficientnet_lite1 efficientnet_lite2 \\
        --suffix _sample --resolution-control _240px_sample --output paper/results_depth_efficientnet_lite_sample/depth.json
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from experiment_1.errors import PipelineError, run_cli
from experiment_1.files import atomic_write_json
from experiment_1.paths import REPO_ROOT
from experiment_1.run import run_config
from paper.depth_ladder import depth_analysis, load_rung

DEFAULT_LADDER = ["efficientnet_lite0", "efficientnet_lite1", "efficientnet_lite2"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--ladder",
        nargs="+",
        default=DEFAULT_LADDER,
        help="architectures in ladder order: increasing L is a depth step, equal L a width control (default: %(default)s)",
    )
    parser.add_argument(
        "--suffix",
        default="_sample",
        help="results folders are experiment_N/results_<arch><suffix> (default: %(default)s)",
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=REPO_ROOT,
        help="the folder holding experiment_2 … experiment_4 (default: this checkout)",
    )
    parser.add_argument(
        "--resolution-control",
        default=None,
        metavar="SUFFIX",
        help="the first network of the ladder evaluated at the next deeper one's input size, in "
        "experiment_N/results_<arch><SUFFIX> (e.g. _240px_sample): the resolution control (default: none)",
    )
    parser.add_argument(
        "--seed", type=run_config.seed, default=0, help="seed of the bootstrap CIs (default: %(default)s)"
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=Path("paper/results_depth_efficientnet_lite_sample/depth.json"),
        help="depth.json to write (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    rungs = [load_rung(args.root, arch, args.suffix) for arch in args.ladder]
    missing = [rung.arch for rung in rungs if rung.num_blocks is None]
    if len(rungs) - len(missing) < 2:
        raise PipelineError(
            f"no Experiment 2, 3 or 4 results for {', '.join(missing)} under {args.root} (experiment_N/results_<arch>{args.suffix}); "
            "a ladder needs two networks with results: run their evaluation first (paper.single_pass)"
        )
    if missing:
        print(f"not run yet (their rows stay empty): {', '.join(missing)}")
    control = None
    if args.resolution_control is not None:
        control = load_rung(args.root, args.ladder[0], args.resolution_control, label="control")
        if control.num_blocks is None or control.input_size is None:
            raise PipelineError(
                f"--resolution-control {args.resolution_control}: no Experiment 2 or 3 results for {args.ladder[0]} in "
                f"experiment_N/results_{args.ladder[0]}{args.resolution_control} under {args.root}; run it first "
                "(make offline-results-lite0-240px)"
            )
        control = dataclasses.replace(control, label=f"{control.input_size}px")
    analysis = depth_analysis(rungs, args.seed, control)
    atomic_write_json(args.output, analysis)
    print(f"wrote {args.output}")
    for entry in analysis["verdicts"]:
        print(f"  {entry['claim']}: {entry['decision']} ({entry['notes'][0]})")


if __name__ == "__main__":
    run_cli(main)
