"""Mask families (the low orders at either corner): the family walk against the naive engine and the dense tree on
every member, and the Möbius transform on a family against the dense butterfly and an explicit sum over subsets."""

from __future__ import annotations

from itertools import combinations
from math import comb

import pytest
import torch

from experiment_1.mobius.family import family_mobius, family_order_energies, subset_sizes
from experiment_1.mobius.transform import mobius_transform
from experiment_1.network.engines import (
    evaluate_family_tree,
    evaluate_mask_family,
    evaluate_masks_naive,
    evaluate_masks_tree,
)
from experiment_1.network.mask_family import MaskFamily
from experiment_1.network.registry import build_gated_stack
from roundoff import assert_close_to_roundoff

RESNET20 = "experiment_1.examples.cifar_resnet20:build_model"


def images(count: int, size: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(count, 3, size, size, generator=torch.Generator().manual_seed(seed))


@pytest.fixture(scope="module")
def resnet18() -> torch.nn.Module:
    return build_gated_stack("resnet18", "random", seed=0)


@pytest.fixture(scope="module")
def resnet20() -> torch.nn.Module:
    return build_gated_stack(RESNET20, "random", seed=0)


def popcount(value: int) -> int:
    return bin(value).count("1")


@pytest.mark.parametrize("base", ["off", "on"])
@pytest.mark.parametrize("order", [0, 1, 2, 3, 9])
def test_family_members_are_the_sets_within_k_gates_of_the_corner(order: int, base: str) -> None:
    family = MaskFamily(order, base)
    ids = family.mask_ids(9).tolist()
    expected = sorted(
        mask for mask in range(2**9) if (popcount(mask) if base == "off" else 9 - popcount(mask)) <= order
    )
    assert ids == expected and family.size(9) == len(expected) == sum(comb(9, j) for j in range(min(order, 9) + 1))


@pytest.mark.parametrize("base", ["off", "on"])
@pytest.mark.parametrize("order", [1, 2, 3])
def test_family_walk_equals_the_dense_tree_bit_for_bit_and_the_naive_engine(
    resnet18: torch.nn.Module, order: int, base: str
) -> None:
    x = images(2, 32)
    family = MaskFamily(order, base)
    # mask_chunk 1: every group is one prefix state (B images) in both walks, the same operations on the same batch
    # shapes, so bit for bit; mask_chunk 256 merges groups of other sizes (convolutions sum in another order): round-off
    for chunk in (1, 256):
        ids, logits = evaluate_family_tree(resnet18, x, family, mask_chunk=chunk)
        assert ids.tolist() == family.mask_ids(8).tolist() and logits.shape == (2, family.size(8), 1000)
        dense = evaluate_masks_tree(resnet18, x, mask_chunk=chunk)[:, ids]
        assert torch.equal(logits, dense) if chunk == 1 else assert_close_to_roundoff(logits, dense) is None
    assert_close_to_roundoff(logits, evaluate_masks_naive(resnet18, x, ids))


@pytest.mark.parametrize("base", ["off", "on"])
def test_family_walk_on_the_cifar_example_equals_the_naive_engine_on_every_member(
    resnet20: torch.nn.Module, base: str
) -> None:
    x = images(3, 32, seed=1)
    family = MaskFamily(2, base)
    ids, logits = evaluate_mask_family(resnet20, x, family, mask_chunk=8, residual_scale=0.7)
    assert_close_to_roundoff(logits, evaluate_masks_naive(resnet20, x, ids, residual_scale=0.7))
    naive_ids, naive = evaluate_mask_family(resnet20, x, family, engine="naive", residual_scale=0.7)
    assert torch.equal(naive_ids, ids)
    assert_close_to_roundoff(logits, naive)


def test_saturated_states_skip_blocks_whose_off_path_returns_their_input(resnet18: torch.nn.Module) -> None:
    # k = 1: layer1.1 (identity shortcut, ReLU after the ReLU of layer1.0) passes its input through when off, so only the
    # unsaturated prefix ∅ runs it; layer2.0 (a 1×1-conv downsample) still runs its shortcut on the saturated {0} and {1}
    calls: dict[int, list[int]] = {1: [], 2: []}
    handles = [
        resnet18.blocks[level].shortcut.register_forward_hook(
            lambda module, inputs, output, level=level: calls[level].append(inputs[0].shape[0])
        )
        for level in calls
    ]
    try:
        x = images(1, 32)
        ids, logits = evaluate_family_tree(resnet18, x, MaskFamily(1, "off"), mask_chunk=1)
    finally:
        for handle in handles:
            handle.remove()
    assert sum(calls[1]) == 1 and sum(calls[2]) == 3
    assert torch.equal(logits, evaluate_masks_tree(resnet18, x, mask_chunk=1)[:, ids])


@pytest.mark.parametrize("num_blocks", [8, 9])
@pytest.mark.parametrize("order", [1, 2, 3])
def test_family_mobius_equals_the_dense_butterfly_on_every_low_order_set(num_blocks: int, order: int) -> None:
    values = torch.randn(2, 2**num_blocks, 5, generator=torch.Generator().manual_seed(num_blocks), dtype=torch.float64)
    family = MaskFamily(order, "off")
    ids = family.mask_ids(num_blocks)
    sets, coefficients = family_mobius(values[:, ids], ids, num_blocks)
    assert torch.equal(sets, ids)
    assert torch.equal(coefficients, mobius_transform(values)[:, ids])  # the butterfly's own operations, in its order


@pytest.mark.parametrize("order", [1, 2, 3])
def test_dual_family_mobius_equals_an_explicit_sum_about_the_full_network(order: int) -> None:
    num_blocks = 7
    full = 2**num_blocks - 1
    values = torch.randn(2**num_blocks, 3, generator=torch.Generator().manual_seed(order), dtype=torch.float64)
    family = MaskFamily(order, "on")
    ids = family.mask_ids(num_blocks)
    sets, coefficients = family_mobius(values[ids], ids, num_blocks, base="on", dim=0)
    assert sets.tolist() == MaskFamily(order, "off").mask_ids(num_blocks).tolist()
    for position, removed in enumerate(sets.tolist()):
        members = [bit for bit in range(num_blocks) if removed >> bit & 1]
        expected = sum(
            (-1) ** (len(members) - size) * values[full ^ sum(1 << bit for bit in chosen)]
            for size in range(len(members) + 1)
            for chosen in combinations(members, size)
        )
        torch.testing.assert_close(
            coefficients[position], torch.as_tensor(expected, dtype=torch.float64), rtol=0, atol=1e-12
        )
    assert torch.equal(coefficients[0], values[full])  # Δ^on_∅ = h(full); order 1 is the single-block lesion
    torch.testing.assert_close(coefficients[1], values[full ^ 1] - values[full])


def test_family_order_energies_sum_each_order() -> None:
    num_blocks, order = 8, 3
    values = torch.randn(2, 2**num_blocks, 4, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    ids = MaskFamily(order).mask_ids(num_blocks)
    sets, coefficients = family_mobius(values[:, ids], ids, num_blocks)
    energies = family_order_energies(coefficients, sets, order)
    dense = mobius_transform(values).square().sum(dim=2)
    sizes = torch.tensor([popcount(mask) for mask in range(2**num_blocks)])
    expected = torch.stack([dense[:, sizes == k].sum(dim=1) for k in range(order + 1)], dim=1)
    torch.testing.assert_close(energies, expected, rtol=1e-12, atol=0)
    assert subset_sizes(torch.tensor([0, 1, 6, 2**49 + 7])).tolist() == [0, 1, 2, 4]


def test_family_mobius_refuses_a_set_that_is_not_closed() -> None:
    with pytest.raises(ValueError, match="not closed"):
        family_mobius(torch.zeros(2, 1), torch.tensor([0, 3]), 2, dim=0)


def planned_groups(num_blocks: int, order: int, chunk: int, split_on_gate: bool) -> list[tuple[int, int]]:
    """(block, prefix states) of every branch call a base-off family walk makes: after each block the saturated
    children leave (their tail runs no branch), the rest stay one group up to ``chunk`` states and are halved beyond
    — by size, or (``split_on_gate``, the dense tree's rule applied before saturation) into gate-off and gate-on."""
    calls: list[tuple[int, int]] = []

    def descend(counts: list[int], level: int) -> None:
        counts = [count for count in counts if count < order]
        if level == num_blocks or not counts:
            return
        calls.append((level, len(counts)))
        off, on = counts, [count + 1 for count in counts]
        if split_on_gate and 2 * len(counts) > chunk:
            descend(off, level + 1)
            descend(on, level + 1)
            return
        rest = [count for count in off + on if count < order]
        if len(rest) <= chunk:
            descend(rest, level + 1)
        else:
            half = (len(rest) + 1) // 2
            descend(rest[:half], level + 1)
            descend(rest[half:], level + 1)

    descend([0], 0)
    return calls


def test_the_family_walk_keeps_its_groups_near_the_chunk_as_states_saturate() -> None:
    # ResNet-34 (L = 16), k = 3, chunk 8: halving the unsaturated children by size, not into gate-off and gate-on
    # (whose gate-on half saturates first, so such groups shrink level by level), takes fewer, larger branch calls
    model = build_gated_stack("resnet34", "random", seed=0)
    x = images(1, 32)
    family = MaskFamily(3, "off")
    calls: list[tuple[int, int]] = []
    handles = [
        block.branch.register_forward_hook(
            lambda module, inputs, output, level=level: calls.append((level, inputs[0].shape[0]))
        )
        for level, block in enumerate(model.blocks)
    ]
    try:
        ids, logits = evaluate_family_tree(model, x, family, mask_chunk=8)
    finally:
        for handle in handles:
            handle.remove()
    assert calls == planned_groups(16, 3, 8, split_on_gate=False)
    assert sum(size for _, size in calls) == family.size(16) - 1 and max(size for _, size in calls) <= 8
    assert len(calls) < len(planned_groups(16, 3, 8, split_on_gate=True))
    assert_close_to_roundoff(logits, evaluate_masks_naive(model, x, ids))
