"""Experiment 2's evaluation: all masks → per-image spectrum arrays (shared with the 3A/3B sweep), and Experiment 2's
part of an all-mask pass (per-batch arrays → summary.json, per_image.npz).

The per-batch arrays are the order spectrum of both projections and the round-off variance of the logits. The spectrum
itself (order energies, p_k, κ, C≤3, the binomial null) is set-function mathematics and lives in
:mod:`experiment_1.mobius`; this module applies it to one batch of all-mask logits.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from experiment_1.mobius import (
    full_mask_index,
    mobius_transform,
    num_blocks_from_size,
    order_energies,
    scalar_projection,
    spectrum_statistics,
    unit_in_last_place,
    walsh_transform,
)
from experiment_1.run import (
    DTYPES,
    MOBIUS_DTYPES,
    UNSCALED,
    BatchFunction,
    EvaluationSetup,
    ExperimentPass,
    provenance,
    run_per_image,
    write_results,
)
from experiment_2.spectrum.summary import summarize

SPECTRUM_STAGE = "experiment_2.step_1_evaluate/spectrum"


def _roundoff_variance(logits: torch.Tensor, network_dtype: torch.dtype, dtype: torch.dtype) -> torch.Tensor:
    """Per image and class, the mean over masks of ``ulp(h(S)[c])² / 12`` — the variance of rounding
    each logit to ``network_dtype`` (the precision of the network's output): ``(B, 2^L, C)`` → ``(B, C)``."""
    ulp = unit_in_last_place(logits.abs().to(network_dtype)).to(dtype)
    return ulp.square_().mean(dim=1) / 12  # in place: one (B, 2^L, C) copy fewer


def spectrum_metrics(
    logits: torch.Tensor, dtype: torch.dtype = torch.float64, network_dtype: torch.dtype = torch.float32
) -> dict[str, torch.Tensor]:
    """Experiment 2's per-image arrays for a batch of all-mask logits ``(B, 2^L, C)``.

    The Möbius transform and every statistic run in ``dtype``; ``network_dtype`` is the arithmetic
    the logits were computed in (they arrive as float32 whatever it is). Keys: the
    :func:`spectrum_statistics` of the vector projection suffixed ``_vector`` and of the scalar
    projection suffixed ``_scalar``; ``full_prediction`` (``argmax h(full)``); and
    ``roundoff_variance_vector`` / ``roundoff_variance_scalar``: the variance that rounding the
    logits to ``network_dtype`` adds to each term ``h(T)`` of ``Δ_S h`` (summed over classes for
    the vector projection, class ``c`` for the scalar one). Independent rounding errors give a
    coefficient of order ``k`` the energy ``2^k`` times that, so ``C(L,k)·2^k·roundoff_variance``
    is a lower bound on the round-off floor of ``E_k``.

    The same statistics in the Walsh (±1 Fourier) basis, prefixed ``walsh_`` (``walsh_energy_*``: ``W_k``, the energy of
    the Walsh coefficients of order k, Σ_{k≥1} W_k = the variance of h over masks; ``walsh_kappa_*`` = κ_W, the total
    influence over the variance), and ``cancellation_ratio_*``: Σ_{k≥1} E_k / ‖h(full) − h(∅)‖², the Möbius interaction
    energy over the squared change it adds up to (1 when the coefficients are orthogonal; far above 1 when large coefficients
    cancel).
    """
    num_blocks = num_blocks_from_size(logits.shape[1])
    full = logits[:, full_mask_index(num_blocks)]
    coefficients = mobius_transform(logits, dim=1, dtype=dtype)
    roundoff = _roundoff_variance(logits, network_dtype, dtype)
    predicted = full.argmax(dim=-1)
    metrics: dict[str, torch.Tensor] = {"full_prediction": predicted}
    for projection, values in (("vector", coefficients), ("scalar", scalar_projection(coefficients, full))):
        for name, value in spectrum_statistics(order_energies(values)).items():
            metrics[f"{name}_{projection}"] = value
    del coefficients  # the Walsh coefficients take its place: one (B, 2^L, C) copy at a time
    change = full.to(dtype) - logits[:, 0].to(dtype)
    walsh = walsh_transform(logits, dim=1, dtype=dtype)
    for projection, values, moved in (
        ("vector", walsh, change.square().sum(dim=1)),
        ("scalar", scalar_projection(walsh, full), change.gather(1, predicted.view(-1, 1)).squeeze(1).square()),
    ):
        for name, value in spectrum_statistics(order_energies(values)).items():
            metrics[f"walsh_{name}_{projection}"] = value
        ratio = metrics[f"energy_{projection}"][:, 1:].sum(dim=1) / moved
        metrics[f"cancellation_ratio_{projection}"] = torch.where(
            moved > 0, ratio, torch.nan
        )  # undefined when h(full) = h(∅)
    metrics["roundoff_variance_vector"] = roundoff.sum(dim=1)
    metrics["roundoff_variance_scalar"] = roundoff.gather(1, predicted.view(-1, 1)).squeeze(1)
    return metrics


def spectrum_batch_function(setup: EvaluationSetup) -> BatchFunction:
    """One batch's logits → :func:`experiment_2.spectrum.evaluation.spectrum_metrics` in the run's Möbius and network dtypes."""
    dtype, network_dtype = MOBIUS_DTYPES[setup.config.mobius_dtype], DTYPES[setup.config.dtype]

    def compute(logits: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
        return spectrum_metrics(logits, dtype, network_dtype)

    return compute


def evaluate_spectrum(
    setup: EvaluationSetup,
    residual_scale: float = UNSCALED,
    stage: str = SPECTRUM_STAGE,
    description: str = "Exp 2 spectrum",
) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Per-image spectrum arrays (:func:`experiment_2.spectrum.evaluation.spectrum_metrics`) of every image at one λ, resumably."""
    return run_per_image(
        setup, stage, spectrum_batch_function(setup), residual_scale=residual_scale, description=description
    )


def finish(setup: EvaluationSetup, arrays: dict[str, np.ndarray], timing: dict[str, Any]) -> None:
    """Write the Experiment 2 summary, per-image arrays and timing; one line on stdout."""
    summary = summarize(arrays, provenance(setup), setup.config.seed)
    path = write_results(setup, arrays, summary, timing)
    vector = summary["projections"]["vector"]
    print(
        f"wrote {path}: κ^v {vector['kappa']['mean']:.3g}, peak order {vector['mean_spectrum_peak_order']} (binomial "
        f"null κ {summary['binomial_null']['kappa']:.3g})"
    )


EXPERIMENT_2 = ExperimentPass(2, SPECTRUM_STAGE, "Exp 2 spectrum", spectrum_batch_function, finish)
