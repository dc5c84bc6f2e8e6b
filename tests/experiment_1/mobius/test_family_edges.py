"""The family transform's edges (experiment_1/mobius/family.py) that the exactness tests do not reach: its one-line
refusals, the arithmetic dtype, and a family in which a gate never varies (no member holds that bit)."""

from __future__ import annotations

import pytest
import torch

from experiment_1.mobius.family import family_mobius, family_order_energies, subset_sizes
from experiment_1.mobius.transform import mobius_transform


def test_an_unknown_base_and_a_length_mismatch_are_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"^unknown family base 'middle'; choose one of off, on$"):
        family_mobius(torch.zeros(2, 1), torch.tensor([0, 1]), 1, base="middle", dim=0)
    with pytest.raises(ValueError, match=r"^3 mask ids for 2 values along dim 0$"):
        family_mobius(torch.zeros(2, 1), torch.tensor([0, 1, 2]), 2, dim=0)


def test_dtype_sets_the_arithmetic_precision() -> None:
    values = torch.randn(3, 4, 2, generator=torch.Generator().manual_seed(0))
    sets, out = family_mobius(values, torch.arange(4), 2, dtype=torch.float64)
    assert out.dtype == torch.float64 and values.dtype == torch.float32
    assert torch.equal(out, mobius_transform(values.double()))
    assert family_mobius(values, torch.arange(4), 2)[1].dtype == torch.float32


@pytest.mark.parametrize("base", ["off", "on"])
def test_a_gate_no_member_changes_is_skipped_and_the_later_gates_still_transform(base: str) -> None:
    """L = 3 with gate 0 never moved from the corner: the sets {}, {1}, {2}, {1, 2} (ids 0, 2, 4, 6)."""
    dense = torch.randn(8, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    ids = torch.tensor([0, 2, 4, 6])
    if base == "off":
        sets, out = family_mobius(dense[ids], ids, 3, dim=0)
        expected = mobius_transform(dense[ids], dim=0)  # gate 0 absent: the 2-gate transform of gates 1, 2
    else:  # the masks 1, 3, 5, 7: gates 1, 2 moved off the full network; the sets A of gates off are 0, 2, 4, 6
        masks = torch.tensor([1, 3, 5, 7])
        sets, out = family_mobius(dense[masks], masks, 3, base="on", dim=0)
        expected = mobius_transform(dense[7 ^ ids], dim=0)  # of g(A) = h(full − A), in the order of A
    assert sets.tolist() == [0, 2, 4, 6]
    torch.testing.assert_close(out, expected, rtol=0, atol=1e-12)


def test_subset_sizes_leaves_its_input() -> None:
    ids = torch.tensor([0, 1, 6, 7, 2**40 + 3])
    kept = ids.clone()
    assert subset_sizes(ids).tolist() == [0, 1, 2, 3, 3] and torch.equal(ids, kept)


def test_mask_ids_of_any_numeric_dtype_are_read_as_integers() -> None:
    """Ids read back as floats (a JSON or npz round trip) or as int32 give the int64 result."""
    values = torch.randn(4, 2, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    sets, expected = family_mobius(values, torch.arange(4), 2, dim=0)
    for ids in (torch.arange(4, dtype=torch.float64), torch.arange(4, dtype=torch.int32), [0.0, 1.0, 2.0, 3.0]):
        got_sets, got = family_mobius(values, ids, 2, dim=0)
        assert got_sets.dtype == torch.long and torch.equal(got_sets, sets) and torch.equal(got, expected)


def test_order_energies_are_float64_from_float32_coefficients_on_the_coefficients_device() -> None:
    coefficients = torch.randn(2, 4, 3, generator=torch.Generator().manual_seed(3))  # float32, (B, M, C)
    energies = family_order_energies(coefficients, torch.arange(4), 2)
    expected = family_order_energies(coefficients.double(), torch.arange(4), 2)
    assert energies.dtype == torch.float64 and torch.equal(energies, expected)
    squares = coefficients.double().square().sum(dim=2)
    assert torch.equal(expected, torch.stack([squares[:, 0], squares[:, 1] + squares[:, 2], squares[:, 3]], dim=1))
    on_meta = family_order_energies(coefficients.to("meta"), torch.arange(4), 2)  # the device of the coefficients
    assert on_meta.device.type == "meta" and on_meta.shape == (2, 3)


def test_a_family_not_closed_is_refused_with_its_line() -> None:
    with pytest.raises(ValueError) as raised:
        family_mobius(torch.zeros(2, 1), torch.tensor([0, 3]), 2, dim=0)
    assert str(raised.value) == (
        "the mask family is not closed under removing a gate from its corner; the Möbius transform on it would not "
        "be exact"
    )


def test_order_energies_of_a_scalar_projection_by_hand() -> None:
    """``(B, M)`` coefficients (one class, no class axis): each set's square added to its order, float64."""
    coefficients = torch.tensor([[1.0, 2.0, -3.0, 0.5], [0.0, -1.0, 1.0, 2.0]])  # sets ∅, {0}, {1}, {0, 1}
    energies = family_order_energies(coefficients, torch.arange(4), 2)
    assert energies.dtype == torch.float64
    assert energies.tolist() == [[1.0, 4.0 + 9.0, 0.25], [0.0, 1.0 + 1.0, 4.0]]
