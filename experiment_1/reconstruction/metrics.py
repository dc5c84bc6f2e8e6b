"""Experiment 1's per-image metrics: how well do three readings of the set function rebuild h(full)?

For logits ``h`` of shape ``(B, 2^L, C)`` (indexed by mask integer):

- Möbius: ``Σ_S Δ_S h`` — equals ``h(full)`` exactly in exact arithmetic;
- naive subset summation: ``Σ_S h(S)`` — the "ensemble of paths" reading;
- first-order additive: ``h(∅) + Σ_l [h({l}) − h(∅)]``;

each scored by relative L2 error ``‖ĥ − h(full)‖ / ‖h(full)‖`` and top-1 agreement
``argmax ĥ = argmax h(full)``. Also the worst subset: ``max_S ‖Σ_{T⊆S} Δ_T h − h(S)‖ / ‖h(S)‖``.
The Möbius checks are computed in float32 (the seed's arithmetic) and float64.
"""

from __future__ import annotations

import torch

from experiment_1.mobius.transform import (
    empty_mask_index,
    full_mask_index,
    inverse_mobius_transform_,
    mobius_transform,
    num_blocks_from_size,
    singleton_mask_indices,
)

MASK_CHUNK = 4096  # masks per step of the per-subset error (chunk · C float64 temporaries per image)
# live bytes of reconstruction_metrics besides its input, in units of the float32 logits' bytes
# (tests/experiment_1/network/test_gpu_readiness.py measures it)
PEAK_LOGIT_MULTIPLE = 2.6


def relative_error(estimate: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """``‖estimate − target‖₂ / ‖target‖₂`` over the last dimension."""
    return (estimate - target).norm(dim=-1) / target.norm(dim=-1)


def top1_agreement(estimate: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """1.0 where ``argmax estimate == argmax target`` (last dimension), else 0.0."""
    return (estimate.argmax(dim=-1) == target.argmax(dim=-1)).to(torch.float64)


def reconstruction_metrics(
    logits: torch.Tensor, labels: torch.Tensor, mask_chunk: int = MASK_CHUNK
) -> dict[str, torch.Tensor]:
    """All of Experiment 1's per-image numbers for a batch of all-mask logits ``(B, 2^L, C)``.

    Memory: besides ``logits`` (float32), at most one float64 copy of them (the float64 coefficients, then the
    subsets rebuilt from them in place) and two float64 temporaries of ``mask_chunk`` masks (at most 1/8 of
    them) are alive — 2.5× the logits' bytes plus per-image vectors (:data:`PEAK_LOGIT_MULTIPLE`; 2.25× at L = 16).
    Every number is the one the whole-tensor expressions give,
    bit for bit (the per-subset norms do not depend on how many subsets are taken at once).
    """
    num_blocks = num_blocks_from_size(logits.shape[1])
    full = logits[:, full_mask_index(num_blocks)].double()
    empty = logits[:, empty_mask_index(num_blocks)].double()
    singles = logits[:, singleton_mask_indices(num_blocks)].double()
    metrics: dict[str, torch.Tensor] = {}
    for name, dtype in (("float32", torch.float32), ("float64", torch.float64)):
        coefficients = mobius_transform(logits, dim=1, dtype=dtype)
        total = coefficients.sum(dim=1)
        metrics[f"mobius_rel_error_{name}"] = relative_error(total.double(), full)
        metrics[f"mobius_top1_agreement_{name}"] = top1_agreement(total, full)
        rebuilt = inverse_mobius_transform_(coefficients, dim=1)  # the coefficients are not needed again
        del coefficients
        metrics[f"max_subset_rel_error_{name}"] = _max_subset_error(rebuilt, logits, dtype, mask_chunk)
        del rebuilt
    naive_sum = logits.double().sum(dim=1)
    first_order = empty + (singles - empty[:, None]).sum(dim=1)
    metrics["naive_sum_rel_error"] = relative_error(naive_sum, full)
    metrics["naive_sum_top1_agreement"] = top1_agreement(naive_sum, full)
    metrics["first_order_rel_error"] = relative_error(first_order, full)
    metrics["first_order_top1_agreement"] = top1_agreement(first_order, full)
    metrics["empty_top1_agreement"] = top1_agreement(empty, full)
    predicted = full.argmax(dim=-1)
    metrics["full_prediction"] = predicted
    metrics["full_correct"] = torch.where(
        labels >= 0, (predicted == labels).double(), torch.full_like(full[:, 0], float("nan"))
    )
    return metrics


def _max_subset_error(rebuilt: torch.Tensor, logits: torch.Tensor, dtype: torch.dtype, mask_chunk: int) -> torch.Tensor:
    """``max_S ‖rebuilt[S] − h(S)‖ / ‖h(S)‖`` in float64, with ``h`` = ``logits`` rounded to ``dtype``, ``mask_chunk`` masks at a time: ``(B,)``."""
    worst = []
    mask_chunk = min(mask_chunk, max(1, logits.shape[1] // 8))  # temporaries of at most 1/8 of the masks at any L
    for start in range(0, logits.shape[1], mask_chunk):
        values = logits[:, start : start + mask_chunk].to(dtype).double()
        worst.append(relative_error(rebuilt[:, start : start + mask_chunk].double(), values).amax(dim=1))
    return torch.stack(worst, dim=1).amax(dim=1)
