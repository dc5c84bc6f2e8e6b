"""The studentized bootstrap (bootstrap-t): of column means (the sub-cube intervals, over draws), and of a statistic
studentised by its own variance estimate, both resampled through their jackknife pseudo-values (the Walsh intervals
built on the pairs of masks, over the mask units).

A resample is its count of each row (:func:`resample_counts`), so the resampled means and spreads of every column are
two matrix products; the pivot of a resample is ``(mean* − mean) / (sd*/√n)``, or for a statistic
``(θ̂* − θ̂) / √v̂*``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ROUND_OFF_SPREAD", "bootstrap_t_limits", "linearised_bootstrap_t_limits", "resample_counts"]

# a resample's spread is a difference of sums, exact to about 1e-8 of the sample's (half of float64's digits): one
# below this fraction of the sample's is a repeated value up to round-off, and has no pivot
ROUND_OFF_SPREAD = 1e-6


def resample_counts(count: int, resamples: int, seed: int) -> np.ndarray:
    """``(resamples, count)`` float64: how often each of ``count`` rows appears in each bootstrap resample (``count``
    draws with replacement by ``np.random.default_rng(seed)``), so that resampled sums are matrix products."""
    draws = np.random.default_rng(seed).integers(0, count, size=(resamples, count))
    cells = (draws + count * np.arange(resamples)[:, None]).ravel()
    return np.bincount(cells, minlength=resamples * count).reshape(resamples, count).astype(np.float64)


def bootstrap_t_limits(
    samples: np.ndarray, tail: float, seed: int, resamples: int, centres: np.ndarray | None = None
) -> np.ndarray:
    """``(2, K)`` lower and upper limits of the two-sided ``1 − tail`` bootstrap-t interval for the mean of each column
    of ``(n, K)`` finite ``samples``: ``[c − t*_{1−tail/2}·se, c − t*_{tail/2}·se]`` with ``se = sd/√n``, ``t*`` the
    pivots of ``resamples`` resamples of the rows (:func:`resample_counts`, the same for every column) and ``c`` the
    column's mean, or ``centres`` where the interval is about another estimate the same ``se`` measures (the jackknife
    pseudo-values' mean is the bias-corrected estimate, not the estimate). A resample whose spread is round-off
    (:data:`ROUND_OFF_SPREAD`) has no pivot; a column with no pivot gets the whole line, one with no spread its
    centre."""
    samples = np.asarray(samples, dtype=np.float64)
    count = len(samples)
    means = samples.mean(axis=0)
    centres = means if centres is None else np.asarray(centres, dtype=np.float64)
    spreads = samples.std(axis=0, ddof=1)
    centred = samples - means  # the pivot is unchanged by the shift; the sums lose less to round-off
    counts = resample_counts(count, resamples, seed)
    sums, squares = counts @ centred, counts @ np.square(centred)  # (resamples, K)
    with np.errstate(divide="ignore", invalid="ignore"):  # a resample of one repeated value has no pivot
        deviations = np.sqrt(np.maximum(squares - sums**2 / count, 0.0) / (count - 1))
        pivots = sums / count / (deviations / np.sqrt(count))
    pivots[~(np.isfinite(pivots) & (deviations > ROUND_OFF_SPREAD * spreads))] = np.nan
    high, low = np.full(len(means), np.inf), np.full(len(means), -np.inf)  # no pivot: the whole line
    pivoted = ~np.isnan(pivots).all(axis=0)
    if pivoted.any():
        high[pivoted], low[pivoted] = np.nanquantile(pivots[:, pivoted], [1 - tail / 2, tail / 2], axis=0)
    errors = spreads / np.sqrt(count)
    with np.errstate(invalid="ignore"):  # no spread: ∞·0, replaced by the centre below
        limits = np.stack([centres - high * errors, centres - low * errors])
    flat = spreads == 0
    limits[:, flat] = centres[flat]
    return limits


def linearised_bootstrap_t_limits(
    estimates: np.ndarray,
    errors: np.ndarray,
    estimate_pseudo: np.ndarray,
    variance_pseudo: np.ndarray,
    tail: float,
    seed: int,
    resamples: int,
) -> np.ndarray:
    """``(2, K)`` lower and upper limits of the two-sided ``1 − tail`` bootstrap-t interval of each of ``K`` statistics
    ``θ̂`` (``estimates``) with standard error ``errors`` (the root of a variance estimate ``v̂``), from the jackknife
    pseudo-values ``(n, K)`` of ``θ̂`` (``estimate_pseudo``) and of ``v̂`` (``variance_pseudo``).

    Each resample (:func:`resample_counts`, the same for every column) moves both through their pseudo-values, to
    first order: ``θ̂* − θ̂ = λ · mean*(p_θ − p̄_θ)`` with ``λ = se / se_jack`` (``se_jack² = Σ (p_θ − p̄_θ)² / (n(n −
    1))``, so that the resampled spread of ``θ̂*`` is ``se``'s, not the jackknife's) and ``v̂* = se² + mean*(p_v −
    p̄_v)``; the pivot is ``(θ̂* − θ̂) / √v̂*`` and the limits ``θ̂ − t*_{1−tail/2}·se, θ̂ − t*_{tail/2}·se``. The
    pivot so carries how the variance estimate moves with the statistic (a sample that misses the heaviest units has
    both low), which resampling ``p_θ`` alone, studentised by its own spread, measures with the jackknife's variance
    instead of ``v̂``. A resample whose ``√v̂*`` is at or below :data:`ROUND_OFF_SPREAD` of ``se`` (the first-order
    ``v̂*`` can reach 0) has no pivot; a column with no pivot, with a non-finite pseudo-value or SE or with no
    jackknife spread gets the whole line, one with ``se = 0`` its estimate."""
    estimates, errors = np.asarray(estimates, dtype=np.float64), np.asarray(errors, dtype=np.float64)
    estimate_pseudo = np.asarray(estimate_pseudo, dtype=np.float64)
    variance_pseudo = np.asarray(variance_pseudo, dtype=np.float64)
    count = len(estimate_pseudo)
    limits = np.stack([np.full(len(estimates), -np.inf), np.full(len(estimates), np.inf)])
    usable = np.isfinite(estimate_pseudo).all(axis=0) & np.isfinite(variance_pseudo).all(axis=0) & np.isfinite(errors)
    deviations = estimate_pseudo[:, usable] - estimate_pseudo[:, usable].mean(axis=0)
    jackknife = np.sqrt(np.square(deviations).sum(axis=0) / (count * (count - 1)))
    columns = np.flatnonzero(usable)[jackknife > 0]
    if len(columns):
        deviations = deviations[:, jackknife > 0]
        spread = variance_pseudo[:, columns] - variance_pseudo[:, columns].mean(axis=0)
        counts = resample_counts(count, resamples, seed)
        error = errors[columns]
        shifts = error / jackknife[jackknife > 0] * (counts @ deviations) / count
        variances = np.square(error) + counts @ spread / count
        with np.errstate(divide="ignore", invalid="ignore"):  # a resample with no variance has no pivot
            pivots = shifts / np.sqrt(variances)
        pivots[~(variances > np.square(ROUND_OFF_SPREAD * error))] = np.nan
        pivoted = ~np.isnan(pivots).all(axis=0)
        if pivoted.any():
            high, low = np.nanquantile(pivots[:, pivoted], [1 - tail / 2, tail / 2], axis=0)
            chosen = columns[pivoted]
            limits[:, chosen] = np.stack(
                [estimates[chosen] - high * error[pivoted], estimates[chosen] - low * error[pivoted]]
            )
    flat = errors == 0
    limits[:, flat] = estimates[flat]
    return limits
