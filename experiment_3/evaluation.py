"""Experiment 3's evaluation pieces, used by step 1 (and any runner that evaluates the masks once for several experiments).

- :func:`check_ks`: the K grid (``--ks`` or all powers of two up to 2^L);
- :func:`batch_arrays`: the per-batch arrays (:func:`experiment_3.topk.topk_metrics`, floats stored as
  float32) from the ``(B, 2^L, C)`` logits of all masks, the run's configuration and the images'
  sample-list positions (which seed the random controls).
"""

from __future__ import annotations

from typing import Any

import torch

from experiment_1.errors import PipelineError
from experiment_1.mobius import power_of_two_ks
from experiment_3.topk import topk_metrics

MASS_FRACTIONS = (0.9, 0.99)
ERROR_THRESHOLDS = (0.1,)


def check_ks(ks: list[int] | None, num_blocks: int) -> list[int]:
    """The K grid: ``--ks`` sorted and de-duplicated, or all powers of two up to 2^L; each in ``[1, 2^L]``."""
    if ks is None:
        return power_of_two_ks(num_blocks)
    bad = [k for k in ks if k > 2**num_blocks]
    if bad:
        raise PipelineError(
            f"--ks {' '.join(map(str, bad))}: every K must be at most 2^L = {2**num_blocks} for this architecture"
        )
    return sorted(set(ks))


def batch_arrays(
    logits: torch.Tensor, labels: torch.Tensor, indices: torch.Tensor, config: dict[str, Any], dtype: torch.dtype
) -> dict[str, torch.Tensor]:
    """Experiment 3's per-image arrays of one batch; ``config`` holds ``ks``, ``num_random_seeds``, ``seed``,
    ``mass_fractions`` and ``error_thresholds``; ``labels`` are not used (the signature of a per-batch function)."""
    metrics = topk_metrics(
        logits,
        indices.tolist(),
        config["ks"],
        config["num_random_seeds"],
        config["seed"],
        config["mass_fractions"],
        config["error_thresholds"],
        dtype,
    )
    return {name: value.float() if value.is_floating_point() else value for name, value in metrics.items()}
