"""Experiment 5's evaluation pieces, used by step 1 (and any runner that evaluates the masks once for several experiments).

- :func:`thresholds` and :func:`check_labelled`: the τ / η grids and the labelled-sample check;
- :func:`batch_arrays`: the per-batch arrays — the five difficulty scores and ``correct``
  (:mod:`experiment_5.difficulty`), every complexity measure (:mod:`experiment_5.complexity`) and
  ``full_prediction`` — from the ``(B, 2^L, C)`` logits of all masks and the true labels;
- :func:`per_image_record`: what ``per_image.pt`` holds (configuration, counts, the sample pool, the
  sample references and every per-image array).
"""

from __future__ import annotations

import json
from typing import Any, Sequence

import numpy as np
import torch

from experiment_1.data import list_items
from experiment_1.errors import PipelineError
from experiment_1.files import read_json
from experiment_1.mobius import mobius_transform
from experiment_1.run import EvaluationSetup, image_counts, valid_images
from experiment_5.complexity import complexity_measures
from experiment_5.difficulty import difficulty_scores

QUESTION = "Do hard images use more, or higher-order, block interactions?"


def thresholds(primary: float, extra: list[float]) -> list[float]:
    """``[primary, *sorted(extra without primary)]`` (their range is checked with the flags: experiment_5.step_1_evaluate)."""
    return [primary, *sorted(set(extra) - {primary})]


def check_labelled(setup: EvaluationSetup) -> None:
    """Experiment 5 needs the true label of every image."""
    unlabelled = sum(sample.label < 0 for sample in setup.samples)
    if unlabelled:
        raise PipelineError(
            f"{setup.config.sample_index}: {unlabelled} of {len(setup.samples)} images have no label (-1); Experiment 5 needs labels — "
            "draw a per-class list from the validation shards (experiment_1.step_2_sample --pattern 'validation-*.parquet' --mode per-class)"
        )


def batch_arrays(
    logits: torch.Tensor,
    labels: torch.Tensor,
    taus: Sequence[float],
    etas: Sequence[float],
    dtype: torch.dtype,
    sample_index: str,
) -> dict[str, torch.Tensor]:
    """Per-image difficulty scores and complexity measures of one batch (``sample_index`` names the list in errors)."""
    full = logits[:, -1]  # the all-on mask, 2^L − 1
    if int(labels.max()) >= full.shape[1]:
        raise PipelineError(
            f"{sample_index}: label {int(labels.max())} is out of range for a model with {full.shape[1]} classes"
        )
    coefficients = mobius_transform(logits, dim=1, dtype=dtype)
    return {
        **difficulty_scores(full, labels),
        **complexity_measures(coefficients, full, taus, etas),
        "full_prediction": full.argmax(dim=1),
    }


def sample_pool(setup: EvaluationSetup) -> dict[str, Any]:
    """How the sample list was drawn (its pattern, mode, per-class count) and how many labelled images that pattern
    matches in --data-dir, so a report can say which share of the available images was used."""
    document = read_json(setup.config.sample_index)
    pattern = document.get("pattern")
    available = (
        sum(
            item.label >= 0
            for item in list_items(setup.dataset.data_dir, pattern, document.get("folder_labels", "imagenet"))
        )
        if pattern
        else None
    )
    return {
        "pattern": pattern,
        "mode": document.get("mode"),
        "per_class": document.get("per_class"),
        "list_size": len(document["samples"]),
        "labelled_images_matching_pattern": available,
    }


def per_image_record(
    setup: EvaluationSetup, arrays: dict[str, np.ndarray], config: dict[str, Any], pool: dict[str, Any]
) -> dict[str, Any]:
    """What ``per_image.pt`` holds: configuration, counts, the sample pool, sample references and every per-image array."""
    valid = valid_images(arrays)
    return {
        "experiment": 5,
        "question": QUESTION,
        "config": json.loads(
            json.dumps(config)
        ),  # plain types only (torch's version string is a str subclass), for weights_only loading
        **image_counts(valid),
        "sample_pool": pool,
        "samples": [{"source": sample.source, "row": sample.row, "label": sample.label} for sample in setup.samples],
        "arrays": {name: torch.from_numpy(np.ascontiguousarray(value)) for name, value in sorted(arrays.items())},
    }
