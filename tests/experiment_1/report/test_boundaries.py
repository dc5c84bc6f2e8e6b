"""Every threshold of the core verdict rules (experiment_1/report/verdicts.py) tested at, just below and just above it,
and the cases where two conditions disagree; whole entries compared to hand-written dicts, so a renamed key or a
changed default shows. Written against the survivors of `make mutation MODULES=experiment_1/report/verdicts.py`."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest
from scipy.stats import binom, binomtest

from experiment_1.report import verdicts as v
from experiment_1.report.rules import ci_against

EPS = 1e-9


def ci(low: float, high: float, **extra) -> dict:
    return {"ci_low": low, "ci_high": high, **extra}


# ---- ci_against: the CI's side at 0


@pytest.mark.parametrize(
    "low, high, positive, negative",
    [
        (EPS, 1.0, v.HOLDS, v.FAILS),  # just above 0: excludes it
        (0.0, 1.0, v.CANNOT_TELL, v.CANNOT_TELL),  # at 0: touches it, so it covers it
        (-EPS, 1.0, v.CANNOT_TELL, v.CANNOT_TELL),
        (-1.0, -EPS, v.FAILS, v.HOLDS),
        (-1.0, 0.0, v.CANNOT_TELL, v.CANNOT_TELL),
        (-1.0, EPS, v.CANNOT_TELL, v.CANNOT_TELL),
    ],
)
def test_ci_against_zero_at_just_below_and_just_above_it(low, high, positive, negative):
    assert ci_against(low, high, 0.0, "above") == positive
    assert ci_against(low, high, 0.0, "below") == negative


# ---- holm: the family size, the cap at 1, ties, and a correction that changes a decision


def test_holm_by_hand_with_cap_and_monotonicity():
    # sorted 0.01, 0.02, 0.03, 0.5 → 4·0.01, 3·0.02, max(0.06, 2·0.03), max(0.06, 1·0.5)
    assert v.holm([0.5, 0.01, 0.03, 0.02]) == pytest.approx([0.5, 0.04, 0.06, 0.06], abs=1e-15)
    assert v.holm([0.4, 0.6]) == [0.8, 0.8]  # 2·0.4 = 0.8; max(0.8, 0.6)
    assert v.holm([0.6, 0.9]) == [1.0, 1.0]  # 2·0.6 = 1.2 capped at 1
    assert v.holm([0.7]) == [0.7]


def test_holm_ties_keep_input_order_and_nan_counts_in_the_family():
    assert v.holm([0.02, 0.02, 0.02]) == pytest.approx([0.06, 0.06, 0.06], abs=1e-15)
    adjusted = v.holm([0.01, float("nan"), 0.02])
    assert math.isnan(adjusted[1]) and adjusted[0] == pytest.approx(0.03) and adjusted[2] == pytest.approx(0.04)
    assert v.holm([1, 0]) == [1.0, 0.0]  # integer p-values are read as numbers, not truncated


def test_holm_changes_a_decision_that_the_raw_p_value_would_make():
    raw = [0.03, 0.04]
    adjusted = v.holm(raw)
    assert all(p <= v.ALPHA for p in raw)
    assert adjusted == pytest.approx([0.06, 0.06])  # both significant alone, neither after the correction
    assert not any(p <= v.ALPHA for p in adjusted)
    assert v.holm([0.025, 0.05]) == pytest.approx([0.05, 0.05])  # exactly at α after correction: still ≤ α


# ---- saturation: the share at (and just off) SATURATION_SHARE, bounds, the near-bound margin, the mode


def test_saturation_constant_and_empty():
    assert v.saturation(np.array([3.0, 3.0, float("nan")]), bounds=(0, 3)) == {
        "decision": v.CONSTANT,
        "value": 3.0,
        "share": 1.0,
        "at": "bound",
    }
    assert v.saturation(np.array([2.0, 2.0]), bounds=(0, 3)) == {
        "decision": v.CONSTANT,
        "value": 2.0,
        "share": 1.0,
        "at": "mode",
    }
    assert v.saturation(np.array([float("nan")])) is None
    assert v.saturation(np.array([])) is None
    assert v.saturation(np.array([1.0])) == {"decision": v.CONSTANT, "value": 1.0, "share": 1.0, "at": "mode"}


def test_saturation_at_a_bound_exactly_at_just_below_the_share():
    at = np.array([0.0] * 9 + [5.0])  # 9/10 = 0.9 at the bound 0: saturated
    assert v.saturation(at, bounds=(0, 10)) == {"decision": v.SATURATED, "value": 0.0, "share": 0.9, "at": "bound"}
    below = np.array([0.0] * 8 + [5.0, 6.0])  # 0.8 at the bound, no mode at 0.9
    assert v.saturation(below, bounds=(0, 10)) is None
    assert v.saturation(below, bounds=(0, 10), share=0.8) == {
        "decision": v.SATURATED,
        "value": 0.0,
        "share": 0.8,
        "at": "bound",
    }
    assert v.saturation(below, bounds=(0, 10), share=0.8 + EPS) is None


def test_saturation_near_bound_at_the_margin_edge():
    # bounds 0…100, margin 0.05 → width 5: 95 counts as at 100, 94.9 does not
    values = np.array([95.0] * 4 + [100.0] * 5 + [50.0])
    assert v.saturation(values, bounds=(0, 100)) is None  # no margin: 0.5 at 100, modal 0.5
    assert v.saturation(values, bounds=(0, 100), margin=0.05) == {
        "decision": v.SATURATED,
        "value": 100.0,
        "share": 0.9,
        "at": "near_bound",
        "margin": 5.0,
    }
    outside = np.array([94.9] * 4 + [100.0] * 5 + [50.0])
    assert v.saturation(outside, bounds=(0, 100), margin=0.05) is None
    # the width is a share of the range (max − min of the bounds), not of the sum or a ratio
    shifted = np.array([105.0] * 4 + [110.0] * 5 + [60.0])
    assert v.saturation(shifted, bounds=(10, 110), margin=0.05)["margin"] == 5.0
    assert v.saturation(np.array([2.0] * 4 + [0.0] * 5 + [9.0]), bounds=(0, 10), margin=0.2) == {
        "decision": v.SATURATED,
        "value": 0.0,
        "share": 0.9,
        "at": "near_bound",
        "margin": 2.0,
    }
    assert v.saturation(np.array([2.0] * 9 + [9.0]), bounds=(0, 10), margin=0.2, share=0.95) is None


def test_saturation_near_bound_needs_two_bounds_and_a_positive_margin():
    values = np.array([1.0] * 5 + [0.5] * 4 + [7.0])  # 0.9 within 1 of 0, no value on 0.9 of the images
    assert v.saturation(values, bounds=(0,), margin=0.5) is None  # one bound: no range to take a share of
    assert v.saturation(values, bounds=(0, 10), margin=0.0) is None
    assert v.saturation(values, bounds=(0, 10), margin=0.1)["at"] == "near_bound"
    assert v.saturation(values, bounds=(0, 5, 10), margin=0.1)["value"] == 0.0  # three bounds: still a range


def test_saturation_at_the_mode_exactly_at_the_share():
    values = np.array([4.0] * 9 + [6.0])
    assert v.saturation(values, bounds=(0, 10)) == {"decision": v.SATURATED, "value": 4.0, "share": 0.9, "at": "mode"}
    assert v.saturation(np.array([4.0] * 17 + [6.0, 7.0, 8.0]), bounds=(0, 10)) is None  # 0.85


# ---- seed_comparison: inside at both CI ends, above / below just past them, the detectable effect


def test_seed_comparison_relation_at_the_ci_ends():
    effect = ci(1.0, 3.0, confidence=0.95)
    assert [v.seed_comparison(x, effect)["relation"] for x in (1.0, 3.0, 3.0 + EPS, 1.0 - EPS)] == [
        "inside",
        "inside",
        "above",
        "below",
    ]


def test_seed_comparison_detectable_effect_by_hand():
    z = NormalDist().inv_cdf
    entry = v.seed_comparison(2.0, ci(1.0, 3.0, confidence=0.9))
    se = 2.0 / (2 * z(0.95))
    assert entry == {
        "reported": 2.0,
        "relation": "inside",
        "minimal_detectable_effect": pytest.approx((z(0.975) + z(0.8)) * se),
        "power": 0.8,
    }
    default = v.seed_comparison(2.0, ci(1.0, 3.0))  # no confidence given: 95 %
    assert default["minimal_detectable_effect"] == pytest.approx((z(0.975) + z(0.8)) * 2.0 / (2 * z(0.975)))


@pytest.mark.parametrize("reported, low, high", [(float("nan"), 0, 1), (0.5, float("nan"), 1), (0.5, 0, float("inf"))])
def test_seed_comparison_non_finite_anywhere(reported, low, high):
    entry = v.seed_comparison(reported, ci(low, high))
    assert entry["relation"] is None and entry["minimal_detectable_effect"] is None and entry["power"] == 0.8
    assert set(entry) == {"reported", "relation", "minimal_detectable_effect", "power"}


# ---- the entries themselves: exact keys and defaults


def test_effect_from_stat_and_proportion_effect_entries():
    stat = {"mean": 0.5, "ci_low": 0.2, "ci_high": 0.8}
    assert v.effect_from_stat("d", stat) == {
        "name": "d",
        "value": 0.5,
        "ci_low": 0.2,
        "ci_high": 0.8,
        "confidence": 0.95,
        "percent": False,
    }
    share = {"mean": 0.5, "ci_low": 0.1, "ci_high": 0.9, "successes": 3, "n": 6}
    assert v.proportion_effect("p", share) == {
        "name": "p",
        "value": 0.5,
        "ci_low": 0.1,
        "ci_high": 0.9,
        "confidence": 0.95,
        "percent": True,
        "successes": 3,
        "n": 6,
        "interval": "Clopper-Pearson",
    }
    assert v.proportion_effect("p", {**share, "method": "Wilson"})["interval"] == "Wilson"
    assert v.proportion_effect("q", stat) == {**v.effect_from_stat("q", stat), "percent": True}


def test_verdict_entry_and_the_guard_on_each_part():
    entry = v.verdict("a", "c", v.HOLDS, "r", parameters={"alpha": 0.05})
    assert entry == {
        "id": "a",
        "claim": "c",
        "decision": v.HOLDS,
        "rule": "r",
        "parameters": {"alpha": 0.05},
        "statistic": None,
        "effect": None,
        "test": None,
        "seed": None,
        "notes": [],
    }
    nan = float("nan")
    for part in ("statistic", "effect", "test", "seed"):
        guarded = v.verdict("a", "c", v.HOLDS, "r", **{part: {"value": nan}})
        assert guarded["decision"] == v.NON_FINITE and len(guarded["notes"]) == 1, part
    assert v.verdict("a", "c", v.FAILS, "r", inputs=[np.array([1.0, np.inf])])["decision"] == v.NON_FINITE
    assert v.verdict("a", "c", v.FAILS, "r", inputs=[[1.0, [2.0, {"x": nan}]]])["decision"] == v.NON_FINITE
    assert v.verdict("a", "c", v.FAILS, "r", inputs=[np.array([1, 2], dtype=np.int64)])["decision"] == v.FAILS
    with pytest.raises(ValueError):
        v.verdict("a", "c", "maybe", "r")


def test_all_finite_reads_nested_numbers_and_skips_labels():
    assert v.all_finite({"a": [1, (2.0, np.array([[3.0]]))], "name": "x", "flag": True}, None)
    assert not v.all_finite({"a": [1, (2.0, np.array([[3.0, np.nan]]))]})
    assert not v.all_finite([[float("-inf")]])
    assert v.all_finite(np.array([10**300], dtype=object).astype(np.float64))


# ---- the power rules: exact against scipy, at the minimum power, at the smallest n that can reject


def test_binomial_power_equals_the_sum_over_the_rejection_region():
    n, p0, p1 = 12, 0.5, 0.8
    region = [k for k in range(n + 1) if binomtest(k, n, p0).pvalue <= 0.05]
    assert region == [0, 1, 2, 10, 11, 12]
    assert v.binomial_power(n, p0, p1) == pytest.approx(sum(binom.pmf(k, n, p1) for k in region), rel=1e-12)
    assert v.binomial_power(0, 0.5, 0.9) == 0.0 and v.binomial_power(-3, 0.5, 0.9) == 0.0
    assert v.binomial_power(12, 0.5, 0.8, alpha=0.01) < v.binomial_power(12, 0.5, 0.8)
    # another null share: the region is binomtest's against p0 = 0.2, not against ½
    region = [k for k in range(21) if binomtest(k, 20, 0.2).pvalue <= 0.05]
    assert v.binomial_power(20, 0.2, 0.5) == pytest.approx(sum(binom.pmf(k, 20, 0.5) for k in region), rel=1e-12)
    assert v.binomial_power(20, 0.2, 0.5) != pytest.approx(v.binomial_power(20, 0.5, 0.5))


def test_sign_test_power_is_zero_below_six_pairs_and_positive_at_six():
    assert v.sign_test_power(5, 1.0) == 0.0  # 2·0.5^5 = 0.0625 > 0.05: nothing rejects
    assert v.sign_test_power(6, 1.0) == pytest.approx(1.0)  # 2·0.5^6 = 0.03125: all-up rejects
    assert v.sign_test_power(6, 0.5) == pytest.approx(2 * 0.5**6)
    assert v.sign_test_power(6, 0.7, alpha=0.03) == 0.0  # at α just below 0.03125 the minimum n moves up
    assert v.sign_test_power(6, 1.0, alpha=2 * 0.5**6) == pytest.approx(1.0)  # p exactly at α rejects (p ≤ α)


@pytest.mark.parametrize(
    "power, significant, decision, notes",
    [
        (0.8, False, v.FAILS, 0),  # at the minimum power: read
        (0.8 - EPS, False, v.CANNOT_TELL, 1),
        (0.1, True, v.FAILS, 0),  # significant: read whatever the power (p says yes, power says no)
        (0.0, False, v.CANNOT_TELL, 1),
    ],
)
def test_power_guard_at_the_minimum(power, significant, decision, notes):
    got, why = v.power_guard(v.FAILS, power, significant=significant)
    assert (got, len(why)) == (decision, notes)


def test_power_guard_leaves_other_decisions_and_says_why():
    assert v.power_guard(v.HOLDS, 0.5) == (
        v.CANNOT_TELL,
        [
            "power 0.50 < 0.80 against the effect of interest: too few observations, so the absence of significance is not read"
        ],
    )
    assert v.power_guard(v.SATURATED, 0.5)[0] == v.SATURATED
    assert v.power_guard(v.HOLDS, 0.85, minimum=0.9)[0] == v.CANNOT_TELL
    assert v.power_guard(v.HOLDS, 0.9, minimum=0.9) == (v.HOLDS, [])


def test_p_value_says_yes_but_the_ci_says_no():
    # a test entry significant at α next to a CI that covers 0: the CI rule decides, the p-value is only reported
    test = v.hypothesis_test("sign test", 0.04, p_adjusted=0.04, correction="Holm", family_size=1)
    assert test == {
        "name": "sign test",
        "p_value": 0.04,
        "p_adjusted": 0.04,
        "correction": "Holm",
        "family_size": 1,
        "p_floor": None,
    }
    effect = ci(-0.01, 0.5)
    decision = ci_against(effect["ci_low"], effect["ci_high"], 0.0)
    assert decision == v.CANNOT_TELL
    assert v.verdict("x", "c", decision, "r", effect=effect, test=test)["decision"] == v.CANNOT_TELL
