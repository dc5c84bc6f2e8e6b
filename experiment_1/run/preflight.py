"""Everything a run checks and prepares before its first batch, behind one call: :func:`preflight`.

In order, cheap refusals first:

1. the labels fit the model's classes (:func:`check_labels`);
2. the cost estimate (:func:`experiment_1.run.preflight.estimate`) and its refusal of an
   exhaustive pass over more than :data:`experiment_1.run.run_config.MAX_BLOCKS` gated blocks unless
   ``confirm_long_run`` (a mask-family pass, ``config.mask_family``, is counted as the family and never refused for L)
   — before the memory check, so the run is first told that ``--confirm-long-run`` exists;
3. one batch's all-mask logits fit the device's memory (:func:`experiment_1.run.preflight.check_logits_fit`;
   no flag makes them fit);
4. the estimated time within :data:`experiment_1.run.run_config.MAX_HOURS` unless ``confirm_long_run``; then the estimate
   printed (a refusal of 2 or 4 carries it in its one line, so it is said once either way);
5. the model prepared as it will be evaluated: batch-norm re-estimated on images disjoint from the evaluated ones
   (:func:`calibrate_on_samples` on :func:`calibration_samples`, ``--calibrate-batchnorm``), batch-norm folded
   (``--fold-batchnorm``);
6. the stack a set function of the mask (:func:`experiment_1.run.preflight.check_set_function`), before compiling;
7. compiled (``--compile``), then held to the float32 CPU stack's logits
   (:func:`experiment_1.network.gating.check_evaluation_parity`) unless the network was changed on purpose.

The allocator setting (:mod:`experiment_1.network.allocator`) comes before all of this, ahead of the model's
first tensor: :func:`experiment_1.run.setup.build_setup` applies it first.

Refusals before a run: what would make its numbers meaningless or its run impossible, found in seconds.

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

What a run will cost, said before it starts: expected time and peak memory of one all-mask pass.

:func:`estimate` counts the pass's multiply-accumulates (:mod:`experiment_1.network.engines`: the tree
engine runs block l on 2^l states and the head 2^L times, the naive engine 2^L full forwards) and
measures this machine's rate on the model itself: one timed forward of a small batch (after a
warm-up), so the rate includes the dtype, threads, memory format and device actually in use. The
tree engine usually reaches a higher rate than that forward (it runs large batches of states), so
the time is an upper-side estimate, typically within 2× of the truth. The peak memory is the
model's parameters, the pass's ``(B, 2^L, C)`` logits and about three copies of the largest
activation of the part of the network where it is largest given how many states run there (the stem
1 per image, block l 2^l, the head 2^L, each at most ``mask_chunk``) — a rough figure.

:func:`check` refuses (one :class:`PipelineError` line naming ``--confirm-long-run``) an exhaustive
pass over more than :data:`~experiment_1.run.run_config.MAX_BLOCKS` gated blocks or estimated above
:data:`~experiment_1.run.run_config.MAX_HOURS` hours,
unless the user passed ``--confirm-long-run``.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import torch
from torch import nn

from experiment_1.data.shards import SampleDataset, SampleRef, check_batch_errors
from experiment_1.errors import PipelineError
from experiment_1.network.batchnorm_calibration import calibrate_batchnorm
from experiment_1.network.compile_stack import compile_stack
from experiment_1.network.engines import family_gmac, work_ratio
from experiment_1.network.fold_bn import fold_batchnorm
from experiment_1.network.gating import ResidualStack, check_evaluation_parity, probe_input
from experiment_1.network.mask_family import MaskFamily
from experiment_1.run import distributed
from experiment_1.run.run_config import CONFIRM_FLAG, MAX_BLOCKS, MAX_HOURS, RunConfig

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


# What a too-deep network can have instead of 2^L masks: the low orders, exactly, at any depth (experiment_2's step 8)
LOW_ORDERS_INSTEAD = (
    "or, at any depth, run python -m experiment_2.step_8_low_orders (every interaction of at most --order blocks, "
    "exactly, about the all-off and the full network, and the Walsh summaries with intervals; --dry-run prints its cost)"
)
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
    members of a mask ``family`` (:func:`experiment_1.network.engines.family_gmac` for the tree walk)."""
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
            f"for an exhaustive run ({cost.describe().removeprefix('cost estimate: ')}); pass {CONFIRM_FLAG} to run it anyway, "
            f"{LOW_ORDERS_INSTEAD}"
        )


def check_depth(num_blocks: int, confirmed: bool, what: str = "an exhaustive pass") -> None:
    """Refuse ``what`` (a pass over all 2^L masks) over more than :data:`MAX_BLOCKS` gated blocks unless ``confirmed``: the
    same limit as :func:`check_blocks`, for a tool that makes no cost estimate (``python -m experiment_1.tools.bench profile``)."""
    if not confirmed and num_blocks > MAX_BLOCKS:
        raise PipelineError(
            f"L = {num_blocks} gated blocks means 2^{num_blocks} masks per image, beyond the limit of L = {MAX_BLOCKS} "
            f"for {what}; pass {CONFIRM_FLAG} to run it anyway, {LOW_ORDERS_INSTEAD}"
        )


def check_hours(cost: CostEstimate, confirmed: bool) -> None:
    """Refuse a pass estimated above :data:`MAX_HOURS` hours unless ``confirmed``."""
    if not confirmed and cost.seconds > MAX_HOURS * 3600:
        raise PipelineError(
            f"this pass is estimated at {cost.seconds / 3600:.1f} h, beyond the limit of {MAX_HOURS:g} h "
            f"({cost.describe().removeprefix('cost estimate: ')}); pass {CONFIRM_FLAG} to run it anyway, or use fewer images (--limit)"
        )


CALIBRATION_BATCH = 64  # images per calibration batch: one batch for a null of up to 64 calibration images
CALIBRATION_SOURCE = "the images after the evaluated ones in the sample list"  # disjoint from them by position


def calibration_samples(
    samples: list[SampleRef], num_evaluated: int, count: int, sample_index: Path
) -> list[SampleRef]:
    """The ``count`` images that follow the ``num_evaluated`` evaluated ones in the whole sample list ``samples`` (positions
    ``num_evaluated … num_evaluated + count − 1``): batch-norm statistics estimated on images the run never evaluates.
    Refused with one line when the list has fewer, or (a list with a repeated image) when one is also evaluated."""
    chosen = samples[num_evaluated : num_evaluated + count]
    if len(chosen) < count:
        raise PipelineError(
            f"{sample_index}: --calibrate-batchnorm {count} needs {count} images after the {num_evaluated} evaluated ones, but "
            f"the list has {len(samples)}; lower --limit or --calibrate-batchnorm"
        )
    evaluated = {(sample.source, sample.row) for sample in samples[:num_evaluated]}
    shared = [sample for sample in chosen if (sample.source, sample.row) in evaluated]
    if shared:
        raise PipelineError(
            f"{sample_index}: calibration image {shared[0].describe()} is also evaluated; batch-norm statistics must come "
            "from images the run does not evaluate — regenerate the list with experiment_1.step_2_sample"
        )
    return chosen


def preflight(
    model: ResidualStack,
    dataset: SampleDataset,
    config: RunConfig,
    device: torch.device,
    calibration: SampleDataset | None = None,
) -> None:
    """Refuse, in seconds and with one line, a run that cannot or should not start; prepare ``model`` as it will be evaluated
    (calibrated on ``calibration``, folded, compiled as ``config`` asks) and check it. The module's docstring gives the
    order."""
    classes = num_classes(model)
    check_labels(dataset.samples, classes, config.sample_index)
    cost = distributed.on_main(
        lambda: estimate(
            model,
            model.preprocess.crop,
            len(dataset),
            config.batch_size,
            config.mask_chunk,
            config.engine,
            distributed.world_size(),
            config.masks_per_image,
            family=config.mask_family,
        )
    )
    check_blocks(cost, config.confirm_long_run)  # its line carries the estimate: said once
    family_masks = config.mask_family.size(model.num_blocks) if config.mask_family is not None else None
    check_logits_fit(
        config.batch_size,
        model.num_blocks,
        classes,
        torch.float64 if config.dtype == "float64" else torch.float32,
        device,
        masks=family_masks,
    )
    check_hours(cost, config.confirm_long_run)  # its line carries the estimate too
    print(cost.describe(), flush=True)  # stdout, once the run is accepted: rank 0 only under torchrun
    if config.calibrate_batchnorm is not None:
        if calibration is None:
            raise PipelineError("--calibrate-batchnorm: no calibration images were prepared for the run")
        calibrate_on_samples(model, calibration, config.skip_corrupt)
    if config.fold_batchnorm:
        fold_batchnorm(model)
    check_set_function(model)  # deterministic and batch-independent, as evaluated (before compiling)
    if config.compile:
        compile_stack(model)
    if (
        config.smooth_activations is None and config.calibrate_batchnorm is None
    ):  # those change the network: no reference to hold it to
        check_evaluation_parity(model, config.dtype)


def num_classes(model: ResidualStack) -> int | None:
    """``C``, the number of logits: as the network's own forward gave it when gated, else the output size of the head's
    last linear layer (``None`` without either)."""
    if getattr(model, "num_classes", None) is not None:
        return model.num_classes
    linears = [module for module in model.head.modules() if isinstance(module, torch.nn.Linear)]
    return linears[-1].out_features if linears else None


def check_labels(samples: list[SampleRef], classes: int | None, sample_index: Path) -> None:
    """Refuse a label outside ``[0, C)`` (``-1`` = unlabelled is allowed) before anything is evaluated; nothing to check when C is unknown."""
    outside = [sample for sample in samples if classes is not None and sample.label >= classes]
    if outside:
        raise PipelineError(
            f"{sample_index}: label {outside[0].label} of {outside[0].describe()} is outside [0, {classes}) for a model with {classes} classes "
            f"({len(outside)} such image(s)); draw the list from ImageNet shards or folders (experiment_1.step_2_sample)"
        )


def calibrate_on_samples(model: ResidualStack, dataset: SampleDataset, skip_corrupt: bool) -> int:
    """:func:`~experiment_1.network.batchnorm_calibration.calibrate_batchnorm` on every image of ``dataset`` (the calibration
    images, :func:`calibration_samples`; in batches of :data:`CALIBRATION_BATCH`, on the model's device, dtype and memory
    format); undecodable images stop the run unless ``skip_corrupt`` (then they are left out)."""
    parameter = next(model.parameters())
    positions = list(range(len(dataset)))

    def batches():
        for start in range(0, len(positions), CALIBRATION_BATCH):
            items = [dataset[position] for position in positions[start : start + CALIBRATION_BATCH]]
            valid = check_batch_errors(
                [item["error"] for item in items], skip_corrupt, [item["fatal"] for item in items]
            )
            images = torch.stack([item["image"] for item, keep in zip(items, valid) if keep])
            if len(images):
                yield images.to(device=parameter.device, dtype=parameter.dtype, memory_format=model.memory_format)

    return calibrate_batchnorm(model, batches())
