"""Experiment 1's verdicts (experiment_1/reconstruction/verdicts.py) at, just below and just above each threshold (the
float32 round-off tolerance, relative error 1 for the naive sum, the 10 % material error of the first-order reading, the
"further than zero" note at 1), and the whole block compared to hand-written dicts, so a changed claim, rule, note or
parameter shows. Written against the survivors of `make mutation MODULES=experiment_1/reconstruction/verdicts.py`."""

from __future__ import annotations

import pytest

from experiment_1.reconstruction.verdicts import verdicts
from experiment_1.report.verdicts import CANNOT_TELL, FAILS, HOLDS, NON_FINITE, by_id

EPS = 1e-9
TOLERANCE = 1e-4


def stat(low: float, high: float, **extra: object) -> dict:
    return {"mean": (low + high) / 2, "ci_low": low, "ci_high": high, **extra}


def summary_of(
    worst: float = 1e-7,
    naive: dict | None = None,
    first: dict | None = None,
    agreement: dict | None = None,
    blocks: int = 4,
) -> dict:
    return {
        "metrics": {
            "max_subset_rel_error_float32": {"max": worst},
            "naive_sum_rel_error": naive or stat(20.0, 30.0),
            "first_order_rel_error": first or stat(0.3, 0.5),
            "first_order_top1_agreement": agreement or stat(0.5, 0.7, method="exact"),
        },
        "config": {"num_blocks": blocks},
    }


def test_the_whole_block_by_hand() -> None:
    summary = summary_of(
        worst=3e-7,
        naive={"mean": 529.0, "ci_low": 523.0, "ci_high": 537.0},
        first={"mean": 1.5, "ci_low": 1.25, "ci_high": 1.75},
        agreement={"mean": 0.975, "ci_low": 0.9, "ci_high": 0.999, "method": "exact"},
        blocks=9,
    )
    assert verdicts(summary) == [
        {
            "id": "mobius.exact",
            "claim": "the Möbius reconstruction recovers h(S) for every subset S to round-off",
            "decision": HOLDS,
            "rule": "holds when the worst relative error of any subset's Möbius reconstruction over every image is below "
            "0.0001 (float32), else fails",
            "parameters": {"tolerance": TOLERANCE},
            "statistic": {"name": "worst relative error over all subsets and images (float32)", "value": 3e-7},
            "effect": None,
            "test": None,
            "seed": None,
            "notes": [
                "an inversion identity: it checks the transform and the gating code, not the network; any exact basis "
                "reconstructs as well"
            ],
        },
        {
            "id": "naive.misses",
            "claim": "summing subnetwork outputs, Σ_S h(S), does not reconstruct h(full)",
            "decision": HOLDS,
            "rule": "holds when the 95 % CI of the naive sum's mean relative error lies at or above 1 (no closer than the "
            "zero vector), fails when it lies below 1, else cannot tell",
            "parameters": {},
            "statistic": None,
            "effect": {
                "name": "naive sum's relative error",
                "value": 529.0,
                "ci_low": 523.0,
                "ci_high": 537.0,
                "confidence": 0.95,
                "percent": False,
            },
            "test": None,
            "seed": None,
            "notes": [
                "Σ_S h(S) counts the trunk h(∅) 2^L = 512 times, so a network without any interaction fails the same way "
                "(the error grows with 2^L, so numbers at another L are not comparable): this says nothing about "
                "interactions (the first-order verdict does)"
            ],
        },
        {
            "id": "first_order.interactions",
            "claim": "interactions between blocks carry part of the function: the additive (first-order) reading "
            "h(∅) + Σ_l [h({l}) − h(∅)] misses h(full)",
            "decision": HOLDS,
            "rule": "holds when the 95 % CI of the first-order reading's mean relative error lies above 0.1, fails when it "
            "lies below 0.1 (the additive reading is as good as exact), else cannot tell",
            "parameters": {"material_error": 0.1},
            "statistic": None,
            "effect": {
                "name": "first-order reading's relative error",
                "value": 1.5,
                "ci_low": 1.25,
                "ci_high": 1.75,
                "confidence": 0.95,
                "percent": False,
            },
            "test": None,
            "seed": None,
            "notes": [
                "top-1 agreement of the first-order reading with h(full): 97.5 % [90.0, 99.9] (exact)",
                "the additive reading is further from h(full) than the zero vector",
            ],
        },
    ]


@pytest.mark.parametrize(
    "worst, decision",
    [
        (TOLERANCE - 1e-12, HOLDS),
        (TOLERANCE, FAILS),  # at the tolerance: no longer round-off
        (TOLERANCE + 1e-12, FAILS),
        (0.5, FAILS),
        (1.5, FAILS),
    ],
)
def test_exact_at_the_tolerance(worst: float, decision: str) -> None:
    assert by_id(verdicts(summary_of(worst=worst)))["mobius.exact"]["decision"] == decision


@pytest.mark.parametrize(
    "low, high, decision",
    [
        (1.0, 2.0, HOLDS),  # at 1: no closer than the zero vector
        (1.0 + EPS, 2.0, HOLDS),
        (1.0 - EPS, 2.0, CANNOT_TELL),
        (0.5, 1.0, CANNOT_TELL),  # the upper end at 1 touches it
        (0.5, 1.0 + EPS, CANNOT_TELL),
        (0.5, 1.0 - EPS, FAILS),
    ],
)
def test_naive_at_one(low: float, high: float, decision: str) -> None:
    assert by_id(verdicts(summary_of(naive=stat(low, high))))["naive.misses"]["decision"] == decision


@pytest.mark.parametrize(
    "low, high, decision",
    [
        (0.1, 0.5, CANNOT_TELL),  # at the material error: not above it
        (0.1 + EPS, 0.5, HOLDS),
        (0.1 - EPS, 0.5, CANNOT_TELL),
        (0.01, 0.1, CANNOT_TELL),  # the upper end at 0.1: not below it
        (0.01, 0.1 + EPS, CANNOT_TELL),
        (0.01, 0.1 - EPS, FAILS),
    ],
)
def test_first_order_at_the_material_error(low: float, high: float, decision: str) -> None:
    entry = by_id(verdicts(summary_of(first=stat(low, high))))["first_order.interactions"]
    assert entry["decision"] == decision


@pytest.mark.parametrize("low, further", [(1.0, True), (1.0 + EPS, True), (1.0 - EPS, False), (0.2, False)])
def test_the_further_than_zero_note_at_one(low: float, further: bool) -> None:
    notes = by_id(verdicts(summary_of(first=stat(low, 3.0))))["first_order.interactions"]["notes"]
    assert notes[1:] == (["the additive reading is further from h(full) than the zero vector"] if further else [])


def test_the_agreement_note_names_a_bootstrap_interval_by_default() -> None:
    summary = summary_of(agreement={"mean": 0.5, "ci_low": 0.25, "ci_high": 0.75})
    assert by_id(verdicts(summary))["first_order.interactions"]["notes"] == [
        "top-1 agreement of the first-order reading with h(full): 50.0 % [25.0, 75.0] (bootstrap)"
    ]


def test_the_trunk_count_follows_l() -> None:
    note = by_id(verdicts(summary_of(blocks=3)))["naive.misses"]["notes"][0]
    assert note.startswith("Σ_S h(S) counts the trunk h(∅) 2^L = 8 times,")


def test_a_non_finite_worst_error_draws_no_verdict() -> None:
    entry = by_id(verdicts(summary_of(worst=float("nan"))))["mobius.exact"]
    assert entry["decision"] == NON_FINITE
