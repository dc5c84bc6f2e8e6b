"""Benchmark — naive vs prefix-tree all-mask evaluation on this machine.

Question: how much faster is the tree engine than the naive one, and do they agree?
For each architecture (random weights; the work does not depend on them) it times, in one run,
the tree engine over all 2^L masks and the naive engine over ``--naive-masks`` random masks
(all masks when that is ≥ 2^L; otherwise the time is extrapolated linearly to 2^L, which is exact
for the naive engine's independent per-mask forwards), prints the wall-time ratio beside the
multiply-accumulate (MAC) ratio, and the largest tree–naive disagreement on the naive masks.

Inputs:  none (random images).  Outputs: a table on stdout; ``--json`` also writes it as JSON.

    python -m experiment_1.bench_engines --archs resnet18 resnet34 --images 2 --resolution 224
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch
from torch import nn

from experiment_1.core import evaluate_masks_naive, evaluate_masks_tree
from experiment_1.errors import run_cli
from experiment_1.gated_resnet import ResidualStack, build_gated_resnet
from experiment_1.io_utils import atomic_write_json, package_versions
from experiment_1.pipeline import resolve_device


def count_macs(module: nn.Module, x: torch.Tensor) -> tuple[int, torch.Tensor]:
    """MACs of the convolutions and linear layers one forward of ``module`` runs on ``x`` (batch 1)."""
    total = 0

    def hook(layer: nn.Module, inputs: tuple[torch.Tensor], output: torch.Tensor) -> None:
        nonlocal total
        if isinstance(layer, nn.Conv2d):
            kernel = layer.in_channels // layer.groups * layer.kernel_size[0] * layer.kernel_size[1]
            total += output[0].numel() * kernel
        elif isinstance(layer, nn.Linear):
            total += layer.in_features * layer.out_features

    handles = [layer.register_forward_hook(hook) for layer in module.modules() if isinstance(layer, (nn.Conv2d, nn.Linear))]
    try:
        with torch.no_grad():
            output = module(x)
    finally:
        for handle in handles:
            handle.remove()
    return total, output


def work_ratio(model: ResidualStack, resolution: int, device: torch.device) -> dict[str, float]:
    """GMAC per image of the naive engine (2^L full forwards) and of the tree engine."""
    x = torch.zeros(1, 3, resolution, resolution, device=device, dtype=next(model.parameters()).dtype)
    stem, state = count_macs(model.stem, x)
    tree = stem
    for level, block in enumerate(model.blocks):
        macs, state = _block_macs(block, state)
        tree += macs * 2**level
    head, _ = count_macs(model.head, state)
    full, _ = count_macs(model, x)
    size = 2**model.num_blocks
    tree += head * size
    return {"naive_gmac": full * size / 1e9, "tree_gmac": tree / 1e9, "work_ratio": full * size / tree}


def _block_macs(block: nn.Module, state: torch.Tensor) -> tuple[int, torch.Tensor]:
    class Wrapper(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.block = block

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.block(x, None)

    return count_macs(Wrapper(), state)


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def bench(arch: str, images: int, resolution: int, naive_masks: int, mask_chunk: int, device: torch.device, seed: int) -> dict[str, float | str]:
    """Time both engines on one architecture; return the row of the table."""
    model = build_gated_resnet(arch, "random", device=device, seed=seed)
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(images, 3, resolution, resolution, generator=generator)
    size = 2**model.num_blocks
    picked = torch.randperm(size, generator=generator)[: min(naive_masks, size)].sort().values
    evaluate_masks_naive(model, x[:1], mask_indices=picked[:2])  # warm-up: allocator and kernels at these shapes
    synchronize(device)
    started = time.perf_counter()
    tree = evaluate_masks_tree(model, x, mask_chunk=mask_chunk)
    synchronize(device)
    tree_seconds = time.perf_counter() - started
    started = time.perf_counter()
    naive = evaluate_masks_naive(model, x, mask_indices=picked, mask_chunk=mask_chunk)
    synchronize(device)
    naive_seconds = (time.perf_counter() - started) * size / len(picked)
    disagreement = (tree[:, picked.to(tree.device)] - naive).abs().max().item()
    return {
        "arch": arch,
        "num_blocks": model.num_blocks,
        "images": images,
        "resolution": resolution,
        "naive_masks_timed": len(picked),
        "tree_seconds": tree_seconds,
        "naive_seconds": naive_seconds,
        "speedup": naive_seconds / tree_seconds,
        **work_ratio(model, resolution, device),
        "max_abs_disagreement": disagreement,
        "max_abs_logit": tree.abs().max().item(),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--archs", nargs="+", default=["resnet18", "resnet34"], help="architectures (default: %(default)s)")
    parser.add_argument("--images", type=int, default=2, help="images per timed call (default: %(default)s)")
    parser.add_argument("--resolution", type=int, default=224, help="input size in pixels (default: %(default)s)")
    parser.add_argument("--naive-masks", type=int, default=256, help="masks the naive engine is timed on (default: %(default)s)")
    parser.add_argument("--mask-chunk", type=int, default=256, help="engine chunk size (default: %(default)s)")
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="seed for weights and images (default: %(default)s)")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows to this JSON file")
    args = parser.parse_args(argv)
    device = resolve_device(args.device)
    torch.manual_seed(args.seed)
    rows = [bench(arch, args.images, args.resolution, args.naive_masks, args.mask_chunk, device, args.seed) for arch in args.archs]
    device_name = torch.cuda.get_device_name(device) if device.type == "cuda" else f"cpu ({torch.get_num_threads()} threads)"
    print(f"device: {device_name}; {args.images} images at {args.resolution} px; random weights")
    print(f"{'arch':<10} {'L':>3} {'tree s':>9} {'naive s':>10} {'speed-up':>9} {'MAC ratio':>10} {'max |tree-naive|':>17} {'max |logit|':>12}")
    for row in rows:
        print(f"{row['arch']:<10} {row['num_blocks']:>3} {row['tree_seconds']:>9.2f} {row['naive_seconds']:>10.2f} {row['speedup']:>8.1f}× {row['work_ratio']:>9.1f}× {row['max_abs_disagreement']:>17.2e} {row['max_abs_logit']:>12.3g}")
    if args.json:
        command = "python -m experiment_1.bench_engines " + " ".join(sys.argv[1:] if argv is None else argv)
        atomic_write_json(args.json, {"device": device_name, "command": command, "versions": package_versions(), "rows": rows})


if __name__ == "__main__":
    run_cli(main)
