"""The shared equivalence helpers (experiment_1.report.verdicts: tost, decide_equivalence, parts_decision) against scipy
and at their boundaries (at, just below and just above the margin)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from experiment_1.report import (
    CANNOT_TELL,
    FAILS,
    HOLDS,
    PARTLY_CONTRADICTED,
    SATURATED,
    decide_equivalence,
    equivalence_margin,
    parts_decision,
    tost,
    tost_two_sample,
)


@pytest.mark.parametrize("seed", range(5))
def test_tost_equals_two_scipy_one_sided_t_tests(seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = rng.normal(0.1 * seed, 1.0, size=12 + seed)
    margin = 0.5
    result = tost(values, margin)
    lower = stats.ttest_1samp(values, -margin, alternative="greater").pvalue
    upper = stats.ttest_1samp(values, margin, alternative="less").pvalue
    assert result["p_lower"] == pytest.approx(lower, rel=1e-12)
    assert result["p_upper"] == pytest.approx(upper, rel=1e-12)
    assert result["p_value"] == pytest.approx(max(lower, upper), rel=1e-12)
    beyond = min(
        stats.ttest_1samp(values, margin, alternative="greater").pvalue,
        stats.ttest_1samp(values, -margin, alternative="less").pvalue,
    )
    assert result["p_beyond"] == pytest.approx(beyond, rel=1e-12)
    # the 1 − 2α t-interval is scipy's 90 % interval, and it decides as the two tests do
    interval = stats.ttest_1samp(values, 0).confidence_interval(0.9)
    assert (result["ci_low"], result["ci_high"]) == pytest.approx((interval.low, interval.high), rel=1e-10)
    inside = -margin < result["ci_low"] and result["ci_high"] < margin
    assert (decide_equivalence(result) == HOLDS) == inside


def _sample_with_upper_bound(bound: float, count: int = 20) -> np.ndarray:
    """A sample whose 90 % t-interval ends exactly at ``bound`` (centred at ``bound`` − half-width)."""
    base = np.linspace(-1.0, 1.0, count)
    half = stats.t.ppf(0.95, count - 1) * base.std(ddof=1) / np.sqrt(count)
    return base + (bound - half)


@pytest.mark.parametrize(
    ("shift", "expected"),
    [(-1e-6, HOLDS), (0.0, CANNOT_TELL), (1e-6, CANNOT_TELL)],
    ids=["just-inside", "at-the-margin", "just-beyond"],
)
def test_equivalence_at_just_inside_and_just_beyond_the_margin(shift: float, expected: str) -> None:
    margin = 0.4
    values = _sample_with_upper_bound(margin + shift)
    result = tost(values, margin)
    assert result["ci_high"] == pytest.approx(margin + shift, abs=1e-9)
    assert decide_equivalence(result) == expected


@pytest.mark.parametrize(
    ("shift", "expected"),
    [(1e-6, FAILS), (-1e-6, CANNOT_TELL)],
    ids=["wholly-beyond", "touching"],
)
def test_fails_only_when_the_interval_lies_wholly_beyond_the_margin(shift: float, expected: str) -> None:
    margin = 0.4
    count = 20
    base = np.linspace(-1.0, 1.0, count)
    half = stats.t.ppf(0.95, count - 1) * base.std(ddof=1) / np.sqrt(count)
    values = base + margin + half + shift  # the interval's low end at margin + shift
    assert decide_equivalence(tost(values, margin)) == expected
    assert decide_equivalence(tost(-values, margin)) == expected  # the mirror, below −margin


def test_a_significant_shift_inside_the_margin_is_equivalence_not_failure() -> None:
    values = np.full(24, 0.01) + np.linspace(-0.001, 0.001, 24)  # every value above 0: significant, but tiny
    assert stats.ttest_1samp(values, 0).pvalue < 1e-10
    assert decide_equivalence(tost(values, 0.05)) == HOLDS


def test_no_spread_and_too_few_values() -> None:
    assert decide_equivalence(tost(np.zeros(10), 0.1)) == HOLDS  # every difference 0: inside any margin
    assert decide_equivalence(tost(np.full(10, 0.2), 0.1)) == FAILS  # every difference beyond the margin
    assert decide_equivalence(tost(np.full(10, 0.1), 0.1)) == CANNOT_TELL  # at the margin itself
    assert decide_equivalence(tost([0.0], 0.1)) == CANNOT_TELL  # one value: no test
    assert decide_equivalence(tost([], 0.1)) == CANNOT_TELL


def test_margin_is_a_fraction_of_the_effect_it_separates() -> None:
    assert equivalence_margin(-0.8, 0.25) == pytest.approx(0.2)
    assert equivalence_margin(0.0, 0.25) == 0.0


def test_parts_decision_names_a_partly_contradicted_claim() -> None:
    assert parts_decision([HOLDS, HOLDS]) == HOLDS
    assert parts_decision([HOLDS, FAILS]) == FAILS  # every part decided, one fails
    assert parts_decision([FAILS, CANNOT_TELL]) == PARTLY_CONTRADICTED
    assert parts_decision([FAILS, SATURATED, HOLDS]) == PARTLY_CONTRADICTED  # a saturated part is undecided
    assert parts_decision([CANNOT_TELL, SATURATED]) == CANNOT_TELL
    assert parts_decision([]) == CANNOT_TELL


@pytest.mark.parametrize("seed", range(4))
def test_two_sample_tost_equals_two_scipy_welch_tests(seed: int) -> None:
    rng = np.random.default_rng(seed)
    first, second = rng.normal(0, 1, size=15 + seed), rng.normal(0.2 * seed, 2, size=11)
    margin = 0.7
    result = tost_two_sample(first, second, margin)
    lower = stats.ttest_ind(second, first - margin, equal_var=False, alternative="greater").pvalue
    upper = stats.ttest_ind(second, first + margin, equal_var=False, alternative="less").pvalue
    assert (result["p_lower"], result["p_upper"]) == pytest.approx((lower, upper), rel=1e-10)
    beyond = min(
        stats.ttest_ind(second, first + margin, equal_var=False, alternative="greater").pvalue,
        stats.ttest_ind(second, first - margin, equal_var=False, alternative="less").pvalue,
    )
    assert result["p_beyond"] == pytest.approx(beyond, rel=1e-10)
    interval = stats.ttest_ind(second, first, equal_var=False).confidence_interval(0.9)
    assert (result["ci_low"], result["ci_high"]) == pytest.approx((interval.low, interval.high), rel=1e-10)
    assert result["mean"] == pytest.approx(second.mean() - first.mean())
