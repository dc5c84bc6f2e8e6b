"""experiment_1.mobius.sparsity: rankings, cumulative reconstruction, participation ratio and thresholds against explicit loops."""

from __future__ import annotations

import torch

from experiment_1.mobius.sparsity import (
    cumulative_reconstruction,
    participation_ratio,
    power_of_two_ks,
    rank_subsets,
    smallest_k_reaching_mass,
    subset_magnitudes,
)


def _coefficients(batch: int = 3, num_blocks: int = 5, classes: int = 7, seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    scales = torch.rand(1, 2**num_blocks, 1, generator=generator, dtype=torch.float64) ** 3
    return torch.randn(batch, 2**num_blocks, classes, generator=generator, dtype=torch.float64) * scales


def test_magnitudes_and_ranking_match_a_loop() -> None:
    coefficients = _coefficients()
    full = coefficients.sum(dim=1)
    vector = subset_magnitudes(coefficients, full, "vector")
    scalar = subset_magnitudes(coefficients, full, "scalar")
    for image in range(coefficients.shape[0]):
        predicted = int(full[image].argmax())
        for mask in range(coefficients.shape[1]):
            assert abs(float(vector[image, mask]) - float(torch.sqrt((coefficients[image, mask] ** 2).sum()))) < 1e-12
            assert float(scalar[image, mask]) == abs(float(coefficients[image, mask, predicted]))
        ranked = rank_subsets(vector)[image].tolist()
        expected = sorted(range(coefficients.shape[1]), key=lambda mask: (-float(vector[image, mask]), mask))
        assert ranked == expected


def test_ties_go_to_the_lower_mask_index() -> None:
    magnitudes = torch.tensor([[1.0, 3.0, 1.0, 3.0, 0.0, 1.0, 0.0, 2.0]])
    assert rank_subsets(magnitudes).tolist() == [[1, 3, 7, 0, 2, 5, 4, 6]]


def test_participation_ratio() -> None:
    energies = torch.tensor(
        [[1.0, 0.0, 0.0, 0.0], [2.0, 2.0, 2.0, 2.0], [3.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]], dtype=torch.float64
    )
    ratio = participation_ratio(energies)
    assert ratio[:3].tolist() == [1.0, 4.0, 16.0 / 10.0]
    assert torch.isnan(ratio[3])


def test_cumulative_reconstruction_matches_explicit_subset_sums() -> None:
    coefficients = _coefficients()
    full = coefficients.sum(dim=1)
    size = coefficients.shape[1]
    permutation = torch.stack(
        [torch.randperm(size, generator=torch.Generator().manual_seed(image)) for image in range(3)]
    )
    ks = power_of_two_ks(5)
    taus = [0.5, 0.1, 1e-9]
    result = cumulative_reconstruction(coefficients, permutation, full, ks, error_thresholds=taus, chunk=7)
    energies = (coefficients**2).sum(dim=2)
    for image in range(3):
        order = permutation[image].tolist()
        errors = []
        for k in range(1, size + 1):
            estimate = sum(coefficients[image, mask] for mask in order[:k])
            errors.append(float((estimate - full[image]).norm() / full[image].norm()))
            if k in ks:
                column = ks.index(k)
                assert abs(float(result["relative_error"][image, column]) - errors[-1]) < 1e-12
                assert float(result["top1_agreement"][image, column]) == float(
                    int(estimate.argmax()) == int(full[image].argmax())
                )
                captured = float(energies[image, order[:k]].sum() / energies[image].sum())
                assert abs(float(result["captured_energy"][image, column]) - captured) < 1e-12
        for column, tau in enumerate(taus):
            expected = next(k for k, error in enumerate(errors, start=1) if error <= tau)
            assert int(result["k_at_error"][image, column]) == expected
    # K = M rebuilds h(full) for any permutation
    assert float(result["relative_error"][:, -1].max()) < 1e-12
    assert result["top1_agreement"][:, -1].tolist() == [1.0, 1.0, 1.0]


def test_chunking_does_not_change_the_result() -> None:
    coefficients = _coefficients(num_blocks=6)
    full = coefficients.sum(dim=1)
    permutation = rank_subsets(subset_magnitudes(coefficients, full, "vector"))
    whole = cumulative_reconstruction(coefficients, permutation, full, [1, 3, 64], error_thresholds=[0.2], chunk=64)
    pieces = cumulative_reconstruction(coefficients, permutation, full, [1, 3, 64], error_thresholds=[0.2], chunk=5)
    for name in whole:
        # different chunking sums the same terms in a different association: round-off only
        assert torch.allclose(whole[name].double(), pieces[name].double(), rtol=1e-12, atol=1e-12), name


def test_smallest_k_reaching_mass() -> None:
    energies = torch.tensor([[4.0, 3.0, 2.0, 1.0], [0.0, 0.0, 0.0, 10.0]])
    permutation = torch.tensor([[0, 1, 2, 3], [0, 1, 2, 3]])
    result = smallest_k_reaching_mass(energies, permutation, [0.4, 0.7, 0.9, 1.0])
    assert result.tolist() == [[1, 2, 3, 4], [4, 4, 4, 4]]
