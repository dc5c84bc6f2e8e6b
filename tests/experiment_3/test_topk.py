"""Experiment 3's top-K functions against brute force: explicit loops over subsets and sorted lists."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from experiment_1.mobius.sparsity import (
    RANKINGS,
    cumulative_reconstruction,
    participation_ratio,
    power_of_two_ks,
    rank_subsets,
    subset_magnitudes,
)
from experiment_1.mobius.transform import full_mask_index, inverse_mobius_transform, mobius_transform, subset_orders
from experiment_3.topk import (
    CONTROLS,
    CURVE_METRICS,
    SOURCES,
    TRUNK_REMOVED,
    control_permutations,
    top_k_order_histograms,
    topk_metrics,
)

L = 5
M = 2**L


def random_coefficients(batch: int, classes: int = 7, seed: int = 0) -> torch.Tensor:
    return torch.randn(batch, M, classes, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def brute_force_curves(
    coefficients: torch.Tensor, permutation: torch.Tensor, full: torch.Tensor, ks: list[int]
) -> dict[str, np.ndarray]:
    """Γ_K, relative error and top-1 agreement of every image and K by summing the first K subsets in a Python loop."""
    coefficients, permutation, full = coefficients.numpy(), permutation.numpy(), full.numpy()
    batch = coefficients.shape[0]
    out = {name: np.zeros((batch, len(ks))) for name in ("captured_energy", "relative_error", "top1_agreement")}
    for image in range(batch):
        energies = [float(np.sum(coefficients[image, mask] ** 2)) for mask in range(M)]
        for column, k in enumerate(ks):
            chosen = permutation[image, :k]
            reconstruction = sum(coefficients[image, mask] for mask in chosen)
            out["captured_energy"][image, column] = sum(energies[mask] for mask in chosen) / sum(energies)
            out["relative_error"][image, column] = np.linalg.norm(reconstruction - full[image]) / np.linalg.norm(
                full[image]
            )
            out["top1_agreement"][image, column] = float(np.argmax(reconstruction) == np.argmax(full[image]))
    return out


@pytest.mark.parametrize("ranking", RANKINGS)
def test_exactly_m_nonzero_coefficients_are_recovered_at_k_equals_m(ranking: str) -> None:
    m = 6
    coefficients = torch.zeros(4, M, 7, dtype=torch.float64)
    generator = torch.Generator().manual_seed(3)
    for image in range(4):
        support = torch.randperm(M, generator=generator)[:m]
        coefficients[image, support] = torch.randn(m, 7, generator=generator, dtype=torch.float64)
    values = inverse_mobius_transform(coefficients, dim=1)  # the set function h(S) with that sparse decomposition
    full = values[:, full_mask_index(L)]
    recovered = mobius_transform(values, dim=1)
    permutation = rank_subsets(subset_magnitudes(recovered, full, ranking))
    result = cumulative_reconstruction(recovered, permutation, full, [m - 1, m, M], error_thresholds=(1e-9,))
    np.testing.assert_allclose(result["captured_energy"][:, 1:].numpy(), 1.0, rtol=1e-12)
    assert (result["captured_energy"][:, 0] < 1 - 1e-6).all()
    np.testing.assert_allclose(result["relative_error"][:, 1:].numpy(), 0.0, atol=1e-12)
    assert (result["relative_error"][:, 0] > 1e-6).all()
    np.testing.assert_array_equal(result["top1_agreement"][:, 1:].numpy(), 1.0)
    np.testing.assert_array_equal(result["k_at_error"].numpy(), [[m]] * 4)


def test_top_k_order_histograms_count_orders_of_the_prefix() -> None:
    permutation = torch.stack([torch.randperm(M, generator=torch.Generator().manual_seed(image)) for image in range(2)])
    ks = list(range(1, M + 1))
    histograms = top_k_order_histograms(permutation, ks)
    for image in range(2):
        for k in ks:
            expected = np.bincount([bin(mask).count("1") for mask in permutation[image, :k].tolist()], minlength=L + 1)
            np.testing.assert_array_equal(histograms[image, k - 1].numpy(), expected)


def magnitude_ranking(batch: int = 3) -> torch.Tensor:
    coefficients = random_coefficients(batch)
    return rank_subsets(subset_magnitudes(coefficients, coefficients.sum(dim=1), "vector"))


def test_controls_are_permutations_with_their_defining_order_structure() -> None:
    ranking = magnitude_ranking()
    orders = subset_orders(L)
    every_k = list(range(1, M + 1))
    for control in CONTROLS:
        permutation = control_permutations(control, L, seed=0, draw=0, sample_indices=[0, 1, 2], ranking=ranking)
        assert permutation.dtype == torch.int64 and permutation.shape == (3, M)
        for row in permutation:
            assert sorted(row.tolist()) == list(range(M))
    low_order_first = control_permutations("low_order_first", L, 0, 0, [0, 1, 2])
    assert (orders[low_order_first].diff(dim=1) >= 0).all()  # every subset of order < k before any of order k
    assert not torch.equal(low_order_first[0], low_order_first[1])  # random within an order
    matched = control_permutations("order_matched", L, 0, 0, [0, 1, 2], ranking)
    np.testing.assert_array_equal(
        top_k_order_histograms(matched, every_k).numpy(), top_k_order_histograms(ranking, every_k).numpy()
    )
    assert not torch.equal(matched, ranking)


def test_controls_are_reproducible_by_seed_draw_and_sample_index() -> None:
    ranking = magnitude_ranking(4)
    for control in CONTROLS:
        first = control_permutations(control, L, 7, 2, [10, 11, 12, 13], ranking)
        assert torch.equal(first, control_permutations(control, L, 7, 2, [10, 11, 12, 13], ranking))
        # One image alone, with the same sample index, gets the same permutation as inside the batch.
        assert torch.equal(first[2:3], control_permutations(control, L, 7, 2, [12], ranking[2:3]))
        for changed in (
            control_permutations(control, L, 8, 2, [10, 11, 12, 13], ranking),
            control_permutations(control, L, 7, 3, [10, 11, 12, 13], ranking),
            control_permutations(control, L, 7, 2, [20, 21, 22, 23], ranking),
        ):
            assert not torch.equal(first, changed)


def test_topk_metrics_full_k_is_exact_and_curves_match_brute_force() -> None:
    generator = torch.Generator().manual_seed(5)
    logits = torch.randn(3, M, 11, generator=generator)
    ks = power_of_two_ks(L)
    metrics = topk_metrics(
        logits, [4, 5, 6], ks, num_random_seeds=2, seed=1, mass_fractions=[0.9], error_thresholds=[0.1]
    )
    for source in SOURCES:
        draws = 1 if source.startswith("magnitude") else 2
        for metric in CURVE_METRICS:
            assert metrics[f"{metric}_{source}"].shape == (3, draws, len(ks))
        # K = 2^L takes every subset: all energy, h(full) up to round-off, the same top-1.
        np.testing.assert_allclose(metrics[f"captured_energy_{source}"][..., -1].numpy(), 1.0, rtol=1e-12)
        np.testing.assert_allclose(metrics[f"captured_scalar_energy_{source}"][..., -1].numpy(), 1.0, rtol=1e-12)
        assert (metrics[f"relative_error_{source}"][..., -1] < 1e-12).all()
        assert (metrics[f"top1_agreement_{source}"][..., -1] == 1).all()
    coefficients = mobius_transform(logits, dim=1, dtype=torch.float64)
    full = logits[:, -1].double()
    random = control_permutations("random", L, 1, 1, [4, 5, 6])
    expected = brute_force_curves(coefficients, random, full, ks)
    for name, value in expected.items():
        np.testing.assert_allclose(metrics[f"{name}_random"][:, 1].numpy(), value, rtol=1e-10, atol=1e-12, err_msg=name)
    vector = rank_subsets(subset_magnitudes(coefficients, full, "vector"))
    np.testing.assert_array_equal(metrics["order_histogram_vector"].numpy(), top_k_order_histograms(vector, ks).numpy())
    np.testing.assert_allclose(
        metrics["k_eff_vector"].numpy(), participation_ratio(coefficients.square().sum(2)).numpy(), rtol=1e-12
    )
    # Batching does not change a control: image 5 alone gets the same curves (same permutation; round-off tolerance
    # because the reductions run on a different batch shape).
    alone = topk_metrics(logits[1:2], [5], ks, num_random_seeds=2, seed=1, mass_fractions=[0.9], error_thresholds=[0.1])
    for name, value in alone.items():
        np.testing.assert_allclose(value.numpy(), metrics[name][1:2].numpy(), rtol=1e-12, atol=1e-14, err_msg=name)


def test_trunk_removed_source_ranks_only_nonempty_subsets_against_brute_force() -> None:
    """The trunk-removed variant: the vector ranking without ∅, reconstructing h(full) − h(∅), scored against its top-1."""
    generator = torch.Generator().manual_seed(8)
    logits = torch.randn(3, M, 11, generator=generator)
    ks = power_of_two_ks(L)
    metrics = topk_metrics(logits, [0, 1, 2], ks, num_random_seeds=1, seed=0, mass_fractions=[0.9], error_thresholds=[])
    coefficients = mobius_transform(logits, dim=1, dtype=torch.float64)
    full = logits[:, -1].double()
    energies = coefficients.square().sum(2).numpy()
    for image in range(3):
        nonempty = sorted(
            range(1, M), key=lambda mask: (-energies[image, mask], mask)
        )  # brute-force ranking, ∅ excluded
        target = (full[image] - coefficients[image, 0]).numpy()
        for column, k in enumerate(ks):
            chosen = nonempty[: min(k, M - 1)]
            reconstruction = coefficients[image, chosen].numpy().sum(axis=0)
            agrees = float(np.argmax(reconstruction) == np.argmax(target))
            assert metrics[f"top1_agreement_{TRUNK_REMOVED}"][image, 0, column] == agrees
            captured = energies[image, chosen].sum() / energies[image, 1:].sum()
            np.testing.assert_allclose(
                metrics[f"captured_energy_{TRUNK_REMOVED}"][image, 0, column], captured, rtol=1e-12
            )
    # K = 2^L takes every S ≠ ∅: all of their energy.
    assert (metrics[f"captured_energy_{TRUNK_REMOVED}"][..., -1] == 1).all()
