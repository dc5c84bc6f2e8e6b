"""Experiment 2's Walsh control: the per-image Walsh arrays against a brute-force ±1 transform of the same logits, the
cancellation ratio by hand, and the basis verdict at each of its outcomes (planted summaries)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from experiment_1.mobius import binomial_null
from experiment_1.report.verdicts import CANNOT_TELL, FAILS, HOLDS, UNRESOLVED
from experiment_2.spectrum.evaluation import spectrum_metrics
from experiment_2.spectrum.verdicts import basis_verdicts, walsh_roundoff_floor

NUM_BLOCKS = 4


def brute_force_energies(values: torch.Tensor) -> torch.Tensor:
    """W_k by the definition: ĥ(S) = 2^{−L} Σ_T (−1)^{|S∩T|} h(T), summed over |S| = k (and over classes)."""
    size = values.shape[1]
    signs = torch.tensor(
        [[(-1.0) ** bin(s & t).count("1") for t in range(size)] for s in range(size)], dtype=torch.float64
    )
    coefficients = torch.einsum("st,bt...->bs...", signs, values.double()) / size
    energy = coefficients.square().reshape(values.shape[0], size, -1).sum(-1)
    orders = torch.tensor([bin(s).count("1") for s in range(size)])
    return torch.stack([energy[:, orders == k].sum(1) for k in range(NUM_BLOCKS + 1)], dim=1)


def test_walsh_arrays_and_the_cancellation_ratio_by_hand() -> None:
    logits = torch.randn(3, 2**NUM_BLOCKS, 7, generator=torch.Generator().manual_seed(0))
    metrics = spectrum_metrics(logits)
    torch.testing.assert_close(metrics["walsh_energy_vector"], brute_force_energies(logits), rtol=1e-12, atol=0)
    predicted = logits[:, -1].argmax(-1)
    scalar = logits[torch.arange(3), :, predicted]
    torch.testing.assert_close(metrics["walsh_energy_scalar"], brute_force_energies(scalar), rtol=1e-12, atol=0)
    variance = logits.double().var(1, unbiased=False).sum(-1)  # Parseval: Σ_{k≥1} W_k = Var h over masks
    torch.testing.assert_close(metrics["walsh_energy_vector"][:, 1:].sum(1), variance, rtol=1e-12, atol=0)
    moved = (logits[:, -1].double() - logits[:, 0].double()).square().sum(-1)
    torch.testing.assert_close(
        metrics["cancellation_ratio_vector"], metrics["energy_vector"][:, 1:].sum(1) / moved, rtol=1e-12, atol=0
    )
    walsh_spectrum = metrics["walsh_energy_vector"][:, 1:] / metrics["walsh_energy_vector"][:, 1:].sum(1, keepdim=True)
    torch.testing.assert_close(
        metrics["walsh_kappa_vector"], (walsh_spectrum * torch.arange(1, NUM_BLOCKS + 1)).sum(1), rtol=1e-12, atol=0
    )


def test_the_walsh_floor_is_the_rounding_variance_of_a_mean_of_2_to_the_l_values() -> None:
    floor = walsh_roundoff_floor(np.array([2.0, 4.0]), NUM_BLOCKS)  # mean variance 3
    assert floor.tolist() == pytest.approx([3 * c / 16 for c in (1, 4, 6, 4, 1)])


def stat(low: float, high: float) -> dict[str, float]:
    return {"mean": (low + high) / 2, "ci_low": low, "ci_high": high}


def planted(
    walsh_kappa: tuple[float, float], walsh_c_le3: tuple[float, float], unresolved: list[int] | None = None
) -> dict:
    null = binomial_null(NUM_BLOCKS)
    block = {
        "kappa": stat(*walsh_kappa),
        "c_le3": stat(*walsh_c_le3),
        "peak_order": stat(1.0, 1.2),
        "mean_spectrum_peak_order": 1,
    }
    floor = {"unresolved_orders": unresolved or [], "floor_ratio": [1e9] * (NUM_BLOCKS + 1)}
    return {
        "binomial_null": null,
        "walsh": {
            "projections": {"vector": block, "scalar": block},
            "roundoff": {"vector": floor, "scalar": floor},
            "cancellation_ratio": {"vector": stat(900.0, 1100.0), "scalar": stat(900.0, 1100.0)},
        },
    }


HIGHER = ((3.0, 3.5), (0.1, 0.2))  # κ above the null's (L/2 · 16/15 ≈ 2.13), C≤3 below its 14/15: higher orders, holds
LOWER = ((1.1, 1.3), (0.98, 0.99))  # the reverse: fails
UNDECIDED = ((1.9, 2.5), (0.9, 0.95))  # κ's CI covers the null's: cannot tell


@pytest.mark.parametrize(
    ("mobius", "walsh", "unresolved", "expected"),
    [
        (HOLDS, HIGHER, None, HOLDS),
        (FAILS, LOWER, None, HOLDS),
        (HOLDS, LOWER, None, FAILS),
        (FAILS, HIGHER, None, FAILS),
        (CANNOT_TELL, HIGHER, None, CANNOT_TELL),
        (HOLDS, UNDECIDED, None, CANNOT_TELL),
        (UNRESOLVED, HIGHER, None, UNRESOLVED),
        (HOLDS, HIGHER, [4], UNRESOLVED),
    ],
)
def test_the_basis_verdict_at_each_outcome(
    mobius: str, walsh: tuple, unresolved: list[int] | None, expected: str
) -> None:
    decided = [{"id": f"shape.{projection}", "decision": mobius} for projection in ("vector", "scalar")]
    block = {entry["id"]: entry for entry in basis_verdicts(planted(*walsh, unresolved), decided)}
    assert block["basis.vector"]["decision"] == expected
    assert block["basis.vector"]["effect"]["value"] == pytest.approx(1000.0)


def test_the_cancellation_ratio_is_undefined_where_the_network_does_not_move() -> None:
    logits = torch.randn(2, 2**NUM_BLOCKS, 3, generator=torch.Generator().manual_seed(2))
    logits[1, -1] = logits[1, 0]  # image 1: h(full) = h(∅) although the masks between differ
    ratio = spectrum_metrics(logits)["cancellation_ratio_vector"]
    assert torch.isfinite(ratio[0]) and torch.isnan(ratio[1])
    from experiment_2.spectrum.evaluation import cancellation_ratio

    arrays = {"cancellation_ratio_vector": ratio.numpy()}
    block = cancellation_ratio(arrays, "vector", np.array([True, True]), seed=0)
    assert block["num_undefined"] == 1 and block["mean"] == pytest.approx(float(ratio[0]))
    assert cancellation_ratio(arrays, "vector", np.array([False, True]), seed=0) is None
