"""Experiment 1's summary: a pure function of the per-image reconstruction arrays and the run's configuration.

experiment_1.step_3_evaluate writes it after evaluating; paper.resummarize rebuilds it from a
committed per_image.npz without evaluating a mask.
"""

from __future__ import annotations

import numpy as np

from experiment_1.reconstruction.verdicts import verdicts
from experiment_1.report.markdown import published_numbers
from experiment_1.report.stats import exact_proportion_ci, summarize_arrays
from experiment_1.run.loop import image_counts, valid_images

METRICS = [
    "mobius_rel_error_float32",
    "mobius_rel_error_float64",
    "mobius_top1_agreement_float32",
    "mobius_top1_agreement_float64",
    "max_subset_rel_error_float32",
    "max_subset_rel_error_float64",
    "naive_sum_rel_error",
    "naive_sum_top1_agreement",
    "first_order_rel_error",
    "first_order_top1_agreement",
    "empty_top1_agreement",
]


def summarize(arrays: dict[str, np.ndarray], config: dict, seed: int) -> dict:
    """The Experiment 1 summary: every metric's mean with CI (exact Clopper–Pearson for the top-1 shares, bootstrap for
    the errors), accuracy where labelled, the seed's numbers, the verdicts block."""
    valid = valid_images(arrays)
    labelled = valid & (arrays["label"] >= 0)
    errors = [name for name in METRICS if not name.endswith("top1_agreement") and "top1_agreement_" not in name]
    metrics = summarize_arrays(arrays, errors, valid, seed)
    metrics.update(
        {
            name: exact_proportion_ci(np.asarray(arrays[name], dtype=np.float64)[valid])
            for name in METRICS
            if name not in errors
        }
    )
    if labelled.any():
        metrics["full_mask_top1_accuracy"] = exact_proportion_ci(
            np.asarray(arrays["full_correct"], dtype=np.float64)[labelled]
        )
    summary = {
        "experiment": 1,
        "question": "Does adding up subnetwork outputs reconstruct the network, or do we need Möbius?",
        "config": config,
        **image_counts(valid),
        "num_labelled": int(labelled.sum()),
        "metrics": metrics,
        "published": published_numbers("experiment_1"),
    }
    summary["verdicts"] = verdicts(summary)
    return summary
