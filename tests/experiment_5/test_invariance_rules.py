"""Experiment 5's "no change" rule (equivalence by TOST within a quarter pooled SD) and the seed claim's partly
contradicted decision, planted in small synthetic entries."""

from __future__ import annotations

import numpy as np
import pytest

from experiment_1.report import CANNOT_TELL, FAILS, HOLDS, PARTLY_CONTRADICTED, SATURATED, tost_two_sample
from experiment_5.association import EQUIVALENCE_SD_FRACTION, compare_groups
from experiment_5.verdicts import decide_measure, seed_claim_decision

SIGNIFICANT = {"mean": 0.3, "ci_low": 0.2, "ci_high": 0.4}


def _equivalence(p_adjusted: float, p_beyond: float) -> dict[str, float]:
    return {"p_adjusted": p_adjusted, "p_beyond": p_beyond}


@pytest.mark.parametrize(
    ("difference", "p_adjusted", "equivalence", "expected"),
    [
        (SIGNIFICANT, 1e-5, _equivalence(0.9, 0.01), FAILS),  # moved, and by more than the margin
        (SIGNIFICANT, 1e-5, _equivalence(0.9, 0.2), CANNOT_TELL),  # moved, but not shown beyond the margin
        ({"mean": 0.01, "ci_low": 0.005, "ci_high": 0.015}, 1e-5, _equivalence(0.01, 1.0), HOLDS),  # tiny: equivalent
        ({"mean": 0.0, "ci_low": -0.1, "ci_high": 0.1}, 0.9, _equivalence(0.05, 1.0), HOLDS),  # at α: holds
        ({"mean": 0.0, "ci_low": -0.1, "ci_high": 0.1}, 0.9, _equivalence(0.0500001, 1.0), CANNOT_TELL),  # just above
        ({"mean": 0.0, "ci_low": -0.1, "ci_high": 0.1}, 0.9, None, CANNOT_TELL),  # no margin: never "holds"
    ],
    ids=["beyond", "moved-inside-not-shown", "tiny-shift", "tost-at-alpha", "tost-above-alpha", "no-margin"],
)
def test_an_order_measure_is_judged_for_equivalence(
    difference: dict[str, float], p_adjusted: float, equivalence: dict[str, float] | None, expected: str
) -> None:
    inputs = {"low": difference["ci_low"], "high": difference["ci_high"], "p_adjusted": p_adjusted}
    assert decide_measure(breadth=False, equivalence=equivalence, **inputs) == expected


def test_the_margin_is_a_quarter_of_the_pooled_sd() -> None:
    rng = np.random.default_rng(0)
    easy, hard = rng.normal(0, 2, 50), rng.normal(0.1, 2, 50)
    result = compare_groups(easy, hard, num_resamples=200)
    pooled = np.sqrt((easy.var(ddof=1) + hard.var(ddof=1)) / 2)
    assert result["equivalence"]["margin"] == pytest.approx(EQUIVALENCE_SD_FRACTION * pooled)
    expected = tost_two_sample(easy, hard, EQUIVALENCE_SD_FRACTION * pooled)
    for key in ("p_value", "p_beyond", "ci_low", "ci_high"):
        assert result["equivalence"][key] == pytest.approx(expected[key], rel=1e-12)


@pytest.mark.parametrize(
    ("breadth", "invariance", "expected"),
    [
        ([CANNOT_TELL, SATURATED], [FAILS, CANNOT_TELL], PARTLY_CONTRADICTED),  # N12: the scalar order moves
        ([HOLDS, HOLDS], [FAILS, HOLDS], FAILS),  # every part decided, one fails
        ([FAILS, CANNOT_TELL], [FAILS, CANNOT_TELL], FAILS),  # fails in both halves
        ([HOLDS, HOLDS], [HOLDS, HOLDS], HOLDS),
        ([CANNOT_TELL, SATURATED], [CANNOT_TELL, HOLDS], CANNOT_TELL),
    ],
)
def test_the_seed_claim_names_a_partly_contradicted_claim(
    breadth: list[str], invariance: list[str], expected: str
) -> None:
    assert seed_claim_decision(breadth, invariance) == expected
