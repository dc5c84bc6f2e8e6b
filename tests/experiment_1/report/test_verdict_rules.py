"""The decision rules of experiment_1.report.verdicts on planted numbers, each case asserting the one right word:
decide_by_ci (both signs of a claim, the equivalence margin crossed on either side, the strict boundaries, non-finite
ends, an unknown claim), saturation at exactly its share, seed_comparison with the seed's value on our CI's ends."""

from __future__ import annotations

import numpy as np
import pytest

from experiment_1.report.verdicts import (
    CANNOT_TELL,
    CONSTANT,
    FAILS,
    HOLDS,
    NON_FINITE,
    SATURATED,
    decide_by_ci,
    saturation,
    seed_comparison,
)


def ci(low: float, high: float) -> dict[str, float]:
    return {"name": "d", "value": (low + high) / 2, "ci_low": low, "ci_high": high}


@pytest.mark.parametrize(
    ("low", "high", "expected", "decision"),
    [
        (0.5, 2.0, "positive", HOLDS),
        (-2.0, -0.5, "positive", FAILS),
        (-0.5, 2.0, "positive", CANNOT_TELL),
        (-2.0, -0.5, "negative", HOLDS),  # the swap-cost claim's branch: a CI wholly below 0
        (0.5, 2.0, "negative", FAILS),
        (-2.0, 0.5, "negative", CANNOT_TELL),
        (0.0, 2.0, "positive", CANNOT_TELL),  # a CI touching 0 does not exclude it
        (-2.0, 0.0, "negative", CANNOT_TELL),
    ],
)
def test_a_signed_claim_holds_fails_or_cannot_tell_by_where_the_ci_lies(
    low: float, high: float, expected: str, decision: str
) -> None:
    assert decide_by_ci(ci(low, high), expected) == decision


@pytest.mark.parametrize(
    ("low", "high", "margin", "decision"),
    [
        (-0.4, 0.4, 0.5, HOLDS),  # inside (−margin, margin)
        (-0.4, 0.6, 0.5, CANNOT_TELL),  # covers 0, crosses the upper margin
        (-0.6, 0.4, 0.5, CANNOT_TELL),  # covers 0, crosses the lower margin
        (-0.6, 0.6, 0.5, CANNOT_TELL),  # crosses both
        (-0.5, 0.4, 0.5, CANNOT_TELL),  # on the margin is not inside it
        (-0.4, 0.4, None, CANNOT_TELL),  # no margin: a CI covering 0 cannot confirm "no effect"
        (0.1, 0.3, 0.5, FAILS),  # excludes 0 above, even inside the margin
        (-0.3, -0.1, 0.5, FAILS),  # excludes 0 below
        (0.1, 0.3, None, FAILS),
    ],
)
def test_a_zero_claim_holds_only_inside_the_equivalence_margin(
    low: float, high: float, margin: float | None, decision: str
) -> None:
    assert decide_by_ci(ci(low, high), "zero", margin=margin) == decision


def test_a_non_finite_ci_and_an_unknown_claim() -> None:
    for low, high in ((float("nan"), 1.0), (0.5, float("inf")), (float("-inf"), -1.0)):
        for expected in ("positive", "negative", "zero"):
            assert decide_by_ci(ci(low, high), expected, margin=1.0) == NON_FINITE
    with pytest.raises(ValueError, match="positive"):
        decide_by_ci(ci(0.5, 1.0), "larger")


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
