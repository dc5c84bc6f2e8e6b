"""A verdict and a run in words (paper/wording.py): the decision's phrase, the claim read back from its rule's
template, and runs that read the same told apart."""

from __future__ import annotations

import json
from pathlib import Path

from experiment_1.report import CANNOT_TELL, PARTLY_CONTRADICTED
from paper.experiments import rules_of
from paper.wording import (
    basis_label,
    basis_of,
    claim_fields,
    decided_claim,
    decision_phrase,
    distinguishing_notes,
    is_basis_reading,
    network_label,
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


def test_a_verdict_names_its_basis_and_projection() -> None:
    """Möbius by default, Walsh for a walsh / walsh_… id, a basis verdict's own words (after its claim's last " — "),
    and the projection from the id before the claim; a basis verdict without the words is named as read together."""
    mobius = {"id": "migration.vector", "claim": "3A: κ falls"}
    walsh = {"id": "walsh_kappa_over_l.depth.a-b", "claim": "… (Walsh basis, vector projection: κ_W^v / L grows)"}
    dotted = {"id": "walsh.migration.scalar", "claim": "3A, scalar projection, Walsh basis: κ_W falls"}
    both = {
        "id": "kappa_over_l.basis.a-b",
        "claim": "… reads the same in both bases — Möbius only: reverses in the Walsh basis",
    }
    silent = {"id": "basis.vector", "claim": "vector projection: the Möbius shape reading holds in the Walsh basis too"}
    plain = {"id": "peak_order.depth.a-b", "claim": "the peak order grows with depth"}
    assert [basis_label(entry) for entry in (mobius, walsh, dotted, both, silent, plain)] == [
        "Möbius, vector projection",
        "Walsh, vector projection",
        "Walsh, scalar projection",
        "Möbius only: reverses in the Walsh basis",
        "Möbius and Walsh read together, vector projection",
        "Möbius",
    ]
    assert not is_basis_reading({"id": "kappa_basis.vector"}) and is_basis_reading({"id": "x.basis_at_input.a-b"})
    assert basis_of({"id": "walshy.x", "claim": ""}) == "Möbius"  # only the word itself, or walsh_…, marks the basis


def test_a_pair_without_an_effect_is_named_from_its_id() -> None:
    entry = {"id": "kappa_over_l.basis.efficientnet_lite0-efficientnet_lite1", "effect": None}
    assert network_label({}, entry) == "EfficientNet-Lite0 vs EfficientNet-Lite1"
    effect = {"name": "efficientnet_lite1 − efficientnet_lite0"}
    assert network_label({}, {"id": "x.depth.c-d", "effect": effect}) == "EfficientNet-Lite0 vs EfficientNet-Lite1"
    assert network_label({}, {"id": "seed_claim"}) == "every step"
