"""The forward passes of the estimator validation (step 11): exhaustive tables, the family pass on the same images,
and the family pass that reproduces a committed exhaustive run's low-order energies.

Every pass goes through :func:`experiment_1.run.run_per_image`, so each finished batch is kept in the output folder's
``partial/`` store under a key made of the content it came from (configuration, sample entries, shards, weights);
a rerun resumes from the store and recomputes nothing it holds.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from experiment_1.errors import PipelineError
from experiment_1.network import MaskFamily
from experiment_1.run import (
    EvaluationSetup,
    RunConfig,
    add_evaluation_arguments,
    build_setup,
    run_config,
    run_per_image,
)
from experiment_2.past_exhaustive.validation.tables import (
    class_slice,
    family_coefficients,
    family_order_energies,
    table_reductions,
)

BASES = ("off", "on")


SAMPLE_LIST_PREFIX = "sample_index_"  # dropped from a table's own sample list's name in its label


@dataclass(frozen=True)
class TableSpec:
    """One exhaustive validation network: ``arch:weights:resolution:images[:sample_list]`` (resolution ``native``: the
    arch's own). Its images are the first ``images`` of ``sample_list`` when one is given (images other than the
    run's, e.g. ones no estimator was chosen on), else of the run's ``--sample-index``."""

    arch: str
    weights: str
    resolution: int | None
    images: int
    sample_list: Path | None = None

    @classmethod
    def parse(cls, text: str) -> TableSpec:
        parts = text.split(":", 4)
        if len(parts) not in (4, 5) or not parts[3].isdigit() or not (parts[2] == "native" or parts[2].isdigit()):
            raise argparse.ArgumentTypeError(
                f"'{text}' is not ARCH:WEIGHTS:RESOLUTION:IMAGES[:SAMPLE_LIST] (e.g. resnet34:random:32:4, "
                "efficientnet_lite1:pretrained:native:4, resnet34:random:32:4:experiment_2/sample_index_validation_8_11.json)"
            )
        resolution = None if parts[2] == "native" else int(parts[2])
        sample_list = None
        if len(parts) == 5:
            try:
                sample_list = run_config.sample_list_file(parts[4])
            except PipelineError as error:
                raise argparse.ArgumentTypeError(str(error)) from None
        return cls(parts[0], parts[1], resolution, int(parts[3]), sample_list)

    @property
    def label(self) -> str:
        size = "" if self.resolution is None else f"_{self.resolution}px"
        images = "" if self.sample_list is None else f"_{self.sample_list.stem.removeprefix(SAMPLE_LIST_PREFIX)}"
        return f"{self.arch}_{self.weights}{size}{images}"

    def describe(self) -> str:
        size = "its own resolution" if self.resolution is None else f"{self.resolution} px"
        images = "" if self.sample_list is None else f" of {self.sample_list}"
        return f"{self.arch} ({self.weights} weights) at {size}, {self.images} image(s){images}"


def table_flags(args: argparse.Namespace, spec: TableSpec) -> argparse.Namespace:
    """``args`` with the table's architecture, weights, resolution, image count and sample list (parsed as the flags
    would be)."""
    parser = argparse.ArgumentParser()
    add_evaluation_arguments(parser, None)
    flags = ["--arch", spec.arch, "--weights", spec.weights, "--limit", str(spec.images)]
    if spec.resolution is not None:
        flags += ["--resolution", str(spec.resolution)]
    names = ["arch", "weights", "limit", "resolution"]
    if spec.sample_list is not None:
        flags += ["--sample-index", str(spec.sample_list)]
        names.append("sample_index")
    given = parser.parse_args(flags)
    return argparse.Namespace(**{**vars(args), **{name: getattr(given, name) for name in names}})


def with_options(setup: EvaluationSetup, options: dict[str, Any]) -> EvaluationSetup:
    return replace(setup, config=setup.config.with_options(estimator_validation=options))


def evaluate_table(
    args: argparse.Namespace, spec: TableSpec, options: dict[str, Any], dtype: torch.dtype, step: str
) -> tuple[EvaluationSetup, dict[str, np.ndarray], dict[str, dict[str, np.ndarray]], dict[str, float]]:
    """One exhaustive pass (all masks) over the table's images, then the family pass at each corner on the same
    images. Returns the setup, the exhaustive arrays (:func:`table_reductions`), the family coefficients per base
    and the timing of the passes this call ran."""
    flags = table_flags(args, spec)
    setup = with_options(build_setup(flags), options)
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
    return setup, arrays, families, timing


def evaluate_committed(
    args: argparse.Namespace, options: dict[str, Any], dtype: torch.dtype, step: str
) -> tuple[EvaluationSetup, dict[str, np.ndarray], dict[str, float]]:
    """The full network's prediction and the family pass at the all-off corner over the run's own images (the flags
    of ``args``): per image the predicted class and the per-class order energies ``(k + 1, C)``."""
    family = MaskFamily(options["order"], "off")
    setup = with_options(build_setup(args, replace(RunConfig.from_flags(args), mask_family=family)), options)
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
    return setup, arrays, timing
