"""experiment_1.report.stats against independent computations."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import beta

from experiment_1.report.stats import exact_proportion_ci


@pytest.mark.parametrize(("successes", "count"), [(0, 6), (6, 6), (3, 8), (1, 2), (17, 40)])
def test_exact_proportion_ci_is_the_clopper_pearson_interval(successes: int, count: int) -> None:
    outcomes = np.array([1] * successes + [0] * (count - successes), dtype=float)
    result = exact_proportion_ci(outcomes)
    low = 0.0 if successes == 0 else beta.ppf(0.025, successes, count - successes + 1)
    high = 1.0 if successes == count else beta.ppf(0.975, successes + 1, count - successes)
    assert result["mean"] == successes / count and result["n"] == count and result["successes"] == successes
    assert result["ci_low"] == pytest.approx(low, abs=1e-12) and result["ci_high"] == pytest.approx(high, abs=1e-12)


def test_zero_of_six_is_not_a_point_interval() -> None:
    result = exact_proportion_ci(np.zeros(6))
    assert result["ci_low"] == 0.0 and result["ci_high"] == pytest.approx(0.4593, abs=1e-4)


def test_exact_proportion_ci_refuses_non_binary_outcomes() -> None:
    with pytest.raises(ValueError, match="0/1"):
        exact_proportion_ci(np.array([0.0, 0.5, 1.0]))
