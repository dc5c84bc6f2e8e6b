"""Image-level inference for Experiment 4: is a similarity between images aligned with their labels?

Pairs share images (each image lies in N − 1 pairs), so a test over pairs (Mann–Whitney) is far too
confident. Every test here **permutes the labels over images** and recomputes the statistic; the
one-sided p-value is ``(1 + #{null ≥ observed}) / (1 + n)`` for ``n`` permutations, so it is never
below the floor ``1 / (n + 1)``. The same ``n`` permutations serve every view and statistic.

A **view** is one ``(N, N)`` similarity matrix (diagonal ignored) in which the images are compared,
optionally with an **excluded class** ``c``: images labelled ``c`` take no part in that view (as
query, neighbour or pair member). The class control compares all images in the coordinate of one
class ``c`` and excludes class ``c`` itself, so no participating image is projected on its own
label; under a permutation the excluded images are the ones the permuted labels put in ``c``.

Statistics over a list of views, pooled (sums over views, then the ratio):

- ``difference``: mean similarity of same-label pairs minus that of different-label pairs;
- ``auc``: P(same-label pair > different-label pair) + ½ P(tie), pairs compared within a view
  (``Σ U / Σ n_same·n_different``);
- ``nn_accuracy``: leave-one-out 1-NN (the most similar other participating image, ties to the
  lowest index) predicts the label; the fraction of participating queries it gets right.

The exact chance of ``nn_accuracy`` given the label counts ``m_c`` (the expectation under
permutation): ``Σ_c m_c (m_c − 1) / (N (N − 1))`` for a view without exclusion, and the same over the
``N − m_e`` participating images with class ``e`` removed for a view excluding ``e``.

These views compare every pair; step 2's ``--max-pairs`` runs the same statistics on sampled pairs
instead (experiment_4.sampled_inference), for N = 10 000 where ``(N, N)`` views per class coordinate do not fit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np
from scipy.stats import rankdata

STATISTICS = ("difference", "auc", "nn_accuracy")
TIE_TOLERANCE = 1e-12
BATCH_BUDGET = 1 << 22  # array elements per batch of labellings
# Accumulators per labelling and view, summed over views.
SUM_SAME, N_SAME, SUM_DIFFERENT, N_DIFFERENT, U, U_PAIRS, HITS, QUERIES = range(8)


@dataclass(frozen=True)
class View:
    """One similarity matrix prepared for repeated labellings.

    ``candidates (N, m)``: each image's other images by decreasing similarity, ties to the lower
    index (``m`` = the largest class + 1 when a class is excluded, so a non-excluded one is always
    among them); ``ranks (N, N)``: midranks of the ``N(N−1)/2`` pair similarities, 0 on the diagonal
    (None: 1-NN only); ``row_sums (N,)``: each image's similarities to the others; ``pair_total``:
    the sum over all pairs.
    """

    similarity: np.ndarray
    candidates: np.ndarray
    ranks: np.ndarray | None
    row_sums: np.ndarray
    pair_total: float
    excluded_class: int | None


@dataclass(frozen=True)
class LabelLayout:
    """The label multiset, shared by every permutation: sorted labels and the same-label pairs as
    positions ``(a, b)``, ``a < b``, in that order, with the label of each pair."""

    sorted_labels: np.ndarray
    same_positions: np.ndarray  # (P, 2)
    pair_labels: np.ndarray  # (P,)


def label_layout(labels: np.ndarray) -> LabelLayout:
    """Sorted labels and every same-label pair of positions in the sorted order."""
    sorted_labels = np.sort(np.asarray(labels))
    starts = np.flatnonzero(np.r_[True, sorted_labels[1:] != sorted_labels[:-1]])
    ends = np.r_[starts[1:], len(sorted_labels)]
    parts = [np.zeros((0, 2), dtype=np.int64)]
    for start, end in zip(starts, ends):
        first, second = np.triu_indices(end - start, 1)
        parts.append(np.stack([first + start, second + start], axis=1))
    same_positions = np.concatenate(parts)
    return LabelLayout(sorted_labels, same_positions, sorted_labels[same_positions[:, 0]])


def prepare_view(similarity: np.ndarray, excluded_class: int | None, max_class_size: int, pairs: bool) -> View:
    """A :class:`View` of a symmetric ``(N, N)`` similarity (``pairs``: also the pair midranks)."""
    count = len(similarity)
    others = similarity.astype(np.float64, copy=True)
    np.fill_diagonal(others, -np.inf)
    depth = min(count - 1, max_class_size + 1 if excluded_class is not None else 1)
    candidates = np.argsort(-others, axis=1, kind="stable")[:, :depth]
    np.fill_diagonal(others, 0.0)
    ranks = None
    if pairs:
        upper = np.triu_indices(count, 1)
        ranks = np.zeros((count, count))
        ranks[upper] = rankdata(similarity[upper], method="average")
        ranks += ranks.T
    row_sums = others.sum(axis=1)
    return View(similarity, candidates, ranks, row_sums, float(row_sums.sum() / 2), excluded_class)


def excluded_images(view: View, labels: np.ndarray) -> np.ndarray:
    """Bool, the shape of ``labels``: the images that take no part in ``view`` (those of its excluded class)."""
    return labels == view.excluded_class if view.excluded_class is not None else np.zeros(labels.shape, dtype=bool)


def neighbour_hits(view: View, labels: np.ndarray, excluded: np.ndarray) -> np.ndarray:
    """``(B, N)`` bool for ``(B, N)`` labellings: does each participating image's 1-NN (its first
    candidate not ``excluded``) share its label?"""
    first = (~excluded[:, view.candidates]).argmax(axis=2)  # (B, N)
    neighbours = view.candidates[np.arange(labels.shape[1]), first]
    return (np.take_along_axis(labels, neighbours, axis=1) == labels) & ~excluded


def count_below(pool: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """``(B,)``: per row, ``Σ_q #{pool < q} + ½ #{pool = q}`` for ``(B, A)`` pool and ``(B, Q)`` queries."""
    pool = np.sort(pool, axis=1)
    counts = np.empty(len(pool))
    for row, (values, found) in enumerate(zip(pool, queries)):  # small rows: one cache-resident search each
        left, right = np.searchsorted(values, found, "left"), np.searchsorted(values, found, "right")
        counts[row] = left.sum() + 0.5 * (right - left).sum()
    return counts


def class_range(layout: LabelLayout, label: int | None) -> tuple[int, int]:
    """The positions ``[low, high)`` of ``label`` in the sorted labels (empty for None)."""
    if label is None:
        return 0, 0
    return int(np.searchsorted(layout.sorted_labels, label, "left")), int(
        np.searchsorted(layout.sorted_labels, label, "right")
    )


def view_accumulators(view: View, layout: LabelLayout, labels: np.ndarray) -> np.ndarray:
    """``(B, 8)`` accumulators (``SUM_SAME`` … ``QUERIES``) of one view under ``(B, N)`` labellings (permutations of the layout's)."""
    batch, count = labels.shape
    excluded = excluded_images(view, labels)
    result = np.zeros((batch, 8))
    result[:, HITS] = neighbour_hits(view, labels, excluded).sum(axis=1)
    result[:, QUERIES] = (~excluded).sum(axis=1)
    if view.ranks is None:
        return result
    order = np.argsort(labels, axis=1, kind="stable")  # every row sorts to layout.sorted_labels
    same = order[:, layout.same_positions[layout.pair_labels != view.excluded_class]]  # (B, S, 2)
    values, pair_ranks = view.similarity[same[..., 0], same[..., 1]], view.ranks[same[..., 0], same[..., 1]]
    # The excluded images: a fixed range of the sorted order; the pairs touching them are ineligible.
    low, high = class_range(layout, view.excluded_class)
    members = order[:, low:high]  # (B, n)
    inner = np.triu(np.ones((high - low, high - low), dtype=bool), 1)
    within = view.similarity[members[:, :, None], members[:, None, :]][:, inner]
    ineligible_sum = view.row_sums[members].sum(axis=1) - within.sum(axis=1)
    participating = count - (high - low)
    n_same, n_eligible = same.shape[1], participating * (participating - 1) // 2
    result[:, SUM_SAME], result[:, N_SAME] = values.sum(axis=1), n_same
    result[:, SUM_DIFFERENT] = view.pair_total - ineligible_sum - result[:, SUM_SAME]
    result[:, N_DIFFERENT] = n_eligible - n_same
    # U of same vs eligible-different pairs from midranks over all pairs: (r − 1) counts every other pair below
    # (ties ½); take away the same pairs among themselves and the ineligible ones: the excluded images' rows
    # (their diagonal 0 lies below every rank; within-excluded pairs appear twice there, once in the ineligible set).
    row_ranks = view.ranks[members].reshape(batch, -1)
    ineligible_below = (
        count_below(row_ranks, pair_ranks)
        - (high - low) * n_same
        - count_below(view.ranks[members[:, :, None], members[:, None, :]][:, inner], pair_ranks)
    )
    result[:, U] = (pair_ranks - 1).sum(axis=1) - n_same * (n_same - 1) / 2 - ineligible_below
    result[:, U_PAIRS] = n_same * (n_eligible - n_same)
    return result


def statistics_of(accumulators: np.ndarray) -> dict[str, np.ndarray]:
    """``difference``, ``auc`` and ``nn_accuracy`` from accumulators ``(..., 8)`` summed over views."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return {
            "difference": accumulators[..., SUM_SAME] / accumulators[..., N_SAME]
            - accumulators[..., SUM_DIFFERENT] / accumulators[..., N_DIFFERENT],
            "auc": accumulators[..., U] / accumulators[..., U_PAIRS],
            "nn_accuracy": accumulators[..., HITS] / accumulators[..., QUERIES],
        }


def label_permutations(count: int, num_permutations: int, seed: int) -> np.ndarray:
    """``(num_permutations + 1, count)``: the identity (the observed labelling) then seeded random permutations."""
    rng = np.random.default_rng(seed)
    return np.stack([np.arange(count)] + [rng.permutation(count) for _ in range(num_permutations)])


def permutation_accumulators(
    views: Iterable[View], labels: np.ndarray, permutations: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Accumulators ``(len(permutations), 8)`` summed over ``views`` (consumed one at a time) for each
    labelling ``labels[permutation]``, and ``(N,)`` each image's 1-NN hit rate under the observed
    labels over the views it takes part in (NaN where none). Row 0 of ``permutations`` must be the identity."""
    if not np.array_equal(permutations[0], np.arange(len(labels))):
        raise ValueError("the first permutation must be the identity (the observed labelling)")
    layout = label_layout(labels)
    total = np.zeros((len(permutations), 8))
    hits, taken = np.zeros(len(labels)), np.zeros(len(labels))
    for view in views:
        step = max(
            1,
            BATCH_BUDGET
            // (len(labels) * (view.candidates.shape[1] + int(np.unique(labels, return_counts=True)[1].max()))),
        )
        for start in range(0, len(permutations), step):
            total[start : start + step] += view_accumulators(view, layout, labels[permutations[start : start + step]])
        excluded = excluded_images(view, labels[None, :])
        hits += neighbour_hits(view, labels[None, :], excluded)[0]
        taken += ~excluded[0]
    with np.errstate(invalid="ignore"):
        return total, hits / taken


def exact_nn_chance(labels: np.ndarray, excluded_classes: list[int | None]) -> float:
    """The expected 1-NN accuracy under label permutation, pooled over views excluding ``excluded_classes``."""
    names, counts = np.unique(labels, return_counts=True)
    hits = queries = 0.0
    for excluded in excluded_classes:
        kept = counts[names != excluded] if excluded is not None else counts
        participating = kept.sum()
        hits += participating * float((kept * (kept - 1)).sum()) / (participating * (participating - 1))
        queries += participating
    return hits / queries


def permutation_result(values: np.ndarray) -> dict[str, Any]:
    """Observed value (row 0) against the null (rows 1 …): null summary and one-sided p-value with its floor."""
    observed, null = float(values[0]), values[1:]
    exceed = int((null >= observed - TIE_TOLERANCE * max(1.0, abs(observed))).sum())
    return {
        "observed": observed,
        "null": {
            "mean": float(null.mean()),
            "std": float(null.std()),
            "q025": float(np.quantile(null, 0.025)),
            "q975": float(np.quantile(null, 0.975)),
            "max": float(null.max()),
        },
        "p_value": (1 + exceed) / (1 + len(null)),
        "p_value_floor": 1 / (1 + len(null)),
        "num_permutations": len(null),
        "alternative": "greater",
    }


def permutation_tests(accumulators: np.ndarray, pairs: bool) -> dict[str, dict[str, Any]]:
    """:func:`permutation_result` of each statistic (``nn_accuracy`` only unless ``pairs``)."""
    statistics = statistics_of(accumulators)
    return {name: permutation_result(statistics[name]) for name in STATISTICS if pairs or name == "nn_accuracy"}


def difference_tests(first: dict[str, np.ndarray], second: dict[str, np.ndarray]) -> dict[str, dict[str, Any]]:
    """The difference of two rankings' statistics under the **same** label permutations (row 0 observed):
    ``first − second`` per statistic, against its permutation null, with both one-sided p-values.

    Each row permutes the labels over images once for both rankings, so the null is that of the paired
    difference, not of two separate tests; ``p_greater`` asks whether ``first`` is more aligned.
    """
    results = {}
    for name in first:
        difference = first[name] - second[name]
        greater = permutation_result(difference)
        less = permutation_result(-difference)
        results[name] = {
            **greater,
            "p_greater": greater["p_value"],
            "p_less": less["p_value"],
            "alternative": "two one-sided",
        }
        del results[name]["p_value"]
    return results
