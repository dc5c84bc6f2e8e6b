"""Scalar − vector class alignment decided on a paired statistic that can decide: the difference of the two rankings'
pooled AUCs (P(same-class pair > different-class pair) + ½ P(tie), binary top-K, true labels) by a paired bootstrap
over **classes**, and, beside it, the exact McNemar test of the per-image 1-NN hits with its best attainable p.

The bootstrap (:func:`auc_difference_bootstrap`, :func:`scipy.stats.bootstrap`, percentile interval) resamples the C
classes with replacement; a class drawn w_c times brings w_c copies of its images. A same-class pair of class c then
counts w_c times (each copy's own pairs), a different-class pair between classes a ≠ b counts w_a · w_b times; pairs
between two copies of one class are left out (they would pair an image with itself). Both rankings see the same draws
(paired), so the CI is that of the difference, and it tests equality of the two AUCs — not "neither aligned", which a
label permutation applied to both tests. With every w_c = 1 the statistic is the pooled AUC of overlap.json.

The pair similarities take few values (a binary top-K Jaccard has K + 1), so each replicate is computed from level
histograms: per class, its same-class pairs at each level, and per pair of classes, their different-class pairs at
each level (``(levels, C, C)``): a weighted Mann–Whitney count per replicate, exact for the weights.

A draw of one class only has no different-class pair and so no AUC: it is left out (``undefined_resamples``; with C
classes a draw is one class with probability C^(1−C)). Two-sided bootstrap p over the B defined replicates: twice
the smaller share of replicates on either side of 0, each ``(1 + #) / (B + 1)``
(the smallest α at which the percentile CI excludes 0), at best ``2 / (B + 1)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import bootstrap

from experiment_1.report import ALPHA
from experiment_4.power import bootstrap_best_p, mcnemar_best_p, mcnemar_p

NUM_RESAMPLES = 9999
BATCH = 256  # replicates per matrix product


def level_histograms(
    pairs: np.ndarray, values: np.ndarray, classes: np.ndarray, num_classes: int
) -> tuple[np.ndarray, np.ndarray]:
    """``same (C, levels)`` and symmetric ``different (levels, C, C)`` pair counts at each distinct similarity value,
    for pairs ``(P, 2)`` of images with class positions ``classes (N,)``."""
    _, level = np.unique(values, return_inverse=True)
    levels = int(level.max()) + 1 if len(level) else 0
    first, second = classes[pairs[:, 0]], classes[pairs[:, 1]]
    same = first == second
    same_counts = np.bincount(first[same] * levels + level[same], minlength=num_classes * levels)
    different = np.bincount(
        (level[~same] * num_classes + first[~same]) * num_classes + second[~same],
        minlength=levels * num_classes * num_classes,
    ).reshape(levels, num_classes, num_classes)
    return same_counts.reshape(num_classes, levels).astype(np.float64), (
        different + different.transpose(0, 2, 1)
    ).astype(np.float64)


def weighted_auc(same: np.ndarray, different: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``(B,)`` pooled AUC under class weights ``(B, C)`` (:func:`level_histograms`; see the module docstring)."""
    levels, count, _ = different.shape
    same_hist = weights @ same  # (B, levels)
    mixed = (weights @ different.transpose(1, 0, 2).reshape(count, levels * count)).reshape(-1, levels, count)
    different_hist = 0.5 * (mixed * weights[:, None, :]).sum(axis=2)  # (B, levels): Σ_{a<b} w_a w_b D_ab
    below = np.cumsum(different_hist, axis=1) - different_hist
    with np.errstate(invalid="ignore", divide="ignore"):
        return (same_hist * (below + 0.5 * different_hist)).sum(axis=1) / (
            same_hist.sum(axis=1) * different_hist.sum(axis=1)
        )


def class_weights(sample: np.ndarray, num_classes: int) -> np.ndarray:
    """``(B, C)`` how often each class is drawn in each row of class positions ``sample (B, n)``."""
    sample = np.atleast_2d(sample)
    weights = np.zeros((len(sample), num_classes))
    np.add.at(weights, (np.repeat(np.arange(len(sample)), sample.shape[1]), sample.ravel()), 1.0)
    return weights


def auc_difference_bootstrap(
    pairs: np.ndarray,
    first_values: np.ndarray,
    second_values: np.ndarray,
    labels: np.ndarray,
    seed: int,
    num_resamples: int = NUM_RESAMPLES,
) -> dict[str, Any]:
    """The first − second pooled AUC difference over ``pairs`` with its paired class-bootstrap percentile CI and
    two-sided p (see the module docstring)."""
    names, classes = np.unique(labels, return_inverse=True)
    count = len(names)
    first, second = (level_histograms(pairs, values, classes, count) for values in (first_values, second_values))

    def difference(sample: np.ndarray, axis: int = -1) -> np.ndarray:
        flat = np.moveaxis(np.asarray(sample), axis, -1)
        rows = flat.reshape(-1, flat.shape[-1])
        parts = []
        for start in range(0, len(rows), BATCH):
            weights = class_weights(rows[start : start + BATCH], count)
            parts.append(weighted_auc(*first, weights) - weighted_auc(*second, weights))
        return np.concatenate(parts).reshape(flat.shape[:-1])

    ones = np.ones((1, count))
    observed_first, observed_second = float(weighted_auc(*first, ones)[0]), float(weighted_auc(*second, ones)[0])
    result = bootstrap(
        (np.arange(count),),
        difference,
        n_resamples=num_resamples,
        vectorized=True,
        method="percentile",
        confidence_level=1 - ALPHA,
        rng=np.random.default_rng(seed),
    )
    drawn = result.bootstrap_distribution
    replicates = drawn[np.isfinite(drawn)]  # a draw of one class only has no different-class pair: no AUC, left out
    used = len(replicates)
    # The percentile interval read off the replicates (scipy returns NaN when every replicate is equal, e.g. two rankings
    # at AUC 1 in every draw, where the interval is that one value).
    low, high = np.quantile(replicates, [ALPHA / 2, 1 - ALPHA / 2])
    below, above = int((replicates <= 0).sum()), int((replicates >= 0).sum())
    return {
        "statistic": "pooled AUC (same > different pair), first − second",
        "observed": observed_first - observed_second,
        "first": observed_first,
        "second": observed_second,
        "ci_low": float(low),
        "ci_high": float(high),
        "confidence": 1 - ALPHA,
        "method": "percentile bootstrap over classes (scipy.stats.bootstrap), paired",
        "resampled": "classes",
        "num_classes": count,
        "num_resamples": used,
        "undefined_resamples": num_resamples - used,
        "seed": seed,
        "bootstrap_mean": float(replicates.mean()),
        "bootstrap_std": float(replicates.std()),
        "p_value": min(1.0, 2 * min(1 + below, 1 + above) / (used + 1)),
        "p_value_floor": bootstrap_best_p(used),
        "alternative": "two-sided",
    }


def nn_hit_mcnemar(first_hits: np.ndarray, second_hits: np.ndarray) -> dict[str, Any]:
    """The exact McNemar test of two rankings' per-image 1-NN hits (0/1), with its best attainable p on the number of
    discordant images and the lowest p any split with these two hit totals could give."""
    first_hits, second_hits = first_hits.astype(bool), second_hits.astype(bool)
    first_only, second_only = int((first_hits & ~second_hits).sum()), int((second_hits & ~first_hits).sum())
    return {
        "first_hits": int(first_hits.sum()),
        "second_hits": int(second_hits.sum()),
        "first_only": first_only,
        "second_only": second_only,
        "p_value": mcnemar_p(first_only, second_only),
        "best_attainable_p": mcnemar_best_p(first_only + second_only),
        "best_attainable_p_at_these_totals": mcnemar_best_p(abs(first_only - second_only)),
        "test": "exact two-sided McNemar (binomial on the discordant images)",
    }
