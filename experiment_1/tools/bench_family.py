"""Benchmark — the family walk's rate against the dense tree pass's, measured in one run.

Question: does the prefix-tree walk restricted to a mask family (the masks within ``k`` gates of the all-off or the
full network, :func:`experiment_1.network.engines.evaluate_family_tree`) use the machine as well as the exhaustive
tree pass does? The yardstick is the dense tree pass (:func:`~experiment_1.network.engines.evaluate_masks_tree`) of
``--dense-arch`` (default ResNet-50, L = 16); the family pass runs on ``--family-arch`` (default ResNet-152, L = 50)
at order ``--order`` for each base in ``--bases``. Both use random weights, the same ``--resolution`` and the same
random images. Each round times the dense pass, then each family pass, in this one process (interleaved, so a
loaded machine slows all alike); the rate of a pass is its multiply-accumulates (MACs: convolutions and linear
layers, :func:`~experiment_1.network.engines.work_ratio` and :func:`~experiment_1.network.engines.family_gmac`)
over its seconds, and the ratio family/dense is taken round by round. Reported per base: medians over the rounds,
the per-round ratio's median, min and max, whether the median reaches ``--target`` (issue #37: 60 %), and the
largest disagreement of the family walk with the naive engine on ``--naive-members`` random members, beside the
largest |logit| of those members (random-init networks at base ``on`` reach logits of ~10^7 at L = 50, so the
disagreement is read relative to that).

Inputs:  none (random weights and images).  Outputs: a table on stdout; ``--json`` also writes it, which
         ``python -m paper.make_tables`` puts into experiment_1/PERFORMANCE.md's family-benchmark block.

    python -m experiment_1.tools.bench family --rounds 3 --threads 1 --json experiment_1/results_bench/family_cpu_64px_resnet152.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Any

import torch

from experiment_1.network.allocator import tune_allocator
from experiment_1.network.engines import (
    evaluate_family_tree,
    evaluate_masks_naive,
    evaluate_masks_tree,
    family_gmac,
    work_ratio,
)
from experiment_1.network.mask_family import BASES, MaskFamily
from experiment_1.network.registry import build_gated_stack
from experiment_1.run import run_config
from experiment_1.tools.bench_engines import device_name, timed

TARGET = 0.6
"""The family pass's GMAC/s as a share of the dense tree pass's that issue #37 asks for."""


def family_rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    """One row per base: the family pass and the dense pass timed in the same rounds, with their rates and ratio."""
    device = torch.device("cpu")
    dense = build_gated_stack(args.dense_arch, "random", seed=args.seed)
    deep = build_gated_stack(args.family_arch, "random", seed=args.seed)
    families = {base: MaskFamily(args.order, base) for base in args.bases}
    dense_gmac = work_ratio(dense, args.resolution, device)["tree_gmac"]
    gmac = {base: family_gmac(deep, args.resolution, device, family) for base, family in families.items()}
    generator = torch.Generator().manual_seed(args.seed)
    images = torch.randn(args.images, 3, args.resolution, args.resolution, generator=generator)
    evaluate_masks_naive(dense, images[:1], mask_indices=[0, 1])  # warm-up: allocator and kernels
    for family in families.values():
        evaluate_family_tree(deep, images[:1], MaskFamily(1, family.base), mask_chunk=args.mask_chunk)
    dense_seconds: list[float] = []
    seconds: dict[str, list[float]] = {base: [] for base in families}
    disagreement: dict[str, float] = {}
    scale: dict[str, float] = {}  # the largest |logit| of the members checked: what the disagreement is round-off of
    for round_number in range(args.rounds):
        elapsed, _ = timed(lambda: evaluate_masks_tree(dense, images, mask_chunk=args.mask_chunk), device)
        dense_seconds.append(elapsed)
        for base, family in families.items():
            elapsed, (ids, logits) = timed(
                lambda: evaluate_family_tree(deep, images, family, mask_chunk=args.mask_chunk), device
            )
            seconds[base].append(elapsed)
            if base not in disagreement:
                picked = torch.randperm(len(ids), generator=generator)[: args.naive_members].sort().values
                naive = evaluate_masks_naive(deep, images, ids[picked])
                disagreement[base] = (logits[:, picked] - naive).abs().max().item()
                scale[base] = naive.abs().max().item()
        print(
            f"round {round_number + 1}/{args.rounds}: dense {dense_seconds[-1]:.1f} s, "
            + ", ".join(f"family {base} {seconds[base][-1]:.1f} s" for base in families),
            file=sys.stderr,
        )
    dense_rates = [dense_gmac * args.images / elapsed for elapsed in dense_seconds]
    rows = []
    for base, family in families.items():
        rates = [gmac[base] * args.images / elapsed for elapsed in seconds[base]]
        ratios = [rate / reference for rate, reference in zip(rates, dense_rates)]
        rows.append(
            {
                "family_arch": args.family_arch,
                "family_num_blocks": deep.num_blocks,
                "order": family.order,
                "base": base,
                "members": family.size(deep.num_blocks),
                "family_gmac": gmac[base],
                "family_seconds": seconds[base],
                "family_seconds_median": statistics.median(seconds[base]),
                "family_gmac_per_s": statistics.median(rates),
                "dense_arch": args.dense_arch,
                "dense_num_blocks": dense.num_blocks,
                "dense_tree_gmac": dense_gmac,
                "dense_seconds": dense_seconds,
                "dense_seconds_median": statistics.median(dense_seconds),
                "dense_gmac_per_s": statistics.median(dense_rates),
                "ratio_per_round": ratios,
                "ratio_median": statistics.median(ratios),
                "ratio_min": min(ratios),
                "ratio_max": max(ratios),
                "target": args.target,
                "meets_target": statistics.median(ratios) >= args.target,
                "naive_members_checked": min(args.naive_members, family.size(deep.num_blocks)),
                "max_abs_disagreement": disagreement[base],
                "max_abs_logit": scale[base],
            }
        )
    return rows


def print_rows(rows: list[dict[str, Any]], device_name: str, args: argparse.Namespace) -> None:
    print(
        f"device: {device_name}; random weights; {args.images} image(s) at {args.resolution} px; chunk {args.mask_chunk}; "
        f"medians of {args.rounds} interleaved rounds"
    )
    print(
        f"{'family pass':<28} {'members':>7} {'GMAC/img':>9} {'s':>7} {'GMAC/s':>7}  {'dense tree pass':<16} {'GMAC/s':>7} "
        f"{'ratio (min–max)':>20} {'≥ target':>8} {'max |tree-naive|':>16} {'/ max |logit|':>13}"
    )
    for row in rows:
        family = f"{row['family_arch']} (L = {row['family_num_blocks']}) k ≤ {row['order']} {row['base']}"
        dense = f"{row['dense_arch']} (L = {row['dense_num_blocks']})"
        spread = f"{row['ratio_median']:.0%} ({row['ratio_min']:.0%}–{row['ratio_max']:.0%})"
        print(
            f"{family:<28} {row['members']:>7} {row['family_gmac']:>9.4g} {row['family_seconds_median']:>7.3g} "
            f"{row['family_gmac_per_s']:>7.3g}  {dense:<16} {row['dense_gmac_per_s']:>7.3g} {spread:>20} "
            f"{'yes' if row['meets_target'] else 'no':>8} {row['max_abs_disagreement']:>16.2e} "
            f"{row['max_abs_disagreement'] / max(row['max_abs_logit'], 1e-30):>13.2e}"
        )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``bench family``."""
    parser.add_argument("--family-arch", default="resnet152", help="network of the family pass (default: %(default)s)")
    parser.add_argument(
        "--dense-arch", default="resnet50", help="network of the dense tree pass (default: %(default)s)"
    )
    parser.add_argument(
        "--order", type=run_config.positive_int, default=3, help="the family's order k (default: %(default)s)"
    )
    parser.add_argument(
        "--bases", nargs="+", choices=BASES, default=list(BASES), help="family corners (default: %(default)s)"
    )
    parser.add_argument(
        "--resolution", type=run_config.positive_int, default=64, help="input size in pixels (default: %(default)s)"
    )
    parser.add_argument(
        "--images", type=run_config.positive_int, default=1, help="images per timed call (default: %(default)s)"
    )
    parser.add_argument(
        "--mask-chunk", type=run_config.power_of_two, default=256, help="engine chunk size (default: %(default)s)"
    )
    parser.add_argument(
        "--rounds", type=run_config.positive_int, default=3, help="interleaved rounds (default: %(default)s)"
    )
    parser.add_argument(
        "--threads", type=run_config.positive_int, default=1, help="intra-op threads (default: %(default)s)"
    )
    parser.add_argument(
        "--naive-members",
        type=run_config.positive_int,
        default=8,
        help="random family members checked against the naive engine (default: %(default)s)",
    )
    parser.add_argument(
        "--target", type=float, default=TARGET, help="the ratio the family pass should reach (default: %(default)s)"
    )
    parser.add_argument(
        "--seed", type=run_config.seed, default=0, help="seed for weights and images (default: %(default)s)"
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Time both passes round by round, print the table and return the record (device, workload, rows)."""
    allocator = tune_allocator()  # as the engines do on their first call: the rate the runs get
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rows = family_rows(args)
    device = device_name(torch.device("cpu"))
    print_rows(rows, device, args)
    workload = {name: getattr(args, name) for name in ("images", "resolution", "mask_chunk", "rounds")}
    return {"device": device, "allocator": allocator, **workload, "rows": rows}
