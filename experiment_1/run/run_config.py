"""The run configuration: built once from the flags and the built model, immutable afterwards.

A :class:`RunConfig` holds the shared evaluation flags as typed attributes (``config.seed``,
``config.batch_size`` …; the only channel through which they reach the set-up and the loop) and the run's *content* —
what the numbers depend on — as a frozen JSON
document: the partial store's resume key is made from it and every summary's ``config`` copies it.
An experiment adds its own options (its K grid, thresholds …) with :meth:`RunConfig.with_options`,
which returns a new configuration and never overwrites a name already there; nothing edits a
configuration in place, so two experiments of one pass cannot change each other's key.

It reads like the dict it replaces (``config["weights"]``, ``dict(config)``, ``**config``); every
value it hands out is a fresh copy of the stored JSON, so a caller that edits it edits only its copy.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from experiment_1.errors import PipelineError


@dataclass(frozen=True)
class RunConfig(Mapping):
    """The shared flags (attributes) and the run's content (the mapping: resume key and summary ``config``)."""

    sample_index: Path
    data_dir: Path | None
    arch: str
    weights: Any
    engine: str
    batch_size: int
    mask_chunk: int
    num_workers: int
    seed: int
    device: str
    dtype: str
    compile: bool
    fold_batchnorm: bool
    smooth_activations: float | None
    calibrate_batchnorm: int | None
    mobius_dtype: str
    limit: int | None
    skip_corrupt: bool
    output_dir: Path | None = None  # a step without --output-dir (an analysis of several runs)
    masks_per_image: int | None = (
        None  # a pass of that many masks per image (e.g. the full mask alone), for the cost estimate; None: all 2^L
    )
    confirm_long_run: bool = False  # --confirm-long-run: a pass beyond the cost limits runs anyway
    # a pass over a mask family (experiment_1.network.mask_family.MaskFamily) instead of all 2^L masks, for the cost
    # estimate and the memory check
    mask_family: Any = None
    resolution: int | None = (
        None  # --resolution: evaluate at this crop (resize in proportion) instead of the architecture's own; part of the run's content
    )
    content_json: str = field(default="{}", repr=False)

    @classmethod
    def from_flags(cls, args: argparse.Namespace) -> RunConfig:
        """The shared flags of :func:`experiment_1.run.setup.add_evaluation_arguments`, content still empty.

        Only the fields declared here are read; a field whose flag the step's parser does not declare keeps its
        default (``output_dir``; ``masks_per_image``, which no flag sets: a step changes it with ``dataclasses.replace``)."""
        given = vars(args)
        return cls(
            **{
                item.name: given[item.name]
                for item in fields(cls)
                if item.name != "content_json" and item.name in given
            }
        )

    def with_content(self, content: Mapping[str, Any]) -> RunConfig:
        """This configuration with its content set (once: :func:`build_setup` does it after building the model)."""
        if self.content_json != "{}":
            raise PipelineError("the run configuration's content is set once, when the run is built")
        return replace(self, content_json=_frozen_json(content))

    def with_options(self, **options: Any) -> RunConfig:
        """A new configuration whose content adds an experiment's options (its resume key); never overwrites."""
        content = self.content()
        clashes = sorted(name for name in options if name in content)
        if clashes:
            raise PipelineError(
                f"an experiment option would overwrite the run configuration's {', '.join(clashes)}; give the option another name"
            )
        return replace(self, content_json=_frozen_json({**content, **options}))

    def for_output(self, output_dir: Path) -> RunConfig:
        """The same run writing into another folder (one experiment of a single pass)."""
        return replace(self, output_dir=Path(output_dir))

    def content(self) -> dict[str, Any]:
        """A fresh copy of the content (what the resume key and the summary's ``config`` hold)."""
        return json.loads(self.content_json)

    def __getitem__(self, name: str) -> Any:
        return self.content()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.content())

    def __len__(self) -> int:
        return len(self.content())


def _frozen_json(content: Mapping[str, Any]) -> str:
    """The content as JSON text (insertion order kept: the summaries print it in this order)."""
    try:
        return json.dumps(dict(content), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise PipelineError(
            f"the run configuration holds a value JSON cannot record ({error}); a resume key must be plain numbers, strings and lists"
        ) from None
