"""The λ^k law: how each order's Möbius energy scales with the residual scale λ.

For residual stacks that are smooth in λ, every fixed k-way interaction is ``O(λ^k)``, so the
order energy ``E_k(λ) = Σ_{|S|=k} energy(Δ_S h_λ)`` is ``O(λ^{2k})`` and ``sqrt(E_k)`` has slope
``k`` in ``log λ`` at small λ. We fit, per order k (order 0 included: ``h(∅)`` does not depend
on λ, slope 0), the least-squares slope of ``log sqrt(Ē_k(λ)) = ½ log Ē_k(λ)`` against ``log λ``
over the chosen λs, where ``Ē_k(λ)`` is the mean over images of the per-image ``E_k(λ)``.

Confidence interval: percentile bootstrap over images — resample the images with replacement
(the same resample for every λ, so each image keeps its whole λ curve), recompute ``Ē_k(λ)`` and
refit; the point estimate is the fit on all images.

Round-off floor: each logit ``h(T)[c]`` carries at least the error of rounding it to the
network's arithmetic (float32 by default; variance ``ulp²/12``). With independent errors a
coefficient of order k (a signed sum of ``2^k`` values) gets ``2^k`` times that variance, so
``floor_k = C(L,k) · 2^k · roundoff_variance`` is a lower bound on the noise energy of ``E_k``.
The forward pass accumulates more round-off than the final rounding, so an order counts as
*resolved* only where ``Ē_k ≥ FLOOR_MARGIN · floor_k`` (:mod:`experiment_2.spectrum.verdicts`, which holds the floor) at every fitted λ; slopes of unresolved
orders may measure round-off noise rather than the network.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from experiment_1.report import NUM_RESAMPLES
from experiment_2.spectrum.verdicts import FLOOR_MARGIN, roundoff_floor
from experiment_2.step_3_lambda_sweep import DEFAULT_SLOPE_TOLERANCE  # the --slope-tolerance default


def log_log_slope(lambdas: np.ndarray, mean_energies: np.ndarray) -> np.ndarray:
    """Least-squares slope of ``½ log E`` against ``log λ``: ``(n_λ,)``, ``(..., n_λ, K)`` → ``(..., K)``.

    Non-positive energies give NaN slopes.
    """
    log_lambda = np.log(np.asarray(lambdas, dtype=np.float64))
    centred = log_lambda - log_lambda.mean()
    with np.errstate(divide="ignore", invalid="ignore"):
        log_root = 0.5 * np.log(np.asarray(mean_energies, dtype=np.float64))
    log_root = np.where(np.isfinite(log_root), log_root, np.nan)
    log_root = log_root - log_root.mean(axis=-2, keepdims=True)
    return np.einsum("l,...lk->...k", centred, log_root) / (centred @ centred)


def fit_power_law(
    lambdas: np.ndarray,
    energies: np.ndarray,
    seed: int = 0,
    num_resamples: int = NUM_RESAMPLES,
    confidence: float = 0.95,
) -> dict[str, list[float]]:
    """Per-order slope of ``log sqrt(Ē_k(λ))`` vs ``log λ`` with a bootstrap-over-images CI.

    ``energies``: per-image order energies ``(N, n_λ, K)`` at ``lambdas`` ``(n_λ,)``. Returns
    ``slope``, ``ci_low``, ``ci_high`` (each a list over the K orders) and ``n``.
    """
    energies = np.asarray(energies, dtype=np.float64)
    count = energies.shape[0]
    slope = log_log_slope(lambdas, energies.mean(axis=0))
    low = high = slope
    if count > 1:
        rng = np.random.default_rng(seed)
        flat = energies.reshape(count, -1)
        slopes = np.empty((num_resamples, energies.shape[2]))
        step = max(1, 2_000_000 // count)
        for start in range(0, num_resamples, step):
            stop = min(num_resamples, start + step)
            weights = rng.multinomial(count, np.full(count, 1.0 / count), size=stop - start) / count
            slopes[start:stop] = log_log_slope(lambdas, (weights @ flat).reshape(stop - start, *energies.shape[1:]))
        tail = (1 - confidence) / 2
        low, high = np.nanquantile(slopes, [tail, 1 - tail], axis=0)
    return {
        "slope": slope.tolist(),
        "ci_low": np.asarray(low).tolist(),
        "ci_high": np.asarray(high).tolist(),
        "n": count,
    }


def power_law_summary(
    lambdas: np.ndarray,
    energies: np.ndarray,
    roundoff_variance: np.ndarray,
    seed: int,
    tolerance: float = DEFAULT_SLOPE_TOLERANCE,
) -> list[dict[str, Any]]:
    """Per order k: fitted slope with CI, the expected k, whether ``|slope − k| ≤ tolerance``,
    whether the CI contains k, and whether ``Ē_k`` clears ``FLOOR_MARGIN`` × the round-off floor.

    ``energies`` ``(N, n_λ, L+1)`` and ``roundoff_variance`` ``(N, n_λ)`` at the fitted ``lambdas``.
    """
    num_blocks = energies.shape[2] - 1
    fit = fit_power_law(lambdas, energies, seed=seed)
    mean_energy = energies.mean(axis=0)
    floors = np.stack([roundoff_floor(roundoff_variance[:, column], num_blocks) for column in range(len(lambdas))])
    with np.errstate(divide="ignore"):
        floor_ratio = (mean_energy / floors).min(axis=0)
    rows = []
    for order in range(num_blocks + 1):
        slope = fit["slope"][order]
        rows.append(
            {
                "order": order,
                "expected": order,
                "slope": slope,
                "ci_low": fit["ci_low"][order],
                "ci_high": fit["ci_high"][order],
                "within_tolerance": bool(abs(slope - order) <= tolerance),
                "ci_contains_expected": bool(fit["ci_low"][order] <= order <= fit["ci_high"][order]),
                "min_floor_ratio": float(floor_ratio[order]),
                "resolved": bool(floor_ratio[order] >= FLOOR_MARGIN),
            }
        )
    return rows
