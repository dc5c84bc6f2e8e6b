"""The degree-2 U-statistic's sums (experiment_2.past_exhaustive.sampling.u_statistics) by brute force: Q₄, ζ̂₁ and ζ̂₂ as means over
every ordered pair, triple and quadruple of distinct units; the leave-one-out sums against the kernel without that
unit; and each estimate exactly unbiased, by enumerating every sample of iid units from a three-point distribution."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from experiment_2.past_exhaustive.sampling.u_statistics import KernelSums, kernel_sums, leave_one_out, variance_parts


def symmetric_kernel(count: int, seed: int) -> np.ndarray:
    """A symmetric ``(count, count)`` kernel with a zero diagonal, right-skewed values and a non-zero mean."""
    rng = np.random.default_rng(seed)
    values = rng.lognormal(size=(count, count)) - 0.5
    kernel = values + values.T
    np.fill_diagonal(kernel, 0.0)
    return kernel


def sums_of(kernel: np.ndarray) -> KernelSums:
    rows = kernel.sum(axis=1)
    return kernel_sums(rows, np.square(kernel).sum(axis=1))


def test_the_parts_are_the_means_over_distinct_units() -> None:
    count = 7
    kernel = symmetric_kernel(count, seed=0)
    units = range(count)
    fourth = np.mean([kernel[a, b] * kernel[c, d] for a, b, c, d in itertools.permutations(units, 4)])
    third = np.mean([kernel[a, b] * kernel[a, c] for a, b, c in itertools.permutations(units, 3)])
    second = np.mean([kernel[a, b] ** 2 for a, b in itertools.permutations(units, 2)])
    statistic = np.mean([kernel[a, b] for a, b in itertools.permutations(units, 2)])
    sums = sums_of(kernel)
    first, degenerate_mean = third - fourth, second - fourth
    linear, degenerate = variance_parts(sums)
    assert linear == pytest.approx(4 * first / count, rel=1e-10)
    assert degenerate == pytest.approx(2 * (degenerate_mean - 2 * first) / (count * (count - 1)), rel=1e-10)
    assert sums.statistic() == pytest.approx(statistic, rel=1e-12)
    assert sums.variance() == pytest.approx(statistic**2 - fourth, rel=1e-10)


def test_leaving_one_out_equals_the_kernel_without_it() -> None:
    count = 9
    kernel = symmetric_kernel(count, seed=1)
    rows, seconds = kernel.sum(axis=1), np.square(kernel).sum(axis=1)
    sums = kernel_sums(rows, seconds)
    left = leave_one_out(sums, rows, seconds, kernel @ rows)
    assert left.count == count - 1
    for unit in range(count):
        rest = np.delete(np.delete(kernel, unit, axis=0), unit, axis=1)
        want = sums_of(rest)
        got = (left.total[unit], left.squares[unit], left.row_squares[unit])
        assert got == pytest.approx((want.total, want.squares, want.row_squares), rel=1e-12), unit
        assert left.variance()[unit] == pytest.approx(want.variance(), rel=1e-9), unit


def test_every_estimate_is_unbiased_over_every_sample() -> None:
    """Units iid uniform on three points, kernel a symmetric 3 × 3 table (its diagonal met when two units share a
    point): over all 3^m samples of m = 5, the mean of U is θ, the mean of U² − Q₄ is Var U, and the parts' means are
    4ζ₁/m and 2(ζ₂ − 2ζ₁)/(m(m − 1)), with ζ₁ = Var E[φ | x] and ζ₂ = Var φ of the population."""
    table = np.array([[1.0, -2.0, 0.5], [-2.0, 3.0, 4.0], [0.5, 4.0, -1.0]])
    count = 5
    theta = table.mean()
    zeta1 = table.mean(axis=1).var()
    zeta2 = table.var()
    statistics, variances, linears, degenerates = [], [], [], []
    for sample in itertools.product(range(3), repeat=count):
        kernel = table[np.ix_(sample, sample)].copy()
        np.fill_diagonal(kernel, 0.0)
        sums = sums_of(kernel)
        statistics.append(sums.statistic())
        variances.append(sums.variance())
        linear, degenerate = variance_parts(sums)
        linears.append(linear)
        degenerates.append(degenerate)
    assert np.mean(statistics) == pytest.approx(theta, rel=1e-12)
    assert np.mean(variances) == pytest.approx(np.var(statistics), rel=1e-9)
    assert np.mean(linears) == pytest.approx(4 * zeta1 / count, rel=1e-9)
    assert np.mean(degenerates) == pytest.approx(2 * (zeta2 - 2 * zeta1) / (count * (count - 1)), rel=1e-9)
    assert 4 * zeta1 / count > 0 and zeta2 - 2 * zeta1 > 0  # both parts present
