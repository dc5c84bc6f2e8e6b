"""Rankings, signatures, Jaccard overlaps and the global core against brute force."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from experiment_4.signatures import (
    class_ranked_subsets,
    core_share,
    default_store_k,
    gate_set,
    global_core,
    index_dtype,
    membership_counts,
    pairwise_similarity,
    ranked_subsets,
    signature_batch,
    signature_matrix,
    subsets_covering,
    top_k_signatures,
)


def random_rankings(count: int, num_subsets: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Random full rankings with decreasing positive magnitudes."""
    generator = torch.Generator().manual_seed(seed)
    ranked = torch.stack([torch.randperm(num_subsets, generator=generator) for _ in range(count)])
    magnitudes = (
        torch.rand(count, num_subsets, generator=generator, dtype=torch.float64).sort(dim=1, descending=True).values
        + 0.01
    )
    return ranked, magnitudes


def brute_force_jaccard(
    indices_a: list[int], weights_a: list[float], indices_b: list[int], weights_b: list[float]
) -> float:
    """Σ_S min / Σ_S max over the union of the two index lists, by explicit loop."""
    a, b = dict(zip(indices_a, weights_a)), dict(zip(indices_b, weights_b))
    union = set(a) | set(b)
    return sum(min(a.get(s, 0.0), b.get(s, 0.0)) for s in union) / sum(max(a.get(s, 0.0), b.get(s, 0.0)) for s in union)


def test_store_k_default_and_index_dtype() -> None:
    assert default_store_k(8) == 256 and default_store_k(12) == 4096 and default_store_k(16) == 1024
    assert index_dtype(2**15) == torch.int16 and index_dtype(2**16) == torch.int32


def test_ranked_subsets_match_sorting_by_hand() -> None:
    generator = torch.Generator().manual_seed(0)
    coefficients = torch.randn(3, 16, 5, generator=generator, dtype=torch.float64)
    coefficients[0, 3] = coefficients[0, 7] = 10.0  # an exact tie at the top: mask 3 must precede mask 7
    full_logits = torch.randn(3, 5, generator=generator)
    labels = torch.tensor([4, 0, 2])
    arrays = ranked_subsets(coefficients, full_logits, labels, store_k=6)
    classes = {"scalar": full_logits.argmax(1).tolist(), "scalar_true": labels.tolist()}
    for image in range(3):
        magnitudes = {
            "vector": [float(np.sqrt(sum(value**2 for value in coefficients[image, s].tolist()))) for s in range(16)],
            **{
                ranking: [abs(coefficients[image, s, classes[ranking][image]].item()) for s in range(16)]
                for ranking in classes
            },
        }
        for ranking, values in magnitudes.items():
            order = sorted(range(16), key=lambda s: (-values[s], s))[:6]
            assert arrays[f"ranked_{ranking}"][image].tolist() == order, (image, ranking)
            np.testing.assert_allclose(
                arrays[f"magnitude_{ranking}"][image].numpy(), [values[s] for s in order], rtol=1e-6
            )
    assert all(arrays[f"ranked_{ranking}"][0, :2].tolist() == [3, 7] for ranking in ("vector", "scalar", "scalar_true"))


def test_class_ranked_subsets_match_sorting_by_hand_in_every_coordinate() -> None:
    generator = torch.Generator().manual_seed(1)
    coefficients = torch.randn(3, 16, 6, generator=generator, dtype=torch.float64)
    coefficients[1, 9, 4], coefficients[1, 2, 4] = 7.0, -7.0  # a tie in |·| at the top of class 4: mask 2 first
    classes = torch.tensor([0, 2, 4, 5])
    for budget in (16, 1 << 20):  # one class per chunk, and all classes at once
        ranked = class_ranked_subsets(coefficients, classes, 5, budget=budget)
        assert ranked.shape == (3, 4, 5) and ranked.dtype == torch.int16
        for image in range(3):
            for position, label in enumerate(classes.tolist()):
                values = [abs(coefficients[image, s, label].item()) for s in range(16)]
                assert ranked[image, position].tolist() == sorted(range(16), key=lambda s: (-values[s], s))[:5], (
                    image,
                    label,
                )
    assert ranked[1, 2, :2].tolist() == [2, 9]


def test_signature_batch_is_the_rankings_of_the_butterfly_coefficients() -> None:
    generator = torch.Generator().manual_seed(2)
    logits = torch.randn(2, 8, 5, generator=generator)
    labels = torch.tensor([1, 3])
    classes = torch.tensor([1, 3, 4])
    arrays = signature_batch(logits, labels, torch.float64, 4, classes, 3)
    # Brute-force Möbius coefficients: Δ_S h = Σ_{T ⊆ S} (−1)^{|S∖T|} h(T).
    coefficients = torch.stack(
        [sum((-1) ** bin(s ^ t).count("1") * logits[:, t].double() for t in range(8) if t & s == t) for s in range(8)],
        dim=1,
    )
    expected = ranked_subsets(coefficients, logits[:, 7], labels, 4)
    for name, value in expected.items():
        assert torch.equal(arrays[name], value) if name.startswith("ranked") else torch.allclose(arrays[name], value), (
            name
        )
    assert torch.equal(arrays["ranked_class"], class_ranked_subsets(coefficients, classes, 3))
    assert (
        torch.equal(arrays["full_logits"], logits[:, 7])
        and arrays["predicted"].tolist() == logits[:, 7].argmax(1).tolist()
    )


def test_top_k_signatures_binary_and_weighted() -> None:
    ranked = torch.tensor([[5, 1, 7, 0], [2, 3, 0, 1]], dtype=torch.int16)
    magnitudes = torch.tensor([[3.0, 1.0, 1.0, 0.5], [0.0, 0.0, 0.0, 0.0]])
    indices, weights = top_k_signatures(ranked, magnitudes, 3, weighted=False)
    assert indices.tolist() == [[5, 1, 7], [2, 3, 0]] and weights.tolist() == [[1.0] * 3] * 2
    _, weights = top_k_signatures(ranked, magnitudes, 3, weighted=True)
    np.testing.assert_allclose(weights.numpy(), [[0.6, 0.2, 0.2], [1 / 3] * 3])  # all-zero magnitudes → uniform
    dense = signature_matrix(indices, weights, 8)
    assert dense[0].tolist() == pytest.approx([0, 0.2, 0, 0, 0, 0.6, 0, 0.2])
    with pytest.raises(ValueError):
        top_k_signatures(ranked, magnitudes, 5, weighted=False)


def test_jaccard_identical_disjoint_and_binary_reduction() -> None:
    indices = torch.tensor([[0, 1, 2], [2, 1, 0], [3, 4, 5], [1, 2, 6]])
    ones = torch.ones(4, 3, dtype=torch.float64)
    similarity = pairwise_similarity(indices, ones, 8)
    assert similarity[0, 1] == 1.0 and similarity[0, 0] == 1.0  # identical sets (order does not matter)
    assert similarity[0, 2] == 0.0  # disjoint sets
    assert similarity[0, 3] == pytest.approx(2 / 4)  # |{1,2}| / |{0,1,2,6}|
    # The weighted Jaccard on 0/1 weights is the set Jaccard |A ∩ B| / |A ∪ B|, for random sets too.
    ranked, _ = random_rankings(12, 32, seed=1)
    indices = ranked[:, :9].long()
    similarity = pairwise_similarity(indices, torch.ones(12, 9, dtype=torch.float64), 32)
    sets = [set(row.tolist()) for row in indices]
    expected = [[len(a & b) / len(a | b) for b in sets] for a in sets]
    np.testing.assert_allclose(similarity.numpy(), expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize("weighted", [False, True])
def test_chunked_similarity_equals_double_loop(weighted: bool) -> None:
    ranked, magnitudes = random_rankings(23, 64, seed=2)
    indices, weights = top_k_signatures(ranked, magnitudes, 10, weighted)
    expected = np.array(
        [
            [
                brute_force_jaccard(indices[i].tolist(), weights[i].tolist(), indices[j].tolist(), weights[j].tolist())
                for j in range(23)
            ]
            for i in range(23)
        ]
    )
    # Chunks of one row, of a few rows, and one chunk for all: the same sums of the same float64 terms (the order of
    # the K terms differs from the loop's union order, so round-off tolerance, far below any real error).
    for budget in (
        1,
        23 * 10 * 4,
        1 << 20,
    ):  # gather route in chunks of 1 and 4 rows; dense product for binary at 1 << 20
        np.testing.assert_allclose(
            pairwise_similarity(indices, weights, 64, budget=budget).numpy(), expected, rtol=1e-12, atol=1e-15
        )


def test_global_core_share_and_coverage() -> None:
    indices = torch.tensor([[0, 1, 2], [0, 1, 3], [0, 4, 1], [5, 6, 7]])
    counts = membership_counts(indices, 8)
    assert counts.tolist() == [3, 3, 1, 1, 1, 1, 1, 1]
    core = global_core(counts, 3)
    assert core.tolist() == [0, 1, 2]  # ties among the count-1 subsets go to the lowest mask index
    np.testing.assert_allclose(core_share(indices, core).numpy(), [1.0, 2 / 3, 2 / 3, 0.0])
    # 12 memberships: 50 % = 6 needs the two count-3 subsets; 90 % = 10.8 needs 2 + 5 subsets.
    assert subsets_covering(counts, [0.5, 0.9, 1.0]) == [2, 7, 8]


def test_gate_sets() -> None:
    assert gate_set(0b101010, 8) == "{1,3,5}" and gate_set(0, 8) == "{}"
