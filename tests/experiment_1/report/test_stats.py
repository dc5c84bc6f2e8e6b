"""experiment_1.report.stats against independent computations."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import beta, bootstrap

from experiment_1.report.stats import bootstrap_mean_ci, bootstrap_mean_ci_rows, exact_proportion_ci


@pytest.mark.parametrize(("successes", "count"), [(0, 6), (6, 6), (3, 8), (1, 2), (17, 40)])
def test_exact_proportion_ci_is_the_clopper_pearson_interval(successes: int, count: int) -> None:
    outcomes = np.array([1] * successes + [0] * (count - successes), dtype=float)
    result = exact_proportion_ci(outcomes)
    low = 0.0 if successes == 0 else beta.ppf(0.025, successes, count - successes + 1)
    high = 1.0 if successes == count else beta.ppf(0.975, successes + 1, count - successes)
    assert result["mean"] == successes / count and result["n"] == count and result["successes"] == successes
    assert result["ci_low"] == pytest.approx(low, abs=1e-12) and result["ci_high"] == pytest.approx(high, abs=1e-12)


@pytest.mark.parametrize("confidence", [0.9, 0.99])
def test_exact_proportion_ci_at_another_confidence(confidence: float) -> None:
    result = exact_proportion_ci(np.array([1.0] * 3 + [0.0] * 5), confidence=confidence)
    tail = (1 - confidence) / 2
    assert result["ci_low"] == pytest.approx(beta.ppf(tail, 3, 6), abs=1e-12) and result["ci_high"] == pytest.approx(
        beta.ppf(1 - tail, 4, 5), abs=1e-12
    )


def test_zero_of_six_is_not_a_point_interval() -> None:
    result = exact_proportion_ci(np.zeros(6))
    assert result["ci_low"] == 0.0 and result["ci_high"] == pytest.approx(0.4593, abs=1e-4)


def test_exact_proportion_ci_refuses_non_binary_outcomes() -> None:
    with pytest.raises(ValueError, match="0/1"):
        exact_proportion_ci(np.array([0.0, 0.5, 1.0]))


# --------------------------------------------------------------------------------------------
# The percentile bootstraps against scipy.stats.bootstrap on the same resamples (same seed, same draws)


def scipy_percentile_ci(
    values: np.ndarray, seed: int, confidence: float = 0.95, num_resamples: int = 2000
) -> tuple[float, float]:
    """scipy's percentile bootstrap of the mean, drawing its resamples from ``default_rng(seed)`` as ours do."""
    result = bootstrap(
        (values,),
        np.mean,
        n_resamples=num_resamples,
        method="percentile",
        confidence_level=confidence,
        rng=np.random.default_rng(seed),
        vectorized=True,
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


@pytest.mark.parametrize(("count", "seed"), [(2, 0), (37, 3), (1500, 7)])  # 1500: the resamples are drawn in chunks
def test_bootstrap_mean_ci_is_scipys_percentile_bootstrap(count: int, seed: int) -> None:
    values = np.random.default_rng(100 + count).lognormal(size=count)
    result = bootstrap_mean_ci(values, seed=seed)
    low, high = scipy_percentile_ci(values, seed)
    assert result["ci_low"] == pytest.approx(low, rel=1e-12, abs=1e-12) and result["ci_high"] == pytest.approx(
        high, rel=1e-12, abs=1e-12
    )
    assert result["mean"] == pytest.approx(values.mean(), rel=1e-15) and result["n"] == count
    narrow = bootstrap_mean_ci(values, seed=seed, confidence=0.5)
    assert (narrow["ci_low"], narrow["ci_high"]) == pytest.approx(
        scipy_percentile_ci(values, seed, confidence=0.5), rel=1e-12, abs=1e-12
    )


def test_bootstrap_mean_ci_drops_nans_and_collapses_below_two_values() -> None:
    values = np.array([1.0, np.nan, 4.0, 2.5, np.nan, 7.0])
    result = bootstrap_mean_ci(values, seed=1)
    low, high = scipy_percentile_ci(values[~np.isnan(values)], 1)
    assert (
        result["n"] == 4
        and result["mean"] == 3.625
        and result["median"] == 3.25
        and (result["min"], result["max"]) == (1.0, 7.0)
    )
    assert (result["ci_low"], result["ci_high"]) == pytest.approx((low, high), rel=1e-12)
    single = bootstrap_mean_ci(np.array([2.0]))
    assert (single["ci_low"], single["mean"], single["ci_high"]) == (2.0, 2.0, 2.0)


def test_bootstrap_of_a_two_point_sample_has_its_exact_percentiles() -> None:
    # {0, 1}: a resample mean is 0, 1/2 or 1 with probabilities 1/4, 1/2, 1/4; the 2.5 % and 97.5 % points are 0 and 1
    result = bootstrap_mean_ci(np.array([0.0, 1.0]), seed=0, num_resamples=4000)
    assert (result["ci_low"], result["ci_high"]) == (0.0, 1.0)


def test_bootstrap_mean_ci_rows_is_scipys_bootstrap_of_each_column_on_the_shared_rows() -> None:
    matrix = np.random.default_rng(6).normal(size=(37, 4)) * np.array([1.0, 10.0, 0.1, 3.0])
    result = bootstrap_mean_ci_rows(matrix, seed=4)
    assert result["n"] == 37 and result["mean"] == pytest.approx(matrix.mean(axis=0).tolist(), rel=1e-15)
    for column in range(matrix.shape[1]):
        low, high = scipy_percentile_ci(matrix[:, column], 4)
        assert result["ci_low"][column] == pytest.approx(low, rel=1e-12) and result["ci_high"][column] == pytest.approx(
            high, rel=1e-12
        )
    single = bootstrap_mean_ci_rows(matrix[:1])
    assert single["ci_low"] == single["mean"] == single["ci_high"] == matrix[0].tolist()
