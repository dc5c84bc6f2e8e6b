"""Experiment 4's decisions with power, each rule planted: the no-power floors at and around α, the paired class
bootstrap of the AUC difference against brute force and deciding at and around α, the global core against random
top-K sets against exact enumeration, and the compact signatures' round trip (and a recompute of the committed run)."""

from __future__ import annotations

import copy
import itertools
from math import comb
from pathlib import Path

import numpy as np
import pytest
import torch

from experiment_1.errors import PipelineError
from experiment_1.files import read_json
from experiment_1.report import NO_POWER, check_verdicts
from experiment_4 import step_2_overlap
from experiment_4.compact import write_compact
from experiment_4.contrast import auc_difference_bootstrap, class_weights, level_histograms, weighted_auc
from experiment_4.core_null import mean_core_share, random_core_shares
from experiment_4.formats import load_signatures
from experiment_4.inference import permutation_accumulators, prepare_view, statistics_of
from experiment_4.power import (
    bootstrap_best_p,
    mcnemar_best_p,
    mcnemar_p,
    no_power,
    permutation_best_p,
    power_note,
)
from experiment_4.record import VERDICTS
from experiment_4.signatures import core_share, global_core, membership_counts, pairwise_similarity, top_k_signatures
from experiment_4.verdicts import experiment_4_verdicts
from tests.experiment_4.test_experiment_4_analysis import K, decisions, planted_document

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "experiment_4/results_efficientnet_lite0_sample"


def test_best_attainable_p_at_and_around_alpha() -> None:
    assert no_power(mcnemar_best_p(5)) and not no_power(mcnemar_best_p(6))  # 0.0625 vs 0.03125
    assert mcnemar_best_p(0) == 1.0
    assert permutation_best_p(219, 11) == 0.05 and not no_power(permutation_best_p(219, 11))  # at α: has power
    assert no_power(permutation_best_p(218, 11))  # just above α
    assert not no_power(bootstrap_best_p(439, 11)) and no_power(bootstrap_best_p(438, 11))
    for first, second in [(0, 2), (3, 9), (9, 11), (0, 0), (7, 7)]:  # exact McNemar against enumeration
        n = first + second
        tail = sum(comb(n, j) for j in range(n + 1) if min(j, n - j) <= min(first, second)) / 2**n if n else 1.0
        assert mcnemar_p(first, second) == pytest.approx(min(1.0, tail))


def test_the_floors_are_capped_at_1_and_the_note_says_which_side_of_alpha() -> None:
    assert permutation_best_p(0, 5) == 1.0 and permutation_best_p(9) == 0.1 and permutation_best_p(9, 2) == 0.2
    assert bootstrap_best_p(2, 3) == 1.0 and bootstrap_best_p(9) == 0.2 and bootstrap_best_p(99, 2) == 0.04
    assert mcnemar_best_p(-1) == mcnemar_best_p(1) == 1.0 and mcnemar_best_p(2) == 0.5
    assert mcnemar_p(0, 1) == 1.0 and mcnemar_p(0, 6) == 0.03125 and mcnemar_p(6, 0) == 0.03125
    assert no_power(0.051) and not no_power(0.05) and no_power(0.02, alpha=0.01)
    assert power_note(0.0625) == "the best attainable p of this test on these data is 0.0625, which exceeds α = 0.05"
    assert power_note(0.05) == "the best attainable p of this test on these data is 0.05, which is at most α = 0.05"
    assert power_note(0.02, alpha=0.01).endswith("which exceeds α = 0.01")


def run(document: dict, tmp_path: Path, *flags: str) -> dict:
    torch.save(document, tmp_path / "signatures.pt")
    step_2_overlap.main(
        ["--signatures", str(tmp_path / "signatures.pt"), "--nn-K", str(K), "--sweep-K", "4", "8", *flags]
    )
    return read_json(tmp_path / "overlap.json")


def test_too_few_permutations_or_replicates_read_no_power(tmp_path: Path) -> None:
    document = planted_document(aligned=True, vector_aligned=False)
    found = decisions(run(document, tmp_path, "--num-permutations", "218", "--num-bootstrap", "438"))
    assert {found[f"class_alignment.{name}"] for name in ("vector", "scalar", "class_control")} == {NO_POWER}
    assert found["vector_global_core"] == NO_POWER and found["scalar_minus_vector"] == NO_POWER
    found = decisions(run(document, tmp_path, "--num-permutations", "299", "--num-bootstrap", "999"))
    assert found["class_alignment.scalar"] == "holds" and found["scalar_minus_vector"] == "holds"


def brute_force_auc(values: np.ndarray, labels: np.ndarray, counts: np.ndarray) -> float:
    """The pooled AUC of the explicitly resampled data set: class c copied counts[c] times, pairs between two copies
    of one class left out."""
    names = np.unique(labels)
    copies = [
        (image, copy_index)
        for c, name in enumerate(names)
        for copy_index in range(counts[c])
        for image in np.flatnonzero(labels == name)
    ]
    same, different = [], []
    for (a, copy_a), (b, copy_b) in itertools.combinations(copies, 2):
        if a == b:
            continue
        if labels[a] == labels[b]:
            if copy_a == copy_b:
                same.append(values[a, b])
        else:
            different.append(values[a, b])
    same, different = np.array(same)[:, None], np.array(different)[None, :]
    return float(((same > different) + 0.5 * (same == different)).mean())


def test_weighted_auc_is_that_of_the_resampled_data_set() -> None:
    rng = np.random.default_rng(3)
    labels = np.repeat([5, 7, 9, 11], 3)
    values = rng.integers(0, 4, (12, 12)) / 3.0
    values = np.triu(values, 1) + np.triu(values, 1).T
    first, second = np.triu_indices(12, 1)
    _, classes = np.unique(labels, return_inverse=True)
    same, different = level_histograms(np.stack([first, second], 1), values[first, second], classes, 4)
    for counts in ([1, 1, 1, 1], [2, 0, 1, 1], [0, 3, 0, 1], [1, 2, 1, 0]):
        weights = class_weights(np.repeat(np.arange(4), counts)[None, :], 4)
        assert weighted_auc(same, different, weights)[0] == pytest.approx(
            brute_force_auc(values, labels, np.array(counts))
        )


def test_the_observed_auc_difference_is_the_pooled_aucs_and_the_bootstrap_decides(tmp_path: Path) -> None:
    summary = run(planted_document(aligned=True, vector_aligned=False), tmp_path, "--num-permutations", "299")
    auc = summary["scalar_minus_vector"]["auc_bootstrap"]
    for key, ranking in (("first", "scalar"), ("second", "vector")):
        assert auc[key] == pytest.approx(
            summary["rankings"][ranking]["binary"]["true_label"]["tests"]["auc"]["observed"]
        )
    assert auc["ci_low"] > 0 and auc["p_value"] == auc["p_value_floor"]
    # the same rankings on both sides: every replicate is 0, p = 1, cannot tell
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(5), 4)
    values = rng.random(190)
    pairs = np.stack(np.triu_indices(20, 1), 1)
    equal = auc_difference_bootstrap(pairs, values, values, labels, 0, 199)
    assert equal["observed"] == 0 and equal["ci_low"] == equal["ci_high"] == 0 and equal["p_value"] == 1.0


def with_contrast_p(summary: dict, p_value: float, sign: int) -> dict:
    """``summary`` with every other test of the family at p = 1 and the contrast at ``p_value``, its CI on ``sign``'s side."""
    edited = copy.deepcopy(summary)
    for ranking in ("vector", "scalar", "class_control"):
        for test in edited["rankings"][ranking]["binary"]["true_label"]["tests"].values():
            test["p_value"] = 1.0
    edited["rankings"]["vector"]["global_core"]["test"]["p_value"] = 1.0
    auc = edited["scalar_minus_vector"]["auc_bootstrap"]
    auc.update(p_value=p_value, ci_low=sign * 0.01, ci_high=sign * 0.03, observed=sign * 0.02)
    if sign < 0:
        auc["ci_low"], auc["ci_high"] = auc["ci_high"], auc["ci_low"]
    edited["verdicts"] = experiment_4_verdicts(edited)
    check_verdicts(edited, Path("overlap.json"), VERDICTS[4])  # the checker re-derives every decision
    return edited


def test_the_contrast_decides_around_alpha_after_holm(tmp_path: Path) -> None:
    summary = run(planted_document(aligned=True, vector_aligned=False), tmp_path, "--num-permutations", "299")
    size = 11
    for sign, decided in ((1, "holds"), (-1, "fails")):
        below = with_contrast_p(summary, 0.05 / size * (1 - 1e-6), sign)
        above = with_contrast_p(summary, 0.05 / size * (1 + 1e-6), sign)
        assert decisions(below)["scalar_minus_vector"] == decided
        assert decisions(above)["scalar_minus_vector"] == "cannot tell"
    assert decisions(with_contrast_p(summary, 0.001, -1))["seed_claim"] == "fails"  # the vector is the more aligned


def test_mean_core_share_is_the_signature_modules_core() -> None:
    rng = np.random.default_rng(1)
    indices = np.stack([rng.choice(32, 4, replace=False) for _ in range(9)])
    counts = membership_counts(torch.from_numpy(indices), 32)
    core = global_core(counts, 4)
    assert mean_core_share(indices, 32) == pytest.approx(float(core_share(torch.from_numpy(indices), core).mean()))


def test_the_core_null_matches_exact_enumeration() -> None:
    # 2 images, top-2 of 6 subsets: every one of the 15² configurations equally likely under the null
    sets = [np.array(pair) for pair in itertools.combinations(range(6), 2)]
    exact = np.array([mean_core_share(np.stack([a, b]), 6) for a in sets for b in sets])
    draws = random_core_shares(2, 2, 6, 20000, 0)
    for level in np.unique(exact):
        assert np.mean(draws >= level - 1e-12) == pytest.approx(np.mean(exact >= level - 1e-12), abs=0.015)
    assert draws.mean() == pytest.approx(exact.mean(), abs=0.01)


def test_step_2_gives_the_same_numbers_from_the_compact_file(tmp_path: Path) -> None:
    document = planted_document(aligned=True, vector_aligned=False)
    document["samples"] = [
        {"source": "s", "row": row, "label": int(label)} for row, label in enumerate(document["label"])
    ]
    from_pt = run(document, tmp_path, "--num-permutations", "99")
    write_compact(document, tmp_path / "signatures.npz")
    step_2_overlap.main(
        [
            "--signatures",
            str(tmp_path / "signatures.npz"),
            "--nn-K",
            str(K),
            "--sweep-K",
            "4",
            "8",
            "--num-permutations",
            "99",
        ]
    )
    from_npz = read_json(tmp_path / "overlap.json")
    from_pt["settings"].pop("signatures"), from_npz["settings"].pop("signatures")
    assert from_npz == from_pt


def test_an_old_folder_without_the_compact_file_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(PipelineError) as refused:
        step_2_overlap.main(["--signatures", str(tmp_path / "signatures.npz")])
    assert "\n" not in str(refused.value) and "signatures.pt" in str(refused.value)


@pytest.mark.skipif(not (COMMITTED / "signatures.npz").exists(), reason="no committed compact signatures")
def test_the_committed_statistics_recompute_from_the_committed_compact_file() -> None:
    document = load_signatures(COMMITTED / "signatures.npz")
    summary = read_json(COMMITTED / "overlap.json")
    labels, k = document["label"].numpy(), summary["settings"]["nn_k"]
    hits = {}
    for ranking in ("vector", "scalar"):
        indices, weights = top_k_signatures(document[f"ranked_{ranking}"], document[f"magnitude_{ranking}"], k, False)
        view = prepare_view(pairwise_similarity(indices, weights, int(document["num_subsets"])).numpy(), None, 0, True)
        accumulators, hits[ranking] = permutation_accumulators([view], labels, np.arange(len(labels))[None, :])
        statistics = statistics_of(accumulators[0])
        stored = summary["rankings"][ranking]["binary"]["true_label"]["tests"]
        for name in ("difference", "auc", "nn_accuracy"):
            assert float(statistics[name]) == pytest.approx(stored[name]["observed"], rel=1e-12)
        share = core_share(indices, global_core(membership_counts(indices, int(document["num_subsets"])), k))
        assert float(share.mean()) == pytest.approx(
            summary["rankings"][ranking]["global_core"]["share"]["mean"], rel=1e-12
        )
    stored_hits = summary["scalar_minus_vector"]["nn_hits"]
    assert (
        int(hits["scalar"].sum()) == stored_hits["first_hits"]
        and int(hits["vector"].sum()) == stored_hits["second_hits"]
    )
    assert int(((hits["scalar"] > 0) & (hits["vector"] == 0)).sum()) == stored_hits["first_only"]
