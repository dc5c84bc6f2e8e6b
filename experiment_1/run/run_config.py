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

The flags' types: argparse ``type=`` validators (a bad numeric flag is refused while parsing, naming the allowed range; a missing
input folder or file too, in the one line the later check would give) and defaults that depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from experiment_1.errors import PipelineError

MAX_DEFAULT_WORKERS = 4


def default_num_workers(cores: int | None = None) -> int:
    """``--num-workers`` by default: one data-loader worker per core this process may use, leaving one core
    to the evaluation, at most :data:`MAX_DEFAULT_WORKERS` (0 on one core: load in the main process)."""
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(0, min(cores - 1, MAX_DEFAULT_WORKERS))


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None


def positive_int(text: str) -> int:
    """An integer ≥ 1."""
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not allowed; use an integer ≥ 1")
    return value


def non_negative_int(text: str) -> int:
    """An integer ≥ 0."""
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is not allowed; use an integer ≥ 0")
    return value


def power_of_two(text: str) -> int:
    """An integer 1, 2, 4, 8, …"""
    value = _integer(text)
    if value < 1 or value & (value - 1):
        raise argparse.ArgumentTypeError(f"{value} is not a power of two; use 1, 2, 4, …, e.g. 256")
    return value


def seed(text: str) -> int:
    """A seed numpy accepts: an integer in [0, 2^32)."""
    value = _integer(text)
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"{value} is not allowed; use an integer in [0, 2^32)")
    return value


NAME_MAX = 255  # bytes per file or folder name on Linux and macOS file systems


def output_path(text: str) -> Path:
    """A path whose every file or folder name fits the file system (at most 255 bytes each)."""
    long = [part for part in Path(text).parts if len(part.encode()) > NAME_MAX]
    if long:
        raise argparse.ArgumentTypeError(
            f"the name '{long[0][:40]}…' has {len(long[0].encode())} bytes; file systems allow at most {NAME_MAX} per name — choose a shorter one"
        )
    return Path(text)


def data_folder(text: str) -> Path:
    """An existing folder (``--data-dir``), else the one-line error of
    :func:`experiment_1.data.shards.missing_data_dir`, raised while the flags are parsed: a typo is named in
    seconds, before any model is built. Only a given flag is checked: the default (``$MOE_DATA``,
    ``imagenet-1k/data``) is checked where the run reads it."""
    from experiment_1.data.shards import missing_data_dir  # the data modules import torch; this module stays light

    path = Path(text)
    if not path.is_dir():
        raise missing_data_dir(path, given=True)
    return path


def sample_list_file(text: str) -> Path:
    """An existing file (``--sample-index``), else the one-line error of
    :func:`experiment_1.data.shards.missing_sample_list`, raised while the flags are parsed. A default that is
    not a string is never passed here (argparse converts string defaults only): the step's default list is
    checked where the run reads it."""
    from experiment_1.data.shards import missing_sample_list

    path = Path(text)
    if not path.exists():
        raise missing_sample_list(path)
    return path


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
