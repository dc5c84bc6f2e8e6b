"""Which blocks carry each image's prediction: the blocks' Shapley values per image (step_4_shapley), their spread over
images and classes, beside Experiment 4's expert sets; shapley.json.

Per image, from the Möbius coefficients of an exhaustive pass (:func:`experiment_1.mobius.shapley_values`):

- scalar projection (the full network's predicted class ``c*``): ``φ_l = Σ_{S ∋ l} Δ_S h[c*] / |S|``, which sum to the
  logit gain ``h(full)[c*] − h(∅)[c*]``, and the Banzhaf values ``β_l``;
- vector projection (every class): ``‖φ_l‖₂`` over the classes, the size of block ``l``'s share of the whole logit
  vector's change, and ``|φ_l[c*]| / ‖φ_l‖₂``, how much of it lies on the predicted class;
- beside Experiment 4's expert set of the image (its top-``K`` subsets by ``|Δ_S h[c*]|``, K = 32 as step 2's
  ``--nn-K``): in how many of them block ``l`` takes part.

Over images: per block, the distribution of ``φ_l`` (mean, SD, quantiles), the share of images whose largest ``φ`` is
block ``l``'s and whose ``φ_l`` is negative, and the share of ``φ_l``'s variance between the true classes
(``η² = SS_between / SS_total``, descriptive: no verdict is drawn; beside it ``(classes − 1) / (images − 1)``, its
mean under randomly permuted labels). Per image, the Spearman correlation over the blocks between ``|φ_l|`` and the
block's count in the expert set; the share of images whose largest ``|φ_l|`` is the block most often in the expert set,
and whose expert set's top subset is the trunk ``∅`` (which Shapley values leave out: they split ``h(full) − h(∅)``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from scipy import stats

from experiment_1.mobius import (
    banzhaf_values,
    full_mask_index,
    mobius_transform,
    rank_subsets,
    scalar_projection,
    shapley_values,
    subset_magnitudes,
)
from experiment_1.report import published_numbers

QUESTION = "Which residual blocks carry each image's prediction (the blocks' Shapley values), and how much does that vary over images and classes?"
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def shapley_batch(logits: torch.Tensor, mobius_dtype: torch.dtype, nn_k: int) -> dict[str, torch.Tensor]:
    """One batch of ``(B, 2^L, C)`` all-mask logits → the per-image arrays of the module docstring."""
    num_blocks = int(logits.shape[1]).bit_length() - 1
    full = logits[:, full_mask_index(num_blocks)]
    predicted = full.argmax(dim=-1)
    coefficients = mobius_transform(logits, dim=1, dtype=mobius_dtype)
    scalar = scalar_projection(coefficients, full)
    phi_vector = shapley_values(coefficients)  # (B, L, C)
    expert_set = rank_subsets(subset_magnitudes(coefficients, full, "scalar"))[:, :nn_k]  # Experiment 4's ranking
    blocks = torch.arange(num_blocks, device=expert_set.device)
    gain = (full.double() - logits[:, 0].double()).gather(1, predicted[:, None]).squeeze(1)
    return {
        "predicted": predicted,
        "gain_scalar": gain,
        "shapley_scalar": shapley_values(scalar),
        "banzhaf_scalar": banzhaf_values(scalar),
        "shapley_vector_norm": phi_vector.norm(dim=2),
        "expert_set_membership": ((expert_set[:, :, None] >> blocks) & 1).sum(dim=1),
        "expert_set_top": expert_set[:, 0],
    }


def distribution(values: np.ndarray) -> dict[str, float]:
    """Mean, SD (n − 1) and the :data:`QUANTILES` of a 1-D sample."""
    quantiles = np.quantile(values, QUANTILES)
    return {
        "mean": float(values.mean()),
        "sd": float(values.std(ddof=1)) if len(values) > 1 else 0.0,
        **{f"q{round(q * 100):02d}": float(value) for q, value in zip(QUANTILES, quantiles)},
    }


def between_class_share(values: np.ndarray, labels: np.ndarray) -> float | None:
    """``η² = Σ_c n_c (mean_c − mean)² / Σ_i (v_i − mean)²`` over the true classes; None without variance."""
    total = float(np.square(values - values.mean()).sum())
    if total == 0.0:
        return None
    classes = np.unique(labels)
    between = sum((labels == cls).sum() * (values[labels == cls].mean() - values.mean()) ** 2 for cls in classes)
    return float(between / total)


def expert_set_correlations(magnitudes: np.ndarray, membership: np.ndarray) -> np.ndarray:
    """Per image, Spearman's ρ over the blocks between ``|φ_l|`` and the block's count in the expert set (NaN where
    either is constant over the blocks)."""
    out = np.full(len(magnitudes), np.nan)
    for row, (phi, count) in enumerate(zip(magnitudes, membership)):
        if np.ptp(phi) > 0 and np.ptp(count) > 0:
            out[row] = stats.spearmanr(phi, count).statistic
    return out


def summarize(
    arrays: dict[str, np.ndarray], config: dict[str, Any], counts: dict[str, int], nn_k: int
) -> dict[str, Any]:
    """shapley.json: the per-block distributions, the class share of variance and the expert-set comparison."""
    valid = arrays["valid"].astype(bool)
    phi = arrays["shapley_scalar"][valid]
    banzhaf = arrays["banzhaf_scalar"][valid]
    norms = arrays["shapley_vector_norm"][valid]
    membership = arrays["expert_set_membership"][valid]
    gain = arrays["gain_scalar"][valid]
    labels = arrays["label"][valid]
    num_blocks = phi.shape[1]
    top_block = phi.argmax(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        on_predicted = np.where(norms > 0, np.abs(phi) / norms, np.nan)
    largest = np.abs(phi).argmax(axis=1)
    most_in_expert_set = membership.argmax(axis=1)  # ties: the lowest block
    correlations = expert_set_correlations(np.abs(phi), membership)
    defined = correlations[~np.isnan(correlations)]
    blocks = []
    for block, name in enumerate(config["block_names"]):
        blocks.append(
            {
                "block": block,
                "name": name,
                "shapley_scalar": distribution(phi[:, block]),
                "banzhaf_scalar_mean": float(banzhaf[:, block].mean()),
                "share_top": float((top_block == block).mean()),
                "share_negative": float((phi[:, block] < 0).mean()),
                "between_class_share": between_class_share(phi[:, block], labels),
                "vector_norm": distribution(norms[:, block]),
                "predicted_class_share_median": float(np.nanmedian(on_predicted[:, block])),
                "expert_set_membership_mean": float(membership[:, block].mean()),
            }
        )
    return {
        "experiment": 4,
        "step": "experiment_4.step_4_shapley",
        "question": QUESTION,
        "config": config,
        **counts,
        "num_classes": int(len(np.unique(labels))),
        "images_per_class": {
            "min": int(np.unique(labels, return_counts=True)[1].min()),
            "max": int(np.unique(labels, return_counts=True)[1].max()),
        },
        # E[η²] when the labels carry no information (a random permutation of them): (classes − 1) / (images − 1)
        "between_class_share_null": float((len(np.unique(labels)) - 1) / max(len(labels) - 1, 1)),
        "num_blocks": num_blocks,
        "nn_k": nn_k,
        "published": published_numbers("experiment_4_shapley"),
        "gain_scalar": distribution(gain),
        "share_gain_positive": float((gain > 0).mean()),
        "efficiency_max_abs_error": float(np.abs(phi.sum(axis=1) - gain).max()),
        "top_block_share_of_gain_median": float(np.nanmedian(phi.max(axis=1) / np.where(gain != 0, gain, np.nan))),
        "blocks": blocks,
        "expert_sets": {
            "spearman_median": float(np.median(defined)) if len(defined) else None,
            "spearman_q25": float(np.quantile(defined, 0.25)) if len(defined) else None,
            "spearman_q75": float(np.quantile(defined, 0.75)) if len(defined) else None,
            "num_images_defined": int(len(defined)),
            "largest_block_most_in_expert_set_share": float((largest == most_in_expert_set).mean()),
            "top_subset_is_trunk_share": float((arrays["expert_set_top"][valid] == 0).mean()),
        },
    }
