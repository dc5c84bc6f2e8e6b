"""The equivalence helpers (experiment_1.report.verdicts: tost, tost_two_sample, decide_equivalence) at their edges,
compared whole to scipy or to a hand computation: two values (the smallest sample with a test), one value (no test),
no spread (each one-sided p is 0 or 1 and the interval is the point), float32 input (summed in float64), the rule with
p exactly α, and no warning on the degenerate inputs. Written against the survivors of `make mutation
MODULES=experiment_1/report/verdicts.py`."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from experiment_1.report import CANNOT_TELL, FAILS, HOLDS
from experiment_1.report.verdicts import TOST_NAME, decide_equivalence, tost, tost_two_sample


def expected(mean: float, p_lower: float, p_upper: float, p_beyond: float, low: float, high: float, **kw) -> dict:
    return {
        "name": TOST_NAME,
        "mean": mean,
        "p_lower": p_lower,
        "p_upper": p_upper,
        "p_value": max(p_lower, p_upper),
        "p_beyond": p_beyond,
        "ci_low": low,
        "ci_high": high,
        "confidence": 0.9,
        **kw,
    }


def assert_same(result: dict, wanted: dict) -> None:
    assert set(result) == set(wanted)
    for key, value in wanted.items():
        if isinstance(value, float) and math.isnan(value):
            assert math.isnan(result[key]), key
        elif isinstance(value, str):
            assert result[key] == value, key
        else:
            assert result[key] == pytest.approx(value, rel=1e-12, abs=0), key


def one_sided(values: list[float], mu: float, side: str) -> float:
    return float(stats.ttest_1samp(values, mu, alternative=side).pvalue)


def test_two_values_are_tested_against_scipy_whole() -> None:
    values, margin = [0.0, 0.2], 0.5
    interval = stats.ttest_1samp(values, 0.0).confidence_interval(0.9)
    wanted = expected(
        0.1,
        one_sided(values, -margin, "greater"),
        one_sided(values, margin, "less"),
        min(one_sided(values, margin, "greater"), one_sided(values, -margin, "less")),
        float(interval.low),
        float(interval.high),
        n=2,
        margin=margin,
    )
    assert_same(tost(values, margin), wanted)
    assert decide_equivalence(tost([0.0, 1e-3], 1.0)) == HOLDS  # n = 2 is enough for a decision
    assert decide_equivalence(tost([5.0, 5.001], 1.0)) == FAILS


def test_two_per_group_are_tested_against_scipy_welch_whole() -> None:
    first, second, margin = [0.0, 0.4], [1.0, 1.1], 0.5
    welch = stats.ttest_ind(second, first, equal_var=False)
    interval = welch.confidence_interval(0.9)

    def side(mu: float, alternative: str) -> float:
        return float(stats.ttest_ind(np.subtract(second, mu), first, equal_var=False, alternative=alternative).pvalue)

    wanted = expected(
        0.85,
        side(-margin, "greater"),
        side(margin, "less"),
        min(side(margin, "greater"), side(-margin, "less")),
        float(interval.low),
        float(interval.high),
        n=2,
        margin=margin,
    )
    assert_same(tost_two_sample(first, second, margin), wanted)


@pytest.mark.parametrize("run", [lambda: tost([0.3], 0.1), lambda: tost_two_sample([0.3], [0.1, 0.2], 0.1)])
def test_one_value_tests_nothing(run) -> None:
    result = run()
    assert result["n"] == 1
    assert (result["p_lower"], result["p_upper"], result["p_value"], result["p_beyond"]) == (1.0, 1.0, 1.0, 1.0)
    assert math.isnan(result["ci_low"]) and math.isnan(result["ci_high"])
    assert decide_equivalence(result) == CANNOT_TELL


def test_no_spread_gives_ps_of_0_or_1_and_a_point_interval() -> None:
    at_margin = tost(np.full(10, 0.125), 0.125)  # > −margin surely; < +margin not: p 0 and 1 (dyadic: no spread)
    assert_same(at_margin, expected(0.125, 0.0, 1.0, 1.0, 0.125, 0.125, n=10, margin=0.125))
    beyond = tost(np.full(10, -0.375), 0.125)  # < −margin surely
    assert_same(beyond, expected(-0.375, 1.0, 0.0, 0.0, -0.375, -0.375, n=10, margin=0.125))
    two_groups = tost_two_sample([1.0, 1.0, 1.0], [1.0, 1.0], 0.1)
    assert_same(two_groups, expected(0.0, 0.0, 0.0, 1.0, 0.0, 0.0, n=2, margin=0.1))


def test_degenerate_inputs_raise_no_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tost([], 0.1)
        tost([0.3], 0.1)
        tost_two_sample([1.0, 1.0, 1.0], [1.0, 1.0], 0.1)
        tost_two_sample([], [1.0], 0.1)


def test_float32_differences_are_summed_in_float64() -> None:
    values = np.array([0.1, 0.2, 0.7, 1e-3, 3.3], dtype=np.float32)
    wide = values.astype(np.float64)
    assert float(values.mean()) != float(wide.mean())  # the check can tell the two sums apart
    result = tost(values, 1.0)
    assert result["mean"] == float(wide.mean())
    assert result["ci_high"] - result["mean"] == pytest.approx(
        stats.t.ppf(0.95, 4) * wide.std(ddof=1) / math.sqrt(5), rel=1e-12
    )


@pytest.mark.parametrize(
    "p_value, p_beyond, decision",
    [
        (0.05, 0.5, HOLDS),  # TOST's p at α
        (0.05 + 1e-12, 0.5, CANNOT_TELL),
        (0.5, 0.05, FAILS),  # beyond the margin at α
        (0.5, 0.05 + 1e-12, CANNOT_TELL),
    ],
)
def test_the_rule_at_alpha_and_just_above(p_value: float, p_beyond: float, decision: str) -> None:
    result = {"n": 2, "p_value": p_value, "p_beyond": p_beyond, "margin": 0.1}
    assert decide_equivalence(result) == decision
