"""Shapley-family indices of the blocks, as fixed linear maps of the Möbius coefficients (every order needed).

Each index here assigns a value ``I(T)`` to every set ``T`` of blocks with ``|T| ≤ k`` (its order) by spreading the
Möbius coefficients ``Δ_S h`` (:mod:`experiment_1.mobius.transform`; ``Δ_∅ h = h(∅)``, the trunk) over the subsets
of each ``S``:

    ``I(T) = Σ_{S ⊇ T} w(|S|, |T|) · Δ_S h``,

with a weight that depends only on the two sizes ``s = |S|``, ``t = |T|`` and the order ``k``. The weights, in this
project's words (the literature's Möbius-coefficient representations; the names are shapiq's):

- ``SV``, the Shapley value (Shapley 1953): ``φ_i = Σ_{S ∋ i} Δ_S / |S|`` — each coefficient shared equally among
  its blocks. Efficiency: ``Σ_i φ_i = h(full) − h(∅)``.
- ``BV``, the Banzhaf value (Banzhaf 1964): ``β_i = Σ_{S ∋ i} Δ_S / 2^{|S|−1}``.
- ``SII``, the Shapley interaction index (Grabisch and Roubens 1999): ``SII(T) = Σ_{S ⊇ T} Δ_S / (|S| − |T| + 1)``;
  order 1 is the Shapley value.
- ``k-SII`` (Bordt and von Luxburg 2023): the SII of the sets up to order k, each aggregated with its supersets by
  the Bernoulli numbers (``B_1 = −1/2``), ``k-SII(T) = Σ_{j=0}^{k−|T|} B_j Σ_{U ⊇ T, |U| = |T|+j} SII(U)``. A set
  ``S ⊇ T`` holds ``C(|S|−|T|, j)`` such ``U``, so ``w(s, t) = Σ_{j=0}^{min(k−t, s−t)} B_j · C(s−t, j) / (s−t−j+1)``.
  Top-order sets keep their SII; the values are efficient.
- ``STII``, the Shapley–Taylor index of order k (Sundararajan, Dhamdhere and Agarwal 2020): ``STII(T) = Δ_T`` for
  ``|T| < k`` and ``Σ_{S ⊇ T} Δ_S / C(|S|, k)`` for ``|T| = k`` — every coefficient above order k split equally among
  its ``C(|S|, k)`` top-order subsets.
- ``FSII``, Faith-Shap of order k (Tsai, Yeh and Ravikumar 2023, the closed form in Möbius coefficients): ``Δ_T`` plus,
  from every ``S ⊋ T`` with ``|S| > k``, the share ``(−1)^{k−t} · t/(k+t) · C(k, t) · C(s−1, k) / C(s+k−1, k+t)``
  of ``Δ_S`` (for ``t ≥ 1``) — the coefficients of the best order-k polynomial approximation of ``h`` under the
  Shapley kernel, constrained at the empty and the full mask.

The empty set carries the baseline ``I(∅) = h(∅) = Δ_∅`` in SV, k-SII, STII and FSII, and its own formula at ``t = 0``
in SII (``Σ_S Δ_S / (|S| + 1)``) and BV (``Σ_S Δ_S / 2^{|S|}``, the mean of ``h`` over all ``2^L`` masks): shapiq's
conventions. The weights are exact rationals (:class:`fractions.Fraction`) rounded once to float64; the sums run in
float64.

**Exhaustive runs only.** Every index sums ``Δ_S`` over all supersets ``S`` of ``T``, up to the full set, so it needs
the coefficients of every order: the full ``2^L`` mask axis of an exhaustive pass. Past ``2^L`` (the low-order mask
families of :mod:`experiment_1.mobius.family`, ``|S| ≤ k``) they are not offered — a truncated sum would not be the
index.

Layout: coefficients ``(B, 2^L)`` (the scalar projection, one class per image) or ``(B, 2^L, C)`` (the vector
projection, every class), masks in the bit convention of :mod:`experiment_1.mobius.transform`. The indices come back on
the same mask axis (``out[:, s]`` is ``I(S(s))``; zero where ``|S(s)| > k``), the block values
(:func:`shapley_values`, :func:`banzhaf_values`) as ``(B, L[, C])``. :func:`to_interaction_values` and
:func:`from_interaction_values` convert one game's values to and from shapiq's ``InteractionValues`` (shapiq is the
optional extra ``pip install -e .[shapiq]``, never needed for the computation).
"""

from __future__ import annotations

from fractions import Fraction
from math import comb
from typing import Any

import torch

from experiment_1.mobius.transform import inverse_mobius_transform, num_blocks_from_size, subset_orders

INDICES = ("SV", "BV", "SII", "k-SII", "STII", "FSII")  # shapiq's names
FIXED_ORDER = {"SV": 1, "BV": 1}  # the values are order 1 by definition
SHAPIQ_EXTRA = "install the optional extra: pip install -e '.[shapiq]' (or pip install shapiq==1.4.1)"

__all__ = [
    "INDICES",
    "index_weights",
    "interaction_indices",
    "shapley_values",
    "banzhaf_values",
    "to_interaction_values",
    "from_interaction_values",
]


def bernoulli_numbers(count: int) -> list[Fraction]:
    """``B_0 … B_{count−1}`` exactly, with ``B_1 = −1/2`` (``Σ_{j<m+1} C(m+1, j) B_j = 0`` for ``m ≥ 1``)."""
    numbers: list[Fraction] = []
    for m in range(count):
        numbers.append(Fraction(1) if m == 0 else -sum(comb(m + 1, j) * numbers[j] for j in range(m)) / Fraction(m + 1))
    return numbers


def _weight(index: str, size: int, subset: int, order: int) -> Fraction:
    """``w(s, t)`` of ``index`` at order ``k``: the share of ``Δ_S`` (``|S| = s``) that a subset ``T`` (``|T| = t``) gets."""
    s, t, k = size, subset, order
    if index in ("SV", "k-SII", "STII", "FSII") and t == 0:
        return Fraction(int(s == 0))  # the baseline h(∅)
    if index in ("SV", "SII"):
        return Fraction(1, s - t + 1)
    if index == "BV":
        return Fraction(1, 2 ** (s - t))
    if index == "k-SII":
        bernoulli = bernoulli_numbers(k + 1)
        return sum((bernoulli[j] * comb(s - t, j) / (s - t - j + 1) for j in range(min(k - t, s - t) + 1)), Fraction(0))
    if index == "STII":
        return Fraction(int(s == t)) if t < k else Fraction(1, comb(s, k))
    # FSII
    if s <= k:
        return Fraction(int(s == t))
    return Fraction((-1) ** (k - t) * t * comb(k, t) * comb(s - 1, k), (k + t) * comb(s + k - 1, k + t))


def _check_index(index: str, order: int | None, num_blocks: int) -> int:
    """The order to use (``order``, or the index's fixed order 1, or ``L``); a ValueError for an unknown index/order."""
    if index not in INDICES:
        raise ValueError(f"unknown index '{index}'; choose one of {', '.join(INDICES)}")
    if index in FIXED_ORDER:
        if order not in (None, FIXED_ORDER[index]):
            raise ValueError(f"{index} is a value of single blocks (order 1); got order {order}")
        return FIXED_ORDER[index]
    order = num_blocks if order is None else order
    if not 1 <= order <= num_blocks:
        raise ValueError(f"order {order} is outside 1 … L = {num_blocks}")
    return order


def index_weights(index: str, num_blocks: int, order: int | None = None) -> torch.Tensor:
    """``w(s, t)`` for ``s = 0 … L`` (rows) and ``t = 0 … k`` (columns), float64; zero where ``t > s``. ``order``
    defaults to ``L`` (1 for SV and BV)."""
    order = _check_index(index, order, num_blocks)
    return torch.tensor(
        [
            [float(_weight(index, size, subset, order)) if subset <= size else 0.0 for subset in range(order + 1)]
            for size in range(num_blocks + 1)
        ],
        dtype=torch.float64,
    )


def interaction_indices(coefficients: torch.Tensor, index: str, order: int | None = None) -> torch.Tensor:
    """``I(T) = Σ_{S ⊇ T} w(|S|, |T|) Δ_S`` of ``index`` at ``order`` (default ``L``; 1 for SV and BV) for every mask
    ``T`` with ``|T| ≤ order`` (zero above): ``(B, 2^L[, C])`` → the same shape, float64.

    One superset sum per coefficient order ``s``: the coefficients of order ``s`` summed over supersets (the zeta
    butterfly on the complemented mask axis — complementing a mask reverses the axis), then weighted by ``w(s, |T|)``:
    ``(L+1)·L·2^{L−1}`` additions per trailing element, never a ``2^L × 2^L`` matrix."""
    if coefficients.dim() not in (2, 3):
        raise ValueError(f"coefficients must have shape (B, 2^L) or (B, 2^L, C); got {tuple(coefficients.shape)}")
    num_blocks = num_blocks_from_size(coefficients.shape[1])
    order = _check_index(index, order, num_blocks)
    weights = index_weights(index, num_blocks, order).to(coefficients.device)
    sizes = subset_orders(num_blocks, coefficients.device)
    within = sizes <= order
    values = coefficients.to(torch.float64)
    out = torch.zeros_like(values)
    trailing = (1,) * (values.dim() - 2)
    for size in range(num_blocks + 1):
        if not bool(weights[size].any()):
            continue
        of_size = torch.where((sizes == size).view(1, -1, *trailing), values, torch.zeros_like(values))
        superset_sums = inverse_mobius_transform(of_size.flip(1), dim=1).flip(1)
        share = torch.where(within, weights[size][sizes.clamp(max=order)], 0.0)
        out += share.view(1, -1, *trailing) * superset_sums
    return out


def _block_values(coefficients: torch.Tensor, index: str) -> torch.Tensor:
    num_blocks = num_blocks_from_size(coefficients.shape[1])
    return interaction_indices(coefficients, index)[:, [1 << block for block in range(num_blocks)]]


def shapley_values(coefficients: torch.Tensor) -> torch.Tensor:
    """``φ_l = Σ_{S ∋ l} Δ_S / |S|`` of each block ``l``: ``(B, 2^L[, C])`` → ``(B, L[, C])`` float64 (per class in the
    vector projection); ``Σ_l φ_l = h(full) − h(∅)``."""
    return _block_values(coefficients, "SV")


def banzhaf_values(coefficients: torch.Tensor) -> torch.Tensor:
    """``β_l = Σ_{S ∋ l} Δ_S / 2^{|S|−1}`` of each block ``l``: ``(B, 2^L[, C])`` → ``(B, L[, C])`` float64."""
    return _block_values(coefficients, "BV")


def _shapiq() -> Any:
    try:
        import shapiq
    except ImportError as error:
        raise ImportError(f"the export to InteractionValues needs shapiq ({error}); {SHAPIQ_EXTRA}") from None
    return shapiq


def to_interaction_values(values: torch.Tensor, index: str, order: int | None = None) -> Any:
    """One game's indices — ``values`` ``(2^L,)`` from :func:`interaction_indices` (one image, one class) — as shapiq's
    ``InteractionValues``: every set ``|T| ≤ order`` keyed by its sorted block tuple, not estimated, ``baseline_value``
    the empty set's value (``h(∅)``; for SII and BV their own empty value, as shapiq's constructor sets it). Needs shapiq (the optional extra)."""
    if values.dim() != 1:
        raise ValueError(f"one game's values have shape (2^L,); got {tuple(values.shape)}")
    num_blocks = num_blocks_from_size(values.shape[0])
    order = _check_index(index, order, num_blocks)
    masks = sorted(
        (mask for mask in range(values.shape[0]) if mask.bit_count() <= order),
        key=lambda mask: (mask.bit_count(), [block for block in range(num_blocks) if mask >> block & 1]),
    )
    lookup = {tuple(block for block in range(num_blocks) if mask >> block & 1): row for row, mask in enumerate(masks)}
    array = values.detach().to(torch.float64).cpu()[masks].numpy()
    return _shapiq().InteractionValues(
        values=array,
        index=index,
        max_order=order,
        min_order=0,
        n_players=num_blocks,
        interaction_lookup=lookup,
        estimated=False,
        estimation_budget=None,
        baseline_value=float(array[lookup[()]]),
    )


def from_interaction_values(interaction_values: Any) -> torch.Tensor:
    """shapiq's ``InteractionValues`` on the project's mask axis: ``(2^L,)`` float64, ``out[s] = I(S(s))``, zero for the
    sets it does not hold."""
    out = torch.zeros(2**interaction_values.n_players, dtype=torch.float64)
    for players, row in interaction_values.interaction_lookup.items():
        out[sum(1 << player for player in players)] = float(interaction_values.values[row])
    return out
