"""The README headline carries a partly contradicted claim with its failing parts (N12), planted in a small summary."""

from __future__ import annotations

from experiment_1.report import CANNOT_TELL, PARTLY_CONTRADICTED
from paper.headline import experiment_5_answers


def _summary(decision: str, failing: list[str]) -> dict:
    return {
        "published": {"resnet18": {"n_eff_vector_hard_minus_easy": 1.4, "k_tau_err_hard_minus_easy": 2.8}},
        "verdicts": [{"id": "seed_claim", "decision": decision, "parameters": {"failing_parts": failing}}],
    }


def test_a_partly_contradicted_claim_names_its_failing_parts_in_the_headline() -> None:
    ours = experiment_5_answers(_summary(PARTLY_CONTRADICTED, ["k̄ (scalar)"]))[1]
    assert "**cannot tell (partly contradicted)** — fails on: k̄ (scalar)" in ours
    plain = experiment_5_answers(_summary(CANNOT_TELL, []))[1]
    assert plain.endswith("**cannot tell**")
