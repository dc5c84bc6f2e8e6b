"""Refusals before a run: what would make its numbers meaningless or its run impossible, found in seconds.

- :func:`check_set_function`: the gated stack must be a *set function* of the mask — deterministic
  and independent of what else shares its batch. One or two random images under a few masks are
  evaluated alone, inside a batch of another image, inside one chunk of several masks (as the tree
  engine batches prefix states) and twice; every pair must agree to round-off. A batch-norm that
  uses batch statistics, or a stochastic layer, is refused with one line naming the cause.
- :func:`check_lambdas`, :func:`check_beta`: a residual scale λ whose order-L energy λ^(2L)
  underflows the Möbius dtype, or a β whose Softplus overflows or underflows the network's
  dtype, is refused before a single batch is evaluated.
- :func:`check_logits_fit`: one batch's all-mask logits ``(B, 2^L, C)`` must fit in the device's
  memory; ``--mask-chunk`` bounds the network's activations, not this output, so it is not offered
  as the remedy (at L ≥ 25 with 1000 classes one image alone needs over 100 GiB).
"""

from __future__ import annotations

import math
import os

import torch

from experiment_1.errors import PipelineError
from experiment_1.network.activations import probe_input
from experiment_1.network.residual_stack import ResidualStack

PROBE_MASKS = 4  # masks per probed chunk: enough to put several states of one image into one batch
TF32_EPS = 2.0**-10  # TensorFloat-32's 10-bit mantissa (--dtype tf32 on CUDA)


def _relative_difference(first: torch.Tensor, second: torch.Tensor) -> float:
    scale = max(first.abs().max().item(), second.abs().max().item(), torch.finfo(first.dtype).tiny)
    return (first - second).abs().max().item() / scale


@torch.no_grad()
def check_set_function(model: ResidualStack) -> None:
    """Refuse a stack that is not deterministic or not batch-independent (one line naming which); skipped
    when its logits are not finite (the batch loop reports those with the images, λ and weights)."""
    model.eval()
    training = [name for name, module in model.named_modules() if module.training]
    if training:
        raise PipelineError(
            f"{model.arch}: module {training[0] or 'the stack'} stays in training mode after eval(); a train() override must honour mode=False"
        )
    images = torch.cat([probe_input(model, seed) for seed in (0, 1)])
    num_blocks = model.num_blocks
    generator = torch.Generator().manual_seed(0)
    masks = torch.cat(
        [
            torch.ones(1, num_blocks, dtype=torch.bool),
            torch.zeros(1, num_blocks, dtype=torch.bool),
            torch.rand(PROBE_MASKS - 2, num_blocks, generator=generator) < 0.5,
        ]
    )
    tf32 = (
        images.is_cuda
        and images.dtype == torch.float32
        and (torch.backends.cuda.matmul.allow_tf32 or torch.backends.cudnn.allow_tf32)
    )
    tolerance = math.sqrt(
        TF32_EPS if tf32 else torch.finfo(images.dtype).eps
    )  # batched kernels may sum in another order: round-off, not O(1)
    alone = torch.cat([model(images[:1], masks[index : index + 1]) for index in range(PROBE_MASKS)])
    again = torch.cat([model(images[:1], masks[index : index + 1]) for index in range(PROBE_MASKS)])
    if not torch.isfinite(alone).all():  # NaN/inf weights: the batch loop names the images, λ and weights itself
        return
    chunk = model(images[:1].expand(PROBE_MASKS, *images.shape[1:]), masks)
    paired = model(images, masks[:1].expand(2, num_blocks))[:1]
    causes = (
        (
            alone,
            again,
            "two evaluations of one image under one mask differ (a stochastic layer: dropout in training mode, added noise …)",
        ),
        (
            alone,
            chunk,
            "an image's logits change when other masks of it share the batch (batch statistics: a batch-norm in "
            "training mode or one that normalises over the batch)",
        ),
        (
            alone[:1],
            paired,
            "an image's logits change when another image shares its batch (batch statistics: a batch-norm in training "
            "mode or one that normalises over the batch)",
        ),
    )
    for first, second, cause in causes:
        difference = _relative_difference(first, second)
        if not difference <= tolerance:
            raise PipelineError(
                f"{model.arch}: not a set function of the gates — {cause}; relative difference {difference:.2g} "
                f"(round-off allows {tolerance:.1g}); make the network's forward deterministic and per-image"
            )


def check_lambdas(lambdas: list[float], num_blocks: int, mobius_dtype: torch.dtype) -> None:
    """Refuse a λ whose order-L energy λ^(2L) underflows ``mobius_dtype`` (the order spectrum would be exactly zero there)."""
    tiny = torch.finfo(mobius_dtype).tiny
    smallest = tiny ** (1 / (2 * num_blocks))
    bad = [value for value in lambdas if value < smallest]
    if bad:
        raise PipelineError(
            f"--lambdas {bad[0]:g}: the order-{num_blocks} energy λ^{2 * num_blocks} underflows {str(mobius_dtype).removeprefix('torch.')} "
            f"(smallest normal {tiny:.3g}); every λ must be at least {smallest:.3g} for L = {num_blocks}"
        )


ACTIVATION_SCALE = 1e3  # |pre-activation| a network may reach: β·x must stay finite up to it


def check_beta(beta: float, dtype: torch.dtype) -> None:
    """Refuse a Softplus β for which β·x (|x| up to 10³) overflows or log 2/β is not representable in the network's ``dtype``."""
    info = torch.finfo(dtype)
    if not (beta > 0 and math.isfinite(beta)):
        raise PipelineError(f"--smooth-activations {beta:g}: β must be a positive finite number (e.g. 10)")
    if beta * ACTIVATION_SCALE > info.max or math.log(2) / beta > info.max or beta < info.tiny:
        raise PipelineError(
            f"--smooth-activations {beta:g}: Softplus_β overflows or underflows {str(dtype).removeprefix('torch.')} "
            f"(β·x must stay below {info.max:.3g} for |x| up to {ACTIVATION_SCALE:g}, and log 2/β finite); choose β "
            f"between {max(info.tiny, math.log(2) / info.max):.3g} and {info.max / ACTIVATION_SCALE:.3g}"
        )


def device_memory(device: torch.device) -> int:
    """Bytes of memory of ``device`` (the GPU's total, or the machine's physical memory)."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).total_memory
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def check_logits_fit(
    batch_size: int,
    num_blocks: int,
    classes: int | None,
    dtype: torch.dtype,
    device: torch.device,
    memory: int | None = None,
    masks: int | None = None,
) -> None:
    """Refuse a run whose one batch of all-mask logits ``(B, 2^L, C)`` — ``(B, masks, C)`` for a pass over fewer masks
    (a mask family) — cannot fit in the device's memory."""
    if classes is None:
        return
    memory = device_memory(device) if memory is None else memory
    per_image = (2**num_blocks if masks is None else masks) * classes * torch.finfo(dtype).bits // 8
    if per_image > memory:
        raise PipelineError(
            f"L = {num_blocks} blocks: one image's all-mask logits (2^{num_blocks} × {classes} {str(dtype).removeprefix('torch.')}) take "
            f"{per_image / 2**30:.3g} GiB, more than this {device.type} device's {memory / 2**30:.3g} GiB; exhaustive evaluation cannot hold them "
            "(--mask-chunk bounds the network's activations, not this output) — gate fewer blocks"
        )
    if batch_size * per_image > memory:
        raise PipelineError(
            f"--batch-size {batch_size}: one batch's all-mask logits take {batch_size * per_image / 2**30:.3g} GiB, more than this {device.type} device's "
            f"{memory / 2**30:.3g} GiB; use --batch-size {max(1, memory // per_image // 2)} or less"
        )
