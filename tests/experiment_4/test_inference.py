"""Experiment 4's label-permutation tests against brute force, and on planted data."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from experiment_4 import inference
from experiment_4.inference import (
    exact_nn_chance,
    label_layout,
    label_permutations,
    permutation_accumulators,
    permutation_tests,
    prepare_view,
    statistics_of,
    view_accumulators,
)


def brute_force_statistics(similarity: np.ndarray, labels: np.ndarray, excluded: int | None) -> dict[str, float]:
    """Difference of means, AUC and 1-NN accuracy by explicit loops over the participating images."""
    members = [i for i in range(len(labels)) if labels[i] != excluded]
    same, different = [], []
    for i, j in itertools.combinations(members, 2):
        (same if labels[i] == labels[j] else different).append(similarity[i, j])
    u = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in same for b in different)
    hits = 0
    for i in members:
        best, neighbour = -np.inf, -1
        for j in members:  # increasing index; strict > keeps the lowest among ties
            if j != i and similarity[i, j] > best:
                best, neighbour = similarity[i, j], j
        hits += labels[neighbour] == labels[i]
    return {
        "difference": np.mean(same) - np.mean(different),
        "auc": u / (len(same) * len(different)),
        "nn_accuracy": hits / len(members),
    }


def random_similarity(count: int, seed: int, levels: int = 4) -> np.ndarray:
    """Symmetric similarities on a coarse grid (many exact ties)."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0, levels, size=(count, count)) / levels
    return np.triu(values, 1) + np.triu(values, 1).T


@pytest.mark.parametrize("excluded", [None, 1, 2])
def test_accumulators_match_brute_force_under_relabellings(excluded: int | None) -> None:
    labels = np.array([0, 0, 1, 1, 1, 2, 2, 3, 3, 3, 0])
    similarity = random_similarity(len(labels), seed=3)
    view = prepare_view(similarity, excluded, max_class_size=4, pairs=True)
    layout = label_layout(labels)
    rng = np.random.default_rng(0)
    for _ in range(12):
        permuted = labels[rng.permutation(len(labels))]
        statistics = statistics_of(view_accumulators(view, layout, permuted[None, :])[0])
        expected = brute_force_statistics(similarity, permuted, excluded)
        for name, value in expected.items():
            assert statistics[name] == pytest.approx(value, abs=1e-12), name


def test_neighbours_leave_one_out_ties_to_the_lowest_index() -> None:
    # Images 0, 2, 3 are identical, image 1 is equally far from all: each picks the lowest *other* index among its equals.
    similarity = np.array([[1, 0, 1, 1], [0, 1, 0, 0], [1, 0, 1, 1], [1, 0, 1, 1]], dtype=float)
    assert prepare_view(similarity, None, 2, pairs=False).candidates[:, 0].tolist() == [2, 0, 0, 0]
    # Excluding class 7 (images 0 and 2): images 1 and 3 become each other's neighbours.
    view = prepare_view(similarity, 7, 2, pairs=False)
    labels = np.array([7, 5, 7, 5])
    accumulators = view_accumulators(view, label_layout(labels), labels[None, :])[0]
    assert statistics_of(accumulators)["nn_accuracy"] == 1.0 and view.candidates.shape == (4, 3)


def test_pooled_views_and_observed_hit_rates(monkeypatch: pytest.MonkeyPatch) -> None:
    labels = np.array([0, 0, 1, 1, 2, 2, 2])
    similarities = [random_similarity(7, seed) for seed in (1, 2, 3)]
    permutations = label_permutations(7, 5, seed=0)
    views = [prepare_view(similarity, excluded, 3, pairs=True) for similarity, excluded in zip(similarities, [0, 1, 2])]
    accumulators, hit_rates = permutation_accumulators(iter(views), labels, permutations)
    monkeypatch.setattr(inference, "BATCH_BUDGET", 1)  # one labelling per batch: the same sums
    np.testing.assert_allclose(permutation_accumulators(iter(views), labels, permutations)[0], accumulators, rtol=1e-13)
    for row, permutation in enumerate(permutations):
        expected = sum(view_accumulators(view, label_layout(labels), labels[permutation][None, :])[0] for view in views)
        np.testing.assert_allclose(accumulators[row], expected)
    pooled = statistics_of(accumulators[0])["nn_accuracy"]
    per_view = [
        brute_force_statistics(similarity, labels, excluded)["nn_accuracy"]
        for similarity, excluded in zip(similarities, [0, 1, 2])
    ]
    weights = [np.sum(labels != excluded) for excluded in (0, 1, 2)]
    assert pooled == pytest.approx(np.average(per_view, weights=weights))
    assert np.isnan(hit_rates).sum() == 0 and len(hit_rates) == 7
    with pytest.raises(ValueError, match="identity"):
        permutation_accumulators(iter(views), labels, permutations[1:])


@pytest.mark.parametrize("excluded_classes", [[None], [0, 2, 5]])
def test_exact_nn_chance_is_the_permutation_mean(excluded_classes: list[int | None]) -> None:
    """The stated chance is the expectation under permutation (checked by simulation)."""
    labels = np.array([0, 0, 0, 2, 2, 5, 5, 5, 5, 7, 7])
    views = [
        prepare_view(random_similarity(len(labels), seed), excluded, 4, pairs=False)
        for seed, excluded in enumerate(excluded_classes)
    ]
    accumulators, _ = permutation_accumulators(iter(views), labels, label_permutations(len(labels), 4000, seed=2))
    null = statistics_of(accumulators[1:])["nn_accuracy"]
    assert null.mean() == pytest.approx(
        exact_nn_chance(labels, excluded_classes), abs=4 * null.std() / np.sqrt(len(null))
    )


def planted_signatures(labels: np.ndarray, aligned: bool, seed: int) -> np.ndarray:
    """Binary signatures over 64 subsets: 8 subsets per image, from a class prototype (aligned) or at random."""
    rng = np.random.default_rng(seed)
    prototypes = {label: rng.choice(64, 8, replace=False) for label in np.unique(labels)}
    rows = []
    for label in labels:
        members = set(rng.choice(64, 8, replace=False).tolist())
        if aligned:
            members = set(prototypes[label][:6].tolist()) | set(list(members - set(prototypes[label].tolist()))[:2])
        rows.append(np.isin(np.arange(64), list(members)).astype(float))
    return np.array(rows)


def jaccard_matrix(signatures: np.ndarray) -> np.ndarray:
    overlap = signatures @ signatures.T
    mass = signatures.sum(axis=1)
    return overlap / (mass[:, None] + mass[None, :] - overlap)


@pytest.mark.parametrize("aligned", [True, False])
def test_planted_alignment_detected_and_absence_not(aligned: bool) -> None:
    labels = np.repeat(np.arange(10), 4)
    view = prepare_view(jaccard_matrix(planted_signatures(labels, aligned, seed=0)), None, 4, pairs=True)
    accumulators, _ = permutation_accumulators([view], labels, label_permutations(len(labels), 199, seed=0))
    tests = permutation_tests(accumulators, pairs=True)
    assert all(result["p_value_floor"] == 1 / 200 for result in tests.values())
    if aligned:
        assert all(result["p_value"] == 1 / 200 for result in tests.values())
    else:
        assert all(result["p_value"] > 0.05 for result in tests.values())


def test_shared_image_pairs_do_not_collapse_the_permutation_p_value() -> None:
    """Pairs share images: a pair-level test collapses under a null where the permutation test holds its level.

    No class is aligned (the similarity depends on per-image values that ignore the labels), but two
    large classes hold most same-label pairs, all built from their 15 images each, so the mean over
    their 210 pairs swings with those images' values. Mann–Whitney over pairs takes them as independent
    and rejects far above its level (p down to 1e-6); the label-permutation test does not.
    """
    rng = np.random.default_rng(4)
    labels = np.repeat(np.arange(12), [15, 15] + [2] * 10)
    upper = np.triu_indices(len(labels), 1)
    same = labels[upper[0]] == labels[upper[1]]
    pair_p, permutation_p = [], []
    for trial in range(40):
        value = rng.normal(size=len(labels))
        similarity = value[:, None] + value[None, :] - np.abs(value[:, None] - value[None, :])  # 2 min(v_i, v_j)
        pair_p.append(mannwhitneyu(similarity[upper][same], similarity[upper][~same], alternative="greater").pvalue)
        view = prepare_view(similarity, None, 15, pairs=True)
        accumulators, _ = permutation_accumulators([view], labels, label_permutations(len(labels), 99, seed=trial))
        permutation_p.append(permutation_tests(accumulators, pairs=True)["auc"]["p_value"])
    assert np.mean(np.array(pair_p) < 0.05) > 0.25 and min(pair_p) < 1e-5
    assert np.mean(np.array(permutation_p) < 0.05) <= 0.1
