"""The order sums run no float atomics (issue #62): the core's spectrum, the family pass's order energies and step 11's
per-class order energies add each order's sets left to right by a row scan (``spectrum.layout_sums``), so CUDA gives
the same bits run after run and whatever the batch size. On the CPU they equal the ``index_add_`` they replace bit for
bit, and no project module sums with ``index_add_``/``scatter_add_``/``scatter_reduce_``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from experiment_1.mobius.family import family_mobius, family_order_energies, family_order_sums, subset_sizes
from experiment_1.mobius.spectrum import layout_sums
from experiment_1.network import MaskFamily

REPO = Path(__file__).resolve().parents[3]
ATOMIC_SUMS = re.compile(r"\.(index_add_?|scatter_add_?|scatter_reduce_?)\(|accumulate=True")


def index_add_reference(values: torch.Tensor, set_ids: torch.Tensor, max_order: int) -> torch.Tensor:
    """The order sums as they were computed before: ``index_add_`` of float64 values into their orders."""
    values = values.to(torch.float64)
    out = values.new_zeros(values.shape[0], max_order + 1, *values.shape[2:])
    return out.index_add_(1, subset_sizes(set_ids), values)


@pytest.mark.parametrize("base", ["off", "on"])
@pytest.mark.parametrize("shape", [(3,), (3, 5)])
def test_family_order_sums_equal_the_index_add_they_replace_bit_for_bit(base: str, shape: tuple[int, ...]) -> None:
    num_blocks, order = 9, 3
    family = MaskFamily(order, base)
    ids = family.mask_ids(num_blocks)
    generator = torch.Generator().manual_seed(11)
    logits = torch.randn(shape[0], len(ids), *shape[1:], generator=generator, dtype=torch.float64) * 1e3
    sets, coefficients = family_mobius(logits, ids, num_blocks, base=base, dim=1)
    energy = coefficients.square()
    assert torch.equal(family_order_sums(energy, sets, order), index_add_reference(energy, sets, order))
    summed = energy.sum(dim=2) if energy.dim() == 3 else energy
    assert torch.equal(family_order_energies(coefficients, sets, order), index_add_reference(summed, sets, order))
    for row in range(shape[0]):  # an image alone gives the bits it gives in the batch
        assert torch.equal(
            family_order_sums(energy[row : row + 1], sets, order)[0], family_order_sums(energy, sets, order)[row]
        )


def test_step_11s_per_class_order_energies_equal_the_index_add_they_replace() -> None:
    from experiment_2.past_exhaustive.validation.tables import family_order_energies as per_class_energies

    num_blocks, family = 8, MaskFamily(2, "on")
    ids = family.mask_ids(num_blocks)
    logits = torch.randn(2, len(ids), 6, generator=torch.Generator().manual_seed(5))
    got = per_class_energies(logits, family, num_blocks, torch.float64)["order_energy_per_class"]
    sets, coefficients = family_mobius(logits, ids, num_blocks, base="on", dim=1, dtype=torch.float64)
    assert got.shape == (2, 3, 6) and torch.equal(got, index_add_reference(coefficients.square(), sets, 2))


def test_layout_sums_pads_with_zero_and_adds_left_to_right_on_one_row() -> None:
    values = torch.tensor([[1e16, 1.0, -1e16, 3.0]], dtype=torch.float64)  # left to right: (1e16 + 1) − 1e16 = 0
    layout = torch.tensor([[0, 1, 2], [3, 4, 4], [4, 4, 4]])  # 4 = M: padding
    assert layout_sums(values, layout).tolist() == [[0.0, 3.0, 0.0]]
    assert layout_sums(values[:, :1], torch.tensor([[0]])).tolist() == [[1e16]]  # a single row and column


def test_a_set_above_the_order_is_refused() -> None:
    with pytest.raises(ValueError, match="a set of 2 blocks among sets summed up to order 1"):
        family_order_sums(torch.ones(1, 4), torch.arange(4), 1)


def test_no_project_module_sums_with_float_atomics() -> None:
    sources = [
        path
        for folder in ("experiment_1", "experiment_2", "experiment_3", "experiment_4", "experiment_5", "paper")
        for path in sorted((REPO / folder).rglob("*.py"))
    ]
    assert len(sources) > 50
    offenders = [
        f"{path.relative_to(REPO)}:{number}"
        for path in sources
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if ATOMIC_SUMS.search(line.split("#", 1)[0])
    ]
    assert offenders == []
