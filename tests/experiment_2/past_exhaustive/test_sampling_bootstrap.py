"""The shared bootstrap-t intervals (experiment_2.past_exhaustive.sampling.bootstrap) against a loop over the resamples: of column
means (every column, the centres) and of a statistic with its variance estimate through their pseudo-values (every
column, the scale λ, the variance's movement), and the edges of each (no spread, round-off spreads or variances only,
non-finite input, one resample) — each quiet."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from bootstrap_by_loop import bootstrap_t_by_loop, linearised_bootstrap_t_by_loop, seed_missing_the_last

from experiment_2.past_exhaustive.sampling.bootstrap import (
    bootstrap_t_limits,
    linearised_bootstrap_t_limits,
    resample_counts,
)


def test_the_resample_counts_are_draws_with_replacement() -> None:
    counts = resample_counts(7, 50, seed=4)
    assert counts.shape == (50, 7) and counts.dtype == np.float64
    np.testing.assert_array_equal(counts.sum(axis=1), 7)
    np.testing.assert_array_equal(counts, resample_counts(7, 50, seed=4))
    assert not np.array_equal(counts, resample_counts(7, 50, seed=5))
    draws = np.random.default_rng(4).integers(0, 7, size=(50, 7))
    np.testing.assert_array_equal(counts[3], np.bincount(draws[3], minlength=7))


@pytest.mark.parametrize("tail", [0.05, 0.2])
def test_every_column_equals_the_loop(tail: float) -> None:
    rng = np.random.default_rng(0)
    samples = np.column_stack([rng.exponential(size=12), rng.normal(size=12) * 1e3 + 5e6, rng.pareto(2.0, size=12)])
    centres = np.array([0.5, 5e6 + 1.0, -2.0])
    counts = resample_counts(12, 300, seed=9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        about_means = bootstrap_t_limits(samples, tail, seed=9, resamples=300)
        about_centres = bootstrap_t_limits(samples, tail, seed=9, resamples=300, centres=centres)
    for column in range(3):
        values = samples[:, column]
        want = bootstrap_t_by_loop(values, counts, tail, values.mean())[:2]
        assert tuple(about_means[:, column]) == pytest.approx(want, rel=1e-9), column
        want = bootstrap_t_by_loop(values, counts, tail, centres[column])[:2]
        assert tuple(about_centres[:, column]) == pytest.approx(want, rel=1e-9), column
    assert (about_means[0] < samples.mean(axis=0)).all() and (samples.mean(axis=0) < about_means[1]).all()


def test_the_edges() -> None:
    """No spread: the centre; resamples of a repeated value up to round-off (four values 1e-13 apart and one far):
    left out, as the loop leaves them; a column whose one resample has no pivot: the whole line, the next column read."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        flat = bootstrap_t_limits(np.full((5, 1), 3.0), 0.05, seed=0, resamples=50, centres=np.array([2.5]))
        np.testing.assert_array_equal(flat, [[2.5], [2.5]])
        values = np.array([0.0, 0.0, 0.0, 1e-13, 10.0])
        counts = resample_counts(5, 400, seed=3)
        got = bootstrap_t_limits(values[:, None], 0.05, seed=3, resamples=400)
        assert tuple(got[:, 0]) == pytest.approx(bootstrap_t_by_loop(values, counts, 0.05, values.mean())[:2], rel=1e-9)
        seed = seed_missing_the_last()
        pair = np.column_stack([[1.0, 1.0, 1.0, 5.0], [1.0, 2.0, 4.0, 8.0]])
        one = bootstrap_t_limits(pair, 0.05, seed=seed, resamples=1)
    assert tuple(one[:, 0]) == (-np.inf, np.inf)
    low, high, kept = bootstrap_t_by_loop(pair[:, 1], resample_counts(4, 1, seed), 0.05, pair[:, 1].mean())
    assert kept == 1 and low == high  # one pivot: both quantiles are it
    assert tuple(one[:, 1]) == pytest.approx((low, high), rel=1e-12)


def test_float32_and_integer_samples_are_read_in_float64() -> None:
    """A float32 column sums in float64 like the same values given as float64 (its mean in float32 would move the limits
    by ~1e-7); integers likewise."""
    samples = (np.random.default_rng(1).normal(size=(40, 2)) * 1e3 + 1e5).astype(np.float32)
    want = bootstrap_t_limits(samples.astype(np.float64), 0.05, seed=2, resamples=200)
    np.testing.assert_allclose(bootstrap_t_limits(samples, 0.05, seed=2, resamples=200), want, rtol=1e-12)
    integers = np.arange(12).reshape(6, 2) ** 2
    np.testing.assert_allclose(
        bootstrap_t_limits(integers, 0.05, seed=2, resamples=200),
        bootstrap_t_limits(integers.astype(np.float64), 0.05, seed=2, resamples=200),
        rtol=1e-12,
    )


def correlated_pseudo_values(count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(count, 2)`` pseudo-values of two statistics and of their variances, the variances rising with the
    statistics (right-skewed, as the Walsh weights' are)."""
    rng = np.random.default_rng(seed)
    estimate_pseudo = np.column_stack([rng.lognormal(size=count), rng.normal(size=count) * 10 + 100])
    variance_pseudo = np.column_stack([0.01 * estimate_pseudo[:, 0] ** 2, 0.5 + 0.01 * rng.normal(size=count)])
    return estimate_pseudo, variance_pseudo


@pytest.mark.parametrize("tail", [0.05, 0.2])
def test_the_linearised_bootstrap_t_equals_the_loop(tail: float) -> None:
    """Every column against the loop, with an SE other than the jackknife's (so λ ≠ 1 matters) and the estimate
    other than the pseudo-values' mean; the variance's movement matters (holding it at se² gives other limits)."""
    estimate_pseudo, variance_pseudo = correlated_pseudo_values(30, seed=1)
    estimates, errors = np.array([1.5, 99.0]), np.array([0.4, 2.5])
    counts = resample_counts(30, 300, seed=6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = linearised_bootstrap_t_limits(estimates, errors, estimate_pseudo, variance_pseudo, tail, 6, 300)
        held = linearised_bootstrap_t_limits(estimates, errors, estimate_pseudo, 0 * variance_pseudo, tail, 6, 300)
    for column in range(2):
        want = linearised_bootstrap_t_by_loop(
            estimates[column], errors[column], estimate_pseudo[:, column], variance_pseudo[:, column], counts, tail
        )
        assert tuple(got[:, column]) == pytest.approx(want[:2], rel=1e-9), column
        assert want[2] == 300 and got[0, column] < estimates[column] < got[1, column]
    # the variance rises with the statistic: a resample below has a smaller SE, a larger |pivot|, so both ends sit
    # higher than with the variance held at se²
    assert (got[:, 0] > held[:, 0] + 1e-3).all()


def test_the_linearised_bootstrap_t_edges() -> None:
    """An SE of 0: the estimate; a non-finite pseudo-value (of the statistic or its variance), a non-finite SE or no
    jackknife spread: the whole line; resamples whose first-order variance is at or below round-off: left out, as the
    loop leaves them, and a column where none is left: the whole line; every other column still read."""
    estimate_pseudo, variance_pseudo = correlated_pseudo_values(20, seed=2)
    pseudo = np.column_stack([estimate_pseudo[:, 0]] * 6 + [np.full(20, 4.0)])
    variances = np.column_stack([variance_pseudo[:, 0]] * 7)
    pseudo[3, 1], variances[5, 2] = np.inf, np.nan
    errors = np.array([0.3, 0.3, 0.3, np.nan, 0.0, 0.3, 0.3])
    # column 5: the variance pseudo-values fall so far that most resamples' first-order variance is ≤ 0
    variances[:, 5] = 0.09 - 2.0 * (pseudo[:, 5] > np.median(pseudo[:, 5]))
    estimates = np.full(7, 2.0)
    counts = resample_counts(20, 200, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = linearised_bootstrap_t_limits(estimates, errors, pseudo, variances, 0.05, 4, 200)
    want = linearised_bootstrap_t_by_loop(2.0, 0.3, pseudo[:, 0], variances[:, 0], counts, 0.05)
    assert tuple(got[:, 0]) == pytest.approx(want[:2], rel=1e-9)
    for column in (1, 2, 3, 6):
        assert tuple(got[:, column]) == (-np.inf, np.inf), column
    assert tuple(got[:, 4]) == (2.0, 2.0)
    low, high, kept = linearised_bootstrap_t_by_loop(2.0, 0.3, pseudo[:, 5], variances[:, 5], counts, 0.05)
    assert 0 < kept < 150
    assert tuple(got[:, 5]) == pytest.approx((low, high), rel=1e-9)
    seed = seed_missing_the_last()  # one resample, without the last unit
    pseudo = np.column_stack([[1.0, 2.0, 4.0, 8.0]] * 2)
    variances = np.column_stack([[0.0, 0.0, 0.0, 10.0], [1.0, 1.0, 1.0, 1.0]])  # v* = 0.09 − 2.5, and 0.09
    one = linearised_bootstrap_t_limits(np.array([3.0, 3.0]), np.array([0.3, 0.3]), pseudo, variances, 0.05, seed, 1)
    assert tuple(one[:, 0]) == (-np.inf, np.inf)
    low, high, kept = linearised_bootstrap_t_by_loop(
        3.0, 0.3, pseudo[:, 1], variances[:, 1], resample_counts(4, 1, seed), 0.05
    )
    assert kept == 1 and low == high and tuple(one[:, 1]) == pytest.approx((low, high), rel=1e-12)


def test_the_linearised_bootstrap_t_reads_float64_and_its_flat_columns() -> None:
    """float32 and integer input sum in float64 like the same values given as float64; an SE of 0 gives the estimate
    with or without a jackknife spread, an SE of 1 an interval like any other; a resample whose first-order variance
    is exactly 0 has no pivot, quietly."""
    estimate_pseudo, variance_pseudo = correlated_pseudo_values(30, seed=3)
    estimates, errors = np.array([1.5, 99.0]), np.array([0.4, 1.0])
    want = linearised_bootstrap_t_limits(estimates, errors, estimate_pseudo, variance_pseudo, 0.05, 5, 200)
    narrow = [a.astype(np.float32) for a in (estimates, errors, estimate_pseudo, variance_pseudo)]
    got = linearised_bootstrap_t_limits(*narrow, 0.05, 5, 200)
    wide = [a.astype(np.float64) for a in narrow]
    np.testing.assert_allclose(got, linearised_bootstrap_t_limits(*wide, 0.05, 5, 200), rtol=1e-12)
    assert want[0, 1] < 99.0 < want[1, 1]
    integers = [np.array([3, 4]), np.array([1, 2]), np.arange(20).reshape(10, 2) ** 2, np.arange(20).reshape(10, 2)]
    np.testing.assert_allclose(
        linearised_bootstrap_t_limits(*integers, 0.05, 5, 200),
        linearised_bootstrap_t_limits(*[a.astype(np.float64) for a in integers], 0.05, 5, 200),
        rtol=1e-12,
    )
    flat = linearised_bootstrap_t_limits(
        np.array([2.0]), np.array([0.0]), np.ones((6, 1)), np.ones((6, 1)), 0.05, 0, 50
    )
    assert tuple(flat[:, 0]) == (2.0, 2.0)
    seed = seed_missing_the_last()
    pseudo = np.array([[1.0], [2.0], [4.0], [8.0]])
    variances = np.array([[0.0], [0.0], [0.0], [1.0]])  # the resample without the last: v* = 0.25 − 0.25 = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        zero = linearised_bootstrap_t_limits(np.array([3.0]), np.array([0.5]), pseudo, variances, 0.05, seed, 1)
    assert tuple(zero[:, 0]) == (-np.inf, np.inf)
