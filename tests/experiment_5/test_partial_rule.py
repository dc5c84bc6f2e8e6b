"""Experiment 5's partial check (does the primary score's association with K_τ^err survive controlling for ‖h(full)‖?)
and the seed claim's entry, on hand-built Spearman entries: ρ's CI at 0 and just off it on either side, the partial ρ's
CI at 0 and just off it, the two signs disagreeing, a non-finite bound in each place; the whole k_err.partial entry by
hand; the seed claim's notes when a part fails with and without a failing decision. Written against the survivors of
`make mutation MODULES=experiment_5/verdicts.py`."""

from __future__ import annotations

import pytest

from experiment_1.report import ALPHA, CANNOT_TELL, FAILS, HOLDS, NON_FINITE, SATURATED
from experiment_5.verdicts import RULES, partial_decision, partial_verdict, seed_claim_verdict

EPS = 1e-9
NAN = float("nan")


def spearman(rho: float, low: float, high: float, partial: float, partial_low: float, partial_high: float) -> dict:
    return {
        "rho": rho,
        "ci_low": low,
        "ci_high": high,
        "partial_rho": partial,
        "partial_ci_low": partial_low,
        "partial_ci_high": partial_high,
        "partial_p_value": 0.003,
    }


@pytest.mark.parametrize(
    "entry, decision",
    [
        (spearman(0.3, 0.0, 0.5, 0.2, 0.1, 0.3), CANNOT_TELL),  # ρ's CI touches 0
        (spearman(-0.3, -0.5, 0.0, -0.2, -0.3, -0.1), CANNOT_TELL),
        (spearman(0.3, EPS, 0.5, 0.2, 0.1, 0.3), HOLDS),  # just above 0, partial too: survives
        (spearman(-0.3, -0.5, -EPS, -0.2, -0.3, -0.1), HOLDS),  # just below 0, partial too
        (spearman(0.3, 0.1, 0.5, 0.1, 0.0, 0.3), FAILS),  # the partial's CI touches 0: the norm explains it
        (spearman(-0.3, -0.5, -0.1, -0.1, -0.3, 0.0), FAILS),
        (spearman(0.3, 0.1, 0.5, 0.1, EPS, 0.3), HOLDS),
        (spearman(-0.3, -0.5, -0.1, -0.1, -0.3, -EPS), HOLDS),
        (spearman(0.3, 0.1, 0.5, -0.2, -0.3, -0.1), FAILS),  # both exclude 0, with opposite signs
        (spearman(-0.3, -0.5, -0.1, 0.2, 0.1, 0.3), FAILS),
        (spearman(0.3, 0.1, 0.5, 0.0, -0.1, 0.1), FAILS),  # the partial's CI covers 0
    ],
)
def test_the_partial_rule_at_its_boundaries(entry: dict, decision: str) -> None:
    assert partial_decision(entry) == decision


@pytest.mark.parametrize("key", ["ci_low", "ci_high", "partial_ci_low", "partial_ci_high"])
@pytest.mark.parametrize("bad", [NAN, float("inf")])
def test_a_non_finite_bound_anywhere_gives_no_decision(key: str, bad: float) -> None:
    entry = spearman(0.3, 0.1, 0.5, 0.2, 0.1, 0.3) | {key: bad}
    assert partial_decision(entry) == NON_FINITE


def analysis(k_err_saturation: dict | None = None) -> dict:
    return {
        "settings": {"primary_score": "cross_entropy"},
        "spearman": {"cross_entropy": {"k_err": spearman(0.3, 0.1, 0.5, 0.2, 0.05, 0.35)}},
        "saturation": {"k_err": k_err_saturation},
        "partial_check": {"cross_entropy": HOLDS, "entropy": FAILS, "negative_margin": CANNOT_TELL},
    }


CLAIM = "the association of cross-entropy with K_τ^err is not only the logit norm ‖h(full)‖"


def test_the_partial_entry_by_hand() -> None:
    assert partial_verdict(analysis()) == {
        "id": "k_err.partial",
        "claim": CLAIM,
        "decision": HOLDS,
        "rule": RULES["partial"],
        "parameters": {},
        "statistic": {"name": "Spearman ρ", "value": 0.3},
        "effect": {
            "name": "partial ρ given ‖h(full)‖",
            "value": 0.2,
            "ci_low": 0.05,
            "ci_high": 0.35,
            "confidence": 1 - ALPHA,
        },
        "test": {
            "name": "partial ρ t-test",
            "p_value": 0.003,
            "p_adjusted": None,
            "correction": None,
            "family_size": None,
            "p_floor": None,
        },
        "seed": None,
        "notes": ["ρ 95 % CI [0.1, 0.5]", "sensitivity: softmax entropy: fails; −(top-1 − top-2 margin): cannot tell"],
    }


def test_a_saturated_k_err_has_no_association_to_explain() -> None:
    entry = partial_verdict(analysis({"decision": SATURATED, "value": 16.0, "share": 0.95, "at": "bound"}))
    assert (entry["id"], entry["claim"], entry["decision"], entry["rule"]) == (
        "k_err.partial",
        CLAIM,
        SATURATED,
        RULES["partial"],
    )
    assert entry["notes"] == ["K_τ^err is saturated, so there is no association to explain"]
    assert entry["statistic"] is None and entry["effect"] is None and entry["test"] is None


PARTS = ["n_eff_vector", "k_err", "kbar_vector", "kbar_scalar"]


def seed_claim(decisions: list[str]) -> dict:
    study = {"published": {"resnet18": {"invariant_measures": ["kbar"]}}}
    return seed_claim_verdict(
        study,
        {
            f"{name}.hard_minus_easy": {"id": f"{name}.hard_minus_easy", "decision": d}
            for name, d in zip(PARTS, decisions)
        },
    )


def test_the_seed_claim_lists_every_part_and_names_no_failure_when_none_fails() -> None:
    entry = seed_claim([HOLDS, HOLDS, HOLDS, HOLDS])
    assert entry["id"] == "seed_claim" and entry["decision"] == HOLDS and entry["rule"] == RULES["seed_claim"]
    assert entry["notes"] == ["N_eff^v: holds; K_τ^err: holds; k̄ (vector): holds; k̄ (scalar): holds"]
    assert entry["parameters"] == {"failing_parts": []}


def test_a_failing_claim_needs_no_partly_contradicted_note() -> None:
    entry = seed_claim([FAILS, HOLDS, HOLDS, FAILS])  # fails in both halves
    assert entry["decision"] == FAILS and entry["parameters"] == {"failing_parts": ["N_eff^v", "k̄ (scalar)"]}
    assert len(entry["notes"]) == 1


def test_a_failing_part_beside_undecided_ones_is_named_partly_contradicted() -> None:
    entry = seed_claim([CANNOT_TELL, SATURATED, FAILS, HOLDS])
    assert entry["decision"] != FAILS and entry["parameters"] == {"failing_parts": ["k̄ (vector)"]}
    assert entry["notes"][1] == (
        "partly contradicted: k̄ (vector) fails while other parts are undecided, so the claim as a whole cannot be "
        "decided, but it does not hold as stated"
    )


def test_the_seed_claim_entry_and_its_first_order_part() -> None:
    entry = seed_claim([HOLDS, HOLDS, FAILS, HOLDS])  # every part decided, the first order measure fails
    assert entry["claim"] == (
        "the seed's claim — difficulty broadens the support (N_eff^v, K_τ^err larger on hard images) without moving the "
        "orders (k̄, κ, C≤3)"
    )
    assert entry["decision"] == FAILS and entry["parameters"] == {"failing_parts": ["k̄ (vector)"]}


def test_two_failing_parts_beside_undecided_ones_are_named_together() -> None:
    entry = seed_claim([CANNOT_TELL, HOLDS, FAILS, FAILS])
    assert entry["decision"] != FAILS and entry["notes"][1].startswith(
        "partly contradicted: k̄ (vector), k̄ (scalar) fails while other parts are undecided"
    )
