"""Mask families past the exhaustive pass: the low orders at either corner of the cube, and the Möbius transform on them.

A mask family (:class:`experiment_1.network.mask_family.MaskFamily`, which the engine walks) is one of two sets of
masks (bit convention of :mod:`experiment_1.mobius.transform`):

- base ``off`` (the all-off corner): the down-closed family ``{T : |T| ≤ k}``;
- base ``on`` (the full network, the lesion view): its dual ``{T : |T| ≥ L − k}``, i.e. at most ``k`` gates off.
  Order 1 is deleting one block from the full network, orders 2 and 3 pairs and triples.

Both have ``Σ_{j≤k} C(L, j)`` members, so a family is a few thousand masks at ``L = 50, k = 3`` where
all ``2^L`` cannot be held. Values on a family travel as a *sparse* table: the members' mask ids in
ascending order (``MaskFamily.mask_ids``) and one row per member.

:func:`family_mobius` is exact on a family. Base ``off``: ``Δ_S = Σ_{T⊆S} (−1)^{|S−T|} h(T)`` for every
``|S| ≤ k`` — each term lies in the family, and the bit-by-bit update ``a[s] −= a[s ∖ {l}]`` is the dense
butterfly's own, in the same order, so the coefficients equal the dense transform's bit for bit. Base ``on``:
the coefficients about the full network, indexed by the set ``A`` of gates turned off,
``Δ^on_A = Σ_{B⊆A} (−1)^{|A−B|} h([L] ∖ B)``; ``Δ^on_∅ = h(full)``, ``Δ^on_{i} = h(full − i) − h(full)``.
"""

from __future__ import annotations

import torch

from experiment_1.mobius.spectrum import layout_sums

BASES = ("off", "on")

__all__ = ["BASES", "family_mobius", "family_order_energies", "family_order_sums", "subset_sizes"]


def subset_sizes(ids: torch.Tensor) -> torch.Tensor:
    """``popcount`` of each id (int64 tensor, ids below 2^62)."""
    ids = ids.clone()
    sizes = torch.zeros_like(ids)
    while bool((ids != 0).any()):
        sizes += ids & 1
        ids = ids >> 1
    return sizes


def family_mobius(
    values: torch.Tensor,
    mask_ids: torch.Tensor,
    num_blocks: int,
    base: str = "off",
    dim: int = -2,
    dtype: torch.dtype | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Möbius coefficients of a set function known on a family: ``values`` holds ``h`` along ``dim`` in the order of
    ``mask_ids`` (ascending). Returns ``(set_ids, coefficients)``, ``set_ids`` ascending (base ``off``: the sets ``S``,
    the same ids; base ``on``: the sets ``A`` of gates off), ``coefficients`` along ``dim`` in that order, in ``dtype``
    (default: the input's). A :class:`ValueError` unless the sets are closed under removing one element."""
    if base not in BASES:
        raise ValueError(f"unknown family base '{base}'; choose one of {', '.join(BASES)}")
    mask_ids = torch.as_tensor(mask_ids, dtype=torch.long).cpu()
    if len(mask_ids) != values.shape[dim]:
        raise ValueError(f"{len(mask_ids)} mask ids for {values.shape[dim]} values along dim {dim}")
    sets = mask_ids if base == "off" else ((1 << num_blocks) - 1) ^ mask_ids
    sets, order = torch.sort(sets)
    moved = values.movedim(dim, 0)
    out = moved[order.to(values.device)].to(dtype=dtype or values.dtype, copy=True).contiguous()
    for bit in range(num_blocks):
        members = ((sets >> bit) & 1).nonzero().squeeze(1)
        if not len(members):
            continue
        below = sets[members] ^ (1 << bit)
        partners = torch.searchsorted(sets, below).clamp(max=len(sets) - 1)
        if not bool((sets[partners] == below).all()):
            raise ValueError(
                "the mask family is not closed under removing a gate from its corner; the Möbius transform on it would not be exact"
            )
        out[members.to(out.device)] -= out[partners.to(out.device)]
    return sets, out.movedim(0, dim)


def family_order_sums(values: torch.Tensor, set_ids: torch.Tensor, max_order: int) -> torch.Tensor:
    """``Σ_{|S|=k} values[:, S]`` for ``k = 0 … max_order``: ``(B, M, ...)`` with one entry per set of ``set_ids``
    along dim 1 → ``(B, max_order + 1, ...)`` float64 (0 for an order with no set). Each order adds its sets in the
    order of ``set_ids``, by :func:`~experiment_1.mobius.spectrum.layout_sums`: no atomics, so the same bits on every
    device and batch size. A :class:`ValueError` for a set above ``max_order``."""
    sizes = subset_sizes(torch.as_tensor(set_ids, dtype=torch.long).cpu())
    if len(sizes) != values.shape[1]:
        raise ValueError(f"{len(sizes)} set ids for {values.shape[1]} values along dim 1")
    if len(sizes) and int(sizes.max()) > max_order:
        raise ValueError(f"a set of {int(sizes.max())} blocks among sets summed up to order {max_order}")
    members = [(sizes == order).nonzero().squeeze(1) for order in range(max_order + 1)]
    layout = torch.full((max_order + 1, max(1, *map(len, members))), len(sizes), dtype=torch.long)
    for order, positions in enumerate(members):
        layout[order, : len(positions)] = positions
    return layout_sums(values, layout.to(values.device))


def family_order_energies(coefficients: torch.Tensor, set_ids: torch.Tensor, max_order: int) -> torch.Tensor:
    """``E_k = Σ_{|S|=k} energy(Δ_S)`` for ``k = 0 … max_order`` from a family's coefficients — ``(B, M, C)``
    (vector projection, ``‖·‖²`` over classes) or ``(B, M)`` (scalar) — in float64: ``(B, max_order + 1)``
    (:func:`family_order_sums`)."""
    energy = coefficients.to(torch.float64).square()
    if energy.dim() == 3:
        energy = energy.sum(dim=2)
    return family_order_sums(energy, set_ids, max_order)
