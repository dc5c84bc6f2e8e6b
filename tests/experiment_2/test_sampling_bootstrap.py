"""The shared bootstrap-t of column means (experiment_2.sampling.bootstrap) against a loop over the resamples: the
limits of every column, the centres, and the edges (no spread, round-off spreads only, one resample) — each quiet."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from bootstrap_by_loop import bootstrap_t_by_loop, seed_missing_the_last

from experiment_2.sampling.bootstrap import bootstrap_t_limits, resample_counts


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
