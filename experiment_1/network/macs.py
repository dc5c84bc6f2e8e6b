"""Multiply-accumulates (MACs) of a gated stack's forward and of the two all-mask engines.

MACs are counted with forward hooks on every ``Conv2d`` and ``Linear`` (batch-norm, activations,
additions and pooling are not counted): the naive engine runs 2^L full forwards, the tree engine
the stem once, block l on 2^l states and the head 2^L times; the family walk as :func:`family_gmac` says. Used by the engine benchmark
(``experiment_1.bench_engines``) and the cost estimate every run prints (``experiment_1.run.preflight``).
"""

from __future__ import annotations

from math import comb

import torch
from torch import nn

from experiment_1.network.gating import ResidualStack
from experiment_1.network.mask_family import MaskFamily


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

    handles = [
        layer.register_forward_hook(hook) for layer in module.modules() if isinstance(layer, (nn.Conv2d, nn.Linear))
    ]
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
    return {
        "naive_gmac": full * size / 1e9,
        "tree_gmac": tree / 1e9,
        "work_ratio": full * size / tree,
        "head_share_of_tree_macs": head * size / tree,
    }


def _block_macs(block: nn.Module, state: torch.Tensor) -> tuple[int, torch.Tensor]:
    class Wrapper(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.block = block

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.block(x, None)

    return count_macs(Wrapper(), state)


def family_gmac(model: ResidualStack, resolution: int, device: torch.device, family: MaskFamily) -> float:
    """GMAC per image of the family walk (:func:`experiment_1.network.engines.evaluate_family_tree`): the stem once;
    block l runs both children on the ``Σ_{j<k} C(l, j)`` unsaturated prefix states and its base-value path on the
    ``C(l, k)`` saturated ones (base ``off``: ``pre`` and shortcut only; base ``on``: the whole block); the head on every
    member."""
    x = torch.zeros(1, 3, resolution, resolution, device=device, dtype=next(model.parameters()).dtype)
    total, state = count_macs(model.stem, x)
    order = family.order
    for level, block in enumerate(model.blocks):
        full, output = _block_macs(block, state)
        if family.base == "off":
            before, _ = count_macs(block.pre, state)
            after, _ = count_macs(block.shortcut, block.pre(state))
            saturated = before + after
        else:
            saturated = full
        total += full * sum(comb(level, j) for j in range(min(order, level + 1))) + saturated * comb(level, order)
        state = output
    head, _ = count_macs(model.head, state)
    return (total + head * family.size(model.num_blocks)) / 1e9
