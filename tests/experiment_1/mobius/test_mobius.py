"""The butterfly Möbius transform against explicit subset sums, and the mask convention."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from experiment_1.mobius.transform import (
    all_masks,
    empty_mask_index,
    full_mask_index,
    inverse_mobius_transform,
    mobius_transform,
    singleton_mask_indices,
    subset_orders,
)


def brute_force_subset_sums(values: torch.Tensor, signed: bool) -> torch.Tensor:
    """Σ_{T ⊆ S} (±1) h(T) by explicit enumeration along dim 1: the Möbius transform with signs
    (−1)^{|S|−|T|} when ``signed``, else the zeta transform (all +1)."""
    size = values.shape[1]
    out = torch.zeros_like(values)
    for s in range(size):
        for t in range(size):
            if t & s == t:
                sign = (-1) ** (bin(s).count("1") - bin(t).count("1")) if signed else 1
                out[:, s] += sign * values[:, t]
    return out


@pytest.mark.parametrize("num_blocks", [1, 2, 3, 5, 8, 10])
def test_butterfly_matches_explicit_subset_sums(num_blocks: int) -> None:
    generator = torch.Generator().manual_seed(num_blocks)
    trailing = 3 if num_blocks <= 8 else 1
    values = torch.randn(2, 2**num_blocks, trailing, dtype=torch.float64, generator=generator)
    torch.testing.assert_close(
        mobius_transform(values, dim=1), brute_force_subset_sums(values, signed=True), rtol=0, atol=1e-9
    )
    torch.testing.assert_close(
        inverse_mobius_transform(values, dim=1), brute_force_subset_sums(values, signed=False), rtol=0, atol=1e-9
    )


def test_butterfly_leaves_input_untouched_and_handles_any_dim() -> None:
    values = torch.randn(3, 4, 2**4, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    copy = values.clone()
    along_dim2 = mobius_transform(values, dim=2)
    assert torch.equal(values, copy)
    moved = mobius_transform(values.movedim(2, -1), dim=-1).movedim(-1, 2)
    torch.testing.assert_close(along_dim2, moved, rtol=0, atol=1e-12)


def test_round_trip_at_sixteen_blocks_float32_and_float64() -> None:
    generator = torch.Generator().manual_seed(0)
    values = torch.randn(2, 2**16, 3, dtype=torch.float64, generator=generator)
    torch.testing.assert_close(
        inverse_mobius_transform(mobius_transform(values, dim=1), dim=1), values, rtol=0, atol=1e-9
    )
    single = values.float()
    rebuilt = inverse_mobius_transform(mobius_transform(single, dim=1), dim=1)
    assert rebuilt.dtype == torch.float32
    assert (rebuilt - single).abs().max() < 1e-2  # 2^16-term sums of O(1) values in float32


def test_known_set_function_has_known_coefficients() -> None:
    # h(S) = |S|² over L = 3 blocks: Δ_∅ = 0, Δ_{i} = 1, Δ_{ij} = 2, Δ_{ijk} = 0.
    orders = subset_orders(3).double()
    coefficients = mobius_transform((orders**2)[None, :, None], dim=1).squeeze()
    expected = torch.tensor(
        [0.0 if k in (0, 3) else (1.0 if k == 1 else 2.0) for k in orders.tolist()], dtype=torch.float64
    )
    assert torch.equal(coefficients, expected)


def test_dtype_argument_sets_precision() -> None:
    values = torch.randn(1, 8, 2, generator=torch.Generator().manual_seed(2))
    assert mobius_transform(values, dim=1, dtype=torch.float64).dtype == torch.float64


def test_mask_convention() -> None:
    masks = all_masks(3)
    assert masks.shape == (8, 3)
    assert masks[5].tolist() == [True, False, True]  # 5 = 0b101 → blocks 0 and 2
    assert subset_orders(3).tolist() == [0, 1, 1, 2, 1, 2, 2, 3]
    assert full_mask_index(3) == 7 and empty_mask_index(3) == 0
    assert singleton_mask_indices(3) == [1, 2, 4]
    for s, row in enumerate(masks.tolist()):
        assert s == sum(int(bit) << block for block, bit in enumerate(row))


def test_non_power_of_two_is_rejected() -> None:
    with pytest.raises(ValueError, match="power of two"):
        mobius_transform(torch.zeros(1, 6, 1), dim=1)


def test_oracle_on_a_hand_worked_example() -> None:
    # sanity of the oracle itself on L = 2, written out by hand
    h = torch.tensor([[[1.0], [3.0], [5.0], [11.0]]], dtype=torch.float64)
    expected = torch.tensor([[[1.0], [2.0], [4.0], [11.0 - 3.0 - 5.0 + 1.0]]], dtype=torch.float64)
    assert torch.equal(brute_force_subset_sums(h, signed=True), expected)


def direct_subset_sum(values: torch.Tensor, subset: list[int], signed: bool) -> torch.Tensor:
    """Σ_{T ⊆ S} (±1) h(T) for one S (block indices ``subset``), over the 2^|S| subsets T of S, straight from the
    definition: no butterfly, no other coefficient involved."""
    count = len(subset)
    choose = (torch.arange(2**count)[:, None] >> torch.arange(count)[None, :]) & 1  # row t: which members of S are in T
    indices = (choose * torch.tensor([1 << block for block in subset], dtype=torch.int64)).sum(dim=1)
    signs = (-1.0) ** (count - choose.sum(dim=1)).double() if signed else torch.ones(2**count, dtype=torch.float64)
    return (signs[:, None] * values[indices]).sum(dim=0)


def sampled_subsets(num_blocks: int, seed: int) -> list[list[int]]:
    """Two random subsets of every order 0 … L (so every high bit appears), plus each single high block."""
    rng = np.random.default_rng(seed)
    subsets = [
        sorted(rng.choice(num_blocks, order, replace=False).tolist())
        for order in range(num_blocks + 1)
        for _ in range(2)
    ]
    return subsets + [[block] for block in range(10, num_blocks)]


@pytest.mark.parametrize("num_blocks", [14, 16])
def test_butterfly_at_fourteen_and_sixteen_blocks_matches_the_definition_on_sampled_coefficients(
    num_blocks: int,
) -> None:
    values = torch.randn(2**num_blocks, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(num_blocks))
    coefficients, zeta = mobius_transform(values, dim=0), inverse_mobius_transform(values, dim=0)
    for subset in sampled_subsets(num_blocks, seed=num_blocks):
        s = sum(1 << block for block in subset)
        torch.testing.assert_close(
            coefficients[s],
            direct_subset_sum(values, subset, signed=True),
            rtol=0,
            atol=1e-9,
            msg=f"Δ_S for S = {subset}",
        )
        torch.testing.assert_close(
            zeta[s], direct_subset_sum(values, subset, signed=False), rtol=0, atol=1e-9, msg=f"ζ_S for S = {subset}"
        )


@pytest.mark.parametrize("num_blocks", [14, 16])
def test_a_known_set_function_at_fourteen_and_sixteen_blocks_has_exact_coefficients_on_every_mask(
    num_blocks: int,
) -> None:
    # h(S) = |S|² + 3·[L−1 ∈ S]: Δ_{i} = 1 (+3 for the top block), Δ_{ij} = 2, every other coefficient 0, exactly
    orders = subset_orders(num_blocks).double()
    top = ((torch.arange(2**num_blocks) >> (num_blocks - 1)) & 1).double()
    for dtype in (torch.float64, torch.float32):
        coefficients = mobius_transform((orders**2 + 3 * top).to(dtype)[:, None], dim=0).squeeze(1)
        expected = torch.where(orders == 1, 1.0, torch.where(orders == 2, 2.0, 0.0)).to(dtype)
        expected[1 << (num_blocks - 1)] += 3
        assert torch.equal(coefficients, expected), dtype


def test_the_direct_oracle_agrees_with_the_explicit_double_loop() -> None:
    values = torch.randn(2**5, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    explicit = brute_force_subset_sums(values[None], signed=True)[0]
    for s in range(2**5):
        subset = [block for block in range(5) if s >> block & 1]
        torch.testing.assert_close(direct_subset_sum(values, subset, signed=True), explicit[s], rtol=0, atol=1e-12)
