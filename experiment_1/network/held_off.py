"""A held-off view of a gated stack: the game restricted to a block subset ``U``, every other gate held off.

For ``U = (b_0 < … < b_{u−1})`` the view is an ordinary :class:`~experiment_1.network.stack.ResidualStack` with
``u`` gates: each block outside ``U`` runs its gate-off path ``post(shortcut(pre(x)))`` (the gate-off child of the
prefix tree), folded into the ``pre`` of the next gated block of ``U`` (or into the stem's tail before ``b_0``, or the
head after ``b_{u−1}``). Every module is the original's (nothing is copied), so view mask ``t`` (local bit ``j`` ↔
block ``b_j``) computes the full network at global mask ``Σ_j t_j · 2^{b_j}`` — and the ordinary tree pass
(:func:`experiment_1.network.engines.evaluate_all_masks` on the view) gives the ``2^u`` table of the restricted game,
whose Möbius coefficients (base ∅) are exactly the full network's ``Δ_S``, ``S ⊆ U``.

:func:`held_off_view` holds the view to the project's full-mask parity check
(:func:`experiment_1.network.gating.check_full_mask_parity`): with every view gate on it must equal the full stack's
own gated forward at the global mask of ``U`` on the parity image.
"""

from __future__ import annotations

from typing import Sequence

import torch
from torch import nn

from experiment_1.errors import PipelineError
from experiment_1.network.gating import check_full_mask_parity
from experiment_1.network.stack import GateableBlock, ResidualStack


class OffPath(nn.Module):
    """A block's gate-off output ``post(shortcut(pre(x)))``: the same operations as the prefix tree's gate-off child."""

    def __init__(self, block: GateableBlock) -> None:
        super().__init__()
        self.block = block

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        block = self.block
        return block.post(block.shortcut(block.pre(x)))


class FixedMask(nn.Module):
    """The full stack under one fixed mask (the reference the view's full-mask parity check is held to)."""

    def __init__(self, stack: ResidualStack, mask: torch.Tensor) -> None:
        super().__init__()
        self.stack = stack
        self.register_buffer("mask", mask.view(1, -1), persistent=False)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.stack(images, masks=self.mask.expand(images.shape[0], -1))


def _chain(first: nn.Module, held: list[nn.Module]) -> nn.Module:
    """``first`` then the held-off paths (``first`` alone when there are none)."""
    return nn.Sequential(first, *held) if held else first


def view_mask_id(blocks: Sequence[int], local: int) -> int:
    """The global mask id of view mask ``local`` (local bit ``j`` ↔ block ``blocks[j]``)."""
    return sum(1 << block for position, block in enumerate(blocks) if local >> position & 1)


def held_off_view(stack: ResidualStack, blocks: Sequence[int], check: bool = True) -> ResidualStack:
    """The view of ``stack`` with gates on ``blocks`` only (distinct indices, any order given; the view's gate ``j`` is
    the ``j``-th smallest) and every other block held off; checked against the full stack at the global mask of
    ``blocks`` (``check``). One-line :class:`PipelineError` for a bad subset."""
    chosen = sorted(int(block) for block in blocks)
    if not chosen or len(set(chosen)) != len(chosen) or chosen[0] < 0 or chosen[-1] >= stack.num_blocks:
        raise PipelineError(
            f"a held-off view needs distinct block indices in 0 … {stack.num_blocks - 1}; got {list(blocks)}"
        )
    members = set(chosen)
    held: list[nn.Module] = []
    stem: nn.Module | None = None
    gated: list[GateableBlock] = []
    for index, block in enumerate(stack.blocks):
        if index not in members:
            held.append(OffPath(block))
            continue
        if stem is None:  # the held-off blocks before the first gate run in the stem's tail
            stem, pre = _chain(stack.stem, held), block.pre
        else:  # between two gates: before the gated block's own pre
            pre = nn.Sequential(*held, block.pre) if held else block.pre
        gated.append(GateableBlock(block.branch, shortcut=block.shortcut, post=block.post, pre=pre, name=block.name))
        held = []
    assert stem is not None
    head = nn.Sequential(*held, stack.head) if held else stack.head  # the held-off blocks after the last gate
    view = ResidualStack(stem, gated, head, stack.preprocess, stack.arch, stack.weights).eval()
    view.memory_format = stack.memory_format
    view.num_classes = stack.num_classes
    if check:
        parameter = next(stack.parameters())
        mask = torch.zeros(stack.num_blocks, dtype=torch.bool, device=parameter.device)
        mask[chosen] = True
        check_full_mask_parity(FixedMask(stack, mask).eval(), view)
    return view
