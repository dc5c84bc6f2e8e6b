"""The original study's published numbers (seed README and paper), for comparison in reports.

These are the only literal results in the code base; every summary JSON copies the ones its
experiment compares against, so a REPORT shows "seed" and "ours" side by side from JSON alone.
"""
from __future__ import annotations

SEED_SOURCE = "seed README (lylybig/resnet-moe), ResNet-18 IMAGENET1K_V1, N = 10000 ImageNet test images"

EXPERIMENT_1 = {
    "source": SEED_SOURCE,
    "mobius_rel_error": 1e-6,
    "naive_sum_rel_error": 80.0,
    "full_mask_top1_val_sample": 0.6994,
    "torchvision_top1": 0.6976,
}

EXPERIMENT_2 = {
    "source": SEED_SOURCE + "; paper for ResNet-34",
    "resnet18_peak_order": 5,
    "resnet18_kappa_vector": 5.0,
    "resnet18_c_le3": 0.14,
    "resnet34_peak_order": 10,
}

EXPERIMENT_3AB = {
    "source": SEED_SOURCE,
    "kappa_at_lambda_1": 5.00,
    "kappa_at_lambda_0.1": 1.14,
    "kappa_monotonic": True,
    "agreement_range_lambda_0.8_to_1": [0.73, 1.00],
}
