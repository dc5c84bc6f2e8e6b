"""The bootstrap-t intervals of experiment_2.past_exhaustive.sampling.bootstrap computed one resample at a time: the brute-force
references for that module and the Walsh intervals built on it."""

from __future__ import annotations

import numpy as np

from experiment_2.past_exhaustive.sampling.bootstrap import ROUND_OFF_SPREAD, resample_counts


def bootstrap_t_by_loop(values: np.ndarray, counts: np.ndarray, tail: float, centre: float) -> tuple[float, float, int]:
    """Lower and upper limits about ``centre`` from the resamples ``counts`` (rows of counts per value), leaving out
    resamples whose spread is round-off; and how many resamples gave a pivot."""
    spread = values.std(ddof=1)
    pivots = []
    for row in counts:
        sample = np.repeat(values, row.astype(int))
        deviation = sample.std(ddof=1)
        if deviation > ROUND_OFF_SPREAD * spread:
            pivots.append((sample.mean() - values.mean()) / (deviation / np.sqrt(len(values))))
    high, low = np.quantile(pivots, [1 - tail / 2, tail / 2])
    error = spread / np.sqrt(len(values))
    return centre - high * error, centre - low * error, len(pivots)


def linearised_bootstrap_t_by_loop(
    estimate: float,
    error: float,
    estimate_pseudo: np.ndarray,
    variance_pseudo: np.ndarray,
    counts: np.ndarray,
    tail: float,
) -> tuple[float, float, int]:
    """Lower and upper limits of the linearised bootstrap-t of one statistic, each resample written out: the
    statistic's shift ``λ · mean*(p − p̄)`` with ``λ`` the SE over the pseudo-values' jackknife SE, its variance
    ``se² + mean*(p_v − p̄_v)``, resamples whose variance is not above round-off left out; and how many were kept."""
    count = len(estimate_pseudo)
    jackknife = np.sqrt(np.sum((estimate_pseudo - estimate_pseudo.mean()) ** 2) / (count * (count - 1)))
    pivots = []
    for row in counts:
        picked = np.repeat(np.arange(count), row.astype(int))
        shift = error / jackknife * (estimate_pseudo[picked].mean() - estimate_pseudo.mean())
        variance = error**2 + variance_pseudo[picked].mean() - variance_pseudo.mean()
        if variance > (ROUND_OFF_SPREAD * error) ** 2:
            pivots.append(shift / np.sqrt(variance))
    high, low = np.quantile(pivots, [1 - tail / 2, tail / 2])
    return estimate - high * error, estimate - low * error, len(pivots)


def seed_missing_the_last(count: int = 4) -> int:
    """A seed whose one resample of ``count`` rows leaves out the last row and is not one row repeated."""
    return next(
        s
        for s in range(1000)
        if resample_counts(count, 1, s)[0, -1] == 0 and resample_counts(count, 1, s)[0].max() < count
    )
