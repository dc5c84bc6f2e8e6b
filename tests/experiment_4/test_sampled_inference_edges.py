"""Edges of Experiment 4's sampled inference (experiment_4.sampled_inference), each against brute force on a tiny case:
the sampling record written whole, the samples at and just below "all of them", the top-m candidates with ties at every
depth (also on a longdouble block, which numpy selects without the SIMD code that sorts small stretches fully), the
view's candidate depth, the raw accumulators at every batch size, the label codes beyond int16 (2**15 + 1 names),
an excluded class that no image has, the per-image hit rates, and the refusal of a non-identity first permutation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import experiment_4.sampled_inference as sampled
from experiment_4.inference import HITS, N_DIFFERENT, N_SAME, QUERIES, SUM_DIFFERENT, SUM_SAME, U_PAIRS, U
from experiment_4.sampled_inference import (
    SamplingPlan,
    sample_pairs,
    sample_queries,
    sampled_permutation_accumulators,
    sampled_view,
    top_candidates,
    view_rng,
)
from experiment_4.signatures import top_k_signatures

NUM_SUBSETS, K = 32, 6


def test_the_sampling_record_is_written_whole() -> None:
    assert SamplingPlan(max_pairs=45, seed=3, count=10, coordinates=4).record() == {
        "max_pairs": 45,
        "seed": 3,
        "all_pairs": 45,
        "per_image_ranking_pairs": 45,
        "per_image_ranking_queries": 10,
        "class_control_pairs_per_coordinate": 12,
        "class_control_queries_per_coordinate": 10,
        "num_class_coordinates": 4,
        "method": "pairs drawn uniformly without replacement, label-blind, seeded by the seed and the view, fixed under "
        "the label permutations; per-image rankings: exact 1-NN over all images; class control: ⌈M / C⌉ pairs and "
        "⌈M / C⌉ query images per coordinate, each query's neighbour searched among all images",
    }


def test_samples_take_everything_from_their_size_on_and_are_distinct_one_below() -> None:
    for size in (9, 10, 10**6):
        assert np.array_equal(sample_queries(9, size, view_rng(0, 4002, 1)), np.arange(9))
        assert np.array_equal(sample_pairs(4, size - 3, view_rng(0, 4001, 0)), np.stack(np.triu_indices(4, 1), axis=1))
    for seed in range(5):
        queries = sample_queries(9, 8, view_rng(seed, 4002, 1))
        assert len(set(queries.tolist())) == 8 and np.array_equal(queries, np.sort(queries)) and queries.max() < 9
        pairs = sample_pairs(5, 9, view_rng(seed, 4001, 0))
        assert len({tuple(pair) for pair in pairs.tolist()}) == 9 and bool((pairs[:, 0] < pairs[:, 1]).all())
    assert not np.array_equal(sample_queries(9, 8, view_rng(0, 4002, 1)), sample_queries(9, 8, view_rng(1, 4002, 1)))


def brute_top(block: np.ndarray, depth: int) -> np.ndarray:
    """Per row, the ``depth`` columns of the largest values, ties to the lower column, by sorting Python tuples."""
    return np.array([sorted(range(block.shape[1]), key=lambda j: (-row[j], j))[:depth] for row in block.tolist()])


@pytest.mark.parametrize("dtype", [np.float64, np.longdouble])
def test_top_candidates_with_ties_at_every_depth_against_a_brute_force_sort(dtype: type) -> None:
    rng = np.random.default_rng(7)
    for columns, self_excluded in ((12, True), (40, True), (9, False)):
        block = rng.integers(0, 4, size=(25, columns)).astype(dtype)  # many ties
        if self_excluded:
            block[np.arange(25) % columns, np.arange(25) % columns] = -np.inf
        for depth in sorted({1, 2, 3, 4, 5, 8, columns - 1, columns}):
            assert np.array_equal(top_candidates(block, depth), brute_top(block, depth)), (columns, depth)


def random_sets(rng: np.random.Generator, count: int) -> np.ndarray:
    return np.argsort(rng.random((count, NUM_SUBSETS)), axis=1)[:, :K]


def membership(sets: np.ndarray) -> np.ndarray:
    """``(N, NUM_SUBSETS)`` 0/1: which subsets each image's top-K holds."""
    rows = np.zeros((len(sets), NUM_SUBSETS), dtype=np.int64)
    np.put_along_axis(rows, sets, 1, axis=1)
    return rows


def overlaps(sets: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``(len(rows), N)`` integer |A ∩ B| of the given rows against all sets (the Jaccard of two K-sets grows with it)."""
    held = membership(sets)
    return held[rows] @ held.T


def view_of(sets: np.ndarray, queries: np.ndarray, pairs: np.ndarray | None, excluded, max_class_size: int):
    indices, weights = top_k_signatures(torch.from_numpy(sets), torch.ones(sets.shape, dtype=torch.float64), K, False)
    return sampled_view(indices, weights, NUM_SUBSETS, queries, pairs, excluded, max_class_size)


def test_the_view_holds_the_first_m_candidates_one_without_exclusion_and_at_most_every_other_image() -> None:
    rng = np.random.default_rng(3)
    sets = random_sets(rng, 12)
    queries = np.array([0, 4, 5, 11])
    inter = overlaps(sets, queries).astype(np.float64)
    inter[np.arange(4), queries] = -np.inf
    for excluded, max_class_size, depth in ((None, 5, 1), (2, 3, 4), (2, 9, 10), (2, 10, 11), (2, 12, 11)):
        view = view_of(sets, queries, None, excluded, max_class_size)
        assert np.array_equal(view.candidates, brute_top(inter, depth)), (excluded, max_class_size)


def brute_accumulators(
    sets: np.ndarray, labels: np.ndarray, queries: np.ndarray, pairs: np.ndarray | None, excluded
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One view's eight accumulators under one labelling, and its (N,) hits and taking-part queries, by counting."""
    out = labels == excluded if excluded is not None else np.zeros(len(labels), dtype=bool)
    result, hits, taken = np.zeros(8), np.zeros(len(labels)), np.zeros(len(labels))
    for query, row in zip(queries.tolist(), overlaps(sets, queries).astype(np.float64)):
        if out[query]:
            continue
        row[query], row[out] = -np.inf, -np.inf
        neighbour = int(np.argmax(row))  # the first of the most overlapping, i.e. ties to the lowest index
        hit = labels[neighbour] == labels[query]
        result[HITS], result[QUERIES], hits[query], taken[query] = result[HITS] + hit, result[QUERIES] + 1, hit, 1
    if pairs is None:
        return result, hits, taken
    held = membership(sets)
    overlap = {(a, b): int(held[a] @ held[b]) for a, b in pairs.tolist()}
    same = [overlap[a, b] for a, b in pairs.tolist() if not out[a] and not out[b] and labels[a] == labels[b]]
    different = [overlap[a, b] for a, b in pairs.tolist() if not out[a] and not out[b] and labels[a] != labels[b]]
    result[SUM_SAME] = sum(o / (2 * K - o) for o in same)
    result[SUM_DIFFERENT] = sum(o / (2 * K - o) for o in different)
    result[N_SAME], result[N_DIFFERENT] = len(same), len(different)
    result[U] = sum((s > d) + 0.5 * (s == d) for s in same for d in different)
    result[U_PAIRS] = len(same) * len(different)
    return result, hits, taken


def check_against_brute_force(sets, labels, views, specs, permutations) -> None:
    """The accumulators of ``views`` (each built from its ``(queries, pairs, excluded)`` in ``specs``), row by row,
    and the observed per-image hit rates (NaN where an image is no taking-part query), against counting."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an image that is never a query reads NaN without a warning
        total, rates = sampled_permutation_accumulators(views, labels, permutations)
    for row, permutation in enumerate(permutations):
        expected = np.zeros(8)
        hits, taken = np.zeros(len(labels)), np.zeros(len(labels))
        for queries, pairs, excluded in specs:
            view_total, view_hits, view_taken = brute_accumulators(sets, labels[permutation], queries, pairs, excluded)
            expected, hits, taken = expected + view_total, hits + view_hits, taken + view_taken
        counts = [HITS, QUERIES, N_SAME, N_DIFFERENT, U, U_PAIRS]
        assert np.array_equal(total[row, counts], expected[counts]), row
        assert total[row, [SUM_SAME, SUM_DIFFERENT]] == pytest.approx(expected[[SUM_SAME, SUM_DIFFERENT]], abs=1e-12)
        if row == 0:
            with np.errstate(invalid="ignore"):
                assert np.array_equal(rates, hits / taken, equal_nan=True)


def small_case() -> tuple[np.ndarray, np.ndarray, list, list]:
    rng = np.random.default_rng(11)
    count = 20
    sets = random_sets(rng, count)
    labels = np.repeat([3, 5, 8, 9], 5) * 10  # names that are not their codes
    specs = [
        (np.arange(count), sample_pairs(count, 40, view_rng(0, 4001, 0)), None),
        (sample_queries(count, 9, view_rng(0, 4002, 1)), sample_pairs(count, 70, view_rng(0, 4001, 1)), 50),
        (sample_queries(count, 6, view_rng(0, 4002, 2)), None, 80),
    ]
    views = [view_of(sets, queries, pairs, excluded, 5) for queries, pairs, excluded in specs]
    return sets, labels, views, specs


def permutations_of(count: int, seed: int, number: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack([np.arange(count)] + [rng.permutation(count) for _ in range(number - 1)])


@pytest.mark.parametrize("budget", [1, 48, 299, 300, 301, 492, 1000, 1 << 22])
def test_raw_accumulators_and_hit_rates_match_counting_at_every_batch_size(budget: int, monkeypatch) -> None:
    sets, labels, views, specs = small_case()
    monkeypatch.setattr(sampled, "BATCH_BUDGET", budget)  # widths 300, 492 and 48: from 1 to all 7 rows a batch
    check_against_brute_force(sets, labels, views, specs, permutations_of(len(labels), 1, 7))


@pytest.mark.parametrize(
    "budget, rows",
    [(96, ([1] * 7, [1] * 7, [2, 2, 2, 1])), (1000, ([3, 3, 1], [2, 2, 2, 1], [7])), (1 << 22, ([7],) * 3)],
)
def test_a_batch_holds_as_many_labellings_as_the_budget_of_array_elements_allows(
    budget: int, rows, monkeypatch
) -> None:
    """Per labelling a view holds m·Q candidate and 2·Q query labels and 6·P pair arrays (300, 492 and 48 elements
    here); the batch size is part of the numbers: BLAS sums a batch's ``same @ values`` in an order that depends on
    its rows, so the similarity sums move in the last bits (about 1e-15) with it."""
    _, labels, views, _ = small_case()
    seen: list[list[int]] = [[], [], []]
    original = sampled.sampled_accumulators

    def spy(view, labellings, excluded):
        seen[[view is each for each in views].index(True)].append(len(labellings))
        return original(view, labellings, excluded)

    monkeypatch.setattr(sampled, "sampled_accumulators", spy)
    monkeypatch.setattr(sampled, "BATCH_BUDGET", budget)
    sampled_permutation_accumulators(views, labels, permutations_of(len(labels), 1, 7))
    assert tuple(seen) == tuple(rows)


@pytest.mark.parametrize("excluded", [-5, 40, 70, 95])
def test_an_excluded_class_that_no_image_has_excludes_nothing(excluded: int) -> None:
    rng = np.random.default_rng(5)
    count = 16
    sets = random_sets(rng, count)
    labels = np.repeat([10, 20, 60, 90], 4)
    queries, pairs = sample_queries(count, 10, view_rng(2, 4002, 1)), sample_pairs(count, 50, view_rng(2, 4001, 1))
    views = [view_of(sets, queries, pairs, excluded, 4)]
    check_against_brute_force(sets, labels, views, [(queries, pairs, None)], permutations_of(count, 2, 4))
    assert np.isnan(sampled_permutation_accumulators(views, labels, permutations_of(count, 2, 2))[1]).sum() == 6


def label_dtypes(monkeypatch) -> list[np.dtype]:
    """The dtypes of the labelling batches that reach sampled_accumulators, as they arrive."""
    seen: list[np.dtype] = []
    original = sampled.sampled_accumulators
    monkeypatch.setattr(
        sampled,
        "sampled_accumulators",
        lambda view, rows, excluded: seen.append(rows.dtype) or original(view, rows, excluded),
    )
    return seen


def test_label_codes_beyond_int16_keep_the_excluded_class_apart(monkeypatch) -> None:
    names = 2 * np.arange(2**15 + 1)  # one more name than int16 codes hold
    labels = np.concatenate([names, names[[-1, -1, 5, 5, 5, 100]]])  # the last name (code 2**15) is excluded
    count = len(labels)
    rng = np.random.default_rng(9)
    sets = random_sets(rng, count)
    excluded_images = np.flatnonzero(labels == names[-1])
    sets[excluded_images[1:]] = sets[[3, 7]]  # images 3 and 7 have an excluded image as their nearest neighbour
    queries = np.unique(np.r_[3, 7, 5, excluded_images, np.flatnonzero(labels == names[5]), 100, count - 1])
    pairs = np.array(
        [[3, excluded_images[1]], [7, excluded_images[2]], [5, count - 4], [5, count - 3], [100, count - 1]]
    )
    pairs = np.r_[pairs, [[int(e), j] for e in excluded_images[:1] for j in (0, 1, 2)], [[0, 1], [2, 3], [4, 6]]]
    pairs = np.sort(pairs, axis=1)
    specs = [(queries, pairs, int(names[-1])), (queries, pairs, None)]
    views = [view_of(sets, queries, pairs, excluded, 4) for queries, pairs, excluded in specs]
    seen = label_dtypes(monkeypatch)
    check_against_brute_force(sets, labels, views, specs, permutations_of(count, 4, 3))
    assert (
        set(seen) == {np.dtype(np.int64)}
        and np.isnan(sampled_permutation_accumulators(views, labels, permutations_of(count, 4, 1))[1]).any()
    )


def test_label_codes_are_int16_below_2_to_the_15_names(monkeypatch) -> None:
    rng = np.random.default_rng(13)
    count = 40
    sets = random_sets(rng, count)
    labels = 3 * np.arange(count)  # 40 names: every pair different, every query a miss
    specs = [(sample_queries(count, 12, view_rng(1, 4002, 1)), sample_pairs(count, 30, view_rng(1, 4001, 1)), 6)]
    views = [view_of(sets, queries, pairs, excluded, 1) for queries, pairs, excluded in specs]
    seen = label_dtypes(monkeypatch)
    check_against_brute_force(sets, labels, views, specs, permutations_of(count, 0, 3))
    assert set(seen) == {np.dtype(np.int16)}


def test_a_first_permutation_that_is_not_the_identity_is_refused_with_its_message() -> None:
    _, labels, views, _ = small_case()
    permutations = permutations_of(len(labels), 3, 3)[::-1]
    with pytest.raises(ValueError, match=r"^the first permutation must be the identity \(the observed labelling\)$"):
        sampled_permutation_accumulators(views, labels, permutations)


def test_the_view_sorts_its_pairs_by_similarity_ties_in_the_sample_s_order_with_their_groups() -> None:
    """Tied pairs keep the sample's order, so the view (and the order in which its sums add) is a function of the
    sample alone, not of numpy's sort algorithm."""
    rng = np.random.default_rng(17)
    count = 24
    sets = random_sets(rng, count)
    pairs = sample_pairs(count, 200, view_rng(5, 4001, 0))
    held = membership(sets)
    overlap = [int(held[a] @ held[b]) for a, b in pairs.tolist()]  # ties in overlap are ties in Jaccard
    order = sorted(range(len(pairs)), key=lambda i: (overlap[i], i))
    view = view_of(sets, np.arange(count), pairs, None, 0)
    assert np.array_equal(view.pairs, pairs[order])
    assert view.values.tolist() == pytest.approx([overlap[i] / (2 * K - overlap[i]) for i in order], abs=1e-15)
    sorted_overlap = [overlap[i] for i in order]
    starts = [sorted_overlap.index(o) for o in sorted_overlap]
    ends = [len(sorted_overlap) - sorted_overlap[::-1].index(o) for o in sorted_overlap]
    assert view.group_start.tolist() == starts and view.group_end.tolist() == ends and len(set(starts)) < 12
