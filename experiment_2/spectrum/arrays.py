"""Experiment 2's per-batch arrays: the order spectrum of both projections and the round-off variance of the logits.

The spectrum itself (order energies, p_k, κ, C≤3, the binomial null) is set-function mathematics and lives in
:mod:`experiment_1.mobius.spectrum`; this module applies it to one batch of all-mask logits.
"""
from __future__ import annotations

import torch

from experiment_1.mobius import order_energies, scalar_projection, spectrum_statistics, unit_in_last_place
from experiment_1.mobius import full_mask_index, mobius_transform, num_blocks_from_size

__all__ = ["spectrum_metrics"]


def _roundoff_variance(logits: torch.Tensor, network_dtype: torch.dtype, dtype: torch.dtype) -> torch.Tensor:
    """Per image and class, the mean over masks of ``ulp(h(S)[c])² / 12`` — the variance of rounding
    each logit to ``network_dtype`` (the precision of the network's output): ``(B, 2^L, C)`` → ``(B, C)``."""
    ulp = unit_in_last_place(logits.abs().to(network_dtype)).to(dtype)
    return ulp.square_().mean(dim=1) / 12  # in place: one (B, 2^L, C) copy fewer


def spectrum_metrics(logits: torch.Tensor, dtype: torch.dtype = torch.float64, network_dtype: torch.dtype = torch.float32) -> dict[str, torch.Tensor]:
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
    metrics["roundoff_variance_vector"] = roundoff.sum(dim=1)
    metrics["roundoff_variance_scalar"] = roundoff.gather(1, predicted.view(-1, 1)).squeeze(1)
    return metrics
