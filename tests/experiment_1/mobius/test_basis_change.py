"""The Möbius–Walsh identity ``Δ_S = (−2)^{|S|} Σ_{U ⊇ S} ĥ(U)`` and its inverse: against the two bases computed by
their definitions (double loops, no butterfly) on random set functions, on a network's exhaustive table, and on the
committed Experiment 2 arrays (``E_L = 4^L W_L`` on every image)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from sampling_tables import mobius_by_definition, popcount, subset_of, walsh_by_definition

from experiment_1.mobius import mobius_from_walsh, mobius_transform, order_energies, walsh_from_mobius, walsh_transform
from experiment_1.network import build_gated_stack, evaluate_all_masks

REPO = Path(__file__).resolve().parents[3]


def superset_identity_by_loops(walsh: np.ndarray) -> np.ndarray:
    """``(−2)^{|S|} Σ_{U ⊇ S} ĥ(U)`` for every ``S``, by the double loop over the table's rows."""
    size = len(walsh)
    return np.stack(
        [(-2.0) ** popcount(s) * sum(walsh[u] for u in range(size) if subset_of(s, u)) for s in range(size)]
    )


@pytest.mark.parametrize(("num_blocks", "num_classes"), [(1, 1), (2, 3), (3, 1), (5, 4), (7, 2)])
def test_each_basis_from_the_other_equals_its_definition(num_blocks: int, num_classes: int) -> None:
    table = np.random.default_rng(num_blocks).normal(size=(2**num_blocks, num_classes)) * 10.0
    mobius, walsh = mobius_by_definition(table), walsh_by_definition(table)
    scale = np.abs(table).max() * 2.0**num_blocks
    np.testing.assert_allclose(superset_identity_by_loops(walsh), mobius, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(mobius_from_walsh(torch.from_numpy(walsh)).numpy(), mobius, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(walsh_from_mobius(torch.from_numpy(mobius)).numpy(), walsh, rtol=0, atol=1e-12 * scale)


def test_one_block_by_hand() -> None:
    # h(∅) = 3, h({0}) = 1: Walsh (2, 1), Möbius (3, −2) = (2 + 1, (−2)·1)
    walsh = torch.tensor([[2.0], [1.0]], dtype=torch.float64)
    mobius = torch.tensor([[3.0], [-2.0]], dtype=torch.float64)
    assert mobius_from_walsh(walsh).flatten().tolist() == [3.0, -2.0]
    assert walsh_from_mobius(mobius).flatten().tolist() == [2.0, 1.0]


def test_the_maps_are_inverse_along_any_dim_and_leave_the_input_alone() -> None:
    generator = torch.Generator().manual_seed(3)
    values = torch.randn(2, 2**10, 3, dtype=torch.float64, generator=generator)
    before = values.clone()
    torch.testing.assert_close(walsh_from_mobius(mobius_from_walsh(values, dim=1), dim=1), values, rtol=0, atol=1e-9)
    torch.testing.assert_close(mobius_from_walsh(walsh_from_mobius(values, dim=1), dim=1), values, rtol=0, atol=1e-9)
    assert torch.equal(values, before)
    along_last = mobius_from_walsh(values.movedim(1, -1), dim=-1).movedim(-1, 1)
    torch.testing.assert_close(along_last, mobius_from_walsh(values, dim=1), rtol=0, atol=0)
    assert walsh_from_mobius(values.float(), dim=1, dtype=torch.float64).dtype == torch.float64


def test_both_maps_on_a_networks_exhaustive_table() -> None:
    model = build_gated_stack("experiment_1.examples.cifar_resnet20:build_model", "random", seed=0)
    images = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    logits = evaluate_all_masks(model, images).double()  # (2, 2^9, 10)
    mobius, walsh = mobius_transform(logits, dim=1), walsh_transform(logits, dim=1)
    assert mobius[:, 1:].abs().max() > 1e-3  # interactions above round-off: a non-trivial table
    scale = float(logits.abs().max()) * 2**9
    torch.testing.assert_close(mobius_from_walsh(walsh, dim=1), mobius, rtol=0, atol=1e-12 * scale)
    torch.testing.assert_close(walsh_from_mobius(mobius, dim=1), walsh, rtol=0, atol=1e-12 * scale)
    top = order_energies(mobius)[:, -1], order_energies(walsh)[:, -1]
    torch.testing.assert_close(top[0], 4.0**9 * top[1], rtol=1e-12, atol=0)


COMMITTED = [  # every committed Experiment 2 run with a Walsh spectrum (the λ sweeps' with an axis per λ)
    path
    for path in sorted(REPO.glob("experiment_2/results*/**/per_image.npz"))
    if "walsh_energy_vector" in np.load(path)
]


@pytest.mark.parametrize("path", COMMITTED, ids=lambda path: str(path.relative_to(REPO / "experiment_2")))
def test_the_committed_top_order_energies_obey_the_identity(path: Path) -> None:
    arrays = np.load(path)
    valid = arrays["valid"]
    for projection in ("vector", "scalar"):
        mobius, walsh = arrays[f"energy_{projection}"][valid], arrays[f"walsh_energy_{projection}"][valid]
        num_blocks = mobius.shape[-1] - 1  # orders last: (images, orders) or (images, λ, orders)
        np.testing.assert_allclose(mobius[..., -1], 4.0**num_blocks * walsh[..., -1], rtol=1e-12, atol=0)


def test_the_committed_tables_are_found() -> None:
    runs = {path.relative_to(REPO / "experiment_2").parts[0] for path in COMMITTED}
    assert {f"results_efficientnet_lite{n}_sample" for n in range(3)} < runs, runs
