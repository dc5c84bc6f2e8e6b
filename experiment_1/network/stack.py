"""The gated residual stack: ``stem → blocks[0] → … → blocks[L−1] → head``, one binary gate per residual branch.

Each gateable block computes

    y = post( shortcut(x') + λ · m · branch(x') ),   x' = pre(x)

- ``pre``: a fixed path before the unit (identity for ResNets; the non-gateable blocks between
  two gateable ones for other families);
- ``shortcut``: identity or a downsampling projection — never masked;
- ``branch``: the residual branch ``F`` that the gate ``m ∈ {0, 1}`` multiplies;
- ``post``: ReLU for ResNets, identity for MBConv-style blocks;
- ``λ``: a global residual scale.

The modules hold no run state: the per-sample masks ``(B, L)`` and λ are arguments of
:meth:`ResidualStack.forward` (and of the engines in :mod:`experiment_1.network.engines`), so one model can be
called concurrently with different masks. With every gate on and ``λ = 1`` the output equals the
network the stack was cut from bit for bit (same modules, same operations, same order) on the same
memory format and batch. Stacks are built with :mod:`experiment_1.network.gating` (the public API) and
looked up by name in :mod:`experiment_1.network.registry`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
MEMORY_FORMATS = {"channels_last": torch.channels_last, "contiguous": torch.contiguous_format}


@dataclass(frozen=True)
class Preprocess:
    """The evaluation transform a model expects: resize the short side, centre-crop, normalise."""

    resize: int = 256
    crop: int = 224
    mean: tuple[float, ...] = IMAGENET_MEAN
    std: tuple[float, ...] = IMAGENET_STD


class GateableBlock(nn.Module):
    """``y = post(shortcut(pre(x)) + gate · branch(pre(x)))`` with ``gate = λ·m`` per sample."""

    def __init__(
        self,
        branch: nn.Module,
        shortcut: nn.Module | None = None,
        post: nn.Module | None = None,
        pre: nn.Module | None = None,
        name: str = "",
    ) -> None:
        super().__init__()
        self.pre = pre if pre is not None else nn.Identity()
        self.shortcut = shortcut if shortcut is not None else nn.Identity()
        self.branch = branch
        self.post = post if post is not None else nn.Identity()
        self.name = name

    def forward(self, x: torch.Tensor, gate: torch.Tensor | None) -> torch.Tensor:
        """Apply the block; ``gate`` is ``(B,)`` (λ·m per sample) or ``None`` for "on, λ = 1"."""
        x = self.pre(x)
        branch_out = self.branch(x)
        if gate is not None:
            branch_out = branch_out * gate.view(-1, *([1] * (branch_out.dim() - 1)))
        return self.post(self.shortcut(x) + branch_out)

    def forward_both(self, x: torch.Tensor, residual_scale: float) -> tuple[torch.Tensor, torch.Tensor]:
        """Both children of a prefix state: ``(gate off, gate on)``, the branch run once.

        The gate-on child is computed first, so an in-place ``post`` (``ReLU(inplace=True)``, as in
        timm) cannot alter the shortcut before it enters the sum."""
        x = self.pre(x)
        shortcut_out = self.shortcut(x)
        branch_out = self.branch(x)
        if residual_scale != 1.0:
            branch_out = branch_out * residual_scale
        gate_on = self.post(shortcut_out + branch_out)
        return self.post(shortcut_out), gate_on


class ResidualStack(nn.Module):
    """``stem → gateable blocks → head``; masks and λ are arguments of :meth:`forward`, never state."""

    def __init__(
        self,
        stem: nn.Module,
        blocks: list[GateableBlock],
        head: nn.Module,
        preprocess: Preprocess,
        arch: str,
        weights: str,
    ) -> None:
        super().__init__()
        self.stem = stem
        self.blocks = nn.ModuleList(blocks)
        self.head = head
        self.preprocess = preprocess
        self.arch = arch
        self.weights = weights
        self.memory_format = torch.contiguous_format  # of the weights; architectures.build_gated_stack sets it
        self.compiled = False  # compile_stack sets it
        self.num_classes: int | None = None  # C, the logits' size; gating.gate sets it from the network's own forward
        self.full_mask_reference: tuple[int, torch.Tensor] | None = (
            None  # (size, float32 CPU logits of gating.parity_image(size)), set by gating.gate
        )

    @property
    def num_blocks(self) -> int:
        """``L``, the number of gateable blocks."""
        return len(self.blocks)

    @property
    def block_names(self) -> list[str]:
        """Names of the gateable blocks in forward order (``layer1.0`` …)."""
        return [block.name for block in self.blocks]

    @property
    def gated_recursion(self) -> str:
        """The recursion the gateable blocks compute, read off their modules: the post-activation
        (``ReLU(…)``, or nothing for an identity), the shortcut and the fixed ``pre`` path where
        they are not identities, the gate ``m_l`` and the residual scale ``λ``. REPORTs state this
        string, so no REPORT can name a formula its model does not compute."""

        def uniform_name(modules: list[nn.Module]) -> str | None:
            names = {type(module).__name__ for module in modules}
            return names.pop() if len(names) == 1 else None

        pre = uniform_name([block.pre for block in self.blocks]) != "Identity"
        state = "u_l" if pre else "x_l"
        shortcut = (
            state if uniform_name([block.shortcut for block in self.blocks]) == "Identity" else f"shortcut_l({state})"
        )
        total = f"{shortcut} + λ·m_l·F_l({state})"
        post = uniform_name([block.post for block in self.blocks])
        if post != "Identity":
            total = f"{post or 'post_l'}({total})"
        recursion = f"x_{{l+1}} = {total}"
        if pre:
            recursion += ", u_l = pre_l(x_l) (the fixed, ungated layers before block l; identity where there are none)"
        return recursion

    def forward(
        self, images: torch.Tensor, masks: torch.Tensor | None = None, residual_scale: float = 1.0
    ) -> torch.Tensor:
        """Logits under per-sample ``masks`` — ``(B, L)`` bool or 0/1, ``None``: every gate on — and λ = ``residual_scale``."""
        if masks is not None:
            if masks.dim() != 2 or masks.shape != (images.shape[0], self.num_blocks):
                raise ValueError(
                    f"masks must have shape ({images.shape[0]}, {self.num_blocks}) for this batch; got {tuple(masks.shape)}"
                )
            masks = masks.to(device=images.device)
        x = self.stem(images)
        for index, block in enumerate(self.blocks):
            gate = None
            if masks is not None:
                gate = masks[:, index].to(x.dtype) * residual_scale
            elif residual_scale != 1.0:
                gate = torch.full((x.shape[0],), residual_scale, dtype=x.dtype, device=x.device)
            x = block(x, gate)
        return self.head(x)
