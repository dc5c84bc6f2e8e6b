"""Property tests (hypothesis) of the statistics under the verdicts: exact agreement with scipy where it has the test,
hand computations of the paired statistics when the two sides' valid positions differ, and calibration under the null
(the share of p ≤ α over many simulated data sets inside a stated band). Each test runs in a few seconds."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from experiment_1.report.stats import bootstrap_mean_ci, exact_proportion_ci, exact_proportion_ci_rows, sign_flip_p_rows
from experiment_5.association import _partial, _partial_p_value, _standardised_ranks
from paper.depth_ladder import paired_difference

FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


# ---- exact agreement with scipy


@FAST
@given(
    st.integers(1, 60).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))),
    st.sampled_from([0.8, 0.9, 0.95, 0.99]),
)
def test_exact_proportion_ci_is_binomtest_clopper_pearson(n_successes, confidence):
    n, successes = n_successes
    outcomes = np.array([1.0] * successes + [0.0] * (n - successes) + [np.nan])  # the NaN is dropped
    got = exact_proportion_ci(outcomes, confidence)
    want = scipy_stats.binomtest(successes, n).proportion_ci(confidence_level=confidence, method="exact")
    assert (got["ci_low"], got["ci_high"], got["mean"], got["n"], got["successes"]) == (
        want.low,
        want.high,
        successes / n,
        n,
        successes,
    )
    rows = exact_proportion_ci_rows(np.stack([outcomes[:-1], 1 - outcomes[:-1]], axis=1), confidence)
    assert rows["ci_low"][0] == want.low and rows["ci_high"][1] == pytest.approx(1 - want.low) and rows["n"] == n


@FAST
@given(st.lists(finite, min_size=2, max_size=30), st.integers(0, 2**16), st.sampled_from([0.9, 0.95]))
def test_bootstrap_mean_ci_is_a_hand_percentile_bootstrap(values, seed, confidence):
    values = np.asarray(values)
    got = bootstrap_mean_ci(values, seed=seed, num_resamples=500, confidence=confidence)
    draws = np.random.default_rng(seed).integers(0, len(values), size=(500, len(values)))
    low, high = np.quantile(values[draws].mean(axis=1), [(1 - confidence) / 2, (1 + confidence) / 2])
    assert got["ci_low"] == pytest.approx(low, abs=1e-9) and got["ci_high"] == pytest.approx(high, abs=1e-9)
    assert (got["mean"], got["median"], got["min"], got["max"], got["n"]) == pytest.approx(
        (values.mean(), np.median(values), values.min(), values.max(), len(values))
    )
    assert got["min"] - 1e-9 <= got["ci_low"] <= got["ci_high"] <= got["max"] + 1e-9


@FAST
@given(st.lists(finite, min_size=2, max_size=12), st.lists(st.integers(0, 11), max_size=4))
def test_bootstrap_mean_ci_drops_nans_wherever_they_sit(values, where):
    values = np.asarray(values)
    holed = values.copy()
    for index in where:
        holed = np.insert(holed, min(index, len(holed)), np.nan)
    assert bootstrap_mean_ci(holed, seed=3, num_resamples=200) == bootstrap_mean_ci(values, seed=3, num_resamples=200)


def hand_sign_flip_p(column: np.ndarray) -> float:
    """Two-sided p of the exact paired sign-flip test: the share of the 2^N sign patterns whose |mean| reaches the observed."""
    observed = abs(column.mean())
    flips = np.array(list(itertools.product((1.0, -1.0), repeat=len(column))))
    means = np.abs((flips * column).mean(axis=1))
    return float(np.mean(means >= observed * (1 - 1e-12)))


@FAST
@given(st.lists(st.floats(-10, 10, allow_nan=False).filter(lambda x: abs(x) > 1e-3), min_size=2, max_size=9))
def test_sign_flip_p_is_the_exact_enumeration(column):
    column = np.asarray(column)
    assert sign_flip_p_rows(column[:, None])[0] == pytest.approx(hand_sign_flip_p(column), abs=1e-12)


def test_sign_flip_p_degenerate_columns():
    assert sign_flip_p_rows(np.array([[0.0, 2.0, 1.0], [0.0, 3.0, -1.0]])) == pytest.approx([1.0, 0.5, 1.0])
    assert sign_flip_p_rows(np.array([[5.0]])) == [1.0]  # one pair: p = 1


@FAST
@given(st.integers(6, 40), st.integers(0, 2**16))
def test_partial_p_value_is_the_regression_t_test_with_n_minus_3_degrees_of_freedom(count, seed):
    rng = np.random.default_rng(seed)
    x, y, z = rng.normal(size=(3, count))
    y = y + 0.3 * x
    ranks = _standardised_ranks(np.stack([x, y, z]))
    rho = float(_partial(ranks[0] @ ranks[1], ranks[0] @ ranks[2], ranks[1] @ ranks[2]))
    # the same p from the coefficient of rank(y) in the least-squares fit rank(x) ~ 1 + rank(y) + rank(z)
    rx, ry, rz = (scipy_stats.rankdata(v) for v in (x, y, z))
    design = np.stack([np.ones(count), ry, rz], axis=1)
    assume(np.linalg.matrix_rank(design) == 3)  # rank(y) = ±rank(z) leaves the fit without a unique coefficient
    beta, *_ = np.linalg.lstsq(design, rx, rcond=None)
    residual = rx - design @ beta
    sigma2 = float(residual @ residual) / (count - 3)
    se = np.sqrt(sigma2 * np.linalg.inv(design.T @ design)[1, 1])
    want = 2 * scipy_stats.t.sf(abs(beta[1] / se), count - 3)
    assert _partial_p_value(rho, count) == pytest.approx(want, rel=1e-8, abs=1e-14)


def test_partial_p_value_edges():
    assert np.isnan(_partial_p_value(0.5, 3)) and np.isnan(_partial_p_value(float("nan"), 10))
    assert _partial_p_value(1.0, 10) == 0.0 and _partial_p_value(-1.0, 10) == 0.0
    assert _partial_p_value(0.0, 4) == pytest.approx(1.0)


# ---- paired statistics by hand when the two sides' valid positions differ


@FAST
@given(
    st.sets(st.integers(0, 30), min_size=1, max_size=20),
    st.sets(st.integers(0, 30), min_size=1, max_size=20),
    st.integers(0, 2**16),
)
def test_paired_difference_matches_by_position(first_positions, second_positions, seed):
    rng = np.random.default_rng(seed)
    first_at = np.array(sorted(first_positions))
    second_at = rng.permutation(np.array(sorted(second_positions)))  # the second side in another order
    first_values = rng.integers(-3, 4, size=len(first_at)).astype(float)
    second_values = rng.integers(-3, 4, size=len(second_at)).astype(float)
    first_values[rng.random(len(first_at)) < 0.2] = np.nan  # invalid images on either side
    second_values[rng.random(len(second_at)) < 0.2] = np.inf
    got = paired_difference((first_at, first_values), (second_at, second_values), seed=1)
    one, two = dict(zip(first_at.tolist(), first_values)), dict(zip(second_at.tolist(), second_values))
    shared = sorted(set(one) & set(two))
    diffs = np.array([two[p] - one[p] for p in shared if np.isfinite(two[p] - one[p])])
    positive, negative = int((diffs > 0).sum()), int((diffs < 0).sum())
    assert got["shared_positions"] == shared and got["num_shared"] == len(shared) and got["num_finite"] == len(diffs)
    assert (got["positive"], got["negative"], got["ties"]) == (positive, negative, len(diffs) - positive - negative)
    want_p = scipy_stats.binomtest(positive, positive + negative).pvalue if positive + negative else 1.0
    assert got["sign_test_p"] == want_p
    want = bootstrap_mean_ci(diffs, seed=1)
    assert set(got["difference"]) == set(want)
    assert all(got["difference"][k] == want[k] or (np.isnan(got["difference"][k]) and np.isnan(want[k])) for k in want)


# ---- calibration under the null


@settings(max_examples=2, deadline=None)
@given(st.integers(0, 2**16))
def test_sign_flip_test_is_calibrated_under_the_null(seed):
    # 150 null columns of 10 pairs (exact: 1024 sign patterns): the share with p ≤ 0.05 within 4 binomial SDs of 0.05
    columns = 150
    differences = np.random.default_rng(seed).normal(size=(10, columns))
    share = np.mean(np.asarray(sign_flip_p_rows(differences)) <= 0.05)
    band = 4 * np.sqrt(0.05 * 0.95 / columns)
    assert 0.05 - band <= share <= 0.05 + band


@settings(max_examples=3, deadline=None)
@given(st.integers(0, 2**16))
def test_partial_spearman_p_is_calibrated_under_the_null(seed):
    replicates, count = 2000, 20
    x, y, z = np.random.default_rng(seed).normal(size=(3, replicates, count))
    rx, ry, rz = (_standardised_ranks(v) for v in (x, y, z))  # x, y, z independent: the partial ρ of x, y given z is 0
    rho = _partial((rx * ry).sum(-1), (rx * rz).sum(-1), (ry * rz).sum(-1))
    p = np.array([_partial_p_value(float(r), count) for r in rho])
    share = np.mean(p <= 0.05)
    band = 4 * np.sqrt(0.05 * 0.95 / replicates)
    assert 0.05 - band <= share <= 0.05 + band


@settings(max_examples=2, deadline=None)
@given(st.integers(0, 2**16))
def test_sign_test_of_paired_difference_is_calibrated_under_the_null(seed):
    rng = np.random.default_rng(seed)
    rejections = 0
    trials = 250
    positions = np.arange(30)
    for _ in range(trials):
        first, second = rng.normal(size=(2, 30))
        rejections += paired_difference((positions, first), (positions, second))["sign_test_p"] <= 0.05
    # the exact sign test at n = 30 has size 0.043 (binomtest, two-sided): the share within 4 SDs of it, never above α + 4 SD
    size = sum(scipy_stats.binom.pmf(k, 30, 0.5) for k in range(31) if scipy_stats.binomtest(k, 30).pvalue <= 0.05)
    band = 4 * np.sqrt(size * (1 - size) / trials)
    assert size - band <= rejections / trials <= size + band
