"""Experiment 2's spectrum statistics and the λ^k fit, on set functions with known Möbius coefficients."""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np
import pytest
import torch

from experiment_1.errors import PipelineError
from experiment_1.mobius.spectrum import (
    binomial_null,
    interaction_spectrum,
    order_energies,
    peak_order,
    scalar_projection,
    spectrum_statistics,
)
from experiment_1.mobius.transform import full_mask_index, inverse_mobius_transform, mobius_transform, subset_orders
from experiment_2.lambda_sweep.summary import kappa_monotonicity
from experiment_2.lambda_sweep.sweep import choose_fit_lambdas, sweep_lambdas
from experiment_2.scaling import fit_power_law, log_log_slope, power_law_summary
from experiment_2.spectrum.evaluation import kappa_distribution, projection_summary, spectrum_metrics
from experiment_2.spectrum.verdicts import roundoff_floor


def set_function_from(coefficients: torch.Tensor) -> torch.Tensor:
    """h(S) = Σ_{T⊆S} Δ_T from coefficients (B, 2^L, C) (float64)."""
    return inverse_mobius_transform(coefficients, dim=1)


def brute_force_energies(values: torch.Tensor, num_blocks: int) -> np.ndarray:
    """E_k by explicit loops: Δ_S = Σ_{T⊆S} (−1)^{|S|−|T|} h(T), energy summed over classes."""
    values = values.double().numpy()
    energies = np.zeros((values.shape[0], num_blocks + 1))
    for order in range(num_blocks + 1):
        for subset in combinations(range(num_blocks), order):
            delta = np.zeros((values.shape[0],) + values.shape[2:])
            for size in range(order + 1):
                for inner in combinations(subset, size):
                    delta = delta + (-1) ** (order - size) * values[:, sum(1 << block for block in inner)]
            energies[:, order] += (delta**2).reshape(values.shape[0], -1).sum(axis=1)
    return energies


def test_order_energies_match_explicit_subset_loops() -> None:
    generator = torch.Generator().manual_seed(1)
    num_blocks = 4
    values = torch.randn(3, 2**num_blocks, 5, generator=generator, dtype=torch.float64)
    coefficients = mobius_transform(values, dim=1)
    expected_vector = brute_force_energies(values, num_blocks)
    np.testing.assert_allclose(order_energies(coefficients).numpy(), expected_vector, rtol=1e-12)
    predicted = values[:, full_mask_index(num_blocks)].argmax(dim=-1)
    scalar_values = values[torch.arange(3), :, predicted]  # (B, 2^L): h(S)[c]
    expected_scalar = brute_force_energies(scalar_values, num_blocks)
    scalar = scalar_projection(coefficients, values[:, full_mask_index(num_blocks)])
    np.testing.assert_allclose(order_energies(scalar).numpy(), expected_scalar, rtol=1e-12)


def test_scalar_projection_takes_the_predicted_class_of_every_coefficient() -> None:
    coefficients = torch.arange(2 * 4 * 3, dtype=torch.float64).view(2, 4, 3)
    full = torch.tensor([[0.0, 5.0, 1.0], [9.0, 0.0, 1.0]])
    np.testing.assert_array_equal(
        scalar_projection(coefficients, full).numpy(), coefficients[[0, 1], :, [1, 0]].numpy()
    )


@pytest.mark.parametrize("projection", ["vector", "scalar"])
def test_only_order_three_gives_kappa_three(projection: str) -> None:
    num_blocks = 6
    generator = torch.Generator().manual_seed(2)
    coefficients = torch.randn(4, 2**num_blocks, 7, generator=generator, dtype=torch.float64)
    coefficients[:, subset_orders(num_blocks) != 3] = 0
    values = set_function_from(coefficients)
    recovered = mobius_transform(values, dim=1)
    if projection == "scalar":
        recovered = scalar_projection(recovered, values[:, full_mask_index(num_blocks)])
    stats = spectrum_statistics(order_energies(recovered))
    expected_spectrum = np.zeros((4, num_blocks))
    expected_spectrum[:, 2] = 1.0
    np.testing.assert_allclose(stats["spectrum"].numpy(), expected_spectrum, atol=1e-12)
    np.testing.assert_allclose(stats["kappa"].numpy(), 3.0, rtol=1e-12)
    np.testing.assert_array_equal(stats["peak_order"].numpy(), 3)
    np.testing.assert_allclose(stats["c_le3"].numpy(), 1.0, rtol=1e-12)
    np.testing.assert_allclose(stats["trunk_share"].numpy(), 0.0, atol=1e-20)


def test_equal_energy_everywhere_is_the_binomial_null() -> None:
    num_blocks = 7
    generator = torch.Generator().manual_seed(3)
    signs = (
        torch.randint(0, 2, (2, 2**num_blocks, 3), generator=generator).double() * 2 - 1
    )  # |Δ_S h[c]| = 1 for every S, c
    values = set_function_from(signs)
    coefficients = mobius_transform(values, dim=1)
    null = binomial_null(num_blocks)
    for recovered in (coefficients, scalar_projection(coefficients, values[:, full_mask_index(num_blocks)])):
        stats = spectrum_statistics(order_energies(recovered))
        np.testing.assert_allclose(stats["spectrum"].numpy(), np.tile(null["spectrum"], (2, 1)), rtol=1e-12)
        np.testing.assert_allclose(stats["kappa"].numpy(), null["kappa"], rtol=1e-12)
        np.testing.assert_allclose(stats["c_le3"].numpy(), null["c_le3"], rtol=1e-12)
        np.testing.assert_allclose(stats["trunk_share"].numpy(), 1 / 2**num_blocks, rtol=1e-12)
        np.testing.assert_array_equal(stats["peak_order"].numpy(), null["peak_order"])


@pytest.mark.parametrize("num_blocks", [1, 4, 8, 16])
def test_binomial_null_closed_form(num_blocks: int) -> None:
    null = binomial_null(num_blocks)
    orders = np.arange(1, num_blocks + 1)
    spectrum = np.array(null["spectrum"])
    assert spectrum.sum() == pytest.approx(1.0)
    assert null["kappa"] == pytest.approx(float(orders @ spectrum))
    assert null["kappa"] == pytest.approx(num_blocks / 2 * 2**num_blocks / (2**num_blocks - 1))
    assert null["c_le3"] == pytest.approx(
        sum(comb(num_blocks, k) for k in range(1, min(3, num_blocks) + 1)) / (2**num_blocks - 1)
    )
    assert null["peak_order"] == max(1, num_blocks // 2)


def test_binomial_null_numbers_for_resnet18() -> None:
    null = binomial_null(8)
    assert null["kappa"] == pytest.approx(4 * 256 / 255)
    assert null["peak_order"] == 4
    assert null["c_le3"] == pytest.approx(92 / 255)


def test_constant_set_function_has_no_spectrum() -> None:
    values = torch.ones(2, 8, 3, dtype=torch.float64)
    stats = spectrum_statistics(order_energies(mobius_transform(values, dim=1)))
    assert torch.isnan(stats["spectrum"]).all() and torch.isnan(stats["kappa"]).all()
    np.testing.assert_array_equal(stats["peak_order"].numpy(), 0)
    np.testing.assert_allclose(stats["trunk_share"].numpy(), 1.0)


def test_peak_order_breaks_ties_towards_the_lowest_order() -> None:
    spectrum = interaction_spectrum(torch.tensor([[5.0, 1.0, 3.0, 3.0, 1.0]], dtype=torch.float64))
    assert peak_order(spectrum).item() == 2


def test_spectrum_metrics_on_logits() -> None:
    generator = torch.Generator().manual_seed(4)
    num_blocks = 5
    logits = torch.randn(3, 2**num_blocks, 11, generator=generator) * 4
    metrics = spectrum_metrics(logits, torch.float64)
    coefficients = mobius_transform(logits.double(), dim=1)
    energies = order_energies(coefficients)
    np.testing.assert_allclose(metrics["energy_vector"].numpy(), energies.numpy(), rtol=1e-12)
    full = logits[:, full_mask_index(num_blocks)]
    np.testing.assert_array_equal(metrics["full_prediction"].numpy(), full.argmax(-1).numpy())
    spectrum = energies[:, 1:] / energies[:, 1:].sum(dim=1, keepdim=True)
    np.testing.assert_allclose(
        metrics["kappa_vector"].numpy(), (spectrum * torch.arange(1, num_blocks + 1)).sum(1).numpy(), rtol=1e-12
    )
    np.testing.assert_allclose(
        metrics["trunk_share_vector"].numpy(), (energies[:, 0] / energies.sum(1)).numpy(), rtol=1e-12
    )
    scalar_energy = order_energies(coefficients[torch.arange(3), :, full.argmax(-1)])
    np.testing.assert_allclose(metrics["energy_scalar"].numpy(), scalar_energy.numpy(), rtol=1e-12)
    # The rounding variance of float32 logits of magnitude ~4 is (2^-21)²/12 per logit.
    assert 0 < metrics["roundoff_variance_scalar"].max().item() < (2.0**-19) ** 2
    assert (metrics["roundoff_variance_vector"] > metrics["roundoff_variance_scalar"]).all()


def synthetic_energies(lambdas: list[float], power: int, num_images: int = 6, num_blocks: int = 5) -> np.ndarray:
    """Per-image E_k(λ) of h_λ whose Möbius coefficients are λ^{power·|S|} c_S, via the set function and back."""
    generator = torch.Generator().manual_seed(5)
    base = torch.randn(num_images, 2**num_blocks, 3, generator=generator, dtype=torch.float64)
    orders = subset_orders(num_blocks).double()
    energies = []
    for value in lambdas:
        values = set_function_from(base * (value ** (power * orders))[None, :, None])
        energies.append(order_energies(mobius_transform(values, dim=1)).numpy())
    return np.stack(energies, axis=1)


def test_fit_recovers_k_for_lambda_power_k_coefficients() -> None:
    lambdas = [0.4, 0.2, 0.1]
    fit = fit_power_law(np.array(lambdas), synthetic_energies(lambdas, power=1), seed=0, num_resamples=200)
    np.testing.assert_allclose(fit["slope"], np.arange(6), atol=1e-9)
    np.testing.assert_allclose(fit["ci_low"], np.arange(6), atol=1e-9)
    np.testing.assert_allclose(fit["ci_high"], np.arange(6), atol=1e-9)


def test_fit_sees_a_different_law() -> None:
    lambdas = [0.5, 0.3, 0.1]
    fit = fit_power_law(np.array(lambdas), synthetic_energies(lambdas, power=2), seed=0, num_resamples=50)
    np.testing.assert_allclose(fit["slope"], 2 * np.arange(6), atol=1e-9)


def test_fit_confidence_interval_reflects_image_spread() -> None:
    rng = np.random.default_rng(0)
    lambdas = np.array([0.4, 0.2, 0.1])
    exponents = rng.uniform(1.0, 3.0, size=(40, 1, 1))  # each image its own slope
    energies = lambdas[None, :, None] ** (2 * exponents) * np.ones((40, 3, 2))
    fit = fit_power_law(lambdas, energies, seed=0, num_resamples=300)
    assert fit["ci_low"][0] < fit["slope"][0] < fit["ci_high"][0]
    assert fit["ci_high"][0] - fit["ci_low"][0] > 0.05
    assert log_log_slope(lambdas, energies.mean(axis=0))[0] == pytest.approx(fit["slope"][0])


def test_power_law_summary_flags_tolerance_and_round_off_floor() -> None:
    lambdas = [0.4, 0.2, 0.1]
    energies = synthetic_energies(lambdas, power=1, num_blocks=3)
    tiny = np.full((energies.shape[0], 3), 1e-40)
    rows = power_law_summary(np.array(lambdas), energies, tiny, seed=0)
    assert [row["within_tolerance"] for row in rows] == [True] * 4
    assert all(row["resolved"] for row in rows)
    huge = np.full((energies.shape[0], 3), 1e6)
    assert not any(row["resolved"] for row in power_law_summary(np.array(lambdas), energies, huge, seed=0)[1:])
    doubled = power_law_summary(np.array(lambdas), synthetic_energies(lambdas, power=2, num_blocks=3), tiny, seed=0)
    assert [row["within_tolerance"] for row in doubled] == [True, False, False, False]
    np.testing.assert_allclose(roundoff_floor(np.array([1.0, 3.0]), 3), [2.0, 12.0, 24.0, 16.0])


def test_kappa_distribution_and_projection_summary() -> None:
    num_blocks = 4
    spectrum = np.array([[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [0.25, 0.25, 0.25, 0.25], [np.nan] * 4])
    orders = np.arange(1, num_blocks + 1)
    arrays = {
        "energy_vector": np.ones((4, num_blocks + 1)),
        "spectrum_vector": spectrum,
        "peak_order_vector": np.array([2, 4, 1, 0]),
        "kappa_vector": spectrum @ orders,
        "c_le3_vector": spectrum[:, :3].sum(1),
        "trunk_share_vector": np.full(4, 0.2),
    }
    summary = projection_summary(arrays, "vector", np.ones(4, bool), num_blocks, seed=0)
    np.testing.assert_allclose(summary["mean_spectrum"]["mean"], [1 / 12, 5 / 12, 1 / 12, 5 / 12])
    assert summary["mean_spectrum_peak_order"] == 2
    assert summary["peak_order_distribution"]["counts"] == [1, 1, 0, 1]
    assert summary["num_without_interaction_energy"] == 1
    assert summary["kappa"]["mean"] == pytest.approx((2 + 4 + 2.5) / 3)
    distribution = kappa_distribution(arrays["kappa_vector"], num_blocks)
    assert sum(distribution["histogram"]["counts"]) == 3
    assert distribution["histogram"]["edges"][0] == 1.0 and distribution["histogram"]["edges"][-1] == 4.0
    assert distribution["quantiles"]["0.5"] == pytest.approx(2.5)


def test_lambda_list_and_fit_choice() -> None:
    assert sweep_lambdas([0.5, 0.1]) == [1.0, 0.5, 0.1]
    assert choose_fit_lambdas([1.0, 0.8, 0.5, 0.1], None) == [0.8, 0.5, 0.1]
    assert choose_fit_lambdas([1.0, 0.5, 0.1], [0.1, 1.0]) == [1.0, 0.1]
    for bad in ([0.0, 0.5], [-1.0], [0.5, 0.5]):
        with pytest.raises(PipelineError):
            sweep_lambdas(bad)
    with pytest.raises(PipelineError):
        choose_fit_lambdas([1.0, 0.5], [0.3])
    with pytest.raises(PipelineError):
        choose_fit_lambdas([1.0], None)


def test_kappa_monotonicity_lists_violations() -> None:
    def entry(value: float, kappa: float) -> dict:
        return {
            "lambda": value,
            "projections": {projection: {"kappa": {"mean": kappa}} for projection in ("vector", "scalar")},
        }

    result = kappa_monotonicity([entry(1.0, 5.0), entry(0.5, 3.0), entry(0.2, 3.5), entry(0.1, 1.0)])
    assert result["vector"] == {"monotonic": False, "violations": [[0.5, 0.2]]}
    assert kappa_monotonicity([entry(1.0, 5.0), entry(0.5, 3.0)])["scalar"]["monotonic"] is True
