"""The Walsh (±1 Fourier) transform against the definition ĥ(S) = 2^{−L} Σ_T (−1)^{|S ∩ T|} h(T), summed by brute force."""

from __future__ import annotations

import pytest
import torch

from experiment_1.mobius.transform import mobius_transform, walsh_transform


def brute_force_walsh(values: torch.Tensor) -> torch.Tensor:
    size = values.shape[1]
    signs = torch.tensor(
        [[(-1.0) ** bin(subset & other).count("1") for other in range(size)] for subset in range(size)],
        dtype=torch.float64,
    )
    return torch.einsum("st,btc->bsc", signs, values.double()) / size


@pytest.mark.parametrize("num_blocks", [1, 2, 5])
def test_walsh_equals_the_brute_force_sum(num_blocks: int) -> None:
    values = torch.randn(3, 2**num_blocks, 4, generator=torch.Generator().manual_seed(num_blocks), dtype=torch.float64)
    torch.testing.assert_close(walsh_transform(values, dim=1), brute_force_walsh(values), rtol=0, atol=1e-12)


def test_one_block_is_the_mean_and_the_half_difference() -> None:
    values = torch.tensor([[[3.0], [1.0]]], dtype=torch.float64)  # h(∅) = 3, h({0}) = 1
    assert walsh_transform(values, dim=1).flatten().tolist() == [2.0, 1.0]


def test_parseval_and_the_variance() -> None:
    values = torch.randn(2, 2**6, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    coefficients = walsh_transform(values, dim=1)
    torch.testing.assert_close(coefficients.square().sum(1), values.square().mean(1), rtol=1e-12, atol=0)
    torch.testing.assert_close(coefficients[:, 1:].square().sum(1), values.var(1, unbiased=False), rtol=1e-12, atol=0)


def test_an_additive_game_has_no_walsh_or_mobius_energy_above_degree_one() -> None:
    num_blocks = 5
    bits = ((torch.arange(2**num_blocks)[:, None] >> torch.arange(num_blocks)) & 1).double()
    values = (bits @ torch.randn(num_blocks, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64))[None]
    orders = bits.sum(1)
    for coefficients in (walsh_transform(values, dim=1), mobius_transform(values, dim=1)):
        assert coefficients[0, orders > 1].abs().max() < 1e-12
        assert coefficients[0, orders == 1].abs().min() > 1e-3


def test_the_input_is_left_alone_and_the_dtype_is_the_asked_one() -> None:
    values = torch.randn(1, 8, 2)
    before = values.clone()
    assert walsh_transform(values, dim=1, dtype=torch.float64).dtype == torch.float64
    assert torch.equal(values, before)
