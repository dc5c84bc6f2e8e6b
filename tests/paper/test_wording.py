"""A verdict and a run in words (paper/wording.py): the decision's phrase, the claim read back from its rule's
template, and runs that read the same told apart."""

from __future__ import annotations

import json
from pathlib import Path

from experiment_1.report import CANNOT_TELL, PARTLY_CONTRADICTED
from paper.experiments import rules_of
from paper.wording import (
    claim_fields,
    decided_claim,
    decision_phrase,
    distinguishing_notes,
    predicate,
    reader_label,
    rule_for,
    verdict_line,
)

REPO = Path(__file__).resolve().parents[2]
SPECTRUM = REPO / "experiment_2/results_efficientnet_lite0_sample/summary.json"


def test_words_for_decisions() -> None:
    assert decision_phrase("cannot tell (not converged)") == "not decided by these data (not converged)"
    assert decision_phrase("saturated") == "untestable here (the measure is saturated)"
    assert decision_phrase("consistent (post hoc)").startswith("consistent, post hoc")


def test_a_partly_contradicted_claim_names_its_failing_parts() -> None:
    entry = {"decision": PARTLY_CONTRADICTED, "parameters": {"failing_parts": ["k̄ (scalar)"]}}
    assert (
        decision_phrase(PARTLY_CONTRADICTED, entry)
        == "not decided by these data (partly contradicted: fails on k̄ (scalar))"
    )
    assert decision_phrase(CANNOT_TELL, {"decision": CANNOT_TELL, "parameters": {}}) == "not decided by these data"


def test_a_claim_is_read_back_from_its_rules_template() -> None:
    summary = json.loads(SPECTRUM.read_text())
    entries = {entry["id"]: entry for entry in summary["verdicts"]}
    peak = entries["peak.vector"]
    rule = rule_for(summary, peak)
    assert rule is not None and rule is rule_for(summary, entries["peak.scalar"])
    fields = claim_fields(rule, peak["claim"])
    assert fields is not None and rule.claim.format(**fields) == peak["claim"]
    assert claim_fields(rule, "a claim its rule never words") is None
    assert predicate(summary, peak) == "the spectrum peaks at another order than subset counting predicts"
    assert predicate(summary, entries["projections_differ"]) == entries["projections_differ"]["claim"]  # no subject
    said = decided_claim(summary, "peak.vector")
    assert (
        said.startswith("the claim that the spectrum peaks")
        and f"**{peak['decision']}** (verdict `peak.vector`)" in said
    )
    assert verdict_line(peak).startswith(f"{peak['claim']}: **{peak['decision']}** — ")
    assert rules_of({"experiment": "no such experiment"}) == ()


def test_rows_that_read_the_same_in_the_paper_are_told_apart_by_what_differs() -> None:
    labels = [
        "`experiment_2/results_a` — resnet18, `random`, N = 6, native",
        "`experiment_2/results_a_seed1` — resnet18, `random`, N = 6, native",
        "`experiment_2/results_b` — resnet18, `random`, N = 6, smooth",
    ]
    facts = [
        {"seed": "seed 0", "grid": "λ ≥ 0.001"},
        {"seed": "seed 1", "grid": "λ ≥ 0.001"},
        {"seed": "seed 2", "grid": "λ ≥ 0.1"},
    ]
    assert reader_label(labels[0]) == reader_label(labels[1]) == "ResNet-18 (random init), N = 6, native"
    assert distinguishing_notes(labels, facts) == [" (seed 0)", " (seed 1)", ""]
