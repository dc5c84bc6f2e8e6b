"""experiment_1.report.stats against independent computations."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import beta, binomtest, bootstrap, permutation_test

from experiment_1.report.stats import (
    bootstrap_mean_ci,
    bootstrap_mean_ci_rows,
    exact_proportion_ci,
    exact_proportion_ci_rows,
    sign_flip_p_rows,
    summarize_arrays,
)

SUMMARY_KEYS = ("mean", "ci_low", "ci_high", "median", "min", "max", "n")


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
    with pytest.raises(ValueError, match="^exact_proportion_ci takes 0/1 outcomes$"):
        exact_proportion_ci(np.array([0.0, 0.5, 1.0]))


def test_exact_proportion_ci_names_every_number_and_its_method() -> None:
    result = exact_proportion_ci(np.array([1.0, 0.0, 1.0, np.nan, 1.0]))
    interval = binomtest(3, 4).proportion_ci(confidence_level=0.95, method="exact")
    assert result == {
        "mean": 0.75,
        "ci_low": interval.low,
        "ci_high": interval.high,
        "median": 1.0,
        "min": 0.0,
        "max": 1.0,
        "n": 4,
        "successes": 3,
        "method": "Clopper-Pearson",
    }


def test_no_value_gives_nan_in_every_key_and_n_0() -> None:
    empty = bootstrap_mean_ci(np.array([np.nan, np.nan]))
    assert tuple(empty) == SUMMARY_KEYS and empty["n"] == 0
    assert all(isinstance(empty[key], float) and np.isnan(empty[key]) for key in SUMMARY_KEYS[:-1])
    proportion = exact_proportion_ci(np.array([np.nan]))
    assert tuple(proportion) == (*SUMMARY_KEYS, "successes", "method")
    assert (proportion["n"], proportion["successes"], proportion["method"]) == (0, 0, "Clopper-Pearson")
    assert all(isinstance(proportion[key], float) and np.isnan(proportion[key]) for key in SUMMARY_KEYS[:-1])


def test_exact_proportion_ci_rows_is_each_column_at_95_percent_by_default() -> None:
    matrix = np.array([[1, 0, 1], [1, 0, 0], [0, 0, 1], [1, 1, 1], [1, 0, 1]], dtype=float)
    rows = exact_proportion_ci_rows(matrix)
    intervals = [binomtest(int(column.sum()), 5).proportion_ci(confidence_level=0.95) for column in matrix.T]
    assert rows == {
        "mean": [0.8, 0.2, 0.8],
        "ci_low": [interval.low for interval in intervals],
        "ci_high": [interval.high for interval in intervals],
        "n": 5,
    }


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


def test_bootstrap_defaults_are_seed_0_2000_resamples_95_percent() -> None:
    values = np.random.default_rng(8).lognormal(size=25)
    result = bootstrap_mean_ci(values)
    assert (result["ci_low"], result["ci_high"]) == pytest.approx(scipy_percentile_ci(values, 0), rel=1e-12, abs=1e-12)
    matrix = np.random.default_rng(9).normal(size=(25, 2))
    rows = bootstrap_mean_ci_rows(matrix)
    for column in range(2):
        assert (rows["ci_low"][column], rows["ci_high"][column]) == pytest.approx(
            scipy_percentile_ci(matrix[:, column], 0), rel=1e-12, abs=1e-12
        )


def test_the_bootstraps_compute_in_float64_whatever_the_input_dtype() -> None:
    values = np.random.default_rng(10).lognormal(size=(40, 3)).astype(np.float32)
    assert bootstrap_mean_ci(values[:, 0], seed=2) == bootstrap_mean_ci(values[:, 0].astype(np.float64), seed=2)
    assert bootstrap_mean_ci_rows(values, seed=2) == bootstrap_mean_ci_rows(values.astype(np.float64), seed=2)


def test_summarize_arrays_is_the_bootstrap_of_each_named_array_over_the_valid_images() -> None:
    rng = np.random.default_rng(12)
    arrays = {"a": rng.normal(size=30), "b": rng.lognormal(size=30), "unused": rng.normal(size=30)}
    valid = rng.random(30) < 0.7
    assert summarize_arrays(arrays, ["a", "b"], valid, seed=5) == {
        name: bootstrap_mean_ci(arrays[name][valid], seed=5) for name in ("a", "b")
    }
    assert summarize_arrays(arrays, ["b"], valid) == {"b": bootstrap_mean_ci(arrays["b"][valid], seed=0)}


# --------------------------------------------------------------------------------------------
# The sign-flip test against scipy.stats.permutation_test where 2^N exceeds the resamples (random flips)


def scipy_sign_flip_p(column: np.ndarray, num_resamples: int, seed: int) -> float:
    test = permutation_test(
        (column,),
        lambda sample, axis: np.mean(sample, axis=axis),
        permutation_type="samples",
        n_resamples=num_resamples,
        random_state=seed,
    )
    return float(test.pvalue)


def test_sign_flip_p_draws_its_flips_as_scipy_does_by_default_and_when_told() -> None:
    differences = np.random.default_rng(13).normal(size=(14, 2)) + np.array([0.3, 0.0])  # 2^14 > 9999: random flips
    assert sign_flip_p_rows(differences) == [scipy_sign_flip_p(column, 9999, 0) for column in differences.T]
    assert sign_flip_p_rows(differences, num_resamples=300, seed=4) == [
        scipy_sign_flip_p(column, 300, 4) for column in differences.T
    ]


def test_sign_flip_p_compares_in_float64_for_float32_input() -> None:
    # (+, −) has |mean| 999.999 / 2, 2·10⁻⁶ below the observed: float64's tolerance keeps it below, float32's (10⁻⁵) not
    differences = np.array([[1000.0], [0.001]])
    assert sign_flip_p_rows(differences) == sign_flip_p_rows(differences.astype(np.float32)) == [0.5]


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


@pytest.mark.parametrize("value", [np.inf, -np.inf, 0.1])
def test_one_value_is_its_own_interval_even_when_infinite(value: float) -> None:
    # a bootstrap of one infinite value would give NaN bounds (np.quantile of all-inf means interpolates inf − inf);
    # the collapse keeps [value, value], so a non-finite guard reads ±inf, never a NaN that hides which side it is
    result = bootstrap_mean_ci(np.array([value, np.nan]))
    assert (result["ci_low"], result["mean"], result["ci_high"], result["n"]) == (value, value, value, 1)


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
    assert single["ci_low"] == single["mean"] == single["ci_high"] == matrix[0].tolist() and single["n"] == 1
    pair = bootstrap_mean_ci_rows(matrix[:2], seed=4)  # two rows are resampled, not collapsed
    assert pair["n"] == 2 and (pair["ci_low"][0], pair["ci_high"][0]) == pytest.approx(
        scipy_percentile_ci(matrix[:2, 0], 4), rel=1e-12
    )
