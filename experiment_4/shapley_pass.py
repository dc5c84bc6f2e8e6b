"""Experiment 4's Shapley pass (experiment_4.step_4_shapley): per image, the blocks' Shapley and Banzhaf values of the
predicted class, their per-class norms and their count in the expert sets → shapley.json, per_image.npz."""

from __future__ import annotations

from typing import Any

import numpy as np

from experiment_1.run import (
    MOBIUS_DTYPES,
    BatchFunction,
    EvaluationSetup,
    ExperimentPass,
    image_counts,
    provenance,
    valid_images,
    write_results,
)
from experiment_4.shapley import shapley_batch, summarize
from experiment_4.signatures_pass import check_labelled, resolve_store_k
from experiment_4.step_2_overlap import DEFAULT_NN_K

STAGE = "experiment_4.step_4_shapley/shapley"
SUMMARY_NAME = "shapley.json"


def prepare(setup: EvaluationSetup) -> dict[str, Any]:
    """Labels checked; --nn-K checked against 2^L: an option of the configuration (the resume key)."""
    check_labelled(setup)
    return {"nn_k": resolve_store_k("--nn-K", setup.config.nn_k, DEFAULT_NN_K, setup.model.num_blocks)}


def batch_function(setup: EvaluationSetup) -> BatchFunction:
    """:func:`experiment_4.shapley.shapley_batch` with the run's Möbius dtype and expert-set size."""
    dtype, nn_k = MOBIUS_DTYPES[setup.config.mobius_dtype], setup.config["nn_k"]

    def compute(logits: Any, labels: Any) -> dict[str, Any]:
        return shapley_batch(logits, dtype, nn_k)

    return compute


def finish(setup: EvaluationSetup, arrays: dict[str, np.ndarray], timing: dict[str, Any]) -> None:
    """Write shapley.json, per_image.npz and timing; one line on stdout."""
    counts = image_counts(valid_images(arrays))
    summary = summarize(arrays, provenance(setup), counts, setup.config["nn_k"])
    path = write_results(setup, arrays, summary, timing, summary_name=SUMMARY_NAME)
    top = max(summary["blocks"], key=lambda block: block["share_top"])
    print(
        f"wrote {path}: {summary['num_valid']} images; block {top['name']} carries the largest Shapley value of the "
        f"predicted class in {top['share_top']:.0%} of them"
    )


EXPERIMENT_4_SHAPLEY = ExperimentPass(4, STAGE, "Exp 4 Shapley", batch_function, finish, prepare)
