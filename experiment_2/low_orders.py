"""Exact low interaction orders at either corner of the cube, at any depth: the reductions of step 8.

Per image and projection (vector: ``‖·‖²`` over classes; scalar: the class ``c = argmax h(full)``):

- at the all-off corner (base ``off``), every Möbius coefficient ``Δ_S``, ``|S| ≤ k``, from the family
  ``{T : |T| ≤ k}``; at the full network (base ``on``), the coefficients about it, ``Δ^on_A`` for the sets ``A``
  of gates turned off (order 1: one block deleted; 2, 3: pairs and triples) — both exact;
- ``E_j = Σ_{|S|=j} energy(Δ_S)`` and the per-coefficient mean ``ē_j = E_j / C(L, j)``, ``j = 1 … k`` — exact;
- the observable ratios ``E_j / ‖h(full) − h(∅)‖²`` (exact) and ``E_j / Var h``, with ``Var h`` (the variance of
  ``h`` over a uniformly random mask, summed over classes for the vector projection) estimated from random masks
  by the unbiased sample variance.

The spectrum ``p_j = E_j / Σ_{i≥1} E_i``, ``C_{≤k}``, ``κ`` and the peak order need the energy of every order, i.e.
all ``2^L`` coefficients: out of reach past the exhaustive limit, so never computed here.
"""

from __future__ import annotations

from math import comb
from typing import Any

import numpy as np
import torch

from experiment_1.mobius import family_mobius

PROJECTIONS = ("vector", "scalar")
CORNER_MASKS = 2  # the random-mask pass starts with ∅ and the full mask


def random_mask_ids(num_blocks: int, count: int, seed: int) -> list[int]:
    """``CORNER_MASKS`` corners (∅, full) then ``count`` uniformly random masks (each gate on with probability ½), seeded."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2, size=(count, num_blocks))
    weights = [1 << bit for bit in range(num_blocks)]
    return [0, (1 << num_blocks) - 1, *(int(sum(w for w, b in zip(weights, row) if b)) for row in bits)]


def corner_reductions(logits: torch.Tensor) -> dict[str, torch.Tensor]:
    """From the random-mask pass's ``(B, 2 + n, C)`` logits (∅, full, then the random masks): the predicted class,
    ``‖h(full) − h(∅)‖²`` per projection and the unbiased sample variance of ``h`` over the random masks."""
    logits = logits.to(torch.float64)
    empty, full, random = logits[:, 0], logits[:, 1], logits[:, CORNER_MASKS:]
    predicted = full.argmax(dim=-1)
    pick = predicted.view(-1, 1, 1)
    random_scalar = random.gather(2, pick.expand(-1, random.shape[1], 1)).squeeze(2)
    gap = full - empty
    return {
        "predicted": predicted,
        "corner_gap_vector": gap.square().sum(dim=-1),
        "corner_gap_scalar": gap.gather(1, predicted.view(-1, 1)).squeeze(1).square(),
        "variance_vector": random.var(dim=1, correction=1).sum(dim=-1),
        "variance_scalar": random_scalar.var(dim=1, correction=1),
    }


def family_reductions(
    logits: torch.Tensor,
    mask_ids: torch.Tensor,
    num_blocks: int,
    base: str,
    predicted: torch.Tensor,
    dtype: torch.dtype,
) -> dict[str, torch.Tensor]:
    """A family pass's ``(B, M, C)`` logits → per set (ascending set id): the vector energy ``‖Δ_S‖²`` and the signed
    scalar coefficient ``Δ_S[c]`` (``predicted``: ``c`` per image, from the full network)."""
    _, coefficients = family_mobius(logits, mask_ids, num_blocks, base=base, dim=1, dtype=dtype)
    index = predicted.to(coefficients.device).view(-1, 1, 1).expand(-1, coefficients.shape[1], 1)
    return {
        "energy_vector": coefficients.to(torch.float64).square().sum(dim=-1),
        "coefficient_scalar": coefficients.gather(2, index).squeeze(2).to(torch.float64),
    }


def order_energies(arrays: dict[str, np.ndarray], set_ids: list[int], order: int) -> dict[str, np.ndarray]:
    """``E_j``, ``j = 0 … order`` per image, per projection, from :func:`family_reductions`' arrays."""
    sizes = np.array([bin(value).count("1") for value in set_ids])
    energies = {
        "vector": np.asarray(arrays["energy_vector"], dtype=np.float64),
        "scalar": np.square(np.asarray(arrays["coefficient_scalar"], dtype=np.float64)),
    }
    return {
        name: np.stack([energy[:, sizes == j].sum(axis=1) for j in range(order + 1)], axis=1)
        for name, energy in energies.items()
    }


def largest_sets(
    energy: np.ndarray, set_ids: list[int], block_names: list[str], size: int, count: int
) -> list[dict[str, Any]]:
    """The ``count`` sets of ``size`` blocks with the largest mean (over images) energy, by block name."""
    members = [position for position, value in enumerate(set_ids) if bin(value).count("1") == size]
    mean = energy[:, members].mean(axis=0)
    top = np.argsort(-mean, kind="stable")[:count]
    return [
        {
            "blocks": [block_names[bit] for bit in range(len(block_names)) if set_ids[members[position]] >> bit & 1],
            "mean_energy": float(mean[position]),
        }
        for position in top
    ]


def per_coefficient(energies: np.ndarray, num_blocks: int) -> np.ndarray:
    """``ē_j = E_j / C(L, j)`` per image, ``j = 0 … k``."""
    return energies / np.array([comb(num_blocks, j) for j in range(energies.shape[1])], dtype=np.float64)
