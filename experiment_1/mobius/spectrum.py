"""The interaction-order spectrum of a set function, from its Möbius coefficients.

Coefficients come either as the vector projection ``(B, 2^L, C)`` — ``Δ_S h ∈ R^C`` per image and
mask ``s`` (bit convention of :mod:`experiment_1.mobius.transform`) — or as the scalar projection
``(B, 2^L)`` — the predicted-class component ``Δ_S h[c]``, ``c = argmax h(full)``
(:func:`scalar_projection`). The energy of a coefficient is ``‖Δ_S h‖²`` (squared L2 over
classes) for the vector projection and ``(Δ_S h[c])²`` for the scalar one.

Per image, with ``k = 0 … L``:

- order energy ``E_k = Σ_{|S|=k} energy(Δ_S h)`` (:func:`order_energies`);
- interaction spectrum ``p_k = E_k / Σ_{j≥1} E_j`` for ``k = 1 … L`` — order 0, the trunk
  ``h(∅)``, is excluded (:func:`interaction_spectrum`);
- trunk share ``E_0 / Σ_{j≥0} E_j`` (:func:`trunk_share`);
- peak order ``argmax_{k≥1} p_k`` (:func:`peak_order`), the lowest order on ties;
- ``κ = Σ_{k≥1} k·p_k``, the energy-weighted mean interaction order (:func:`mean_order`);
- ``C_{≤3} = Σ_{k=1..3} p_k``, the low-order mass (:func:`low_order_mass`).

An image with no interaction energy (``Σ_{j≥1} E_j = 0``, a set function constant in every gate)
has an undefined spectrum: ``p_k``, ``κ``, ``C_{≤3}`` are NaN and its peak order is 0.

The binomial null (:func:`binomial_null`) is the spectrum of a set function whose ``2^L``
coefficients all carry the same energy: ``p_k = C(L, k) / (2^L − 1)``, ``κ = L/2 · 2^L/(2^L − 1)``.

Every function is exact (sums of squares and ratios, no sampling) and batched over images.
"""

from __future__ import annotations

from math import comb

import torch

from experiment_1.mobius.transform import num_blocks_from_size, subset_orders

PROJECTIONS = ("vector", "scalar")  # the two projections of a coefficient Δ_S h: all classes, or the predicted class
LOW_ORDER_MAX = 3

__all__ = [
    "PROJECTIONS",
    "LOW_ORDER_MAX",
    "scalar_projection",
    "order_energies",
    "order_layout",
    "layout_sums",
    "interaction_spectrum",
    "trunk_share",
    "peak_order",
    "mean_order",
    "low_order_mass",
    "spectrum_statistics",
    "binomial_null",
    "unit_in_last_place",
]


def scalar_projection(coefficients: torch.Tensor, full_logits: torch.Tensor) -> torch.Tensor:
    """``Δ_S h[c]`` with ``c = argmax h(full)`` per image: ``(B, 2^L, C)``, ``(B, C)`` → ``(B, 2^L)``."""
    predicted = full_logits.argmax(dim=-1)
    index = predicted.to(coefficients.device).view(-1, 1, 1).expand(-1, coefficients.shape[1], 1)
    return coefficients.gather(2, index).squeeze(2)


def order_energies(coefficients: torch.Tensor) -> torch.Tensor:
    """``E_k = Σ_{|S|=k} energy(Δ_S h)`` for ``k = 0 … L``: ``(B, 2^L[, C])`` → ``(B, L+1)``.

    Energy is the squared L2 norm over the class dimension for ``(B, 2^L, C)`` coefficients and
    the square for ``(B, 2^L)`` ones. Each ``E_k`` sums its masks in increasing mask order, accumulated in
    float64, on every device and whatever the batch size (the same bits after a resume or under any world
    size); the result has the coefficients' dtype.
    """
    if coefficients.dim() not in (2, 3):
        raise ValueError(f"coefficients must have shape (B, 2^L) or (B, 2^L, C); got {tuple(coefficients.shape)}")
    num_blocks = num_blocks_from_size(coefficients.shape[1])
    energy = coefficients.square()
    if energy.dim() == 3:
        energy = energy.sum(dim=2)
    return layout_sums(energy, order_layout(num_blocks, energy.device)).to(energy.dtype)


def layout_sums(values: torch.Tensor, layout: torch.Tensor) -> torch.Tensor:
    """Each row of ``layout`` summed over ``values``' dim 1, left to right, in float64: ``(B, M, ...)`` and a
    ``(G, W)`` layout of positions along dim 1 (padded with ``M``, which adds 0) → ``(B, G, ...)``.

    The sum is the last entry of a scan along the row: one fixed order on every device and whatever ``B`` (CUDA's
    row scan runs no atomics, unlike ``index_add_``/``scatter_add_``, whose float atomics add in the order the
    threads arrive), and bit for bit the sequential sum on CPU. The layout lives on ``values``' device.
    """
    padded = torch.cat([values, values.new_zeros(values.shape[0], 1, *values.shape[2:])], dim=1)
    grouped = padded[:, layout].to(torch.float64)  # (B, G, W, ...)
    if grouped.numel() == grouped.shape[2]:  # a single row would take CUDA's device-wide scan (CUB): give it a second
        return torch.cat([grouped, torch.zeros_like(grouped)]).cumsum(dim=2)[:1, :, -1]
    return grouped.cumsum(dim=2)[:, :, -1]


def order_layout(num_blocks: int, device: torch.device | str | None = None) -> torch.Tensor:
    """The masks grouped by order: row ``k`` of ``(L+1, C(L, ⌊L/2⌋))`` holds the masks of order ``k`` in increasing
    order, then ``2^L`` (one past the last mask) as padding. Built on ``device``, with no host copy."""
    orders = subset_orders(num_blocks, device=device)
    by_order = torch.argsort(orders, stable=True)
    layout = torch.full(
        (num_blocks + 1, comb(num_blocks, num_blocks // 2)), 2**num_blocks, dtype=torch.long, device=device
    )
    start = 0
    for order in range(num_blocks + 1):
        count = comb(num_blocks, order)
        layout[order, :count] = by_order[start : start + count]
        start += count
    return layout


def interaction_spectrum(energies: torch.Tensor) -> torch.Tensor:
    """``p_k = E_k / Σ_{j≥1} E_j`` for ``k = 1 … L``: ``(B, L+1)`` → ``(B, L)`` (NaN rows where that sum is 0)."""
    interaction = energies[:, 1:]
    total = interaction.sum(dim=1, keepdim=True)
    return torch.where(total > 0, interaction / total, torch.full_like(interaction, float("nan")))


def trunk_share(energies: torch.Tensor) -> torch.Tensor:
    """``E_0 / Σ_{j≥0} E_j`` per image: ``(B, L+1)`` → ``(B,)``."""
    return energies[:, 0] / energies.sum(dim=1)


def peak_order(spectrum: torch.Tensor) -> torch.Tensor:
    """``argmax_k p_k`` as an order in ``1 … L`` (lowest on ties; 0 for an undefined spectrum): ``(B, L)`` → ``(B,)`` int64."""
    defined = ~spectrum.isnan().any(dim=1)
    return torch.where(
        defined, spectrum.nan_to_num(-1.0).argmax(dim=1) + 1, torch.zeros_like(defined, dtype=torch.long)
    )


def mean_order(spectrum: torch.Tensor) -> torch.Tensor:
    """``κ = Σ_{k≥1} k·p_k``: ``(B, L)`` → ``(B,)``."""
    orders = torch.arange(1, spectrum.shape[1] + 1, dtype=spectrum.dtype, device=spectrum.device)
    return spectrum @ orders


def low_order_mass(spectrum: torch.Tensor, max_order: int = LOW_ORDER_MAX) -> torch.Tensor:
    """``C_{≤K} = Σ_{k=1..K} p_k`` (default ``K = 3``): ``(B, L)`` → ``(B,)``."""
    return spectrum[:, :max_order].sum(dim=1)


def spectrum_statistics(energies: torch.Tensor) -> dict[str, torch.Tensor]:
    """Every per-image statistic of one projection from its order energies ``(B, L+1)``.

    Keys: ``energy`` ``(B, L+1)``, ``spectrum`` ``(B, L)``, ``trunk_share``, ``peak_order``,
    ``kappa``, ``c_le3`` (each ``(B,)``).
    """
    spectrum = interaction_spectrum(energies)
    return {
        "energy": energies,
        "spectrum": spectrum,
        "trunk_share": trunk_share(energies),
        "peak_order": peak_order(spectrum),
        "kappa": mean_order(spectrum),
        "c_le3": low_order_mass(spectrum),
    }


def binomial_null(num_blocks: int) -> dict[str, object]:
    """The spectrum when all ``2^L`` coefficients have equal energy: ``p_k = C(L,k)/(2^L − 1)``.

    Returns the spectrum over ``k = 1 … L``, its peak order (lowest on ties), every peak order when they tie
    (``peak_orders``: at odd L two, C(L, (L−1)/2) = C(L, (L+1)/2): 4 and 5 at L = 9), ``κ = L/2 · 2^L/(2^L − 1)``,
    ``C_{≤3}`` and the trunk share ``1/2^L``.
    """
    interactions = 2**num_blocks - 1
    counts = [comb(num_blocks, order) for order in range(1, num_blocks + 1)]
    spectrum = [count / interactions for count in counts]
    return {
        "num_blocks": num_blocks,
        "spectrum": spectrum,
        "peak_order": 1 + max(range(num_blocks), key=lambda index: (spectrum[index], -index)),
        "peak_orders": [order for order, count in enumerate(counts, start=1) if count == max(counts)],
        "kappa": num_blocks / 2 * 2**num_blocks / interactions,
        "c_le3": sum(spectrum[:LOW_ORDER_MAX]),
        "trunk_share": 1 / 2**num_blocks,
    }


def unit_in_last_place(magnitude: torch.Tensor) -> torch.Tensor:
    """The gap from each finite ``magnitude ≥ 0`` up to the next number of its dtype, ``nextafter(x, inf) − x``:
    ``eps · 2^⌊log2 x⌋`` for a normal ``x``, the smallest subnormal ``tiny · eps`` below the normal range (at
    the largest finite number: the spacing of its binade, where ``nextafter`` steps to inf).

    Read off the exponent bits in float32 (float64 for a float64 ``magnitude``; bfloat16 and float16 widen to
    float32 exactly) and scaled by ``eps`` — exact, as both are powers of two — so it needs no ``nextafter``
    kernel for bfloat16/float16 (older CUDA builds have none) and no more memory than a copy or two of
    ``magnitude``. Returned in that float32/float64.
    """
    info = torch.finfo(magnitude.dtype)
    wide, bits, exponent_bits = (
        (torch.float64, torch.int64, 0x7FF0000000000000)
        if magnitude.dtype == torch.float64
        else (torch.float32, torch.int32, 0x7F800000)
    )
    values = magnitude.to(wide)
    binade = (values.view(bits) & exponent_bits).view(wide)  # 2^⌊log2 x⌋ for a normal x, 0 below
    return torch.where(values >= info.tiny, binade * info.eps, info.tiny * info.eps)
