"""Profile — where one tree-engine pass spends its time, per part of the network and per operator.

Question: which layers dominate the all-mask tree pass (the stem runs once per image, block l on
2^l prefix states, the head 2^L times), and what would batching the head more or folding
batch-norm into the convolutions save at most? It runs one warm-up pass and one profiled pass of
``evaluate_masks_tree`` under ``torch.profiler`` (CPU activities), labels the stem, each gateable
block's ``pre`` (fixed blocks before it), ``shortcut`` and ``branch`` and the head with
``record_function``, and reports each part's share of the pass, the operators with the most self
time, and the share of batch-norm, convolution and linear operators.

Inputs:  none (random weights unless ``--weights``; random images).
Outputs: a table on stdout; ``--json`` writes it, and ``make_tables`` puts a summary into experiment_1/PERFORMANCE.md.
A network of more than L = 20 gated blocks (2^L masks per image) is refused unless ``--confirm-long-run``, as the
evaluation steps refuse one.

    python -m experiment_1.tools.bench profile --arch efficientnet_lite0 --json experiment_1/results_profile/profile_cpu_efficientnet_lite0.json
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, record_function

from experiment_1.network.allocator import tune_allocator
from experiment_1.network.choices import parse_weights
from experiment_1.network.engines import evaluate_masks_tree
from experiment_1.network.gating import MEMORY_FORMATS, ResidualStack
from experiment_1.network.registry import build_gated_stack
from experiment_1.run import run_config
from experiment_1.run.preflight import check_depth
from experiment_1.run.run_config import CONFIRM_FLAG, MAX_BLOCKS
from experiment_1.tools.bench_engines import device_name

OPERATOR_GROUPS = {
    "convolution": ("conv", "mkldnn_convolution"),
    "batch_norm": ("batch_norm",),
    "linear": ("addmm", "linear", "matmul", "mm"),
}


def labelled_parts(model: ResidualStack) -> list[tuple[str, nn.Module]]:
    """The parts a tree pass runs, with their labels: stem, each block's pre/shortcut/branch, head."""
    parts: list[tuple[str, nn.Module]] = [("stem", model.stem)]
    for level, block in enumerate(model.blocks):
        calls = f"×{2**level}"
        for name in ("pre", "shortcut", "branch"):
            module = getattr(block, name)
            if not isinstance(module, nn.Identity):
                parts.append((f"{block.name} {name} ({calls})", module))
    parts.append((f"head (×{2**model.num_blocks})", model.head))
    return parts


def label_with_record_function(parts: list[tuple[str, nn.Module]]) -> list[Any]:
    """Forward hooks that open a ``record_function(label)`` around each part's calls; returns the handles."""
    handles = []
    for label, module in parts:
        opened: list[Any] = []

        def enter(_module: nn.Module, _inputs: Any, label: str = label, opened: list[Any] = opened) -> None:
            context = record_function(label)
            context.__enter__()
            opened.append(context)

        def leave(_module: nn.Module, _inputs: Any, _output: Any, opened: list[Any] = opened) -> None:
            opened.pop().__exit__(None, None, None)

        handles += [module.register_forward_pre_hook(enter), module.register_forward_hook(leave)]
    return handles


def profile_tree(model: ResidualStack, images: torch.Tensor, mask_chunk: int, top: int) -> dict[str, Any]:
    """One profiled tree pass (after a warm-up); part and operator shares of its CPU time."""
    evaluate_masks_tree(model, images, mask_chunk=mask_chunk)  # warm-up: allocator and kernels
    parts = labelled_parts(model)
    handles = label_with_record_function(parts)
    try:
        with profile(activities=[ProfilerActivity.CPU]) as profiler:
            started = time.perf_counter()
            evaluate_masks_tree(model, images, mask_chunk=mask_chunk)
            wall = time.perf_counter() - started
    finally:
        for handle in handles:
            handle.remove()
    events = profiler.key_averages()
    totals = {event.key: event.cpu_time_total for event in events}
    operators = [event for event in events if event.key.startswith("aten::")]
    all_self = sum(event.self_cpu_time_total for event in operators)
    part_rows = [
        {
            "part": label,
            "calls": int(next((e.count for e in events if e.key == label), 0)),
            "share": totals.get(label, 0.0) / all_self,
        }
        for label, _ in parts
    ]
    groups = {
        name: sum(e.self_cpu_time_total for e in operators if any(word in e.key for word in words)) / all_self
        for name, words in OPERATOR_GROUPS.items()
    }
    top_operators = sorted(operators, key=lambda e: e.self_cpu_time_total, reverse=True)[:top]
    return {
        "wall_seconds": wall,
        "parts": part_rows,
        "operator_groups": groups,
        "top_operators": [
            {"operator": e.key, "calls": e.count, "self_share": e.self_cpu_time_total / all_self} for e in top_operators
        ],
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``bench profile``."""
    parser.add_argument("--arch", default="efficientnet_lite0", help="architecture (default: %(default)s)")
    parser.add_argument(
        "--weights",
        type=parse_weights,
        default="random",
        help="pretrained, random, a state-dict path or a named entry (default: %(default)s; the work does not depend on them)",
    )
    parser.add_argument("--images", type=int, default=1, help="images in the profiled pass (default: %(default)s)")
    parser.add_argument("--resolution", type=int, default=224, help="input size in pixels (default: %(default)s)")
    parser.add_argument("--mask-chunk", type=int, default=256, help="engine chunk size (default: %(default)s)")
    parser.add_argument(
        "--memory-format", choices=list(MEMORY_FORMATS), default="channels_last", help="(default: %(default)s)"
    )
    parser.add_argument("--top", type=int, default=12, help="operators listed (default: %(default)s)")
    parser.add_argument(
        "--seed", type=run_config.seed, default=0, help="seed for weights and images (default: %(default)s)"
    )
    parser.add_argument(
        CONFIRM_FLAG,
        action="store_true",
        help=f"profile a network of more than L = {MAX_BLOCKS} gated blocks anyway (2^L masks per image)",
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Profile one tree pass, print its parts and operators and return the record (workload and shares)."""
    tune_allocator()  # as every evaluation step does: profile the pass the runs make
    model = build_gated_stack(args.arch, args.weights, seed=args.seed, memory_format=args.memory_format)
    check_depth(model.num_blocks, args.confirm_long_run, "the profiled all-mask tree pass")
    images = torch.randn(
        args.images, 3, args.resolution, args.resolution, generator=torch.Generator().manual_seed(args.seed)
    )
    result, device = profile_tree(model, images, args.mask_chunk, args.top), device_name(torch.device("cpu"))
    print(
        f"{args.arch}, {args.images} image(s) at {args.resolution} px, {args.memory_format}, mask chunk {args.mask_chunk}, "
        f"{device}: tree pass {result['wall_seconds']:.2f} s (profiled)"
    )
    for row in result["parts"]:
        print(f"  {row['part']:<40} {100 * row['share']:6.1f} %")
    print(
        "  operator groups (self time): "
        + ", ".join(f"{name} {100 * share:.1f} %" for name, share in result["operator_groups"].items())
    )
    for row in result["top_operators"]:
        print(f"  {row['operator']:<40} {row['calls']:>6} calls {100 * row['self_share']:6.1f} %")
    workload = {name: getattr(args, name) for name in ("arch", "images", "resolution", "mask_chunk", "memory_format")}
    return {"device": device, **workload, **result}
