"""Expert-set signatures of images and how they overlap: pure, batched torch functions.

An image's ranking orders its ``2^L`` subsets (mask index ``s``, bit l = block l, the empty mask
included) by the magnitude of their Möbius coefficient:

- ``vector``: ``‖Δ_S h‖₂`` over classes;
- ``scalar``: ``|Δ_S h[c*]|`` at the full-mask predicted class ``c* = argmax h(full)``;
- ``scalar_true``: ``|Δ_S h[y]|`` at the image's true label ``y`` — the earlier class control; it
  leaks the label (same-class images share the coordinate by construction), so Experiment 4 shows
  it for contrast only.

For the class control every image is also ranked under the scalar projection onto **every class
coordinate** of the sample list (``|Δ_S h[c]|`` for each label ``c`` present; subset ids only), so
that two images can be compared in one coordinate that neither image chose
(:func:`class_ranked_subsets`).

Its top-K **signature** is the set of its first K subsets, held in index form: ``indices (N, K)``
(mask indices) with ``weights (N, K)`` — all 1 for the binary signature, the magnitudes divided by
their sum over the top-K for the weighted one (so every weighted signature has total weight 1).
As a vector over the ``2^L`` subsets (:func:`signature_matrix`) that is a row with K non-zeros.

The overlap of two signatures ``a, b`` is the weighted Jaccard ``Σ_S min(a_S, b_S) / Σ_S max(a_S, b_S)``;
on 0/1 weights it is the Jaccard ``|A ∩ B| / |A ∪ B|`` of the two sets. Because
``Σ max = Σ a + Σ b − Σ min``, only ``Σ min`` has to be computed; it is the product of the
signature matrix with its transpose (for 0/1 weights literally ``X Xᵀ``), done in chunks of dense
query rows times the keys in sparse index form (a gather at each key's K indices), or as a dense
matrix product for binary signatures when ``X`` is small (:func:`similarity_chunks`), so the
working memory stays at about ``budget`` values whatever N and ``2^L`` are; the ``(N, N)`` result
itself is what experiment_4.inference tests (8 N² bytes).
"""

from __future__ import annotations

from typing import Iterator

import torch

from experiment_1.mobius import full_mask_index, mobius_transform, rank_subsets, scalar_projection, subset_magnitudes

SIGNATURE_RANKINGS = ("vector", "scalar", "scalar_true")
DEFAULT_BUDGET = 1 << 23
MAX_ALL_SUBSETS_BLOCKS = 12
LARGE_STORE_K = 1024
CLASS_STORE_K = 64


def default_store_k(num_blocks: int) -> int:
    """How many ranked subsets step 1 keeps per image: all ``2^L`` for ``L ≤ 12``, else 1024."""
    return 2**num_blocks if num_blocks <= MAX_ALL_SUBSETS_BLOCKS else LARGE_STORE_K


def default_class_store_k(num_blocks: int) -> int:
    """How many ranked subsets step 1 keeps per image and class coordinate: 64 (all ``2^L`` below that)."""
    return min(CLASS_STORE_K, 2**num_blocks)


def index_dtype(num_subsets: int) -> torch.dtype:
    """The smallest signed integer type that holds mask indices ``0 … num_subsets − 1`` (int16 up to 2^15 subsets)."""
    return torch.int16 if num_subsets <= 2**15 else torch.int32


def ranking_magnitudes(
    coefficients: torch.Tensor, full_logits: torch.Tensor, labels: torch.Tensor
) -> dict[str, torch.Tensor]:
    """``(B, 2^L)`` magnitudes per ranking of :data:`SIGNATURE_RANKINGS` from ``(B, 2^L, C)`` coefficients."""
    one_hot_labels = torch.nn.functional.one_hot(labels.to(coefficients.device), coefficients.shape[2])
    return {
        "vector": subset_magnitudes(coefficients, full_logits, "vector"),
        "scalar": subset_magnitudes(coefficients, full_logits, "scalar"),
        # scalar_projection reads the class as the argmax of its second argument: a one-hot of y selects y.
        "scalar_true": scalar_projection(coefficients, one_hot_labels).abs(),
    }


def ranked_subsets(
    coefficients: torch.Tensor, full_logits: torch.Tensor, labels: torch.Tensor, store_k: int
) -> dict[str, torch.Tensor]:
    """Per ranking ``r``: ``ranked_r`` (the first ``store_k`` mask indices by decreasing magnitude,
    ties to the lower index; int16/int32) and ``magnitude_r`` (their magnitudes, float32), each ``(B, store_k)``."""
    num_subsets = coefficients.shape[1]
    arrays = {}
    for ranking, magnitudes in ranking_magnitudes(coefficients, full_logits, labels).items():
        order = rank_subsets(magnitudes)[:, :store_k]
        arrays[f"ranked_{ranking}"] = order.to(index_dtype(num_subsets))
        arrays[f"magnitude_{ranking}"] = magnitudes.gather(1, order).float()
    return arrays


def class_ranked_subsets(
    coefficients: torch.Tensor, classes: torch.Tensor, k: int, budget: int = DEFAULT_BUDGET
) -> torch.Tensor:
    """``(B, len(classes), k)`` int16/int32: each image's first ``k`` mask indices by decreasing
    ``|Δ_S h[c]|`` for every class coordinate ``c`` of ``classes`` (ties to the lower index).

    Done in chunks of classes so that about ``budget`` magnitudes are live (``B × 1000 × 2^16`` included).
    """
    count, num_subsets, _ = coefficients.shape
    classes = classes.to(coefficients.device)
    step = _rows_per_chunk(count * num_subsets, budget)
    parts = []
    for start in range(0, len(classes), step):
        magnitudes = coefficients[:, :, classes[start : start + step]].abs().transpose(1, 2)  # (B, chunk, 2^L)
        order = rank_subsets(magnitudes.reshape(-1, num_subsets))[:, :k]
        parts.append(order.reshape(count, -1, k).to(index_dtype(num_subsets)))
    return torch.cat(parts, dim=1)


def signature_batch(
    logits: torch.Tensor,
    labels: torch.Tensor,
    mobius_dtype: torch.dtype,
    store_k: int,
    classes: torch.Tensor,
    class_store_k: int,
) -> dict[str, torch.Tensor]:
    """Everything step 1 keeps of one batch of ``(B, 2^L, C)`` all-mask logits with ``(B,)`` labels.

    ``ranked_r`` / ``magnitude_r`` ``(B, store_k)`` per ranking of :data:`SIGNATURE_RANKINGS`
    (:func:`ranked_subsets`), ``ranked_class`` ``(B, len(classes), class_store_k)`` (the scalar
    ranking in every class coordinate of ``classes``, :func:`class_ranked_subsets`), the full-mask
    logits ``full_logits`` ``(B, C)`` float32 and ``predicted`` ``(B,)`` (their argmax). The Möbius
    coefficients are taken in ``mobius_dtype``.
    """
    full = logits[:, full_mask_index(int(logits.shape[1]).bit_length() - 1)]
    coefficients = mobius_transform(logits, dim=1, dtype=mobius_dtype)
    return {
        **ranked_subsets(coefficients, full, labels, store_k),
        "ranked_class": class_ranked_subsets(coefficients, classes, class_store_k),
        "full_logits": full.float(),
        "predicted": full.argmax(dim=-1),
    }


def top_k_signatures(
    ranked: torch.Tensor, magnitudes: torch.Tensor, k: int, weighted: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """Index form of the top-``k`` signatures: ``(indices (N, k) int64, weights (N, k) float64)``.

    Binary: weights 1. Weighted: magnitudes over their top-``k`` sum (an image whose top-``k``
    magnitudes are all 0 gets the uniform ``1/k``).
    """
    if not 1 <= k <= ranked.shape[1]:
        raise ValueError(f"k = {k} must lie in 1 … {ranked.shape[1]} (the stored ranking length)")
    indices = ranked[:, :k].long()
    if not weighted:
        return indices, torch.ones(indices.shape, dtype=torch.float64)
    values = magnitudes[:, :k].double()
    total = values.sum(dim=1, keepdim=True)
    return indices, torch.where(
        total > 0, values / total.clamp_min(torch.finfo(torch.float64).tiny), torch.full_like(values, 1.0 / k)
    )


def signature_matrix(indices: torch.Tensor, weights: torch.Tensor, num_subsets: int) -> torch.Tensor:
    """Dense ``(N, num_subsets)`` signatures: row i holds ``weights[i]`` at ``indices[i]``, 0 elsewhere."""
    return torch.zeros(indices.shape[0], num_subsets, dtype=weights.dtype).scatter_(1, indices, weights)


def _jaccard(overlap: torch.Tensor, mass_a: torch.Tensor, mass_b: torch.Tensor) -> torch.Tensor:
    """``Σ min / Σ max`` with ``Σ max = Σ a + Σ b − Σ min``."""
    return overlap / (mass_a + mass_b - overlap)


def _rows_per_chunk(columns: int, budget: int) -> int:
    return max(1, budget // max(columns, 1))


def similarity_chunks(
    indices: torch.Tensor,
    weights: torch.Tensor,
    num_subsets: int,
    budget: int = DEFAULT_BUDGET,
    queries: torch.Tensor | None = None,
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Weighted Jaccard of every signature (or only of the ``queries``, image positions) against all N, one chunk of
    rows at a time: yields ``(rows, (len(rows), N))``.

    ``Σ_S min(a_S, b_S)`` is the product of the chunk's dense rows with the keys: in sparse index
    form (the rows gathered at each key's K indices, minimised with the key's weights, summed), or —
    when every weight is 1, so that ``min(a, b) = a·b``, and the dense ``(N, 2^L)`` matrix fits in
    ``budget`` — as the dense matrix product ``X_rows Xᵀ`` (integer counts, exact in float64 either way).
    """
    count, k = indices.shape
    queries = torch.arange(count) if queries is None else queries
    mass = weights.sum(dim=1)
    dense_keys = (
        signature_matrix(indices, weights, num_subsets)
        if bool((weights == 1).all()) and count * num_subsets <= budget
        else None
    )
    step = _rows_per_chunk(count if dense_keys is not None else count * k, budget)
    for start in range(0, len(queries), step):
        rows = queries[start : start + step]
        if dense_keys is not None:
            overlap = dense_keys[rows] @ dense_keys.T
        else:
            query = signature_matrix(indices[rows], weights[rows], num_subsets)
            overlap = torch.minimum(query[:, indices], weights.unsqueeze(0)).sum(dim=2)  # query[:, indices]: (R, N, K)
        yield rows, _jaccard(overlap, mass[rows].unsqueeze(1), mass.unsqueeze(0))


def pairwise_similarity(
    indices: torch.Tensor, weights: torch.Tensor, num_subsets: int, budget: int = DEFAULT_BUDGET
) -> torch.Tensor:
    """The full ``(N, N)`` weighted-Jaccard matrix, float64."""
    return torch.cat([similarity for _, similarity in similarity_chunks(indices, weights, num_subsets, budget)])


def pair_similarity(
    indices: torch.Tensor, weights: torch.Tensor, num_subsets: int, pairs: torch.Tensor, budget: int = DEFAULT_BUDGET
) -> torch.Tensor:
    """``(P,)`` float64 weighted Jaccard of the image pairs ``pairs (P, 2)``: the first image's dense row gathered at the
    second's K indices, as in :func:`similarity_chunks`' sparse form (on 0/1 weights an integer count, so exactly its entry)."""
    mass = weights.sum(dim=1)
    step = _rows_per_chunk(num_subsets, budget)
    parts = [torch.zeros(0, dtype=torch.float64)]
    for start in range(0, len(pairs), step):
        first, second = pairs[start : start + step, 0], pairs[start : start + step, 1]
        query = signature_matrix(indices[first], weights[first], num_subsets)
        overlap = torch.minimum(query.gather(1, indices[second]), weights[second]).sum(dim=1)
        parts.append(_jaccard(overlap, mass[first], mass[second]))
    return torch.cat(parts)


def membership_counts(indices: torch.Tensor, num_subsets: int) -> torch.Tensor:
    """``(num_subsets,)`` int64: in how many images' top-K each subset lies."""
    return torch.bincount(indices.reshape(-1), minlength=num_subsets)


def global_core(counts: torch.Tensor, k: int) -> torch.Tensor:
    """The ``k`` subsets most often in an image's top-K (ties to the lower mask index), ``(k,)`` int64 in rank order."""
    return rank_subsets(counts.unsqueeze(0).double())[0, :k]


def core_share(indices: torch.Tensor, core: torch.Tensor) -> torch.Tensor:
    """``(N,)`` float: the fraction of each image's top-K subsets that lie in ``core``."""
    return torch.isin(indices, core).double().mean(dim=1)


def subsets_covering(counts: torch.Tensor, fractions: list[float]) -> list[int]:
    """For each fraction η, the fewest subsets whose memberships make up at least η of all top-K memberships."""
    cumulative = counts.sort(descending=True).values.cumsum(0).double() / counts.sum()
    return [
        int(torch.searchsorted(cumulative, torch.tensor([fraction], dtype=torch.float64) - 1e-12).item()) + 1
        for fraction in fractions
    ]


def gate_set(mask: int, num_blocks: int) -> str:
    """A mask index as its gate set, e.g. ``0b101010`` → ``{1,3,5}`` (``{}`` for the empty mask)."""
    return "{" + ",".join(str(block) for block in range(num_blocks) if mask >> block & 1) + "}"
