"""Benchmark — naive vs prefix-tree all-mask evaluation on this machine, against the work they do.

Question: how fast is each engine, how much of the machine's arithmetic does it use, and does the
tree engine's speed-up over the naive one match the work it saves? For each architecture (random
weights, or ``--weights pretrained``: the work is the same, the CPU time need not be), network dtype,
eager or compiled model, memory format, batch-norm kept or folded and batch size it times, in one run and interleaved (the best of ``--repeats``):

- the tree engine over all 2^L masks;
- the naive engine over ``--naive-masks`` random masks (all masks when that is ≥ 2^L; otherwise
  the time is scaled linearly to 2^L, which is exact for its independent per-mask forwards);

and reports images/s (one image = all 2^L masks), the engine's multiply-accumulates (MACs) per
image, the achieved GMAC/s (and, when ResNet-18 is in the run, each architecture's tree GMAC/s as a
share of ResNet-18's in the same variant), the naive/tree time ratio beside the MAC ratio, the tree engine's
speed-up over the contiguous (pre channels-last) layout with batch-norm kept (today's default path
before channels-last), and the largest tree–naive disagreement. ``--batchnorm kept folded`` adds
variants with batch-norm folded into the convolutions (``--fold-batchnorm``; not bit-exact).
MACs are counted as in :mod:`experiment_1.network.engines` (forward hooks on every ``Conv2d`` and ``Linear``; batch-norm, activations,
additions and pooling are not counted): the naive engine runs 2^L full forwards, the tree engine
the stem once, block l on 2^l states and the head 2^L times.

The allocator is tuned first, as in every evaluation step (:mod:`experiment_1.network.allocator`), so the
rates are the ones the runs get.

Inputs:  none (random images).  Outputs: a table on stdout; ``--json`` also writes the rows, which
         ``python -m paper.make_tables`` puts into experiment_1/PERFORMANCE.md's benchmark table.

    python -m experiment_1.tools.bench engines --images 1 --resolution 64 --json experiment_1/results_bench/bench_cpu.json
    make bench-gpu        # CUDA: float32 / tf32 / bfloat16, eager and compiled, batch sizes 1 4 16
"""

from __future__ import annotations

import argparse
import itertools
import time
from typing import Any, Callable

import torch

from experiment_1.errors import PipelineError
from experiment_1.network.allocator import tune_allocator
from experiment_1.network.choices import parse_weights
from experiment_1.network.compile_stack import compile_stack
from experiment_1.network.engines import evaluate_masks_naive, evaluate_masks_tree, work_ratio
from experiment_1.network.fold_bn import fold_batchnorm
from experiment_1.network.gating import MEMORY_FORMATS, ResidualStack
from experiment_1.network.registry import ARCHITECTURES, DEEP_ARCHITECTURES, build_gated_stack
from experiment_1.run import run_config
from experiment_1.run.setup import DTYPES, resolve_device

BENCH_DTYPES = ("float32", "tf32", "bfloat16")


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def device_name(device: torch.device) -> str:
    """The device as the records name it: the GPU's name, or ``cpu (N threads)``."""
    return torch.cuda.get_device_name(device) if device.type == "cuda" else f"cpu ({torch.get_num_threads()} threads)"


def timed(run: Callable[[], torch.Tensor], device: torch.device) -> tuple[float, torch.Tensor]:
    """Seconds one call of ``run`` takes (device work included), and its result."""
    synchronize(device)
    started = time.perf_counter()
    result = run()
    synchronize(device)
    return time.perf_counter() - started, result


def bench_arch(arch: str, args: argparse.Namespace, device: torch.device) -> list[dict[str, Any]]:
    """Every (dtype, eager/compiled, memory format, batch size) variant of one architecture, timed
    interleaved ``args.repeats`` times (best time kept), so that a loaded machine slows all alike."""
    variants: dict[tuple[str, str, str, str], tuple[ResidualStack, bool]] = {}
    for dtype, mode, memory_format, batchnorm in itertools.product(
        args.dtypes, args.compile_modes, args.memory_formats, args.batchnorm
    ):
        model = build_gated_stack(
            arch, args.weights, device=device, seed=args.seed, dtype=DTYPES[dtype], memory_format=memory_format
        )
        if batchnorm == "folded":
            fold_batchnorm(model)
        variants[(dtype, mode, memory_format, batchnorm)] = (
            model,
            mode == "compiled" and compile_stack(model, args.resolution),
        )
    reference = next(iter(variants.values()))[0]
    work = work_ratio(reference, args.resolution, device)
    size = 2**reference.num_blocks
    generator = torch.Generator().manual_seed(args.seed)
    images = torch.randn(max(args.batch_sizes), 3, args.resolution, args.resolution, generator=generator)
    picked = torch.randperm(size, generator=generator)[: min(args.naive_masks, size)].sort().values
    tree_times: dict[tuple, list[float]] = {}
    naive_times: dict[tuple, list[float]] = {}
    agreement: dict[tuple, dict[str, float]] = {}
    for _ in range(args.repeats):
        for (dtype, mode, memory_format, batchnorm), (model, _) in variants.items():
            torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
            for batch_size in args.batch_sizes:
                key = (dtype, mode, memory_format, batchnorm, batch_size)
                x = images[:batch_size]
                evaluate_masks_naive(model, x[:1], mask_indices=picked[:2])  # warm-up: allocator and kernels
                seconds, tree = timed(lambda: evaluate_masks_tree(model, x, mask_chunk=args.mask_chunk), device)
                tree_times.setdefault(key, []).append(seconds)
                seconds, naive = timed(
                    lambda: evaluate_masks_naive(model, x, mask_indices=picked, mask_chunk=args.mask_chunk), device
                )
                naive_times.setdefault(key, []).append(seconds * size / len(picked))
                agreement[key] = {
                    "max_abs_disagreement": (tree[:, picked.to(tree.device)] - naive).abs().max().item(),
                    "max_abs_logit": tree.abs().max().item(),
                }
    rows = []
    for key in tree_times:
        dtype, mode, memory_format, batchnorm, batch_size = key
        tree_seconds, naive_seconds = min(tree_times[key]), min(naive_times[key])
        contiguous = tree_times.get((dtype, mode, "contiguous", "kept", batch_size))  # the layout before channels-last
        rows.append(
            {
                "arch": arch,
                "num_blocks": reference.num_blocks,
                "dtype": dtype,
                "weights": str(reference.weights),
                "compile_requested": mode == "compiled",
                "compiled": variants[(dtype, mode, memory_format, batchnorm)][1],
                "memory_format": memory_format,
                "batchnorm": batchnorm,
                "images": batch_size,
                "resolution": args.resolution,
                "naive_masks_timed": len(picked),
                "repeats": args.repeats,
                "tree_seconds": tree_seconds,
                "naive_seconds": naive_seconds,
                "speedup": naive_seconds / tree_seconds,
                **work,
                "tree_images_per_s": batch_size / tree_seconds,
                "naive_images_per_s": batch_size / naive_seconds,
                "tree_gmac_per_s": work["tree_gmac"] * batch_size / tree_seconds,
                "naive_gmac_per_s": work["naive_gmac"] * batch_size / naive_seconds,
                "tree_speedup_vs_contiguous": min(contiguous) / tree_seconds if contiguous else None,
                **agreement[key],
            }
        )
    return rows


RATE_BASELINE = "resnet18"
"""The architecture every other one's tree GMAC/s is compared with (same variant, same run)."""


def add_rate_versus_baseline(rows: list[dict[str, Any]]) -> None:
    """Give each row ``tree_gmac_per_s_vs_resnet18``: its tree GMAC/s over ResNet-18's in the same variant
    (dtype, mode, layout, batch-norm, images) of this run, or ``None`` when ResNet-18 was not timed."""

    def variant(row: dict[str, Any]) -> tuple:
        return row["dtype"], row["compile_requested"], row["memory_format"], row["batchnorm"], row["images"]

    baseline = {variant(row): row["tree_gmac_per_s"] for row in rows if row["arch"] == RATE_BASELINE}
    for row in rows:
        rate = baseline.get(variant(row))
        row[f"tree_gmac_per_s_vs_{RATE_BASELINE}"] = row["tree_gmac_per_s"] / rate if rate else None


def bench_rows(archs: list[str], args: argparse.Namespace, device: torch.device) -> list[dict[str, Any]]:
    """:func:`bench_arch` of every architecture in ``archs``, each row with its rate against ResNet-18's (:func:`add_rate_versus_baseline`)."""
    rows = [row for arch in archs for row in bench_arch(arch, args, device)]
    add_rate_versus_baseline(rows)
    return rows


def print_rows(rows: list[dict[str, Any]], device_name: str) -> None:
    print(
        f"device: {device_name}; {rows[0]['weights']} weights; MACs of conv and linear layers (forward hooks); best of {rows[0]['repeats']} interleaved runs"
    )
    print(
        f"{'arch':<18} {'L':>2} {'dtype':<8} {'mode':<8} {'format':<18} {'imgs':>4} {'px':>4} {'tree img/s':>10} {'tree GMAC':>10} {'tree GMAC/s':>11} "
        f"{'vs R18':>6} {'naive img/s':>11} {'naive GMAC/s':>12} {'naive/tree':>10} {'MAC ratio':>9} {'vs contig.':>10} {'max |tree-naive|':>16}"
    )
    for row in rows:
        mode = "compiled" if row["compiled"] else "eager"
        versus = f"{row['tree_speedup_vs_contiguous']:.2f}×" if row["tree_speedup_vs_contiguous"] else "—"
        layout = row["memory_format"] + ("+fold" if row["batchnorm"] == "folded" else "")
        rate = row[f"tree_gmac_per_s_vs_{RATE_BASELINE}"]
        print(
            f"{row['arch']:<18} {row['num_blocks']:>2} {row['dtype']:<8} {mode:<8} {layout:<18} {row['images']:>4} {row['resolution']:>4} "
            f"{row['tree_images_per_s']:>10.3g} {row['tree_gmac']:>10.4g} {row['tree_gmac_per_s']:>11.4g} "
            f"{f'{rate:.0%}' if rate else '—':>6} {row['naive_images_per_s']:>11.3g} "
            f"{row['naive_gmac_per_s']:>12.4g} {row['speedup']:>9.1f}× {row['work_ratio']:>8.1f}× {versus:>10} {row['max_abs_disagreement']:>16.2e}"
        )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``bench engines``."""
    parser.add_argument(
        "--archs",
        nargs="+",
        default=[name for name in ARCHITECTURES.names() if name not in DEEP_ARCHITECTURES],
        help="architectures (default: every registered one the exhaustive pass can hold — not resnet101/152, L = 33/50 —, %(default)s)",
    )
    parser.add_argument(
        "--images",
        "--batch-sizes",
        dest="batch_sizes",
        type=int,
        nargs="+",
        default=[1],
        help="images per timed call; several: a sweep (default: %(default)s)",
    )
    parser.add_argument("--resolution", type=int, default=224, help="input size in pixels (default: %(default)s)")
    parser.add_argument(
        "--dtypes",
        nargs="+",
        choices=BENCH_DTYPES,
        default=["float32"],
        help="network arithmetic; tf32 = float32 with TensorFloat-32 on GPU (default: %(default)s)",
    )
    parser.add_argument(
        "--compile-modes",
        nargs="+",
        choices=("eager", "compiled"),
        default=["eager"],
        help="eager and/or torch.compile'd model (default: %(default)s)",
    )
    parser.add_argument(
        "--memory-formats",
        nargs="+",
        choices=list(MEMORY_FORMATS),
        default=list(MEMORY_FORMATS),
        help="model and input layout (default: %(default)s)",
    )
    parser.add_argument(
        "--batchnorm",
        nargs="+",
        choices=("kept", "folded"),
        default=["kept"],
        help="batch-norm as trained and/or folded into the convolutions (--fold-batchnorm; not bit-exact) (default: %(default)s)",
    )
    parser.add_argument(
        "--weights",
        type=parse_weights,
        default="random",
        help="random init, each architecture's pretrained weights (the arithmetic is the same, but trained weights can "
        "hit slow subnormal floats on CPU), a named entry or a state-dict path (default: %(default)s)",
    )
    parser.add_argument(
        "--naive-masks", type=int, default=256, help="masks the naive engine is timed on (default: %(default)s)"
    )
    parser.add_argument("--mask-chunk", type=int, default=256, help="engine chunk size (default: %(default)s)")
    parser.add_argument(
        "--repeats",
        type=int,
        default=2,
        help="interleaved timings per variant; the best is kept (default: %(default)s)",
    )
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda (default: %(default)s)")
    parser.add_argument(
        "--seed", type=run_config.seed, default=0, help="seed for weights and images (default: %(default)s)"
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Time every variant, print the table and return the record (device, allocator setting, rows)."""
    if min(args.batch_sizes) < 1 or args.repeats < 1 or args.naive_masks < 1:
        raise PipelineError("--images, --repeats and --naive-masks must be at least 1")
    device = resolve_device(args.device)
    allocator = (
        tune_allocator()
    )  # as every evaluation step does (experiment_1.network.allocator): time the rate the runs get
    torch.manual_seed(args.seed)
    rows = bench_rows(args.archs, args, device)
    print_rows(rows, device_name(device))
    return {"device": device_name(device), "allocator": allocator, "rows": rows}
