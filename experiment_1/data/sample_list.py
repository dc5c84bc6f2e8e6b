"""Sample lists: which images an experiment uses, drawn reproducibly and stored as JSON.

File format::

    {"pattern": "test-*.parquet", "mode": "uniform", "seed": 0, "num_images": N,
     "samples": [{"source": "test-00000-of-00028.parquet", "row": 17, "label": -1}, …]}

Samples are sorted by (source, row) so that reading them walks each shard once. ``source`` is a
``.parquet`` shard (``row`` ≥ 0) or an image file (``row`` = -1) relative to the data directory;
``label`` is a class index or -1 (unlabelled). Every field is checked when the list is read.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from experiment_1.data.shards import IMAGE_SUFFIXES, SampleRef
from experiment_1.errors import PipelineError
from experiment_1.files import read_json
from experiment_1.paths import checkout_hint

MODES = ("uniform", "per-class")


def draw_sample(
    items: list[SampleRef],
    mode: str,
    num_images: int,
    per_class: int,
    seed: int,
    min_per_class: int = 1,
    num_classes: int | None = None,
) -> list[SampleRef]:
    """Draw a sample without replacement: ``uniform`` (``num_images`` of all items) or
    ``per-class`` (``per_class`` of each label, all of a class if it has fewer; only labels with at
    least ``min_per_class`` images; of those, ``num_classes`` drawn at random when given — a small
    list whose classes each hold several images). Deterministic in ``seed``."""
    rng = np.random.default_rng(seed)
    if mode == "uniform":
        count = min(num_images, len(items))
        chosen = rng.choice(len(items), size=count, replace=False)
    elif mode == "per-class":
        labels = np.array([item.label for item in items])
        if (labels < 0).all():
            raise PipelineError(
                "--mode per-class needs labelled images, but every matched image has label -1; use the validation shards (--pattern 'validation-*.parquet')"
            )
        eligible = [label for label in np.unique(labels[labels >= 0]) if (labels == label).sum() >= min_per_class]
        if num_classes is not None and eligible:
            eligible = sorted(rng.choice(eligible, size=min(num_classes, len(eligible)), replace=False))
        chosen_parts = []
        for label in eligible:
            members = np.flatnonzero(labels == label)
            chosen_parts.append(rng.choice(members, size=min(per_class, len(members)), replace=False))
        if not chosen_parts:
            raise PipelineError(f"--min-per-class {min_per_class}: no class has that many images; lower it")
        chosen = np.concatenate(chosen_parts)
    else:
        raise PipelineError(f"unknown --mode '{mode}'; choose one of {', '.join(MODES)}")
    return sorted((items[index] for index in chosen), key=lambda item: (item.source, item.row))


def sample_list_json(
    samples: list[SampleRef],
    pattern: str,
    mode: str,
    seed: int,
    per_class: int | None,
    min_per_class: int | None = None,
    classes_drawn: int | None = None,
) -> dict[str, Any]:
    """The JSON document of a sample list (``min_per_class``, ``classes_drawn`` and the number of classes kept only when given)."""
    kept = (
        {}
        if min_per_class is None and classes_drawn is None
        else {"min_per_class": min_per_class, "num_classes": len({s.label for s in samples if s.label >= 0})}
    )
    if classes_drawn is not None:
        kept["classes_drawn"] = classes_drawn
    return {
        "pattern": pattern,
        "mode": mode,
        "seed": seed,
        "per_class": per_class,
        **kept,
        "num_images": len(samples),
        "samples": [{"source": s.source, "row": s.row, "label": s.label} for s in samples],
    }


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_entry(entry: Any) -> SampleRef:
    """One sample-list entry, every field checked; a ``ValueError`` naming the field and its allowed values."""
    if not isinstance(entry, dict) or not {"source", "row", "label"} <= set(entry):
        raise ValueError(f"{json.dumps(entry)[:80]} is not an object with source, row and label")
    source, row, label = entry["source"], entry["row"], entry["label"]
    suffix = PurePosixPath(source).suffix.lower() if isinstance(source, str) else ""
    if not suffix or PurePosixPath(source).is_absolute() or ".." in PurePosixPath(source).parts:
        raise ValueError(f"source {json.dumps(source)} must be a relative path inside the data directory")
    if suffix != ".parquet" and suffix not in IMAGE_SUFFIXES:
        raise ValueError(
            f"source {json.dumps(source)} is neither a .parquet shard nor an image ({', '.join(IMAGE_SUFFIXES)})"
        )
    if suffix == ".parquet" and not (_is_integer(row) and row >= 0):
        raise ValueError(f"row {json.dumps(row)} of shard {source} must be an integer ≥ 0")
    if suffix != ".parquet" and row != -1:
        raise ValueError(f"row {json.dumps(row)} of image file {source} must be -1")
    if not (_is_integer(label) and label >= -1):
        raise ValueError(f"label {json.dumps(label)} must be an integer ≥ 0, or -1 for unlabelled")
    return SampleRef(source, row, label)


def missing_sample_list(path: Path) -> PipelineError:
    """The one-line error for a sample list that does not exist: the checkout's file to pass where a relative path is
    missing here but present there (:func:`experiment_1.paths.checkout_hint`), else how to create it."""
    hint = checkout_hint(path)
    if hint:
        return PipelineError(f"{path}: sample list {hint}")
    return PipelineError(
        f"{path}: sample list not found; create it with `python -m experiment_1.step_2_sample --output {path}`"
    )


def load_sample_list(path: Path, limit: int | None = None) -> list[SampleRef]:
    """Read a sample list (the first ``limit`` entries if given); every entry is checked, one-line error for the first bad one."""
    path = Path(path)
    fix = "regenerate it with experiment_1.step_2_sample"
    if not path.exists():
        raise missing_sample_list(path)
    document = read_json(path, fix=fix)
    if not isinstance(document, dict) or not isinstance(document.get("samples"), list):
        raise PipelineError(f"{path}: not a sample list (no \"samples\" list); {fix}")
    samples: list[SampleRef] = []
    first_seen: dict[tuple[str, int], int] = {}
    for number, entry in enumerate(document["samples"]):
        try:
            sample = parse_entry(entry)
        except ValueError as error:
            raise PipelineError(f"{path}: sample {number}: {error}; {fix}") from None
        previous = first_seen.setdefault((sample.source, sample.row), number)
        if previous != number:
            raise PipelineError(f"{path}: sample {number} repeats sample {previous} ({sample.describe()}); {fix}")
        samples.append(sample)
    return samples if limit is None else samples[:limit]
