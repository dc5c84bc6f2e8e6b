"""Exact low interaction orders at either corner of the cube, at any depth: the reductions of step 8.

Per image and projection (vector: ``‖·‖²`` over classes; scalar: the class ``c = argmax h(full)``):

- at the all-off corner (base ``off``), every Möbius coefficient ``Δ_S``, ``|S| ≤ k``, from the family
  ``{T : |T| ≤ k}``; at the full network (base ``on``), the coefficients about it, ``Δ^on_A`` for the sets ``A``
  of gates turned off (order 1: one block deleted; 2, 3: pairs and triples) — both exact;
- ``E_j = Σ_{|S|=j} energy(Δ_S)`` and the per-coefficient mean ``ē_j = E_j / C(L, j)``, ``j = 1 … k`` — exact;
- the observable ratios ``E_j / ‖h(full) − h(∅)‖²`` (exact) and ``E_j / Var h``, with ``Var h`` (the variance of
  ``h`` over a uniformly random mask, summed over classes for the vector projection) estimated by the unbiased sample
  variance over the uniform base masks of the Walsh design (:mod:`experiment_2.past_exhaustive.sampling.walsh`), whose other masks
  (one-block flips, ρ-correlated copies) the same pass evaluates;
- at the all-off corner, the R² of the order-≤k surrogate ``Σ_{S⊆T, |S|≤k} Δ_S`` against ``h(T)`` on the design's
  masks, by mask size (exact coefficients, sampled masks).

The spectrum ``p_j = E_j / Σ_{i≥1} E_i``, ``C_{≤k}``, ``κ`` and the peak order need the energy of every order, i.e.
all ``2^L`` coefficients: out of reach past the exhaustive limit, so never computed here.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb
from typing import Any

import numpy as np
import torch

from experiment_1.mobius import family_mobius
from experiment_2.past_exhaustive.sampling.walsh import WalshDesign, surrogate_r2_by_size

PROJECTIONS = ("vector", "scalar")
CORNER_MASKS = 2  # the random-mask pass starts with ∅ and the full mask


def random_pass_ids(design: WalshDesign) -> tuple[list[int], torch.Tensor]:
    """The random-mask pass's ids — ``CORNER_MASKS`` corners (∅, full), then the Walsh design's distinct masks
    (:meth:`~experiment_2.past_exhaustive.sampling.walsh.WalshDesign.all_ids`, ascending) — and the positions of the design's ``m``
    uniform base masks among the design's masks (a repeated base mask keeps its repeats)."""
    ids = design.all_ids()
    positions = torch.from_numpy(np.searchsorted(ids, design.base)).long()
    return [0, (1 << design.num_blocks) - 1, *ids.tolist()], positions


def corner_reductions(logits: torch.Tensor, base_positions: torch.Tensor) -> dict[str, torch.Tensor]:
    """From the random-mask pass's ``(B, 2 + n, C)`` logits (∅, full, then the design's masks): the predicted class,
    ``‖h(full) − h(∅)‖²`` per projection, the unbiased sample variance of ``h`` over the design's uniform base masks
    (``base_positions`` among the design's masks), and the design's logits (float32) for the Walsh estimates."""
    design = logits[:, CORNER_MASKS:]
    logits = logits.to(torch.float64)
    empty, full = logits[:, 0], logits[:, 1]
    random = logits[:, CORNER_MASKS + base_positions.to(logits.device)]
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
        "design_logits": design.float(),
    }


def family_reductions(
    logits: torch.Tensor,
    mask_ids: torch.Tensor,
    num_blocks: int,
    base: str,
    predicted: torch.Tensor,
    dtype: torch.dtype,
    surrogate: Surrogate | None = None,
) -> dict[str, torch.Tensor]:
    """A family pass's ``(B, M, C)`` logits → per set (ascending set id): the vector energy ``‖Δ_S‖²`` and the signed
    scalar coefficient ``Δ_S[c]`` (``predicted``: ``c`` per image, from the full network); with ``surrogate`` (base
    ``off``) also the order-≤k surrogate's R² on its masks per projection, ``(B, len(sizes) + 1)``."""
    _, coefficients = family_mobius(logits, mask_ids, num_blocks, base=base, dim=1, dtype=dtype)
    index = predicted.to(coefficients.device).view(-1, 1, 1).expand(-1, coefficients.shape[1], 1)
    scalar = coefficients.gather(2, index).squeeze(2).to(torch.float64)
    result = {"energy_vector": coefficients.to(torch.float64).square().sum(dim=-1), "coefficient_scalar": scalar}
    if surrogate is not None:
        set_ids = mask_ids.numpy()
        r2 = {name: [] for name in PROJECTIONS}
        for image, values in enumerate(surrogate.values):
            values = values.numpy().astype(np.float64)
            column = int(predicted[image])
            r2["vector"].append(surrogate.pick(coefficients[image].cpu().numpy(), set_ids, values, num_blocks))
            r2["scalar"].append(
                surrogate.pick(scalar[image].cpu().numpy()[:, None], set_ids, values[:, [column]], num_blocks)
            )
        result.update({f"surrogate_r2_{name}": torch.tensor(np.array(rows)) for name, rows in r2.items()})
    return result


@dataclass(frozen=True)
class Surrogate:
    """The masks the order-≤k Möbius surrogate is held to: ``ids`` (n,), ``values`` ``(B, n, C)`` the batch's logits
    there, ``sizes`` the mask sizes reported (then all masks together)."""

    ids: np.ndarray
    values: torch.Tensor
    sizes: tuple[int, ...]

    def pick(self, coefficients: np.ndarray, set_ids: np.ndarray, values: np.ndarray, num_blocks: int) -> np.ndarray:
        """R² at each of ``sizes``, then over all masks (:func:`~experiment_2.past_exhaustive.sampling.walsh.surrogate_r2_by_size`)."""
        rows = {
            row["size"]: row["r2"] for row in surrogate_r2_by_size(set_ids, coefficients, self.ids, values, num_blocks)
        }
        return np.array([rows[size] for size in (*self.sizes, "all")], dtype=np.float64)


def reported_sizes(ids: np.ndarray, least: int) -> tuple[int, ...]:
    """The mask sizes among ``ids`` held by at least ``least`` masks, ascending."""
    sizes, counts = np.unique(np.bitwise_count(np.asarray(ids, dtype=np.int64)), return_counts=True)
    return tuple(int(size) for size, count in zip(sizes, counts) if count >= least)


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
