"""The top-1 cost of the smooth activation swap: one network's full-mask predictions at λ = 1 with its own
activations and with the swap (experiment_1/network/gating.py), compared image by image on labelled images.

Both accuracies and the paired difference (swapped − native, per image −1, 0 or +1) carry percentile-bootstrap
CIs over images (:mod:`experiment_1.report.stats`; the difference is resampled in pairs); the exact McNemar test
(a two-sided binomial test on the images only one variant gets right) and the verdict on "the swap lowers
top-1" (:data:`SWAP`) come with them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import binomtest

from experiment_1.errors import PipelineError
from experiment_1.report import Reading, Rule, bootstrap_mean_ci, ci_against, effect_from_stat, hypothesis_test
from experiment_1.run import UNSCALED, image_counts, valid_images

VARIANTS = ("native", "smooth")
QUESTION = (
    "What does the smooth activation swap of Experiment 3C cost in top-1 accuracy: the network's full-mask prediction at λ = 1 "
    "with its own activations and with the swap, on the same labelled images?"
)


def _read_difference(reading: Reading) -> dict[str, float]:
    reading.copied("effect", reading.at("top1_difference"))
    low, high = reading.interval("top1_difference")
    return {"low": low, "high": high}


SWAP = Rule(
    "exp3c.swap_lowers_top1",
    "holds when the 95 % bootstrap CI of the paired top-1 difference (swapped − native) lies below 0, fails when it lies above 0, "
    "cannot tell when it contains 0",
    _read_difference,
    lambda low, high: ci_against(low, high, 0.0, "below"),
    "the smooth swap lowers the full-mask top-1 accuracy at λ = 1",
)


def paired_counts(correct_native: np.ndarray, correct_smooth: np.ndarray) -> dict[str, int]:
    """The 2 × 2 table of a paired comparison: how many images each variant gets right, alone and together."""
    return {
        "labelled": int(len(correct_native)),
        "correct_native": int(correct_native.sum()),
        "correct_smooth": int(correct_smooth.sum()),
        "both_correct": int((correct_native & correct_smooth).sum()),
        "only_native_correct": int((correct_native & ~correct_smooth).sum()),
        "only_smooth_correct": int((~correct_native & correct_smooth).sum()),
        "neither_correct": int((~correct_native & ~correct_smooth).sum()),
    }


def mcnemar_exact(only_native: int, only_smooth: int) -> float:
    """Two-sided exact McNemar p: the binomial test of the discordant images against 1/2 (1 when there are none)."""
    discordant = only_native + only_smooth
    return float(binomtest(only_smooth, discordant, 0.5).pvalue) if discordant else 1.0


def swap_cost_summary(
    arrays: dict[str, np.ndarray], config: dict[str, Any], variants: dict[str, dict[str, Any]], seed: int
) -> dict[str, Any]:
    """swap_cost.json from the per-image ``prediction_native``, ``prediction_smooth``, ``label`` and ``valid`` arrays.

    ``variants`` holds per variant what its configuration says about the activations (gated recursion, swap).
    A :class:`PipelineError` when no valid image carries a label.
    """
    valid = valid_images(arrays)
    labels = np.asarray(arrays["label"])
    labelled = valid & (labels >= 0)
    if not labelled.any():
        raise PipelineError(
            f"{config['sample_index']}: no image of the sample list carries a label, so there is no top-1 to compare; "
            "draw the list from labelled (validation) shards (experiment_1.step_2_sample)"
        )
    predictions = {variant: np.asarray(arrays[f"prediction_{variant}"]) for variant in VARIANTS}
    correct = {variant: predictions[variant][labelled] == labels[labelled] for variant in VARIANTS}
    counts = paired_counts(correct["native"], correct["smooth"])
    difference = bootstrap_mean_ci(
        correct["smooth"].astype(np.float64) - correct["native"].astype(np.float64), seed=seed
    )
    effect = effect_from_stat("top-1 swapped − native", difference, percent=True)
    test = hypothesis_test(
        "exact McNemar (two-sided binomial on the discordant images)",
        mcnemar_exact(counts["only_native_correct"], counts["only_smooth_correct"]),
    )
    summary = {
        "experiment": "3C",
        "question": QUESTION,
        "config": config,
        **image_counts(valid),
        "num_labelled": counts["labelled"],
        "residual_scale": UNSCALED,
        "mask": "full (every gate on)",
        "variants": {
            variant: {**variants[variant], "top1": bootstrap_mean_ci(correct[variant].astype(np.float64), seed=seed)}
            for variant in VARIANTS
        },
        "top1_difference": difference,
        "counts": counts,
        "prediction_agreement": bootstrap_mean_ci(
            (predictions["native"] == predictions["smooth"])[valid].astype(np.float64), seed=seed
        ),
    }
    summary["verdicts"] = [
        SWAP.verdict("swap_lowers_top1", summary, parameters={"confidence": 0.95}, effect=effect, test=test)
    ]
    return summary
