"""Experiment 4's inference on sampled pairs (step 2's ``--max-pairs M``): the statistics of experiment_4.inference
over a seeded, label-blind sample of image pairs, in bounded memory at N = 10 000.

**What is sampled.** Nothing about a statistic's definition changes; only the pairs (and, in the class
control, the queries) it runs over:

- a per-image ranking's view compares ``min(M, N(N − 1)/2)`` pairs drawn uniformly without replacement
  from all ``N(N − 1)/2`` (one sample per run, shared by every per-image ranking and signature kind, so the
  scalar − vector contrast stays paired); its leave-one-out 1-NN is **exact**: every image is a query and its
  neighbour is searched among all N, one block of similarity rows at a time (:func:`nearest_candidates`);
- the class control's C coordinates share the budget: each coordinate compares its own sample of
  ``min(⌈M / C⌉, N(N − 1)/2)`` pairs and takes the 1-NN of its own sample of ``min(⌈M / C⌉, N)`` query images,
  each neighbour searched among **all** N images of that coordinate (so about M pairs and M queries in all,
  instead of C · N(N − 1)/2 pairs and C · N queries). That the control's 1-NN runs over sampled queries is
  the one approximation beyond the pairs.

With ``M ≥ C · N(N − 1)/2`` every view takes all its pairs and queries and the results equal the exact
path's (to round-off in the sums; tested).

**Why label-blind.** The original study samples at most M same-class and as many different-class pairs
(a stratified sample chosen by the observed labels). A pair set chosen by the labels is not exchangeable
under a label permutation, so the permutation null would not be valid for it. Here the pairs are drawn
without looking at the labels (seeded by ``--seed`` and the view: :func:`view_rng`), **fixed**, and the
labels are permuted over images as in the exact path: every permutation reclassifies the same sampled
pairs as same / different label (and, in the control, as eligible or touching the excluded class), so
the null stays exact. The price: a uniform sample holds about ``M × chance`` same-class pairs (about 45
at M = 45 000 with 1 000 classes of 10), against the study's M; a larger M buys more.

U (Mann–Whitney of same- vs eligible different-label pairs, ties ½) is counted directly over the sampled
pairs: they are sorted by similarity once per view, and for each labelling a cumulative count of the
different-label pairs gives, for each same-label pair, the number strictly below it plus half of those
tied with it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np
import torch

from experiment_4.inference import BATCH_BUDGET, HITS, N_DIFFERENT, N_SAME, QUERIES, SUM_DIFFERENT, SUM_SAME, U_PAIRS, U
from experiment_4.signatures import pair_similarity, similarity_chunks

PAIR_STREAM, QUERY_STREAM = 4001, 4002  # seed-sequence tags of the pair and query samples


@dataclass(frozen=True)
class SamplingPlan:
    """How many pairs and queries each view gets under ``--max-pairs max_pairs`` for ``count`` images and ``coordinates`` class coordinates."""

    max_pairs: int
    seed: int
    count: int
    coordinates: int

    @property
    def all_pairs(self) -> int:
        return self.count * (self.count - 1) // 2

    @property
    def per_image_pairs(self) -> int:
        return min(self.max_pairs, self.all_pairs)

    @property
    def control_pairs(self) -> int:
        return min(math.ceil(self.max_pairs / self.coordinates), self.all_pairs)

    @property
    def control_queries(self) -> int:
        return min(math.ceil(self.max_pairs / self.coordinates), self.count)

    def record(self) -> dict[str, Any]:
        """What overlap.json's settings say about the sampling."""
        return {
            "max_pairs": self.max_pairs,
            "seed": self.seed,
            "all_pairs": self.all_pairs,
            "per_image_ranking_pairs": self.per_image_pairs,
            "per_image_ranking_queries": self.count,
            "class_control_pairs_per_coordinate": self.control_pairs,
            "class_control_queries_per_coordinate": self.control_queries,
            "num_class_coordinates": self.coordinates,
            "method": "pairs drawn uniformly without replacement, label-blind, seeded by the seed and the view, fixed under the label "
            "permutations; per-image rankings: exact 1-NN over all images; class control: ⌈M / C⌉ pairs and ⌈M / C⌉ query images "
            "per coordinate, each query's neighbour searched among all images",
        }


def view_rng(seed: int, stream: int, view: int) -> np.random.Generator:
    """The generator of one view's sample: ``view`` 0 is the per-image rankings' shared one, ``1 + p`` the control's coordinate ``p``."""
    return np.random.default_rng([seed, stream, view])


def sample_pairs(count: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``(P, 2)`` int64 pairs ``(a, b)``, ``a < b``, drawn uniformly without replacement (all of them, in
    ``np.triu_indices`` order, when ``size`` reaches ``N(N − 1)/2``), sorted."""
    total = count * (count - 1) // 2
    linear = (
        np.arange(total, dtype=np.int64)
        if size >= total
        else np.sort(rng.choice(total, size, replace=False)).astype(np.int64)
    )
    rows = np.arange(count, dtype=np.int64)
    offsets = rows * (count - 1) - rows * (rows - 1) // 2  # pairs before row a
    first = np.searchsorted(offsets, linear, side="right") - 1
    return np.stack([first, first + 1 + linear - offsets[first]], axis=1)


def sample_queries(count: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``(Q,)`` sorted image positions drawn without replacement (all N when ``size`` reaches N)."""
    return np.arange(count) if size >= count else np.sort(rng.choice(count, size, replace=False))


def top_candidates(block: np.ndarray, depth: int) -> np.ndarray:
    """``(R, depth)``: per row of ``block``, the columns of the ``depth`` largest values by decreasing value, ties to
    the lower column — the first ``depth`` of ``np.argsort(-block, kind="stable")``, in O(R N)."""
    if depth == 1:
        return block.argmax(axis=1)[:, None]  # argmax returns the first maximum
    threshold = -np.partition(-block, depth - 1, axis=1)[:, depth - 1 : depth]
    above, tied = block > threshold, block == threshold
    keep = above | (tied & (np.cumsum(tied, axis=1) <= depth - above.sum(axis=1, keepdims=True)))
    columns = np.nonzero(keep)[1].reshape(len(block), depth)  # row-major: increasing column within a row
    order = np.argsort(-np.take_along_axis(block, columns, axis=1), axis=1, kind="stable")
    return np.take_along_axis(columns, order, axis=1)


def nearest_candidates(
    indices: torch.Tensor, weights: torch.Tensor, num_subsets: int, queries: np.ndarray, depth: int
) -> np.ndarray:
    """``(Q, depth)``: each query's most similar other images, ties to the lower index, from blocks of similarity rows."""
    parts = [np.zeros((0, depth), dtype=np.int64)]
    for rows, similarity in similarity_chunks(indices, weights, num_subsets, queries=torch.from_numpy(queries)):
        block = similarity.numpy()
        block[np.arange(len(rows)), rows.numpy()] = -np.inf
        parts.append(top_candidates(block, depth))
    return np.concatenate(parts)


@dataclass(frozen=True)
class SampledView:
    """One view on sampled pairs and queries: ``queries (Q,)`` with their ``candidates (Q, m)`` (as in
    :class:`experiment_4.inference.View`); ``pairs (P, 2)`` sorted by increasing similarity ``values (P,)``,
    with each pair's tie group ``[group_start, group_end)`` in that order (None: 1-NN only)."""

    queries: np.ndarray
    candidates: np.ndarray
    pairs: np.ndarray | None
    values: np.ndarray | None
    group_start: np.ndarray | None
    group_end: np.ndarray | None
    excluded_class: int | None


def sampled_view(
    indices: torch.Tensor,
    weights: torch.Tensor,
    num_subsets: int,
    queries: np.ndarray,
    pairs: np.ndarray | None,
    excluded_class: int | None,
    max_class_size: int,
) -> SampledView:
    """A :class:`SampledView` of top-K signatures in index form (``pairs`` None: 1-NN only)."""
    count = indices.shape[0]
    depth = min(count - 1, max_class_size + 1 if excluded_class is not None else 1)
    candidates = nearest_candidates(indices, weights, num_subsets, queries, depth)
    if pairs is None:
        return SampledView(queries, candidates, None, None, None, None, excluded_class)
    values = pair_similarity(indices, weights, num_subsets, torch.from_numpy(pairs)).numpy()
    order = np.argsort(values, kind="stable")
    values, pairs = values[order], pairs[order]
    starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
    sizes = np.diff(np.r_[starts, len(values)])
    group_start = np.repeat(starts, sizes)
    return SampledView(
        queries, candidates, pairs, values, group_start, group_start + np.repeat(sizes, sizes), excluded_class
    )


def query_hits(view: SampledView, labellings: np.ndarray, excluded: int | None) -> tuple[np.ndarray, np.ndarray]:
    """``(B, Q)`` bools under the ``(B, N)`` labellings: does each query's 1-NN (its first candidate not in the
    ``excluded`` class) share its label, and does the query take part (its label is not the excluded class)?"""
    query_labels = labellings[:, view.queries]
    candidate_labels = labellings[:, view.candidates]  # (B, Q, m)
    if excluded is None:
        return candidate_labels[:, :, 0] == query_labels, np.ones(query_labels.shape, dtype=bool)
    first = (candidate_labels != excluded).argmax(axis=2)
    neighbours = np.take_along_axis(candidate_labels, first[..., None], axis=2)[..., 0]
    taking_part = query_labels != excluded
    return (neighbours == query_labels) & taking_part, taking_part


def sampled_accumulators(view: SampledView, labellings: np.ndarray, excluded: int | None) -> np.ndarray:
    """``(B, 8)`` accumulators (those of experiment_4.inference) of one sampled view under ``(B, N)`` labellings, in
    which the view's excluded class reads ``excluded``."""
    result = np.zeros((len(labellings), 8))
    hits, taking_part = query_hits(view, labellings, excluded)
    result[:, HITS], result[:, QUERIES] = hits.sum(axis=1), taking_part.sum(axis=1)
    if view.pairs is None:
        return result
    first, second = labellings[:, view.pairs[:, 0]], labellings[:, view.pairs[:, 1]]
    eligible = (first != excluded) & (second != excluded) if excluded is not None else np.ones(first.shape, dtype=bool)
    same, different = (first == second) & eligible, (first != second) & eligible
    result[:, SUM_SAME], result[:, N_SAME] = same @ view.values, same.sum(axis=1)
    result[:, SUM_DIFFERENT], result[:, N_DIFFERENT] = different @ view.values, different.sum(axis=1)
    below = np.concatenate(
        [np.zeros((len(labellings), 1)), np.cumsum(different, axis=1)], axis=1
    )  # different pairs before each position
    strictly_below = below[:, view.group_start]
    result[:, U] = ((strictly_below + 0.5 * (below[:, view.group_end] - strictly_below)) * same).sum(axis=1)
    result[:, U_PAIRS] = result[:, N_SAME] * result[:, N_DIFFERENT]
    return result


def sampled_permutation_accumulators(
    views: Iterable[SampledView], labels: np.ndarray, permutations: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`experiment_4.inference.permutation_accumulators` for sampled views: accumulators ``(len(permutations), 8)``
    summed over ``views`` and ``(N,)`` each image's observed 1-NN hit rate over the views where it is a taking-part query (NaN where none)."""
    if not np.array_equal(permutations[0], np.arange(len(labels))):
        raise ValueError("the first permutation must be the identity (the observed labelling)")
    names, codes = np.unique(labels, return_inverse=True)  # labels as small codes: every labelling is gathered once
    labellings = codes.astype(np.int16 if len(names) < 2**15 else np.int64)[permutations]
    total = np.zeros((len(permutations), 8))
    hits, taken = np.zeros(len(labels)), np.zeros(len(labels))
    for view in views:
        excluded = None if view.excluded_class is None else int(np.searchsorted(names, view.excluded_class))
        if excluded is not None and (excluded == len(names) or names[excluded] != view.excluded_class):
            excluded = -1  # a class no image has: nothing is excluded, under any labelling
        width = view.candidates.size + 2 * view.queries.size + (0 if view.pairs is None else 6 * len(view.pairs))
        step = max(1, BATCH_BUDGET // max(width, 1))
        for start in range(0, len(permutations), step):
            total[start : start + step] += sampled_accumulators(view, labellings[start : start + step], excluded)
        observed, taking_part = query_hits(view, labellings[:1], excluded)
        hits[view.queries] += observed[0]  # queries are distinct
        taken[view.queries] += taking_part[0]
    with np.errstate(invalid="ignore"):
        return total, hits / taken
