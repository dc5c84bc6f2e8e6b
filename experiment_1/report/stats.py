"""Summary statistics: means with percentile-bootstrap 95 % confidence intervals, exact (Clopper–Pearson)
intervals for proportions of 0/1 outcomes, which small samples need (a bootstrap of 0/6 gives [0, 0]), also per
column, and the paired sign-flip permutation test per column."""

from __future__ import annotations

import numpy as np
from scipy.stats import binomtest, permutation_test

NUM_RESAMPLES = 2000


def bootstrap_mean_ci(
    values: np.ndarray, seed: int = 0, num_resamples: int = NUM_RESAMPLES, confidence: float = 0.95
) -> dict[str, float]:
    """Mean of ``values`` (1-D, NaNs dropped) with a percentile-bootstrap CI, plus median/min/max/n.

    Deterministic for a given ``seed``. With fewer than two values the CI collapses to the mean.
    """
    values = np.asarray(values, dtype=np.float64).ravel()
    values = values[~np.isnan(values)]
    count = len(values)
    if count == 0:
        nan = float("nan")
        return {"mean": nan, "ci_low": nan, "ci_high": nan, "median": nan, "min": nan, "max": nan, "n": 0}
    mean = float(values.mean())
    low = high = mean
    if count > 1:
        rng = np.random.default_rng(seed)
        means = np.empty(num_resamples)
        step = max(1, 2_000_000 // count)
        for start in range(0, num_resamples, step):
            stop = min(num_resamples, start + step)
            means[start:stop] = values[rng.integers(0, count, size=(stop - start, count))].mean(axis=1)
        tail = (1 - confidence) / 2
        low, high = (float(q) for q in np.quantile(means, [tail, 1 - tail]))
    return {
        "mean": mean,
        "ci_low": low,
        "ci_high": high,
        "median": float(np.median(values)),
        "min": float(values.min()),
        "max": float(values.max()),
        "n": count,
    }


def exact_proportion_ci(outcomes: np.ndarray, confidence: float = 0.95) -> dict[str, float]:
    """The share of true values among ``outcomes`` (1-D 0/1 or bool, NaNs dropped) with its exact Clopper–Pearson
    interval (:func:`scipy.stats.binomtest`), in the keys of :func:`bootstrap_mean_ci` plus ``successes`` and
    ``method``. With no outcome every number is NaN."""
    values = np.asarray(outcomes, dtype=np.float64).ravel()
    values = values[~np.isnan(values)]
    if not np.isin(values, (0.0, 1.0)).all():
        raise ValueError("exact_proportion_ci takes 0/1 outcomes")
    count, successes = len(values), int(values.sum())
    if count == 0:
        nan = float("nan")
        return {
            "mean": nan,
            "ci_low": nan,
            "ci_high": nan,
            "median": nan,
            "min": nan,
            "max": nan,
            "n": 0,
            "successes": 0,
            "method": "Clopper-Pearson",
        }
    interval = binomtest(successes, count).proportion_ci(confidence_level=confidence, method="exact")
    return {
        "mean": successes / count,
        "ci_low": float(interval.low),
        "ci_high": float(interval.high),
        "median": float(np.median(values)),
        "min": float(values.min()),
        "max": float(values.max()),
        "n": count,
        "successes": successes,
        "method": "Clopper-Pearson",
    }


def exact_proportion_ci_rows(matrix: np.ndarray, confidence: float = 0.95) -> dict[str, list[float]]:
    """Column-wise :func:`exact_proportion_ci` of an ``(N, K)`` matrix of 0/1 outcomes, in the keys of
    :func:`bootstrap_mean_ci_rows` (numbers only, so readers treat both alike)."""
    columns = [exact_proportion_ci(column, confidence) for column in np.asarray(matrix, dtype=np.float64).T]
    return {
        "mean": [column["mean"] for column in columns],
        "ci_low": [column["ci_low"] for column in columns],
        "ci_high": [column["ci_high"] for column in columns],
        "n": int(np.asarray(matrix).shape[0]),
    }


def sign_flip_p_rows(differences: np.ndarray, num_resamples: int = 9999, seed: int = 0) -> list[float]:
    """Per column of an ``(N, K)`` matrix of paired differences: the two-sided p of the paired sign-flip permutation test
    of mean 0 (:func:`scipy.stats.permutation_test`, exact when 2^N ≤ ``num_resamples``); 1 for a column of zeros or of one pair.
    Few non-zero pairs cannot reach a small p (3 of them: p ≥ 0.25)."""
    values = np.asarray(differences, dtype=np.float64)
    result = []
    for column in values.T:
        if len(column) < 2 or not column.any():  # one pair: its sign is all there is (p = 1)
            result.append(1.0)
            continue
        test = permutation_test(
            (column,),
            lambda sample, axis: np.mean(sample, axis=axis),
            permutation_type="samples",
            vectorized=True,
            n_resamples=num_resamples,
            alternative="two-sided",
            random_state=seed,
        )
        result.append(float(test.pvalue))
    return result


def bootstrap_mean_ci_rows(
    matrix: np.ndarray, seed: int = 0, num_resamples: int = NUM_RESAMPLES
) -> dict[str, list[float]]:
    """Column-wise means of an ``(N, K)`` matrix with CIs from one shared set of row resamples."""
    matrix = np.asarray(matrix, dtype=np.float64)
    count = matrix.shape[0]
    mean = matrix.mean(axis=0)
    if count < 2:
        return {"mean": mean.tolist(), "ci_low": mean.tolist(), "ci_high": mean.tolist(), "n": count}
    rng = np.random.default_rng(seed)
    means = np.stack([matrix[rng.integers(0, count, size=count)].mean(axis=0) for _ in range(num_resamples)])
    low, high = np.quantile(means, [0.025, 0.975], axis=0)
    return {"mean": mean.tolist(), "ci_low": low.tolist(), "ci_high": high.tolist(), "n": count}


def summarize_arrays(
    arrays: dict[str, np.ndarray], names: list[str], valid: np.ndarray, seed: int = 0
) -> dict[str, dict[str, float]]:
    """:func:`bootstrap_mean_ci` of each named per-image array over the valid images."""
    return {name: bootstrap_mean_ci(np.asarray(arrays[name])[valid], seed=seed) for name in names}
