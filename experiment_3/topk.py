"""Experiment 3's controls and per-batch metrics, on the core's top-K primitives (:mod:`experiment_1.mobius.sparsity`).

Controls (:data:`CONTROLS`) are permutations fed to :func:`~experiment_1.mobius.sparsity.cumulative_reconstruction`:
``random`` (uniform; its prefixes are random K-subsets for every K at once), ``order_matched`` (walks
a ranking and takes at each position the next unused random subset of the same order, so every
prefix has the ranking's order histogram) and ``low_order_first`` (by increasing order, random
within an order). Each draw is seeded by ``(seed, control, draw, sample index)`` only
(:func:`control_generator`). :func:`topk_metrics` computes Experiment 3's per-image arrays.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from experiment_1.mobius import (
    RANKINGS,
    captured_fraction,
    cumulative_reconstruction,
    full_mask_index,
    mobius_transform,
    num_blocks_from_size,
    participation_ratio,
    rank_subsets,
    scalar_projection,
    smallest_k_reaching_mass,
    subset_magnitudes,
    subset_orders,
)

# --- Controls and the per-batch metrics of experiment_3.step_1_evaluate ------------------------------

CONTROLS = ("random", "order_matched", "low_order_first")
SOURCES = (
    "magnitude_vector",
    "magnitude_scalar",
    "order_matched_vector",
    "order_matched_scalar",
    "random",
    "low_order_first",
)
CURVE_METRICS = ("captured_energy", "captured_scalar_energy", "relative_error", "top1_agreement")
TRUNK_REMOVED = "trunk_removed_vector"
"""The trunk-removed variant: the vector ranking over S ≠ ∅ only, reconstructing h(full) − h(∅) (the interactions'
part of the function) and scored against its top-1 class, so the trunk cannot carry the agreement (runs before it
was added lack it)."""


def control_generator(seed: int, control: str, draw: int, sample_index: int) -> torch.Generator:
    """A CPU generator seeded from ``(seed, control, draw, sample index)`` alone, so a control's
    permutation of an image does not depend on batch size, batch order or resuming."""
    state = np.random.SeedSequence([seed, CONTROLS.index(control), draw, sample_index]).generate_state(
        2, dtype=np.uint32
    )
    return torch.Generator().manual_seed(int(state[0]) << 31 | int(state[1]) >> 1)


def low_order_first_permutation(num_blocks: int, generator: torch.Generator) -> torch.Tensor:
    """All ``2^L`` masks by increasing order, uniformly shuffled within each order: ``(2^L,)`` int64."""
    shuffled = torch.randperm(2**num_blocks, generator=generator)
    return shuffled[torch.argsort(subset_orders(num_blocks)[shuffled], stable=True)]


def order_matched_permutation(ranking: torch.Tensor, num_blocks: int, generator: torch.Generator) -> torch.Tensor:
    """Walk ``ranking`` ``(2^L,)`` and put at each position the next unused random subset of the same
    order, so every prefix has the ranking's order histogram: ``(2^L,)`` int64 (on ``ranking``'s device)."""
    orders = subset_orders(num_blocks)
    pool = low_order_first_permutation(num_blocks, generator)  # grouped by order, random within
    positions = torch.argsort(orders[ranking.cpu()], stable=True)  # grouped by order, in ranking order within
    matched = torch.empty_like(pool)
    matched[positions] = pool
    return matched.to(ranking.device)  # (no copies when ranking is on the CPU, as control_permutations passes it)


def control_permutations(
    control: str,
    num_blocks: int,
    seed: int,
    draw: int,
    sample_indices: Sequence[int],
    ranking: torch.Tensor | None = None,
) -> torch.Tensor:
    """One draw of a control for a batch: ``(B, 2^L)`` int64, image ``b`` seeded by ``sample_indices[b]``.

    ``random``: a uniformly random permutation (its first K entries are a random K-subset for every
    K at once); ``low_order_first``: :func:`low_order_first_permutation`; ``order_matched``:
    :func:`order_matched_permutation` of ``ranking`` ``(B, 2^L)`` (required only for it).
    """
    rows = []
    ranking_on_host = ranking.cpu() if ranking is not None else None  # one copy per batch, not one per image
    for row, sample_index in enumerate(sample_indices):
        generator = control_generator(seed, control, draw, int(sample_index))
        if control == "random":
            rows.append(torch.randperm(2**num_blocks, generator=generator))
        elif control == "low_order_first":
            rows.append(low_order_first_permutation(num_blocks, generator))
        elif control == "order_matched":
            rows.append(order_matched_permutation(ranking_on_host[row], num_blocks, generator))
        else:
            raise ValueError(f"unknown control {control!r}; expected one of {CONTROLS}")
    device = ranking.device if ranking is not None else None
    return torch.stack(rows).to(device)


def top_k_order_histograms(permutation: torch.Tensor, ks: Sequence[int]) -> torch.Tensor:
    """How many of the first K subsets of ``permutation`` have each order ``0 … L``: ``(B, 2^L)`` → ``(B, len(ks), L+1)`` int64."""
    num_blocks = num_blocks_from_size(permutation.shape[1])
    orders = subset_orders(num_blocks, device=permutation.device)[permutation]
    counts = torch.nn.functional.one_hot(orders, num_blocks + 1).cumsum(dim=1)
    return counts[:, torch.as_tensor(list(ks), device=permutation.device) - 1]


def trunk_removed_ranking(ranking: torch.Tensor) -> torch.Tensor:
    """``ranking`` ``(B, 2^L)`` with ∅ (mask 0) moved to the end: the order of the S ≠ ∅ kept, ∅ ranked last."""
    keep = ranking != 0
    return torch.cat([ranking[keep].reshape(ranking.shape[0], -1), torch.zeros_like(ranking[:, :1])], dim=1)


def topk_metrics(
    logits: torch.Tensor,
    sample_indices: Sequence[int],
    ks: Sequence[int],
    num_random_seeds: int,
    seed: int,
    mass_fractions: Sequence[float],
    error_thresholds: Sequence[float],
    dtype: torch.dtype = torch.float64,
) -> dict[str, torch.Tensor]:
    """Experiment 3's per-image arrays for a batch of all-mask logits ``(B, 2^L, C)``.

    For every source — the magnitude rankings ``magnitude_vector`` / ``magnitude_scalar``, the
    ``order_matched_vector`` / ``order_matched_scalar`` controls (matched to that ranking), ``random``
    and ``low_order_first`` — with D draws (1 for a ranking, ``num_random_seeds`` for a control):
    ``{metric}_{source}`` ``(B, D, len(ks))`` for each of :data:`CURVE_METRICS` (captured vector
    energy Γ_K, captured scalar energy, relative L2 error, top-1 agreement), ``k_mass_{source}``
    ``(B, D, len(mass_fractions))``, ``k_error_{source}`` ``(B, D, len(error_thresholds))``; the same for the
    :data:`TRUNK_REMOVED` source (∅'s coefficient zeroed, the target h(full) − h(∅), energies without ∅). Plus
    ``k_eff_vector`` / ``k_eff_scalar`` ``(B,)``, ``order_histogram_{ranking}`` ``(B, len(ks), L+1)``
    of the magnitude top-K, and ``full_prediction`` ``(B,)``. Controls are seeded per
    ``(seed, control, draw, sample index)``.
    """
    num_blocks = num_blocks_from_size(logits.shape[1])
    full = logits[:, full_mask_index(num_blocks)].to(dtype)
    coefficients = mobius_transform(logits, dim=1, dtype=dtype)
    vector_energy = coefficients.square().sum(dim=2)
    scalar_energy = scalar_projection(coefficients, full).square()
    rankings = {ranking: rank_subsets(subset_magnitudes(coefficients, full, ranking)) for ranking in RANKINGS}
    sources: dict[str, list[torch.Tensor]] = {f"magnitude_{ranking}": [rankings[ranking]] for ranking in RANKINGS}
    for draw in range(num_random_seeds):
        for ranking in RANKINGS:
            sources.setdefault(f"order_matched_{ranking}", []).append(
                control_permutations("order_matched", num_blocks, seed, draw, sample_indices, rankings[ranking])
            )
        for control in ("random", "low_order_first"):
            sources.setdefault(control, []).append(
                control_permutations(control, num_blocks, seed, draw, sample_indices).to(logits.device)
            )
    k_index = torch.as_tensor(list(ks), device=logits.device) - 1
    metrics: dict[str, torch.Tensor] = {
        "full_prediction": full.argmax(dim=1),
        "k_eff_vector": participation_ratio(vector_energy),
        "k_eff_scalar": participation_ratio(scalar_energy),
    }
    for ranking in RANKINGS:
        metrics[f"order_histogram_{ranking}"] = top_k_order_histograms(rankings[ranking], ks)
    sources[TRUNK_REMOVED] = [trunk_removed_ranking(rankings["vector"])]  # last: it zeroes ∅ in place below
    target = full
    for source, permutations in sources.items():
        draws: dict[str, list[torch.Tensor]] = {}
        if source == TRUNK_REMOVED:  # without a copy of the coefficients: no source after this one reads ∅'s
            target = full - coefficients[:, 0]
            for tensor in (coefficients, vector_energy, scalar_energy):
                tensor[:, 0] = 0  # mask 0 is ∅: its coefficient is h(∅), the trunk
        for permutation in permutations:
            result = cumulative_reconstruction(coefficients, permutation, target, ks, vector_energy, error_thresholds)
            result["captured_scalar_energy"] = captured_fraction(scalar_energy, permutation)[:, k_index]
            result["k_mass"] = smallest_k_reaching_mass(vector_energy, permutation, mass_fractions)
            result["k_error"] = result.pop("k_at_error")
            for name, value in result.items():
                draws.setdefault(name, []).append(value)
        for name, values in draws.items():
            metrics[f"{name}_{source}"] = torch.stack(values, dim=1)
    return metrics
