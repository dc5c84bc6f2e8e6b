"""Everything a run checks and prepares before its first batch, behind one call: :func:`preflight`.

In order, cheap refusals first:

1. the labels fit the model's classes (:func:`check_labels`);
2. the cost estimate (:func:`experiment_1.run.cost.estimate`) and its refusal of an
   exhaustive pass over more than :data:`experiment_1.run.cost.MAX_BLOCKS` gated blocks unless
   ``confirm_long_run`` (a mask-family pass, ``config.mask_family``, is counted as the family and never refused for L)
   — before the memory check, so the run is first told that ``--confirm-long-run`` exists;
3. one batch's all-mask logits fit the device's memory (:func:`experiment_1.run.run_checks.check_logits_fit`;
   no flag makes them fit);
4. the estimated time within :data:`experiment_1.run.cost.MAX_HOURS` unless ``confirm_long_run``; then the estimate
   printed (a refusal of 2 or 4 carries it in its one line, so it is said once either way);
5. the model prepared as it will be evaluated: batch-norm re-estimated on images disjoint from the evaluated ones
   (:func:`calibrate_on_samples` on :func:`calibration_samples`, ``--calibrate-batchnorm``), batch-norm folded
   (``--fold-batchnorm``);
6. the stack a set function of the mask (:func:`experiment_1.run.run_checks.check_set_function`), before compiling;
7. compiled (``--compile``), then held to the float32 CPU stack's logits
   (:func:`experiment_1.network.gating.check_evaluation_parity`) unless the network was changed on purpose.

The allocator setting (:mod:`experiment_1.run.allocator`) comes before all of this, ahead of the model's
first tensor: :func:`experiment_1.run.setup.build_setup` applies it first.
"""

from __future__ import annotations

from pathlib import Path

import torch

from experiment_1.data.shards import SampleDataset, SampleRef, check_batch_errors
from experiment_1.errors import PipelineError
from experiment_1.network.batchnorm_calibration import calibrate_batchnorm
from experiment_1.network.compile_stack import compile_stack
from experiment_1.network.fold_bn import fold_batchnorm
from experiment_1.network.gating import check_evaluation_parity
from experiment_1.network.residual_stack import ResidualStack
from experiment_1.run import cost as run_cost
from experiment_1.run import distributed
from experiment_1.run.run_checks import check_logits_fit, check_set_function
from experiment_1.run.run_config import RunConfig

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
        lambda: run_cost.estimate(
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
    run_cost.check_blocks(cost, config.confirm_long_run)  # its line carries the estimate: said once
    family_masks = config.mask_family.size(model.num_blocks) if config.mask_family is not None else None
    check_logits_fit(
        config.batch_size,
        model.num_blocks,
        classes,
        torch.float64 if config.dtype == "float64" else torch.float32,
        device,
        masks=family_masks,
    )
    run_cost.check_hours(cost, config.confirm_long_run)  # its line carries the estimate too
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
