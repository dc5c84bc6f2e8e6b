"""What a run will cost, said before it starts: expected time and peak memory of one all-mask pass.

:func:`estimate` counts the pass's multiply-accumulates (:mod:`experiment_1.network.macs`: the tree
engine runs block l on 2^l states and the head 2^L times, the naive engine 2^L full forwards) and
measures this machine's rate on the model itself: one timed forward of a small batch (after a
warm-up), so the rate includes the dtype, threads, memory format and device actually in use. The
tree engine usually reaches a higher rate than that forward (it runs large batches of states), so
the time is an upper-side estimate, typically within 2× of the truth. The peak memory is the
model's parameters, the pass's ``(B, 2^L, C)`` logits and about three copies of the largest
activation of the part of the network where it is largest given how many states run there (the stem
1 per image, block l 2^l, the head 2^L, each at most ``mask_chunk``) — a rough figure.

:func:`check` refuses (one :class:`PipelineError` line naming ``--confirm-long-run``) an exhaustive
pass over more than :data:`MAX_BLOCKS` gated blocks or estimated above :data:`MAX_HOURS` hours,
unless the user passed ``--confirm-long-run``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import torch
from torch import nn

from experiment_1.errors import PipelineError
from experiment_1.network.macs import family_gmac, work_ratio
from experiment_1.network.mask_family import MaskFamily
from experiment_1.network.residual_stack import ResidualStack

CONFIRM_FLAG = "--confirm-long-run"
MAX_BLOCKS = 20  # 2^20 masks per image: about 4 GB of float32 logits per image at C = 1000
MAX_HOURS = 24.0
CALIBRATION_IMAGES = 16
ACTIVATION_COPIES = 3  # a block's input, its branch's largest intermediate and the gate-off/gate-on pair


@dataclass(frozen=True)
class CostEstimate:
    """One pass's expected cost on this machine."""

    gmac_per_image: float
    measured_gmac_per_s: float
    num_images: int
    world_size: int
    seconds: float
    peak_bytes: int
    num_blocks: int
    engine: str
    masks_per_image: int

    def describe(self) -> str:
        hours = self.seconds / 3600
        duration = f"{self.seconds:.0f} s" if self.seconds < 600 else f"{hours:.1f} h"
        ranks = f" over {self.world_size} processes" if self.world_size > 1 else ""
        masks = (
            f"2^{self.num_blocks} masks"
            if self.masks_per_image == 2**self.num_blocks
            else f"{self.masks_per_image} mask(s)"
        )
        return (
            f"cost estimate: {self.num_images} image(s) × {self.gmac_per_image:.4g} GMAC ({self.engine} engine, L = {self.num_blocks}, "
            f"{masks}) at the measured {self.measured_gmac_per_s:.3g} GMAC/s{ranks}: about {duration} per pass, "
            f"peak memory about {self.peak_bytes / 2**30:.2g} GiB beyond the process's own (rough; the time is usually an overestimate)"
        )

    def record(self) -> dict[str, Any]:
        return {
            "gmac_per_image": self.gmac_per_image,
            "measured_gmac_per_s": self.measured_gmac_per_s,
            "estimated_seconds": self.seconds,
            "estimated_peak_bytes": self.peak_bytes,
        }


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def activation_sizes(model: ResidualStack, image: torch.Tensor) -> tuple[list[int], int]:
    """Per part of one image's full forward — stem, each gated block, head — the elements of its largest
    layer output; and the number of logits."""
    largest = [0] * (model.num_blocks + 2)
    part = [0]

    def enter(position: int) -> Callable[..., None]:
        def hook(*_: Any) -> None:
            part[0] = position

        return hook

    def record(layer: nn.Module, inputs: Any, output: Any) -> None:
        if isinstance(output, torch.Tensor):
            largest[part[0]] = max(largest[part[0]], output[0].numel())

    parts = [model.stem, *model.blocks, model.head]
    handles = [module.register_forward_pre_hook(enter(position)) for position, module in enumerate(parts)]
    handles += [layer.register_forward_hook(record) for layer in model.modules() if not list(layer.children())]
    try:
        with torch.no_grad():
            logits = model(image)
    finally:
        for handle in handles:
            handle.remove()
    return largest, logits.shape[-1]


@torch.no_grad()
def measured_rate(model: ResidualStack, resolution: int, full_gmac: float) -> float:
    """GMAC/s of one full forward of :data:`CALIBRATION_IMAGES` random images (after a one-image warm-up)."""
    parameter = next(model.parameters())
    images = torch.randn(CALIBRATION_IMAGES, 3, resolution, resolution, generator=torch.Generator().manual_seed(0))
    images = images.to(device=parameter.device, dtype=parameter.dtype).contiguous(memory_format=model.memory_format)
    model(images[:1])
    _synchronize(parameter.device)
    started = time.perf_counter()
    model(images)
    _synchronize(parameter.device)
    return full_gmac * CALIBRATION_IMAGES / max(time.perf_counter() - started, 1e-9)


def estimate(
    model: ResidualStack,
    resolution: int,
    num_images: int,
    batch_size: int,
    mask_chunk: int,
    engine: str,
    world_size: int = 1,
    masks_per_image: int | None = None,
    family: MaskFamily | None = None,
) -> CostEstimate:
    """The expected time and peak memory of one pass of ``engine`` over ``num_images`` images: all 2^L
    masks, with ``masks_per_image`` that many naive forwards per image (e.g. the full mask alone), or the
    members of a mask ``family`` (:func:`experiment_1.network.macs.family_gmac` for the tree walk)."""
    parameter = next(model.parameters())
    work = work_ratio(model, resolution, parameter.device)
    size = 2**model.num_blocks
    full_gmac = work["naive_gmac"] / size
    if family is not None:
        masks_per_image = family.size(model.num_blocks)
        gmac = (
            family_gmac(model, resolution, parameter.device, family)
            if engine == "tree"
            else full_gmac * masks_per_image
        )
    else:
        gmac = (
            full_gmac * masks_per_image
            if masks_per_image is not None
            else work["tree_gmac"]
            if engine == "tree"
            else work["naive_gmac"]
        )
    rate = measured_rate(model, resolution, full_gmac)
    largest, classes = activation_sizes(
        model, torch.zeros(1, 3, resolution, resolution, device=parameter.device, dtype=parameter.dtype)
    )
    element = parameter.element_size()
    masks = size if masks_per_image is None else masks_per_image
    # states alive in each part: the tree runs the stem on 1 per image, block l on 2^l, the head on 2^L (at most mask_chunk); naive: mask_chunk everywhere
    states = (
        [1, *(2**level for level in range(model.num_blocks)), size]
        if engine == "tree" and masks_per_image is None
        else [masks] * len(largest)
    )
    activations = max(min(count, mask_chunk) * elements for count, elements in zip(states, largest))
    peak = (
        sum(p.numel() for p in model.parameters()) * element
        + batch_size * masks * classes * max(element, 4)
        + ACTIVATION_COPIES * batch_size * activations * element
    )
    return CostEstimate(
        gmac,
        rate,
        num_images,
        world_size,
        gmac * num_images / (rate * world_size),
        int(peak),
        model.num_blocks,
        engine,
        masks,
    )


def check(cost: CostEstimate, confirmed: bool) -> None:
    """Refuse an exhaustive (all-mask) pass beyond the limits unless ``confirmed`` (``--confirm-long-run``):
    :func:`check_blocks`, then :func:`check_hours` (:func:`experiment_1.run.preflight.preflight` runs the memory check between them)."""
    check_blocks(cost, confirmed)
    check_hours(cost, confirmed)


def check_blocks(cost: CostEstimate, confirmed: bool) -> None:
    """Refuse an exhaustive pass over more than :data:`MAX_BLOCKS` gated blocks unless ``confirmed`` (a pass over
    fewer masks — a mask family, a list — is held to the time limit only)."""
    if not confirmed and cost.num_blocks > MAX_BLOCKS and cost.masks_per_image == 2**cost.num_blocks:
        raise PipelineError(
            f"L = {cost.num_blocks} gated blocks means 2^{cost.num_blocks} masks per image, beyond the limit of L = {MAX_BLOCKS} "
            f"for an exhaustive run ({cost.describe().removeprefix('cost estimate: ')}); pass {CONFIRM_FLAG} to run it anyway"
        )


def check_depth(num_blocks: int, confirmed: bool, what: str = "an exhaustive pass") -> None:
    """Refuse ``what`` (a pass over all 2^L masks) over more than :data:`MAX_BLOCKS` gated blocks unless ``confirmed``: the
    same limit as :func:`check_blocks`, for a tool that makes no cost estimate (``python -m experiment_1.profile_tree``)."""
    if not confirmed and num_blocks > MAX_BLOCKS:
        raise PipelineError(
            f"L = {num_blocks} gated blocks means 2^{num_blocks} masks per image, beyond the limit of L = {MAX_BLOCKS} "
            f"for {what}; pass {CONFIRM_FLAG} to run it anyway"
        )


def check_hours(cost: CostEstimate, confirmed: bool) -> None:
    """Refuse a pass estimated above :data:`MAX_HOURS` hours unless ``confirmed``."""
    if not confirmed and cost.seconds > MAX_HOURS * 3600:
        raise PipelineError(
            f"this pass is estimated at {cost.seconds / 3600:.1f} h, beyond the limit of {MAX_HOURS:g} h "
            f"({cost.describe().removeprefix('cost estimate: ')}); pass {CONFIRM_FLAG} to run it anyway, or use fewer images (--limit)"
        )
