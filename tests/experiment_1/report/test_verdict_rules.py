"""The decision helpers of experiment_1.report.verdicts on planted numbers, each case asserting the one right word:
saturation at exactly its share, seed_comparison with the seed's value on our CI's ends (the CI rules themselves are
the engine's, tests/experiment_1/report/test_rules.py)."""

from __future__ import annotations

import numpy as np
import pytest

from experiment_1.report.verdicts import (
    CONSTANT,
    SATURATED,
    saturation,
    seed_comparison,
)


def ci(low: float, high: float) -> dict[str, float]:
    return {"name": "d", "value": (low + high) / 2, "ci_low": low, "ci_high": high}


def test_saturation_at_exactly_its_share_is_saturated_and_just_below_is_not() -> None:
    at_share = np.array([512.0] * 9 + [3.0])  # 90 % at the bound: the default share
    assert saturation(at_share, bounds=(512,)) == {"decision": SATURATED, "value": 512.0, "share": 0.9, "at": "bound"}
    below = np.array([512.0] * 89 + [float(value) for value in range(11)])  # 89 %
    assert saturation(below, bounds=(512,)) is None
    assert saturation(np.array([7.0] * 9 + [1.0]))["at"] == "mode"  # 90 % at one value that is no bound
    assert saturation(np.array([2.0, 2.0, float("nan")]))["decision"] == CONSTANT  # non-finite values do not count


@pytest.mark.parametrize(
    ("reported", "relation"),
    [(-1.0, "inside"), (2.0, "inside"), (0.5, "inside"), (2.0001, "above"), (-1.0001, "below")],
)
def test_the_seeds_value_on_an_end_of_our_ci_is_inside_it(reported: float, relation: str) -> None:
    assert seed_comparison(reported, {**ci(-1.0, 2.0), "confidence": 0.95})["relation"] == relation
