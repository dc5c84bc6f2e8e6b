"""Experiment 4 on sampled pairs (step 2's --max-pairs): the sample, the statistics over exactly the sampled pairs against
brute force, the permutation null's level and power, and the exact path recovered when the sample holds every pair."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from test_experiment_4_analysis import CLASSES, PER_CLASS, K, planted_document

from experiment_4.inference import permutation_tests, statistics_of
from experiment_4.report import pair_sentence
from experiment_4.sampled_inference import (
    sample_pairs,
    sample_queries,
    sampled_permutation_accumulators,
    sampled_view,
    top_candidates,
    view_rng,
)
from experiment_4.signatures import top_k_signatures
from experiment_4.summary import overlap_summary

NUM_SUBSETS = 32


def test_pair_sample_is_seeded_distinct_and_all_pairs_when_it_covers_them() -> None:
    first, again, other = (sample_pairs(50, 300, view_rng(seed, 4001, 0)) for seed in (3, 3, 4))
    assert np.array_equal(first, again) and not np.array_equal(first, other)
    assert (
        len({tuple(pair) for pair in first.tolist()}) == 300
        and bool((first[:, 0] < first[:, 1]).all())
        and first.max() < 50
    )
    everything = sample_pairs(7, 10**6, view_rng(0, 4001, 0))
    assert np.array_equal(everything, np.stack(np.triu_indices(7, 1), axis=1))
    assert (
        np.array_equal(sample_queries(9, 9, view_rng(0, 4002, 1)), np.arange(9))
        and len(set(sample_queries(9, 4, view_rng(0, 4002, 1)))) == 4
    )


@pytest.mark.parametrize("depth", [1, 2, 5])
def test_top_candidates_match_the_stable_sort_with_ties_to_the_lower_index(depth: int) -> None:
    block = np.random.default_rng(depth).integers(0, 4, size=(30, 40)).astype(np.float64)  # many ties
    block[np.arange(30), np.arange(30)] = -np.inf
    assert np.array_equal(top_candidates(block, depth), np.argsort(-block, axis=1, kind="stable")[:, :depth])


def random_sets(rng: np.random.Generator, count: int, k: int) -> list[list[int]]:
    return [list(map(int, rng.choice(NUM_SUBSETS, k, replace=False))) for _ in range(count)]


def brute_force(
    sets: list[list[int]], labels: np.ndarray, pairs: np.ndarray, queries: np.ndarray, excluded: int | None
) -> dict[str, float]:
    """The three statistics of one view under one labelling, by counting over exactly the given pairs and queries."""

    def jaccard(a: int, b: int) -> float:
        return len(set(sets[a]) & set(sets[b])) / len(set(sets[a]) | set(sets[b]))

    out = [excluded is not None and label == excluded for label in labels]
    same = [jaccard(a, b) for a, b in pairs if not out[a] and not out[b] and labels[a] == labels[b]]
    different = [jaccard(a, b) for a, b in pairs if not out[a] and not out[b] and labels[a] != labels[b]]
    u = sum((s > d) + 0.5 * (s == d) for s in same for d in different)
    hits = taking_part = 0
    for query in queries:
        if out[query]:
            continue
        others = [j for j in range(len(labels)) if j != query and not out[j]]
        neighbour = max(others, key=lambda j: (jaccard(query, j), -j))  # the most similar, ties to the lowest index
        hits, taking_part = hits + (labels[neighbour] == labels[query]), taking_part + 1
    return {
        "difference": np.mean(same) - np.mean(different),
        "auc": u / (len(same) * len(different)),
        "nn_accuracy": hits / taking_part,
    }


@pytest.mark.parametrize("excluded", [None, 2])
def test_statistics_are_those_of_exactly_the_sampled_pairs_under_every_labelling(excluded: int | None) -> None:
    rng = np.random.default_rng(0)
    count, k = 24, 6
    labels = np.repeat(np.arange(4), 6)
    sets = random_sets(rng, count, k)
    indices, weights = top_k_signatures(torch.tensor(sets), torch.ones(count, k), k, False)
    pairs = sample_pairs(count, 60, view_rng(1, 4001, 0))
    queries = np.arange(count) if excluded is None else sample_queries(count, 10, view_rng(1, 4002, 1))
    view = sampled_view(indices, weights, NUM_SUBSETS, queries, pairs, excluded, 6)
    permutations = np.stack([np.arange(count)] + [rng.permutation(count) for _ in range(4)])
    accumulators, _ = sampled_permutation_accumulators([view], labels, permutations)
    statistics = statistics_of(accumulators)
    for row, permutation in enumerate(permutations):
        expected = brute_force(sets, labels[permutation], pairs, queries, excluded)
        for name, value in expected.items():
            assert statistics[name][row] == pytest.approx(value, abs=1e-12), (row, name)


def planted_sets(rng: np.random.Generator, labels: np.ndarray, k: int) -> list[list[int]]:
    """Each image's top-k holds 3 subsets of its class's prototype, the rest random."""
    prototypes = [list(map(int, rng.choice(NUM_SUBSETS, 3, replace=False))) for _ in range(labels.max() + 1)]
    rows = []
    for label in labels:
        rest = [int(s) for s in rng.permutation(NUM_SUBSETS) if s not in prototypes[label]]
        rows.append(prototypes[label] + rest[: k - 3])
    return rows


@pytest.mark.parametrize("planted", [True, False])
def test_permutation_null_on_fixed_sampled_pairs_detects_planted_classes_and_not_random_ones(planted: bool) -> None:
    rng = np.random.default_rng(5)
    count, k = 48, 6
    labels = np.repeat(np.arange(6), 8)
    sets = planted_sets(rng, labels, k) if planted else random_sets(rng, count, k)
    indices, weights = top_k_signatures(torch.tensor(sets), torch.ones(count, k), k, False)
    view = sampled_view(
        indices, weights, NUM_SUBSETS, np.arange(count), sample_pairs(count, 300, view_rng(0, 4001, 0)), None, 0
    )
    permutations = np.stack([np.arange(count)] + [rng.permutation(count) for _ in range(199)])
    tests = permutation_tests(sampled_permutation_accumulators([view], labels, permutations)[0], pairs=True)
    p_values = [tests[name]["p_value"] for name in ("difference", "auc", "nn_accuracy")]
    assert max(p_values) <= 0.01 if planted else min(p_values) > 0.05


def numbers(summary: dict, path: str = "") -> dict[str, float]:
    """Every number of a summary, flattened (settings left out)."""
    if isinstance(summary, dict):
        return {
            key: value
            for name, item in summary.items()
            if name != "settings"
            for key, value in numbers(item, f"{path}/{name}").items()
        }
    if isinstance(summary, list):
        return {
            key: value for index, item in enumerate(summary) for key, value in numbers(item, f"{path}[{index}]").items()
        }
    return {path: summary}


def test_a_sample_of_every_pair_reproduces_the_exact_path_and_a_small_one_is_seeded() -> None:
    document = planted_document(True)
    count = CLASSES * PER_CLASS
    settings = {
        "signatures": "planted",
        "nn_k": K,
        "sweep_ks": [4, K],
        "num_permutations": 49,
        "p_value_floor": 1 / 50,
        "seed": 0,
        "store_k": 64,
        "class_store_k": 16,
        "git_commit": "test",
    }
    exact = numbers(overlap_summary(document, settings))
    every_pair = overlap_summary(document, {**settings, "max_pairs": CLASSES * count * (count - 1) // 2})
    assert every_pair["settings"]["pair_sampling"]["class_control_pairs_per_coordinate"] == count * (count - 1) // 2
    sampled = numbers(every_pair)
    assert all(
        str(sampled[key]).startswith("sampled (--max-pairs") for key in sampled.keys() - exact.keys()
    )  # the verdicts' sampling notes
    for key, value in exact.items():
        assert (
            sampled[key] == pytest.approx(value, rel=1e-9, abs=1e-12, nan_ok=True)
            if isinstance(value, float)
            else sampled[key] == value
        ), key
    small = [overlap_summary(document, {**settings, "max_pairs": 60, "seed": seed}) for seed in (0, 0, 1)]
    assert numbers(small[0]) == numbers(small[1]) and numbers(small[0]) != numbers(small[2])
    record = small[0]["settings"]["pair_sampling"]
    assert (
        record["per_image_ranking_pairs"],
        record["class_control_pairs_per_coordinate"],
        record["class_control_queries_per_coordinate"],
    ) == (60, math.ceil(60 / CLASSES), 10)
    assert (
        small[0]["rankings"]["vector"]["binary"]["true_label"]["pair_counts"]["same_class"]
        + small[0]["rankings"]["vector"]["binary"]["true_label"]["pair_counts"]["different_class"]
        == 60
    )
    assert all(
        "sampled (--max-pairs 60)" in " ".join(entry["notes"]) for entry in small[0]["verdicts"][:3]
    ) and "**sampled**" in pair_sentence(small[0])
    assert "sampled" not in pair_sentence(every_pair | {"settings": settings})


def test_a_max_pairs_too_small_for_a_same_class_pair_is_refused_with_the_minimum() -> None:
    from experiment_1.errors import PipelineError
    from experiment_4.sampled_inference import SamplingPlan
    from experiment_4.summary import minimum_max_pairs

    document = planted_document(True)
    count = CLASSES * PER_CLASS
    settings = {
        "signatures": "planted",
        "nn_k": K,
        "sweep_ks": [4, K],
        "num_permutations": 49,
        "p_value_floor": 1 / 50,
        "seed": 0,
        "store_k": 64,
        "class_store_k": 16,
        "git_commit": "test",
        "max_pairs": 1,
    }
    needed = minimum_max_pairs(
        SamplingPlan(1, 0, count, len(document["class_coordinates"])), np.full(CLASSES, PER_CLASS)
    )
    with pytest.raises(
        PipelineError,
        match=f"--max-pairs 1: too few pairs for a same-class pair in every view .*; use --max-pairs {needed} or more",
    ):
        overlap_summary(document, settings)
    assert 1 < needed <= 60


def test_overlap_json_is_never_written_with_a_non_finite_number(tmp_path, monkeypatch, capsys) -> None:
    from experiment_1.errors import run_cli
    from experiment_4 import overlap, step_2_overlap

    monkeypatch.setattr(
        overlap, "load_signatures", lambda path: {"store_k": 64, "num_subsets": 256, "class_store_k": 16}
    )
    monkeypatch.setattr(overlap, "check_settings", lambda *args: None)
    monkeypatch.setattr(
        overlap, "overlap_summary", lambda document, settings: {"rankings": {"vector": {"auc": float("nan")}}}
    )
    (tmp_path / "signatures.pt").write_bytes(b"")  # there (its reading is replaced above)
    with pytest.raises(SystemExit):
        run_cli(step_2_overlap.main, ["--signatures", str(tmp_path / "signatures.pt"), "--max-pairs", "5"])
    assert "rankings.vector.auc is nan" in capsys.readouterr().err and not (tmp_path / "overlap.json").exists()
