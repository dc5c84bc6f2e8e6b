"""Experiment 4's label-permutation inference at its edges, each against a hand or brute-force answer.

The whole result dicts of :func:`permutation_result` and :func:`difference_tests` (every key written to summary.json),
the p-value's tie tolerance exactly at its boundary on both sides of |observed| = 1, the candidate lists of
:func:`prepare_view` at every depth rule (and its input left untouched), the labelling batches against the memory
budget, the fixed order of the pair sums (the same bits whatever the machine's sort), and the degenerate views whose
0/0 and x/0 give NaN and ±inf without a warning.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

from experiment_4 import inference
from experiment_4.inference import (
    HITS,
    N_DIFFERENT,
    N_SAME,
    QUERIES,
    SUM_DIFFERENT,
    SUM_SAME,
    TIE_TOLERANCE,
    U_PAIRS,
    U,
    difference_tests,
    label_layout,
    label_permutations,
    permutation_accumulators,
    permutation_result,
    prepare_view,
    statistics_of,
    view_accumulators,
)


def grid_similarity(count: int, seed: int, levels: int = 4) -> np.ndarray:
    """Symmetric similarities on a coarse grid (many exact ties), 1 on the diagonal as a Jaccard matrix has."""
    rng = np.random.default_rng(seed)
    values = np.triu(rng.integers(0, levels, size=(count, count)) / levels, 1)
    return values + values.T + np.eye(count)


def hand_quantile(values: list[float], q: float) -> float:
    """The linear-interpolation quantile: position q (n − 1) in the sorted values."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (position - low) * (ordered[high] - ordered[low])


def hand_null(null: list[float]) -> dict[str, float]:
    mean = sum(null) / len(null)
    return {
        "mean": mean,
        "std": math.sqrt(sum((value - mean) ** 2 for value in null) / len(null)),
        "q025": hand_quantile(null, 0.025),
        "q975": hand_quantile(null, 0.975),
        "max": max(null),
    }


def assert_same_result(result: dict, expected: dict) -> None:
    """The same keys at every level, the same strings and counts, floats to 1e-12."""
    assert set(result) == set(expected)
    for key, value in expected.items():
        if isinstance(value, dict):
            assert_same_result(result[key], value)
        elif isinstance(value, float):
            assert result[key] == pytest.approx(value, rel=1e-12, abs=1e-15), key
        else:
            assert result[key] == value and type(result[key]) is type(value), key


@pytest.mark.parametrize("observed", [0.5, -4.0])
def test_permutation_result_whole_with_ties_at_the_tolerance_boundary(observed: float) -> None:
    """A null value counts as reaching the observed one down to TIE_TOLERANCE · max(1, |observed|) below it, inclusive."""
    scale = max(1.0, abs(observed))
    boundary = observed - TIE_TOLERANCE * scale  # exactly on the boundary: counted
    null = [
        observed,  # an exact tie: counted
        boundary,
        observed - 0.75 * TIE_TOLERANCE * scale,  # inside: counted
        observed - 1.5 * TIE_TOLERANCE * scale,  # just outside: not counted
        observed - 0.25,
        observed + 0.25,  # above: counted
        observed - 1.0,
    ]
    exceed = 0
    for value in null:  # the boundary rule by hand
        exceed += value >= observed - TIE_TOLERANCE * scale
    assert exceed == 4
    result = permutation_result(np.array([observed, *null]))
    assert_same_result(
        result,
        {
            "observed": observed,
            "null": hand_null(null),
            "p_value": 5 / 8,
            "p_value_floor": 1 / 8,
            "num_permutations": 7,
            "alternative": "greater",
        },
    )


def brute_force_p(values: list[float]) -> float:
    observed = values[0]
    count = sum(1 for value in values[1:] if value >= observed - TIE_TOLERANCE * max(1.0, abs(observed)))
    return (1 + count) / len(values)


def test_difference_tests_whole_against_hand_counts() -> None:
    """first − second under each labelling; p_greater counts nulls ≥ it, p_less nulls ≤ it (with the tolerance)."""
    first = {"auc": np.array([0.8, 0.5, 0.9, 0.6, 0.7]), "nn_accuracy": np.array([0.3, 0.4, 0.1, 0.3, 0.2])}
    second = {"auc": np.array([0.6, 0.7, 0.5, 0.2, 0.3]), "nn_accuracy": np.array([0.5, 0.1, 0.2, 0.4, 0.3])}
    results = difference_tests(first, second)
    assert list(results) == ["auc", "nn_accuracy"]
    for name in first:
        difference = [float(a) - float(b) for a, b in zip(first[name], second[name])]
        expected = {
            "observed": difference[0],
            "null": hand_null(difference[1:]),
            "p_greater": brute_force_p(difference),
            "p_less": brute_force_p([-value for value in difference]),
            "p_value_floor": 1 / 5,
            "num_permutations": 4,
            "alternative": "two one-sided",
        }
        assert_same_result(results[name], expected)
    # The hand counts differ between the two sides, so a swapped or unsigned side cannot pass.
    assert results["auc"]["observed"] == pytest.approx(0.2) and results["auc"]["p_greater"] == 4 / 5
    assert results["auc"]["p_less"] == 2 / 5
    assert results["nn_accuracy"]["observed"] == pytest.approx(-0.2)
    assert results["nn_accuracy"]["p_greater"] == 5 / 5 and results["nn_accuracy"]["p_less"] == 1 / 5


def brute_force_candidates(similarity: np.ndarray, depth: int) -> np.ndarray:
    """Each image's other images by decreasing similarity, ties to the lower index, the first ``depth``."""
    count = len(similarity)
    return np.array(
        [
            sorted((j for j in range(count) if j != i), key=lambda j: (-similarity[i, j], j))[:depth]
            for i in range(count)
        ]
    )


@pytest.mark.parametrize(
    ("excluded", "max_class_size", "depth"),
    [(None, 3, 1), (None, 0, 1), (0, 3, 4), (0, 2, 3), (0, 5, 6), (0, 6, 6), (0, 9, 6)],
)
def test_prepare_view_candidates_depth_and_untouched_input(
    excluded: int | None, max_class_size: int, depth: int
) -> None:
    """One candidate without an excluded class (the 1-NN needs no more), the largest class + 1 with one, never more
    than the N − 1 other images (never the image itself); the caller's matrix is not written."""
    similarity = grid_similarity(7, seed=5)
    before = similarity.copy()
    view = prepare_view(similarity, excluded, max_class_size, pairs=True)
    assert np.array_equal(view.candidates, brute_force_candidates(before, depth))
    assert np.array_equal(similarity, before)
    upper = [(i, j) for i, j in itertools.combinations(range(7), 2)]
    values = [before[i, j] for i, j in upper]
    for i, j in upper:  # midranks of the pair similarities, by counting
        rank = sum(v < before[i, j] for v in values) + 0.5 * (sum(v == before[i, j] for v in values) + 1)
        assert view.ranks[i, j] == view.ranks[j, i] == rank
    assert np.array_equal(np.diag(view.ranks), np.zeros(7))
    off_diagonal = before - np.diag(np.diag(before))
    assert np.array_equal(view.row_sums, off_diagonal.sum(axis=1)) and view.pair_total == sum(values)


def test_a_lone_participant_never_finds_itself() -> None:
    """Every other image excluded: the only participant has no neighbour of its own label (it is never its own)."""
    labels = np.array([0, 0, 0, 1])
    similarity = grid_similarity(4, seed=1)
    view = prepare_view(similarity, 0, 3, pairs=False)
    accumulators = view_accumulators(view, label_layout(labels), labels[None, :])[0]
    assert accumulators[QUERIES] == 1 and accumulators[HITS] == 0
    assert 3 not in view.candidates[3]


def test_labelling_batches_are_the_largest_within_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each view's labellings go in batches of the largest B with B · N · (m + largest class) ≤ BATCH_BUDGET
    (m: its candidates per image), one labelling when even one exceeds it; the sums do not depend on the batches."""
    labels = np.array([0, 0, 0, 1, 1, 2, 2])  # N = 7, largest class 3
    views = [prepare_view(grid_similarity(7, 2), None, 3, pairs=True), prepare_view(grid_similarity(7, 3), 0, 3, True)]
    assert [view.candidates.shape[1] for view in views] == [1, 4]
    permutations = label_permutations(7, 10, seed=1)
    original = inference.view_accumulators
    batches: list[int] = []

    def recording(view: inference.View, layout: inference.LabelLayout, labellings: np.ndarray) -> np.ndarray:
        batches.append(len(labellings))  # the same call, its batch size noted
        return original(view, layout, labellings)

    monkeypatch.setattr(inference, "view_accumulators", recording)
    expected_rows = np.array(
        [sum(original(view, label_layout(labels), labels[row][None, :])[0] for view in views) for row in permutations]
    )
    for budget in (150, 1, 10**6):
        monkeypatch.setattr(inference, "BATCH_BUDGET", budget)
        batches.clear()
        accumulators, _ = permutation_accumulators(iter(views), labels, permutations)
        expected_batches = []
        for view in views:
            per_labelling = 7 * (view.candidates.shape[1] + 3)
            size = max([b for b in range(1, 12) if b * per_labelling <= budget], default=1)
            expected_batches += [min(size, 11 - start) for start in range(0, 11, size)]
        assert batches == expected_batches, budget
        np.testing.assert_allclose(accumulators, expected_rows, rtol=1e-13, atol=1e-13)
    assert expected_batches == [11, 11]


def test_the_first_labelling_must_be_the_identity_in_one_sentence() -> None:
    labels = np.array([0, 0, 1, 1])
    view = prepare_view(grid_similarity(4, 0), None, 2, pairs=False)
    with pytest.raises(ValueError, match=r"^the first permutation must be the identity \(the observed labelling\)$"):
        permutation_accumulators([view], labels, np.array([[1, 0, 2, 3], [0, 1, 2, 3]]))


def test_images_in_no_view_get_a_nan_hit_rate_without_a_warning() -> None:
    """An image whose class every view excludes takes part in none: NaN (0/0), silently; the others by brute force."""
    labels = np.array([0, 0, 1, 1, 2, 2])
    similarities = [grid_similarity(6, seed) for seed in (7, 8)]
    views = [prepare_view(similarity, 2, 2, pairs=False) for similarity in similarities]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, hit_rates = permutation_accumulators(iter(views), labels, label_permutations(6, 2, seed=0))
    assert np.isnan(hit_rates[4:]).all()
    for image in range(4):
        hits = 0
        for similarity in similarities:
            others = [j for j in range(4) if j != image]
            neighbour = max(others, key=lambda j: (similarity[image, j], -j))
            hits += labels[neighbour] == labels[image]
        assert hit_rates[image] == hits / 2


def test_degenerate_accumulators_give_nan_and_inf_without_a_warning() -> None:
    """No same or different pair, no query: 0/0 is NaN; a sum over no pairs left as round-off over 0 is ±inf."""
    accumulators = np.zeros((3, 8))
    row = {SUM_SAME: 3, N_SAME: 2, SUM_DIFFERENT: 0.5, N_DIFFERENT: 0, U: 1, U_PAIRS: 0, HITS: 2, QUERIES: 4}
    accumulators[1, list(row)] = list(row.values())
    labels = np.zeros(5, dtype=np.int64)  # one class: every pair same-label, none different
    view = prepare_view(grid_similarity(5, 4), None, 5, pairs=True)
    accumulators[2] = view_accumulators(view, label_layout(labels), labels[None, :])[0]
    assert accumulators[2, N_DIFFERENT] == 0 and accumulators[2, U_PAIRS] == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        statistics = statistics_of(accumulators)
    assert np.isnan(statistics["difference"][[0, 2]]).all() and statistics["difference"][1] == -np.inf
    assert np.isnan(statistics["auc"][[0, 2]]).all() and statistics["auc"][1] == np.inf
    assert np.isnan(statistics["nn_accuracy"][0]) and statistics["nn_accuracy"][1:].tolist() == [0.5, 1.0]


@pytest.mark.parametrize("excluded", [None, 1])
def test_pair_sums_are_taken_in_one_fixed_order(excluded: int | None) -> None:
    """The same-label sum runs over the pairs class by class, each class's images by index (the order a stable sort
    gives), so it is the same bits on every machine; an unstable sort (numpy's SIMD quicksort) reorders the images
    within a class, hence the terms, and moves last bits. numpy adds the terms one after another or pairwise (by the
    layout of the gathered values): either is accepted, in the fixed order."""
    rng = np.random.default_rng(1)
    values = np.triu(rng.random((30, 30)), 1)
    similarity = values + values.T
    labels = np.repeat(np.arange(3), 10)
    view = prepare_view(similarity, excluded, 10, pairs=True)
    permutations = label_permutations(30, 12, seed=0)
    accumulators = view_accumulators(view, label_layout(labels), labels[permutations])
    for row, permutation in enumerate(permutations):
        permuted = labels[permutation]
        terms = [
            similarity[i, j]
            for label in (0, 1, 2)
            if label != excluded
            for i, j in itertools.combinations(np.flatnonzero(permuted == label), 2)
        ]
        one_after_another = 0.0
        for term in terms:
            one_after_another += term
        assert accumulators[row, SUM_SAME] in (one_after_another, np.sum(np.array(terms))), row
