"""The spectrum evaluation that Experiment 2 and the 3A/3B sweep share: all masks → per-image spectrum arrays."""
from __future__ import annotations

import numpy as np
import torch

from experiment_1.run import DTYPES, MOBIUS_DTYPES, BatchFunction, EvaluationSetup, run_per_image
from experiment_2.spectrum.arrays import spectrum_metrics

SPECTRUM_STAGE = "experiment_2.step_1_evaluate/spectrum"


def spectrum_batch_function(setup: EvaluationSetup) -> BatchFunction:
    """One batch's logits → :func:`experiment_2.spectrum.arrays.spectrum_metrics` in the run's Möbius and network dtypes."""
    dtype, network_dtype = MOBIUS_DTYPES[setup.config.mobius_dtype], DTYPES[setup.config.dtype]

    def compute(logits: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
        return spectrum_metrics(logits, dtype, network_dtype)

    return compute


def evaluate_spectrum(setup: EvaluationSetup, residual_scale: float = 1.0, stage: str = SPECTRUM_STAGE, description: str = "Exp 2 spectrum") -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Per-image spectrum arrays (:func:`experiment_2.spectrum.arrays.spectrum_metrics`) of every image at one λ, resumably."""
    return run_per_image(setup, stage, spectrum_batch_function(setup), residual_scale=residual_scale, description=description)
