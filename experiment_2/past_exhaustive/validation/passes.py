"""The forward passes of the estimator validation (step 11): exhaustive tables, the family pass on the same images,
and the family pass that reproduces a committed exhaustive run's low-order energies.

Every pass goes through :func:`experiment_1.run.run_per_image`, so each finished batch is kept in the output folder's
``partial/`` store under a key made of the content it came from (configuration, sample entries, shards, weights);
a rerun resumes from the store and recomputes nothing it holds.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import torch

from experiment_1.errors import PipelineError
from experiment_1.network import MaskFamily, parse_weights
from experiment_1.run import (
    EvaluationSetup,
    RunConfig,
    build_setup,
    run_per_image,
)
from experiment_2.past_exhaustive.validation.table_spec import TableSpec
from experiment_2.past_exhaustive.validation.tables import (
    class_slice,
    family_coefficients,
    family_order_energies,
    table_reductions,
)

BASES = ("off", "on")


def table_config(args: RunConfig, spec: TableSpec) -> RunConfig:
    """``args`` with the table's architecture, weights, resolution, image count and sample list."""
    sample_index = args.sample_index if spec.sample_list is None else spec.sample_list
    return replace(
        args,
        arch=spec.arch,
        weights=parse_weights(spec.weights),
        limit=spec.images,
        resolution=spec.resolution,
        sample_index=sample_index,
    )


def with_options(setup: EvaluationSetup, options: dict[str, Any]) -> EvaluationSetup:
    return replace(setup, config=setup.config.with_options(estimator_validation=options))


def table_setup_of(args: RunConfig, spec: TableSpec, options: dict[str, Any]) -> EvaluationSetup:
    """The table's network and images, built (no pass run)."""
    return with_options(build_setup(table_config(args, spec)), options)


def evaluate_table(
    setup: EvaluationSetup, spec: TableSpec, options: dict[str, Any], dtype: torch.dtype, step: str
) -> tuple[dict[str, np.ndarray], dict[str, dict[str, np.ndarray]], dict[str, float]]:
    """One exhaustive pass (all masks) over the table's images (``setup``: :func:`table_setup_of`), then the family
    pass at each corner on the same images. Returns the exhaustive arrays (:func:`table_reductions`), the family
    coefficients per base and the timing of the passes this call ran."""
    num_blocks, order = setup.model.num_blocks, options["order"]

    def reduce(logits: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
        classes = class_slice(logits.shape[2], options["classes"], options["class_seed"])
        return table_reductions(logits, classes, order, dtype)

    arrays, timing = run_per_image(
        setup, f"{step}/exhaustive_{spec.label}", reduce, description=f"{spec.label}: all masks"
    )
    families = {}
    for base in BASES:
        family = MaskFamily(order, base)
        families[base], part = run_per_image(
            setup,
            f"{step}/family_{spec.label}_{base}",
            lambda logits, labels, family=family: family_coefficients(logits, family, num_blocks, dtype),
            description=f"{spec.label}: {family.describe()}",
            mask_family=family,
        )
        timing = {name: timing[name] + part[name] for name in ("wall_seconds", "images_evaluated")}
    return arrays, families, timing


def committed_setup_of(args: RunConfig, options: dict[str, Any]) -> EvaluationSetup:
    """The run's own network and images (the flags of ``args``), built for the family pass (no pass run)."""
    return with_options(build_setup(replace(args, mask_family=MaskFamily(options["order"], "off"))), options)


def evaluate_committed(
    setup: EvaluationSetup, options: dict[str, Any], dtype: torch.dtype, step: str
) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """The full network's prediction and the family pass at the all-off corner over the run's own images
    (``setup``: :func:`committed_setup_of`): per image the predicted class and the per-class order energies
    ``(k + 1, C)``."""
    family = MaskFamily(options["order"], "off")
    num_blocks = setup.model.num_blocks
    full, timing = run_per_image(
        setup,
        f"{step}/committed_full",
        lambda logits, labels: {"predicted": logits[:, 0].argmax(dim=-1)},
        description="the full network",
        mask_indices=[(1 << num_blocks) - 1],
    )
    part, part_timing = run_per_image(
        setup,
        f"{step}/committed_off",
        lambda logits, labels: family_order_energies(logits, family, num_blocks, dtype),
        description=family.describe(),
        mask_family=family,
    )
    if not np.array_equal(full["index"], part["index"]):
        raise PipelineError(
            "the full-network pass and the family pass hold different images; delete partial/ and rerun"
        )
    arrays = {**part, "predicted": full["predicted"]}
    timing = {name: timing[name] + part_timing[name] for name in ("wall_seconds", "images_evaluated")}
    return arrays, timing
