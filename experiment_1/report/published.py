"""The original study's published numbers (seed README and paper), for comparison in reports.

These are the only literal results in the code base, kept as data: ``PUBLISHED[experiment]`` holds a
``source`` and, per architecture, the quantities the seed or paper reports. Every summary JSON copies
its experiment's block (:func:`published_numbers`), so a REPORT shows "seed" and "ours" side by side
from JSON alone.
"""

from __future__ import annotations

import copy
from typing import Any

SEED_SOURCE = "seed README (lylybig/resnet-moe), ResNet-18 IMAGENET1K_V1, N = 10000 ImageNet test images"
SEED_SOURCE_VAL = (
    "seed README (lylybig/resnet-moe), ResNet-18 IMAGENET1K_V1, N = 10000 ImageNet validation images (10 per class)"
)

PUBLISHED: dict[str, dict[str, Any]] = {
    "experiment_1": {
        "source": SEED_SOURCE,
        "resnet18": {
            "mobius_rel_error": 1e-6,
            "naive_sum_rel_error": 80.0,
            "full_mask_top1_val_sample": 0.6994,
            "torchvision_top1": 0.6976,
        },
    },
    "experiment_2": {
        "source": SEED_SOURCE + "; paper for ResNet-34",
        "resnet18": {"peak_order": 5, "kappa_vector": 5.0, "c_le3": 0.14},
        "resnet34": {"peak_order": 10},
    },
    "experiment_3ab": {
        "source": SEED_SOURCE,
        "resnet18": {
            "kappa_at_lambda_1": 5.00,
            "kappa_at_lambda_0.1": 1.14,
            "kappa_monotonic": True,
            "agreement_range_lambda_0.8_to_1": [0.73, 1.00],
        },
    },
    "experiment_3": {
        "source": SEED_SOURCE,
        "resnet18": {
            "captured_energy_at_64": 0.94,
            "top1_agreement_magnitude_at_128": 0.88,
            "top1_agreement_controls_below": 0.01,
            "improvement_over_random": 130,
        },
    },
    "experiment_4": {
        "source": SEED_SOURCE_VAL,
        "resnet18": {
            "nn_accuracy_scalar_k32": 0.242,
            "nn_accuracy_over_chance": 240,
            "chance": 0.001,
            "vector_ranking": "near-global",
        },
    },
    "experiment_5": {
        "source": SEED_SOURCE_VAL,
        "resnet18": {
            "n_eff_vector_hard_minus_easy": 1.4,
            "k_tau_err_hard_minus_easy": 2.8,
            "invariant_measures": ["kbar", "kappa", "c_le3"],
        },
    },
}


def published_numbers(experiment: str) -> dict[str, Any]:
    """A copy of ``PUBLISHED[experiment]`` for a summary's ``published`` block."""
    if experiment not in PUBLISHED:
        raise KeyError(f"no published numbers for '{experiment}'; known: {', '.join(PUBLISHED)}")
    return copy.deepcopy(PUBLISHED[experiment])


def published_value(block: dict[str, Any], arch: str, quantity: str) -> Any | None:
    """``quantity`` for ``arch`` in a summary's ``published`` block, or ``None`` where the seed and paper give none."""
    return block.get(arch, {}).get(quantity)
