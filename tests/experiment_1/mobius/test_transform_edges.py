"""The transform module's edges (experiment_1/mobius/transform.py) that the exactness tests do not reach: the smallest
mask dimension (L = 0), the device of the mask tables, the arithmetic dtype, and the in-place inverse (the same bits
as the out-of-place one, on the tensor it is given; a non-contiguous one refused)."""

from __future__ import annotations

import pytest
import torch

from experiment_1.mobius.transform import (
    all_masks,
    inverse_mobius_transform,
    inverse_mobius_transform_,
    mobius_transform,
    num_blocks_from_size,
    subset_orders,
    walsh_transform,
)


def test_the_mask_dimension_is_a_power_of_two_from_one() -> None:
    assert [num_blocks_from_size(size) for size in (1, 2, 4, 1024)] == [0, 1, 2, 10]  # 2^0 = 1: L = 0, no block
    for size in (0, 3, 5, 6, 12):
        with pytest.raises(ValueError, match=f"mask dimension has size {size}, which is not a power of two"):
            num_blocks_from_size(size)


def test_the_mask_tables_live_on_the_device_asked_for() -> None:
    assert all_masks(3, device="meta").device.type == "meta"
    assert subset_orders(3, device="meta").device.type == "meta"
    assert subset_orders(3).tolist() == [0, 1, 1, 2, 1, 2, 2, 3]


@pytest.mark.parametrize("function", [mobius_transform, inverse_mobius_transform, walsh_transform])
def test_dtype_sets_the_arithmetic_precision(function) -> None:
    values = torch.randn(2, 8, 3, generator=torch.Generator().manual_seed(0))
    out = function(values, dtype=torch.float64)
    assert out.dtype == torch.float64 and values.dtype == torch.float32
    torch.testing.assert_close(out, function(values.double()), rtol=0, atol=0)
    assert function(values).dtype == torch.float32


def test_the_in_place_inverse_gives_the_out_of_place_bits_on_its_own_tensor() -> None:
    coefficients = torch.randn(2, 16, 3, generator=torch.Generator().manual_seed(1))
    expected = inverse_mobius_transform(coefficients)
    work = coefficients.clone()
    returned = inverse_mobius_transform_(work)
    assert returned is work and torch.equal(work, expected)
    work = coefficients.transpose(0, 2).contiguous()  # (3, 16, 2): the mask dimension is dim 1, the default −2 too
    assert inverse_mobius_transform_(work, dim=1) is work
    assert torch.equal(work.transpose(0, 2), expected)


def test_the_in_place_inverse_refuses_a_non_contiguous_tensor() -> None:
    coefficients = torch.randn(3, 16, 2).transpose(0, 2)  # (2, 16, 3), not contiguous
    kept = coefficients.clone()
    with pytest.raises(ValueError, match="^an in-place transform needs a contiguous tensor$"):
        inverse_mobius_transform_(coefficients)
    assert torch.equal(coefficients, kept)


@pytest.mark.parametrize("function", [mobius_transform, inverse_mobius_transform, walsh_transform])
def test_several_leading_and_trailing_dimensions_are_batched(function) -> None:
    values = torch.randn(2, 3, 8, 4, 5, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    out = function(values, dim=2)
    for a in range(2):
        for b in range(3):
            for c in range(4):
                expected = function(values[a, b, :, c, :], dim=0)  # one leading and one trailing dimension
                assert torch.equal(out[a, b, :, c, :], expected)
