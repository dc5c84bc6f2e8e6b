"""How complex an image's set function is: at which orders its Möbius energy sits, and over how many subsets.

From the Möbius coefficients ``(B, 2^L, C)`` of a batch (mask bit convention of
:mod:`experiment_1.mobius`) and the full-mask logits ``h(full)`` ``(B, C)``, per image:

- ``kbar_*``: the energy-weighted mean order over **all** orders, trunk included,
  ``k̄ = Σ_{k≥0} k·E_k / Σ_{k≥0} E_k`` (:func:`mean_order_with_trunk`);
- ``kappa_*``: Experiment 2's ``κ = Σ_{k≥1} k·p_k`` over the interactions only (order 0 excluded),
  so ``k̄ = κ · (1 − trunk share)``;
- ``c_le3_*``: Experiment 2's ``C_{≤3} = Σ_{k=1..3} p_k`` (order 0 excluded);
  each for the vector (``‖Δ_S h‖²``) and the scalar (``(Δ_S h[c])²``, ``c = argmax h(full)``) projection;
- ``walsh_kappa_*`` (:func:`walsh_order_measures`, from the Walsh coefficients ``ĥ(U)``): κ in the Walsh basis,
  ``κ_W = Σ_{k≥1} k·W_k / Σ_{k≥1} W_k`` with ``W_k = Σ_{|U|=k} energy(ĥ(U))`` (Experiment 2's ``walsh_kappa_*``), both
  projections;
- ``n_eff_vector``: ``N_eff^v``, the participation ratio ``(Σ e_S)² / Σ e_S²`` of the vector energies
  ``e_S = ‖Δ_S h‖²`` over the ``2^L − 1`` non-empty subsets (order 0, the trunk, excluded);
- ``k_err``: ``K_τ^err`` for each τ, the smallest K (single-subset resolution, 1 … 2^L) whose
  top-K reconstruction ``ĥ_K = Σ_{S ∈ top-K} Δ_S h`` — subsets ranked by ``‖Δ_S h‖₂``, order 0
  included — has ``‖ĥ_K − h(full)‖ / ‖h(full)‖ ≤ τ``; ``(B, len(taus))``;
- ``k_mass``: ``K_η^mass`` for each η, the smallest K whose top-K subsets (same ranking) carry a
  fraction ``≥ η`` of ``Σ_S e_S`` (order 0 included); ``(B, len(etas))``;
- ``full_logit_norm``: ``‖h(full)‖₂``, the covariate of Experiment 5's partial correlation.
"""

from __future__ import annotations

from typing import Sequence

import torch

from experiment_1.mobius import (
    PROJECTIONS,
    cumulative_reconstruction,
    order_energies,
    participation_ratio,
    rank_subsets,
    scalar_projection,
    smallest_k_reaching_mass,
    spectrum_statistics,
    subset_magnitudes,
)

COMPLEXITY_MEASURES = (
    "kbar_vector",
    "kbar_scalar",
    "kappa_vector",
    "kappa_scalar",
    "c_le3_vector",
    "c_le3_scalar",
    "walsh_kappa_vector",
    "walsh_kappa_scalar",
    "n_eff_vector",
    "k_err",
    "k_mass",
)

__all__ = [
    "COMPLEXITY_MEASURES",
    "PROJECTIONS",
    "mean_order_with_trunk",
    "complexity_measures",
    "walsh_order_measures",
]


def mean_order_with_trunk(energies: torch.Tensor) -> torch.Tensor:
    """``k̄ = Σ_{k≥0} k·E_k / Σ_{k≥0} E_k`` from order energies ``(B, L+1)`` → ``(B,)`` (NaN where every E_k is 0)."""
    orders = torch.arange(energies.shape[1], dtype=energies.dtype, device=energies.device)
    total = energies.sum(dim=1)
    return torch.where(total > 0, (energies @ orders) / total, torch.full_like(total, float("nan")))


def projected(coefficients: torch.Tensor, full: torch.Tensor) -> tuple[tuple[str, torch.Tensor], ...]:
    """The coefficients ``(B, 2^L, C)`` in both projections: ``(("vector", …), ("scalar", the class argmax h(full)))``."""
    return ("vector", coefficients), ("scalar", scalar_projection(coefficients, full))


def walsh_order_measures(walsh: torch.Tensor, full_logits: torch.Tensor) -> dict[str, torch.Tensor]:
    """``walsh_kappa_vector`` and ``walsh_kappa_scalar``: κ_W of each image from its Walsh coefficients ``(B, 2^L, C)``
    (:func:`experiment_1.mobius.walsh_transform`), in their dtype."""
    full = full_logits.to(walsh.dtype)
    return {
        f"walsh_kappa_{projection}": spectrum_statistics(order_energies(values))["kappa"]
        for projection, values in projected(walsh, full)
    }


def complexity_measures(
    coefficients: torch.Tensor, full_logits: torch.Tensor, taus: Sequence[float], etas: Sequence[float]
) -> dict[str, torch.Tensor]:
    """Every per-image complexity measure of the Möbius coefficients (see the module docstring; the Walsh ones are
    :func:`walsh_order_measures`'), in the coefficients' dtype."""
    full = full_logits.to(coefficients.dtype)
    measures: dict[str, torch.Tensor] = {}
    for projection, values in projected(coefficients, full):
        energies = order_energies(values)
        statistics = spectrum_statistics(energies)
        measures[f"kbar_{projection}"] = mean_order_with_trunk(energies)
        measures[f"kappa_{projection}"] = statistics["kappa"]
        measures[f"c_le3_{projection}"] = statistics["c_le3"]
    subset_energies = coefficients.square().sum(dim=2)
    measures["n_eff_vector"] = participation_ratio(subset_energies[:, 1:])
    ranking = rank_subsets(subset_magnitudes(coefficients, full, "vector"))
    reconstruction = cumulative_reconstruction(
        coefficients, ranking, full, ks=[coefficients.shape[1]], error_thresholds=tuple(taus)
    )
    measures["k_err"] = reconstruction["k_at_error"]
    measures["k_mass"] = smallest_k_reaching_mass(subset_energies, ranking, tuple(etas))
    measures["full_logit_norm"] = full.norm(dim=1)
    return measures
