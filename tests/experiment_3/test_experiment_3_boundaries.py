"""Experiment 3's verdict rules at, just below and just above each threshold (the 90 % share, relative error 1, the CI's
side at L/2, the seed's value at our CI's ends, α after Holm), on hand-built summaries holding only what each rule reads."""

from __future__ import annotations

import pytest

from experiment_1.report import CANNOT_TELL, FAILS, HOLDS
from experiment_3 import verdicts as e3

EPS = 1e-9


def share_summary(low: float, high: float) -> dict:
    return {"small_k": {"vector": {"top1_is_empty_set": {"mean": (low + high) / 2, "ci_low": low, "ci_high": high}}}}


@pytest.mark.parametrize(
    "low, high, decision",
    [
        (0.9, 1.0, HOLDS),
        (0.9 - EPS, 1.0, CANNOT_TELL),
        (0.5, 0.9 - EPS, FAILS),
        (0.5, 0.9, CANNOT_TELL),
        (0.9 + EPS, 0.95, HOLDS),
    ],
)
def test_empty_top1_at_the_saturation_share(low, high, decision):
    entry = e3.empty_top1_verdict(share_summary(low, high), "vector")
    assert (
        entry["decision"] == decision and entry["parameters"] == {"share": 0.9} and entry["effect"]["percent"] is True
    )


def test_empty_top1_absent():
    assert e3.empty_top1_verdict({"small_k": {"vector": {"top1_is_empty_set": None}}}, "vector") is None


def error_summary(lows: list[float], highs: list[float], ks: list[int], num_masks: int = 8) -> dict:
    means = [(a + b) / 2 for a, b in zip(lows, highs)]
    return {
        "ks": ks,
        "num_masks": num_masks,
        "sources": {
            "magnitude_vector": {"curves": {"relative_error": {"mean": means, "ci_low": lows, "ci_high": highs}}}
        },
        "small_k": {"vector": {"relative_error_at_least_1": [0.5] * len(ks)}},
    }


@pytest.mark.parametrize(
    "lows, highs, decision",
    [
        ([1.0, 1.2], [1.5, 1.6], HOLDS),  # the lowest CI end exactly at 1: "at or above"
        ([1.0 - EPS, 1.2], [1.5, 1.6], CANNOT_TELL),
        ([0.5, 1.2], [1.0 - EPS, 1.6], FAILS),  # one K wholly below 1
        ([0.5, 1.2], [1.0, 1.6], CANNOT_TELL),  # the upper end at 1 touches it
    ],
)
def test_relative_error_at_one(lows, highs, decision):
    entry = e3.relative_error_verdict(error_summary(lows, highs, [1, 2]), "vector")
    assert entry["decision"] == decision


def test_relative_error_reads_only_k_below_two_to_the_l():
    # the K = 2^L column (exact reconstruction: error 0) is not counted
    summary = error_summary([1.1, 0.0], [1.3, 0.0], [4, 8], num_masks=8)
    entry = e3.relative_error_verdict(summary, "vector")
    assert entry["decision"] == HOLDS and entry["effect"]["value"] == pytest.approx(1.2)
    assert entry["notes"] == [
        "images with relative error ≥ 1 there: 50.0 % (a claim about the mean over images, not about every image: "
        "on the others ĥ_K is closer than zero)"
    ]
    none_below = e3.relative_error_verdict(error_summary([0.0], [0.0], [8], num_masks=8), "vector")
    assert none_below["decision"] == CANNOT_TELL  # no K below 2^L: nothing to judge
    assert none_below["effect"] is None and none_below["notes"] == []


def order_summary(low: float, high: float, centre: float = 2.0) -> dict:
    row = {
        "quantity": "captured_energy",
        "ranking": "vector",
        "fraction": 0.25,
        "seed": 0.5,
        "seed_k": 4,
        "at_matching_fraction": {"value": {"mean": 0.5, "ci_low": 0.4, "ci_high": 0.6}, "k": 4},
        "at_seed_k": {"value": None, "k": 4},
    }
    return {
        "ks": [4],
        "beside_seed": {"rows": [row]},
        "order_histograms": {
            "vector": {
                "binomial_mean_order": centre,
                "mean_order": {"mean": [(low + high) / 2], "ci_low": [low], "ci_high": [high]},
            }
        },
    }


@pytest.mark.parametrize(
    "low, high, decision, note",
    [
        (2.0 + EPS, 3.0, HOLDS, "the top-4 sits above L/2"),
        (2.0, 3.0, CANNOT_TELL, None),
        (1.0, 2.0 - EPS, HOLDS, "the top-4 sits below L/2"),
        (1.0, 2.0, CANNOT_TELL, None),
    ],
)
def test_orders_at_half_the_depth(low, high, decision, note):
    entry = e3.orders_verdict(order_summary(low, high), "vector")
    assert entry["decision"] == decision and entry["notes"] == ([note] if note else [])
    assert entry["effect"]["ci_low"] == pytest.approx(low - 2.0) and entry["parameters"] == {"k": 4}


@pytest.mark.parametrize(
    "reported, bound, decision",
    [
        (0.4, False, CANNOT_TELL),
        (0.6, False, CANNOT_TELL),  # at our CI's ends: inside
        (0.4 - EPS, False, HOLDS),
        (0.6 + EPS, False, FAILS),  # the seed below our CI: we are at least as high
        (0.4 - EPS, True, FAILS),
        (0.6 + EPS, True, HOLDS),  # a bound: our value must stay below the seed's
        (float("nan"), False, CANNOT_TELL),
    ],
)
def test_by_seed_at_our_ci_ends(reported, bound, decision):
    assert (e3.BOUND if bound else e3.SEED).decide(low=0.4, high=0.6, seed=reported) == decision


def controls_summary(p_values: list[float], lows: list[float]) -> dict:
    controls = list(e3.CONTROL_LABELS)[: len(p_values)]
    row = {
        "quantity": "top1_agreement_controls_max",
        "ranking": "vector",
        "fraction": 0.25,
        "seed": 0.9,
        "seed_k": 4,
        "at_matching_fraction": {"value": {"mean": 0.5, "ci_low": 0.4, "ci_high": 0.6}, "k": 4},
        "at_seed_k": {"value": None, "k": 4},
    }
    improvement = {
        control: {
            "top1_agreement": {
                "sign_flip_p": [p],
                "difference": {"mean": [low + 0.1], "ci_low": [low], "ci_high": [low + 0.2]},
            }
        }
        for control, p, low in zip(controls, p_values, lows)
    }
    return {
        "ks": [4],
        "num_masks": 16,
        "beside_seed": {"rows": [row]},
        "improvement": {"vector": improvement},
        "small_k": {"vector": {"control_is_the_ranking": {control: [0.0] for control in controls}}},
    }


@pytest.mark.parametrize(
    "p_values, lows, decision",
    [
        ([0.01, 0.02], [0.1, 0.1], HOLDS),  # Holm 0.02, 0.04 ≤ α and both CIs above 0
        ([0.03, 0.04], [0.1, 0.1], CANNOT_TELL),  # each significant alone, neither after Holm (0.06, 0.06)
        ([0.025, 0.05], [0.1, 0.1], HOLDS),  # Holm exactly at α (0.05, 0.05): significant
        ([0.01, 0.02], [0.1, -0.3], FAILS),  # significant, but one control beats the ranking (its CI below 0)
        ([0.01, 0.02], [0.1, 0.0], CANNOT_TELL),  # p says yes, the CI touches 0: the CI decides
    ],
)
def test_controls_with_holm_and_the_ci(p_values, lows, decision):
    beats, bound = e3.controls_verdicts(controls_summary(p_values, lows), "vector")
    assert beats["decision"] == decision and beats["parameters"] == {"k": 4, "alpha": 0.05}
    assert bound["decision"] == HOLDS  # our best control [0.4, 0.6] lies below the seed's 0.9 bound
