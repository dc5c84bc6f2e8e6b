"""Experiment 5's complexity measures on synthetic set functions with known answers, and against explicit loops."""

from __future__ import annotations

from math import ceil

import numpy as np
import pytest
import torch

from experiment_1.mobius.spectrum import binomial_null
from experiment_1.mobius.transform import full_mask_index, inverse_mobius_transform, mobius_transform, walsh_transform
from experiment_5.complexity import COMPLEXITY_MEASURES, complexity_measures, walsh_order_measures

TAUS, ETAS = (0.01, 0.1, 0.5), (0.5, 0.9)


def measures_of(coefficients: torch.Tensor, taus=TAUS, etas=ETAS) -> dict[str, torch.Tensor]:
    """The measures of the set function h(S) = Σ_{T⊆S} Δ_T, going through h as the pipeline does (both bases)."""
    values = inverse_mobius_transform(coefficients, dim=1)
    num_blocks = coefficients.shape[1].bit_length() - 1
    full = values[:, full_mask_index(num_blocks)]
    return {
        **complexity_measures(mobius_transform(values, dim=1), full, taus, etas),
        **walsh_order_measures(walsh_transform(values, dim=1), full),
    }


def test_a_one_subset_function_needs_one_subset() -> None:
    num_blocks, mask = 5, 0b10110  # a single 3-way interaction
    coefficients = torch.zeros(2, 2**num_blocks, 4, dtype=torch.float64)
    coefficients[:, mask] = torch.tensor([[1.0, -2.0, 0.5, 3.0], [0.0, 0.0, 7.0, -1.0]])
    measures = measures_of(coefficients)
    assert set(COMPLEXITY_MEASURES) <= set(measures)
    np.testing.assert_allclose(measures["n_eff_vector"].numpy(), 1.0, rtol=1e-12)
    assert (measures["k_err"] == 1).all() and measures["k_err"].shape == (2, len(TAUS))
    assert (measures["k_mass"] == 1).all() and measures["k_mass"].shape == (2, len(ETAS))
    for projection in ("vector", "scalar"):
        np.testing.assert_allclose(measures[f"kbar_{projection}"].numpy(), 3.0, rtol=1e-12)
        np.testing.assert_allclose(measures[f"kappa_{projection}"].numpy(), 3.0, rtol=1e-12)
        np.testing.assert_allclose(measures[f"c_le3_{projection}"].numpy(), 1.0, rtol=1e-12)
        # h = c·Π_{l∈S} m_l = c·2^{−3} Σ_{U⊆S} (−1)^{|U|} χ_U: every Walsh coefficient under S of equal energy, so
        # W_k ∝ C(3, k) and κ_W = (1·3 + 2·3 + 3·1) / 7 — the Walsh basis reads the one 3-way term as mostly low order
        np.testing.assert_allclose(measures[f"walsh_kappa_{projection}"].numpy(), 12 / 7, rtol=1e-12)
    np.testing.assert_allclose(
        measures["full_logit_norm"].numpy(), coefficients[:, mask].norm(dim=1).numpy(), rtol=1e-12
    )


def test_equal_energies_spread_over_every_subset() -> None:
    num_blocks = 4
    generator = torch.Generator().manual_seed(3)
    directions = torch.randn(3, 2**num_blocks, 6, generator=generator, dtype=torch.float64)
    coefficients = directions / directions.norm(dim=2, keepdim=True)  # every ‖Δ_S h‖ = 1
    measures = measures_of(coefficients)
    # N_eff excludes order 0: 2^L − 1 equal energies.
    np.testing.assert_allclose(measures["n_eff_vector"].numpy(), 2**num_blocks - 1, rtol=1e-9)
    expected_mass = [ceil(eta * 2**num_blocks) for eta in ETAS]
    assert measures["k_mass"].tolist() == [expected_mass] * 3
    null = binomial_null(num_blocks)
    np.testing.assert_allclose(measures["kappa_vector"].numpy(), null["kappa"], rtol=1e-9)  # κ over k ≥ 1
    np.testing.assert_allclose(measures["kbar_vector"].numpy(), num_blocks / 2, rtol=1e-9)  # k̄ over k ≥ 0
    np.testing.assert_allclose(measures["c_le3_vector"].numpy(), null["c_le3"], rtol=1e-9)


def brute_force(coefficients: torch.Tensor, taus, etas) -> dict[str, np.ndarray]:
    """Every measure by explicit loops over masks, for one image at a time; κ_W from h(T) = Σ_{S⊆T} Δ_S and
    ĥ(U) = 2^{−L} Σ_T (−1)^{|U ∩ T|} h(T), both sums written out."""
    count, size = coefficients.shape[:2]
    data = coefficients.numpy()
    out = {
        name: np.zeros(count)
        for name in (
            "kbar_vector",
            "kbar_scalar",
            "kappa_vector",
            "kappa_scalar",
            "c_le3_vector",
            "c_le3_scalar",
            "walsh_kappa_vector",
            "walsh_kappa_scalar",
            "n_eff_vector",
        )
    }
    out["k_err"], out["k_mass"] = np.zeros((count, len(taus)), dtype=int), np.zeros((count, len(etas)), dtype=int)
    for image in range(count):
        full = sum(data[image, mask] for mask in range(size))  # h(full) = Σ_S Δ_S h
        predicted = int(np.argmax(full))
        orders = [bin(mask).count("1") for mask in range(size)]
        for projection in ("vector", "scalar"):
            energy = [
                float(np.sum(data[image, mask] ** 2))
                if projection == "vector"
                else float(data[image, mask, predicted] ** 2)
                for mask in range(size)
            ]
            interaction = sum(energy[1:])
            out[f"kbar_{projection}"][image] = sum(o * e for o, e in zip(orders, energy)) / sum(energy)
            out[f"kappa_{projection}"][image] = sum(o * e for o, e in zip(orders, energy)) / interaction
            out[f"c_le3_{projection}"][image] = sum(e for o, e in zip(orders, energy) if 1 <= o <= 3) / interaction
        values = [sum(data[image, s] for s in range(size) if s & t == s) for t in range(size)]  # h(T) = Σ_{S⊆T} Δ_S
        walsh = [sum((-1) ** bin(u & t).count("1") * values[t] for t in range(size)) / size for u in range(size)]
        for projection in ("vector", "scalar"):
            energy = [
                float(np.sum(walsh[u] ** 2)) if projection == "vector" else float(walsh[u][predicted] ** 2)
                for u in range(size)
            ]
            out[f"walsh_kappa_{projection}"][image] = sum(o * e for o, e in zip(orders, energy)) / sum(energy[1:])
        energy = [float(np.sum(data[image, mask] ** 2)) for mask in range(size)]
        out["n_eff_vector"][image] = sum(energy[1:]) ** 2 / sum(e * e for e in energy[1:])
        ranking = sorted(range(size), key=lambda mask: (-energy[mask], mask))
        partial, captured, errors, masses = np.zeros_like(full), 0.0, [], []
        for mask in ranking:
            partial = partial + data[image, mask]
            captured += energy[mask]
            errors.append(np.linalg.norm(partial - full) / np.linalg.norm(full))
            masses.append(captured / sum(energy))
        out["k_err"][image] = [next(k for k, error in enumerate(errors, 1) if error <= tau) for tau in taus]
        out["k_mass"][image] = [next(k for k, mass in enumerate(masses, 1) if mass >= eta - 1e-12) for eta in etas]
    return out


def test_measures_match_explicit_loops_on_decaying_coefficients() -> None:
    num_blocks = 5
    generator = torch.Generator().manual_seed(4)
    scale = torch.rand(4, 2**num_blocks, 1, generator=generator, dtype=torch.float64) ** 3  # a spread of magnitudes
    coefficients = scale * torch.randn(4, 2**num_blocks, 7, generator=generator, dtype=torch.float64)
    measures = measures_of(coefficients)
    expected = brute_force(coefficients, TAUS, ETAS)
    for name, value in expected.items():
        if name.startswith("k_"):
            np.testing.assert_array_equal(measures[name].numpy(), value, err_msg=name)
        else:
            # The pipeline goes through h(S) and back (two butterflies), the loop does not: float64 round-off only.
            np.testing.assert_allclose(measures[name].numpy(), value, rtol=1e-9, err_msg=name)
    # K_τ^err never decreases as τ tightens, K_η^mass never as η grows.
    assert (np.diff(measures["k_err"].numpy(), axis=1) <= 0).all() and (
        np.diff(measures["k_mass"].numpy(), axis=1) >= 0
    ).all()
    assert (
        len({tuple(row) for row in measures["k_err"].tolist()}) > 1
    )  # the images differ: the test can tell them apart


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_measures_keep_the_coefficient_dtype(dtype: torch.dtype) -> None:
    coefficients = torch.randn(2, 8, 3, generator=torch.Generator().manual_seed(5)).to(dtype)
    measures = complexity_measures(coefficients, coefficients.sum(dim=1), (0.1,), (0.9,))
    assert measures["kappa_vector"].dtype == dtype and measures["k_err"].dtype == torch.int64
    assert walsh_order_measures(coefficients, coefficients.sum(dim=1))["walsh_kappa_scalar"].dtype == dtype


def test_the_method_says_kappa_w_was_not_evaluated_where_the_record_lacks_it() -> None:
    """A run whose per-image record holds κ_W of both projections defines it; one that predates the Walsh measures (or
    holds one projection's only) says it was not evaluated, and why."""
    from experiment_5.report import walsh_text

    both = walsh_text({"measures": {"kappa_vector": {}, "walsh_kappa_vector": {}, "walsh_kappa_scalar": {}}})
    assert both.startswith("from the Walsh (±1 Fourier) coefficients, κ_W = ")
    for measures in ({"kappa_vector": {}}, {"walsh_kappa_vector": {}}):
        said = walsh_text({"measures": measures})
        assert "not evaluated here" in said and "predates the Walsh measures" in said
