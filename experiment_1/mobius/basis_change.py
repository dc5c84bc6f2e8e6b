"""The Möbius–Walsh identity: each basis's coefficient table from the other's, without the mask table.

Conventions of :mod:`experiment_1.mobius.transform`: a mask ``T`` is the set of gates that are on (bit ``l`` of the
mask id is ``m_l``); the Möbius coefficients are ``Δ_S = Σ_{T ⊆ S} (−1)^{|S|−|T|} h(T)`` with the inverse
``h(T) = Σ_{S ⊆ T} Δ_S``; the Walsh coefficients are ``ĥ(U) = 2^{−L} Σ_T χ_U(T) h(T)`` in the characters
``χ_U(T) = (−1)^{|U ∩ T|} = Π_{l ∈ U} (1 − 2·m_l)``, with the inverse ``h(T) = Σ_U ĥ(U) χ_U(T)``. For a vector ``h``
(logits) every identity holds per class.

**Möbius from Walsh:** ``Δ_S = (−2)^{|S|} Σ_{U ⊇ S} ĥ(U)``. Substitute the Walsh expansion into the Möbius sum:
``Δ_S = Σ_U ĥ(U) Σ_{T ⊆ S} (−1)^{|S|−|T|} (−1)^{|U ∩ T|}``. The inner sum runs over the independent choices
``l ∈ T`` or not for each ``l ∈ S``, so it is a product over ``l ∈ S`` of ``(−1) + (−1)^{[l ∈ U]}`` (the first term
for ``l ∉ T``, which contributes ``−1`` to the sign ``(−1)^{|S|−|T|}``; the second for ``l ∈ T``), which is ``−2``
when ``l ∈ U`` and ``0`` otherwise. The product is ``(−2)^{|S|}`` when ``S ⊆ U`` and ``0`` otherwise.

**Walsh from Möbius:** ``ĥ(U) = (−1)^{|U|} Σ_{S ⊇ U} 2^{−|S|} Δ_S``. Substitute ``h(T) = Σ_{S ⊆ T} Δ_S`` into the
Walsh sum: ``ĥ(U) = Σ_S Δ_S · 2^{−L} Σ_{T ⊇ S} (−1)^{|U ∩ T|}``. The inner sum is a product over all ``L`` gates: a
gate ``l ∈ S`` is on in every ``T`` and gives ``(−1)^{[l ∈ U]}``; a gate ``l ∉ S`` is free and gives
``1 + (−1)^{[l ∈ U]}``, which is ``2`` when ``l ∉ U`` and ``0`` when ``l ∈ U``. So the term vanishes unless
``U ⊆ S``, and then equals ``2^{−L} · (−1)^{|U|} · 2^{L−|S|}``.

**What it says about the spectra.** Both maps are triangular (supersets only) with non-zero diagonals
``(−2)^{|S|}`` and ``(−1/2)^{|U|}``, so the two bases have the same polynomial degree and the same top coefficient up
to the factor: ``Δ_full = (−2)^L ĥ(full)``, hence ``E_L = 4^L W_L``. At every order the Möbius energy is the energy of
the superset Walsh sums amplified by ``4^k``: ``E_k = Σ_{|S|=k} ‖Δ_S‖² = 4^k Σ_{|S|=k} ‖Σ_{U ⊇ S} ĥ(U)‖²``. The cross
terms of that square are what the Walsh basis, orthogonal, does not have: were the signs of the Walsh coefficients
independent and symmetric, they would average out and ``E_k = 4^k Σ_{j ≥ k} C(j, k) W_j`` in expectation, so the Walsh
weight at degree ``j`` would feed the Möbius orders ``k ≤ j`` with the weights ``4^k C(j, k)`` (largest near
``k = 4j/5``, summing to ``5^j``). A Walsh spectrum that falls with the degree can therefore give a Möbius spectrum
that peaks at a middle order: the Möbius coefficients are derivatives at one corner of the cube (every gate off), the
Walsh coefficients average over all base points.

Both maps are the subset-sum butterfly of :mod:`experiment_1.mobius.transform` run over the complements (the mask id
``2^L − 1 − s`` is the complement of ``s``, so reversing the mask axis turns superset sums into subset sums), with the
powers of two applied per order (exact in binary floating point).
"""

from __future__ import annotations

import torch

from experiment_1.mobius.transform import inverse_mobius_transform, num_blocks_from_size, subset_orders

__all__ = ["mobius_from_walsh", "walsh_from_mobius"]


def _per_order(base: float, values: torch.Tensor, dim: int) -> torch.Tensor:
    """``base^{|S(s)|}`` along ``dim`` of ``values`` (size ``2^L``), shaped to broadcast against it, in its dtype."""
    dim = dim % values.dim()
    orders = subset_orders(num_blocks_from_size(values.shape[dim]), device=values.device)
    factors = torch.tensor(base, dtype=values.dtype, device=values.device) ** orders.to(values.dtype)
    return factors.view(-1, *([1] * (values.dim() - dim - 1)))


def _superset_sums(values: torch.Tensor, dim: int, dtype: torch.dtype | None) -> torch.Tensor:
    """``Σ_{U ⊇ S} values[U]`` for every ``S`` along ``dim``: the subset sums over the complements."""
    return inverse_mobius_transform(values.flip(dim), dim=dim, dtype=dtype).flip(dim)


def mobius_from_walsh(coefficients: torch.Tensor, dim: int = -2, dtype: torch.dtype | None = None) -> torch.Tensor:
    """Möbius coefficients from Walsh coefficients stored along ``dim`` (size ``2^L``, the project's mask order):
    ``out[..., S, ...] = Δ_S = (−2)^{|S|} Σ_{U ⊇ S} ĥ(U)``.

    ``coefficients`` is what :func:`experiment_1.mobius.walsh_transform` returns; the result equals
    :func:`experiment_1.mobius.mobius_transform` of the same table up to round-off. ``dtype`` (default: the input's) sets
    the arithmetic precision. Returns a new tensor.
    """
    sums = _superset_sums(coefficients, dim, dtype)
    return sums * _per_order(-2.0, sums, dim)


def walsh_from_mobius(coefficients: torch.Tensor, dim: int = -2, dtype: torch.dtype | None = None) -> torch.Tensor:
    """Walsh coefficients from Möbius coefficients stored along ``dim`` (size ``2^L``, the project's mask order):
    ``out[..., U, ...] = ĥ(U) = (−1)^{|U|} Σ_{S ⊇ U} 2^{−|S|} Δ_S``, the inverse of :func:`mobius_from_walsh`.

    ``coefficients`` is what :func:`experiment_1.mobius.mobius_transform` returns; the result equals
    :func:`experiment_1.mobius.walsh_transform` of the same table up to round-off. ``dtype`` (default: the input's) sets
    the arithmetic precision. Returns a new tensor.
    """
    scaled = coefficients.to(dtype=dtype or coefficients.dtype)
    scaled = scaled * _per_order(0.5, scaled, dim)
    sums = _superset_sums(scaled, dim, None)
    return sums * _per_order(-1.0, sums, dim)
