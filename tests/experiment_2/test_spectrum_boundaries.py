"""Experiment 2's spectrum rules at, just below and just above each threshold (experiment_2/spectrum/verdicts.py):
the round-off floor margin (resolved at exactly FLOOR_MARGIN × the floor, in either basis), which side of a value a
CI lies on (a bound equal to the value contains it), every combination of the shape rule's two sides, and the peak
rule's CI against the null's tied peak orders (touching an end is neither apart nor inside)."""

from __future__ import annotations

import itertools
from math import comb

import numpy as np
import pytest

from experiment_1.mobius import PROJECTIONS
from experiment_1.report import CANNOT_TELL, FAILS, HOLDS
from experiment_1.report import side as rule_side
from experiment_2.spectrum.verdicts import (
    FLOOR_MARGIN,
    floor_check,
    peak_decision,
    shape_decision,
)

L = 3
VARIANCE = 2.0**-20  # a power of two: every floor and FLOOR_MARGIN × floor below are exact in float64


def floors(basis: str) -> np.ndarray:
    if basis == "walsh":
        return np.array([comb(L, k) / 2.0**L for k in range(L + 1)]) * VARIANCE
    return np.array([comb(L, k) * 2.0**k for k in range(L + 1)]) * VARIANCE


@pytest.mark.parametrize("basis", ["mobius", "walsh"])
@pytest.mark.parametrize(("step", "resolved"), [(-1, False), (0, True), (1, True)])
def test_an_order_is_resolved_from_exactly_the_floor_margin(basis: str, step: int, resolved: bool) -> None:
    energy = FLOOR_MARGIN * floors(basis) * 4  # every order well resolved …
    at = FLOOR_MARGIN * floors(basis)[2]
    energy[2] = at if step == 0 else np.nextafter(at, np.inf if step > 0 else 0.0)  # … but order 2 at its boundary
    prefix = "walsh_" if basis == "walsh" else ""
    arrays = {}
    for projection in PROJECTIONS:
        arrays[f"{prefix}energy_{projection}"] = energy[None, :]
        arrays[f"roundoff_variance_{projection}"] = np.array([VARIANCE])
    block = floor_check(arrays, np.array([True]), L, basis=basis)
    for projection in PROJECTIONS:
        assert block[projection]["resolved"][2] is resolved
        assert block[projection]["unresolved_orders"] == ([] if resolved else [2])
        assert block[projection]["floor_ratio"][1] == 4 * FLOOR_MARGIN


@pytest.mark.parametrize(
    ("low", "high", "side"),
    [(0.0, 1.0, 0), (np.nextafter(0.0, 1.0), 1.0, 1), (-1.0, 0.0, 0), (-1.0, np.nextafter(0.0, -1.0), -1)],
)
def test_a_ci_bound_equal_to_the_value_contains_it(low: float, high: float, side: int) -> None:
    assert rule_side(low, high, 0.0) == side


@pytest.mark.parametrize(("kappa", "c_le3"), list(itertools.product((-1, 0, 1), repeat=2)))
def test_the_shape_rule_in_every_combination_of_its_two_sides(kappa: int, c_le3: int) -> None:
    decision, notes = shape_decision(kappa, c_le3)
    expected = {(1, -1): HOLDS, (-1, 1): FAILS}.get((kappa, c_le3), CANNOT_TELL)
    assert decision == expected
    same_side = kappa != 0 and kappa == c_le3
    assert bool(notes) == (decision != CANNOT_TELL or same_side)
    if same_side:
        assert ("wider" if kappa > 0 else "narrower") in notes[0]


TIED = [4, 5]
BELOW, ABOVE = np.nextafter(4.0, 0.0), np.nextafter(5.0, 9.0)


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (3.0, BELOW, HOLDS),  # wholly below the tied orders
        (3.0, 4.0, CANNOT_TELL),  # touches the lowest
        (4.0, 5.0, FAILS),  # exactly the tied range
        (np.nextafter(4.0, 9.0), np.nextafter(5.0, 0.0), FAILS),  # inside it
        (BELOW, 5.0, CANNOT_TELL),  # starts just below
        (4.0, ABOVE, CANNOT_TELL),  # ends just above
        (5.0, 6.0, CANNOT_TELL),  # touches the highest
        (ABOVE, 6.0, HOLDS),  # wholly above
    ],
)
def test_the_peak_rule_at_the_ends_of_the_tied_peak_orders(low: float, high: float, expected: str) -> None:
    assert peak_decision({"mean": (low + high) / 2, "ci_low": low, "ci_high": high}, TIED) == expected


def test_a_single_null_peak_is_its_own_range() -> None:
    assert peak_decision({"mean": 4.0, "ci_low": 4.0, "ci_high": 4.0}, [4]) == FAILS
    assert peak_decision({"mean": 4.0, "ci_low": 3.5, "ci_high": 4.0}, [4]) == CANNOT_TELL
    assert peak_decision({"mean": 4.0, "ci_low": 3.5, "ci_high": BELOW}, [4]) == HOLDS
