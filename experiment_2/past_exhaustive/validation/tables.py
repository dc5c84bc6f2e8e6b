"""Exhaustive tables for the estimator validation, and the exact checks of the low-order family pass.

Per image of an exhaustive pass (all ``2^L`` masks) the reduction keeps what the estimators are then run on, by
subsampling, with no further forward:

- ``table_scalar`` ``(2^L,)``: the logit of the class ``c = argmax h(full)`` (the scalar projection) at every mask;
- ``table_vector`` ``(2^L, K)``: the logits of a fixed seeded set of ``K`` classes (:func:`class_slice`) at every
  mask — the vector projection restricted to those classes, so that a table stays a few MB at ``L = 16`` and a
  replication's cost does not grow with the 1 000 classes;
- ``butterfly_off`` / ``butterfly_on`` ``(M, C)``: every Möbius coefficient with ``|S| ≤ k`` (all ``C`` classes) from
  the dense butterfly, about the all-off network and about the full network (sets of gates turned off,
  ``Δ^on_A = Σ_{B⊆A} (−1)^{|A−B|} h([L] ∖ B)``: the butterfly of ``A ↦ h([L] ∖ A)``), ascending set id.

The family pass (the prefix tree's walk of the masks within ``k`` gates of a corner, and the transform on that
family) gives the same coefficients; :func:`coefficient_agreement` measures how far apart the two are.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from experiment_1.mobius import family_mobius, family_order_sums, mobius_transform, num_blocks_from_size
from experiment_1.network import MaskFamily

CLASS_CHUNK = 64  # classes transformed at once by the dense butterfly (bounds its float64 copy at L = 16)


def class_slice(num_classes: int, count: int, seed: int) -> np.ndarray:
    """``min(count, num_classes)`` distinct class indices, ascending, drawn by ``np.random.default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(num_classes, size=min(count, num_classes), replace=False)).astype(np.int64)


def low_sets(num_blocks: int, order: int) -> torch.Tensor:
    """The ids of the sets with at most ``order`` blocks, ascending (the family's sets at either base)."""
    return MaskFamily(order, "off").deviation_sets(num_blocks)


def butterfly_low(logits: torch.Tensor, order: int, base: str, dtype: torch.dtype) -> torch.Tensor:
    """``(B, 2^L, C)`` logits → ``(B, M, C)``: the dense butterfly's coefficients of the sets of :func:`low_sets`,
    about the all-off network (``base = "off"``) or the full network (``"on"``), in ``dtype``."""
    size = logits.shape[1]
    num_blocks = num_blocks_from_size(size)
    if base == "on":
        logits = logits[:, (size - 1) ^ torch.arange(size, device=logits.device)]
    sets = low_sets(num_blocks, order).to(logits.device)
    parts = [
        mobius_transform(logits[..., start : start + CLASS_CHUNK], dim=1, dtype=dtype)[:, sets]
        for start in range(0, logits.shape[2], CLASS_CHUNK)
    ]
    return torch.cat(parts, dim=2)


def table_reductions(
    logits: torch.Tensor, classes: np.ndarray, order: int, dtype: torch.dtype
) -> dict[str, torch.Tensor]:
    """An exhaustive pass's ``(B, 2^L, C)`` logits → the per-image arrays of the module docstring."""
    predicted = logits[:, -1].argmax(dim=-1)
    pick = predicted.view(-1, 1, 1).expand(-1, logits.shape[1], 1)
    return {
        "predicted": predicted,
        "table_scalar": logits.gather(2, pick).squeeze(2),
        "table_vector": logits[:, :, torch.as_tensor(classes, device=logits.device)],
        **{f"butterfly_{base}": butterfly_low(logits, order, base, dtype) for base in ("off", "on")},
    }


def family_coefficients(
    logits: torch.Tensor, family: MaskFamily, num_blocks: int, dtype: torch.dtype
) -> dict[str, torch.Tensor]:
    """A family pass's ``(B, M, C)`` logits → its coefficients ``(B, M, C)`` in ascending set id (``family_mobius``)."""
    _, coefficients = family_mobius(
        logits, family.mask_ids(num_blocks), num_blocks, base=family.base, dim=1, dtype=dtype
    )
    return {"coefficients": coefficients}


def family_order_energies(
    logits: torch.Tensor, family: MaskFamily, num_blocks: int, dtype: torch.dtype
) -> dict[str, torch.Tensor]:
    """A family pass's ``(B, M, C)`` logits → ``(B, k + 1, C)`` float64: per class, ``Σ_{|S|=j} Δ_S[c]²``, j = 0 … k."""
    sets, coefficients = family_mobius(
        logits, family.mask_ids(num_blocks), num_blocks, base=family.base, dim=1, dtype=dtype
    )
    energy = coefficients.to(torch.float64).square()
    return {"order_energy_per_class": family_order_sums(energy, sets, family.order)}


def coefficient_agreement(family: np.ndarray, butterfly: np.ndarray) -> dict[str, Any]:
    """How far the family pass's coefficients are from the dense butterfly's (same sets, same classes)."""
    difference = np.abs(np.asarray(family, dtype=np.float64) - np.asarray(butterfly, dtype=np.float64))
    scale = float(np.abs(butterfly).max())
    worst = float(difference.max())
    return {
        "max_abs_difference": worst,
        "max_abs_coefficient": scale,
        "relative": worst / scale if scale else 0.0,
        "bit_identical": bool(worst == 0.0),
    }


def committed_energies(per_class: np.ndarray, predicted: np.ndarray) -> dict[str, np.ndarray]:
    """``(N, k + 1, C)`` per-class order energies and the predicted classes → ``E_0 … E_k`` per projection
    (vector: summed over classes; scalar: the predicted class's)."""
    rows = np.arange(len(predicted))
    return {"vector": per_class.sum(axis=2), "scalar": per_class[rows, :, predicted]}
