"""Sample lists: which images an experiment uses, drawn reproducibly and stored as JSON.

File format::

    {"pattern": "test-*.parquet", "mode": "uniform", "seed": 0, "num_images": N,
     "samples": [{"source": "test-00000-of-00028.parquet", "row": 17, "label": -1}, …]}

Samples are sorted by (source, row) so that reading them walks each shard once.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from experiment_1.data import SampleRef
from experiment_1.errors import PipelineError
from experiment_1.io_utils import read_json

MODES = ("uniform", "per-class")


def draw_sample(items: list[SampleRef], mode: str, num_images: int, per_class: int, seed: int, min_per_class: int = 1) -> list[SampleRef]:
    """Draw a sample without replacement: ``uniform`` (``num_images`` of all items) or
    ``per-class`` (``per_class`` of each label, all of a class if it has fewer; only labels with at
    least ``min_per_class`` images). Deterministic in ``seed``."""
    rng = np.random.default_rng(seed)
    if mode == "uniform":
        count = min(num_images, len(items))
        chosen = rng.choice(len(items), size=count, replace=False)
    elif mode == "per-class":
        labels = np.array([item.label for item in items])
        if (labels < 0).all():
            raise PipelineError("--mode per-class needs labelled images, but every matched image has label -1; use the validation shards (--pattern 'validation-*.parquet')")
        chosen_parts = []
        for label in np.unique(labels[labels >= 0]):
            members = np.flatnonzero(labels == label)
            if len(members) < min_per_class:
                continue
            chosen_parts.append(rng.choice(members, size=min(per_class, len(members)), replace=False))
        if not chosen_parts:
            raise PipelineError(f"--min-per-class {min_per_class}: no class has that many images; lower it")
        chosen = np.concatenate(chosen_parts)
    else:
        raise PipelineError(f"unknown --mode '{mode}'; choose one of {', '.join(MODES)}")
    return sorted((items[index] for index in chosen), key=lambda item: (item.source, item.row))


def sample_list_json(samples: list[SampleRef], pattern: str, mode: str, seed: int, per_class: int | None, min_per_class: int | None = None) -> dict[str, Any]:
    """The JSON document of a sample list (``min_per_class`` and the number of classes kept only when given)."""
    kept = {} if min_per_class is None else {"min_per_class": min_per_class, "num_classes": len({s.label for s in samples if s.label >= 0})}
    return {
        "pattern": pattern,
        "mode": mode,
        "seed": seed,
        "per_class": per_class,
        **kept,
        "num_images": len(samples),
        "samples": [{"source": s.source, "row": s.row, "label": s.label} for s in samples],
    }


def load_sample_list(path: Path, limit: int | None = None) -> list[SampleRef]:
    """Read a sample list (first ``limit`` entries if given), with a clear error if it is malformed."""
    path = Path(path)
    if not path.exists():
        raise PipelineError(f"{path}: sample list not found; create it with `python -m experiment_1.step_2_sample --output {path}`")
    try:
        document = read_json(path)
        samples = [SampleRef(str(s["source"]), int(s["row"]), int(s["label"])) for s in document["samples"]]
    except (ValueError, KeyError, TypeError) as error:
        raise PipelineError(f"{path}: not a sample list ({type(error).__name__}: {error}); regenerate it with experiment_1.step_2_sample") from None
    return samples[:limit] if limit else samples
