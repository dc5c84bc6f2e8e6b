"""Mask conventions and the fast (butterfly) Möbius transform.

Convention, used everywhere in this repository: a mask is an integer ``s`` in ``[0, 2^L)``;
bit ``l`` of ``s`` is the gate ``m_l`` of block ``l`` (blocks in forward order). Tensors over
masks are indexed by ``s``. Subset ``S(s) = {l : bit l of s set}``, order ``|S| = popcount(s)``.

Möbius coefficients ``Δ_S h = Σ_{T ⊆ S} (−1)^{|S|−|T|} h(T)`` are computed by the
Kennes–Smets butterfly: for each bit ``l``, for every ``s`` with bit ``l`` set,
``a[s] −= a[s without bit l]`` — ``L·2^(L−1)`` subtractions per trailing element, and never
the ``2^L × 2^L`` matrix. The inverse (zeta transform, ``h(S) = Σ_{T ⊆ S} Δ_T h``) is the
same loop with ``+=``.

The Walsh (±1 Fourier) coefficients, the other basis the project reports, are
``ĥ(S) = 2^{−L} Σ_T (−1)^{|S ∩ T|} h(T)`` — the expansion of h in the characters ``χ_S(T) = Π_{l ∈ S} (1 − 2·m_l)``,
orthonormal under the uniform distribution on masks, so ``Σ_S ĥ(S)² = mean_T h(T)²`` (Parseval) and
``Σ_{S ≠ ∅} ĥ(S)² = Var_T h(T)``. The same butterfly with the kernel ``(a, b) → ((a + b)/2, (a − b)/2)`` computes them
(exact in binary floating point up to the additions: halving is exact).
"""

from __future__ import annotations

import torch

__all__ = [
    "num_blocks_from_size",
    "all_masks",
    "subset_orders",
    "full_mask_index",
    "empty_mask_index",
    "singleton_mask_indices",
    "mobius_transform",
    "inverse_mobius_transform",
    "inverse_mobius_transform_",
    "walsh_transform",
]


def num_blocks_from_size(size: int) -> int:
    """Return ``L`` for a mask dimension of size ``2^L``; raise if ``size`` is not a power of two."""
    if size < 1 or size & (size - 1):
        raise ValueError(f"mask dimension has size {size}, which is not a power of two 2^L")
    return size.bit_length() - 1


def all_masks(num_blocks: int, device: torch.device | str | None = None) -> torch.Tensor:
    """All ``2^L`` masks as a ``(2^L, L)`` bool tensor; row ``s`` holds the bits of ``s``."""
    indices = torch.arange(2**num_blocks, device=device)
    bits = torch.arange(num_blocks, device=device)
    return ((indices[:, None] >> bits[None, :]) & 1).bool()


def subset_orders(num_blocks: int, device: torch.device | str | None = None) -> torch.Tensor:
    """``(2^L,)`` int64 tensor of subset sizes ``popcount(s)``."""
    return all_masks(num_blocks, device).sum(dim=1)


def full_mask_index(num_blocks: int) -> int:
    """Index of the all-on mask, ``2^L − 1``."""
    return 2**num_blocks - 1


def empty_mask_index(num_blocks: int) -> int:
    """Index of the all-off mask, ``0``."""
    return 0


def singleton_mask_indices(num_blocks: int) -> list[int]:
    """Indices ``2^l`` of the single-block masks ``{l}``, for ``l = 0 … L−1``."""
    return [1 << block for block in range(num_blocks)]


def _butterfly(
    values: torch.Tensor, dim: int, sign: int, dtype: torch.dtype | None, in_place: bool = False
) -> torch.Tensor:
    dim = dim % values.dim()
    size = values.shape[dim]
    num_blocks = num_blocks_from_size(size)
    if in_place and not values.is_contiguous():
        raise ValueError("an in-place transform needs a contiguous tensor")
    out = values if in_place else values.to(dtype=dtype or values.dtype, copy=True).contiguous()
    lead = 1
    for extent in out.shape[:dim]:
        lead *= extent
    trail = 1
    for extent in out.shape[dim + 1 :]:
        trail *= extent
    for block in range(num_blocks):
        view = out.view(lead, size >> (block + 1), 2, 1 << block, trail)
        if sign < 0:
            view[:, :, 1].sub_(view[:, :, 0])
        elif sign > 0:
            view[:, :, 1].add_(view[:, :, 0])
        else:
            without, with_ = view[:, :, 0], view[:, :, 1]
            with_.sub_(without).mul_(-0.5)  # (a − b)/2, the coefficient of a set holding block l
            without.sub_(with_)  # a − (a − b)/2 = (a + b)/2
    return out


def mobius_transform(values: torch.Tensor, dim: int = -2, dtype: torch.dtype | None = None) -> torch.Tensor:
    """Möbius coefficients of a set function stored along ``dim`` (size ``2^L``).

    ``values[..., s, ...] = h(S(s))`` → ``out[..., s, ...] = Δ_{S(s)} h``. Any leading and
    trailing dimensions are batched. ``dtype`` (default: the input's) sets the arithmetic
    precision. Returns a new tensor; the input is not modified.
    """
    return _butterfly(values, dim, sign=-1, dtype=dtype)


def inverse_mobius_transform(
    coefficients: torch.Tensor, dim: int = -2, dtype: torch.dtype | None = None
) -> torch.Tensor:
    """Zeta transform, the inverse of :func:`mobius_transform`: ``h(S) = Σ_{T ⊆ S} Δ_T h``."""
    return _butterfly(coefficients, dim, sign=+1, dtype=dtype)


def inverse_mobius_transform_(coefficients: torch.Tensor, dim: int = -2) -> torch.Tensor:
    """:func:`inverse_mobius_transform` in place on a contiguous ``coefficients`` (the same operations, the same
    bits, no second tensor of that size); returns it."""
    return _butterfly(coefficients, dim, sign=+1, dtype=None, in_place=True)


def walsh_transform(values: torch.Tensor, dim: int = -2, dtype: torch.dtype | None = None) -> torch.Tensor:
    """Walsh (±1 Fourier) coefficients of a set function stored along ``dim`` (size ``2^L``).

    ``values[..., s, ...] = h(S(s))`` → ``out[..., s, ...] = ĥ(S(s)) = 2^{−L} Σ_T (−1)^{|S ∩ T|} h(T)``: the mean of h at
    ``s = 0``, and for every other ``S`` its correlation with the character of ``S``. ``dtype`` (default: the input's)
    sets the arithmetic precision. Returns a new tensor; the input is not modified.
    """
    return _butterfly(values, dim, sign=0, dtype=dtype)
