"""The shared rules' branches no other mirroring test reached (found by `make coverage`): all_must_hold's "not converged",
a verdict already non-finite that meets a non-finite input, a two-sample TOST with fewer than two values in a group,
decide_equivalence and parts_decision on a non-finite part."""

from __future__ import annotations

import math

import numpy as np
import pytest

from experiment_1.report import (
    CANNOT_TELL,
    FAILS,
    HOLDS,
    NON_FINITE,
    NOT_CONVERGED,
    SATURATED,
    all_must_hold,
    decide_equivalence,
    parts_decision,
    tost,
    tost_two_sample,
    verdict,
)


@pytest.mark.parametrize(
    "decisions, decision",
    [
        ([HOLDS, NOT_CONVERGED], NOT_CONVERGED),  # none fails, the rest have not converged
        ([NOT_CONVERGED, NOT_CONVERGED], NOT_CONVERGED),
        ([HOLDS, HOLDS], HOLDS),
        ([HOLDS, NOT_CONVERGED, CANNOT_TELL], CANNOT_TELL),  # a plain "cannot tell" is no convergence question
        ([NOT_CONVERGED, SATURATED], CANNOT_TELL),
        ([NOT_CONVERGED, FAILS], FAILS),
        ([NOT_CONVERGED, NON_FINITE], NON_FINITE),
        ([], CANNOT_TELL),
    ],
)
def test_all_must_hold_reads_not_converged_only_when_nothing_else_is_undecided(decisions: list, decision: str) -> None:
    assert all_must_hold(decisions) == decision


def test_a_verdict_already_non_finite_gets_no_second_note() -> None:
    entry = verdict("x", "a claim", NON_FINITE, "a rule", effect={"value": math.nan}, notes=["given"])
    assert entry["decision"] == NON_FINITE and entry["notes"] == ["given"]
    entry = verdict("x", "a claim", HOLDS, "a rule", effect={"value": math.nan})
    assert entry["decision"] == NON_FINITE
    assert entry["notes"] == ["non-finite input: the rule would have said 'holds'; no verdict is drawn"]


@pytest.mark.parametrize("sizes", [(1, 5), (5, 1), (0, 3)])
def test_a_two_sample_tost_with_a_group_below_two_values_tests_nothing(sizes: tuple[int, int]) -> None:
    first, second = np.arange(sizes[0], dtype=float), np.arange(sizes[1], dtype=float) + 0.5
    result = tost_two_sample(first, second, 0.1)
    assert result["n"] == min(sizes) and (result["p_value"], result["p_beyond"]) == (1.0, 1.0)
    assert math.isnan(result["mean"]) and math.isnan(result["ci_low"]) and math.isnan(result["ci_high"])
    assert decide_equivalence(result) == CANNOT_TELL
    assert tost_two_sample([*first, math.nan, math.nan], second, 0.1)["n"] == min(sizes)  # NaNs are not values


@pytest.mark.parametrize("key", ["p_value", "p_beyond", "margin"])
def test_decide_equivalence_on_a_non_finite_number(key: str) -> None:
    result = tost(np.array([0.01, -0.01, 0.02, 0.0]), 0.5)
    assert decide_equivalence(result) == HOLDS
    assert decide_equivalence({**result, key: math.inf}) == NON_FINITE


def test_a_non_finite_part_decides_nothing() -> None:
    assert parts_decision([HOLDS, NON_FINITE]) == NON_FINITE
    assert parts_decision([FAILS, NON_FINITE, CANNOT_TELL]) == NON_FINITE
