"""The claims table and the abstract's findings follow the stored verdicts: a changed verdict changes them, a missing
block leaves its claim out (never a placeholder)."""

from __future__ import annotations

import json
from pathlib import Path

from experiment_1.files import SCHEMA_VERSION
from paper.claims import CLAIMS, abstract_tex, claim_rows, claims_tex, decision_phrase, undecided, variants
from paper.committed_runs import allow_all_runs
from paper.experiments import record_of


def current(summary: dict) -> dict:
    """``summary`` as the current code writes it: its configuration carries the schema version and a run id."""
    config = {"run_id": "planted", **summary.get("config", {}), "schema_version": SCHEMA_VERSION}
    return {**summary, "config": config}


def write_summary(root: Path, experiment: int | str, summary: dict) -> None:
    path = root / record_of(experiment).primary
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(current(summary)))


def topk_summary(decision: str) -> dict:
    verdict = {
        "id": "captured_energy.vector",
        "claim": "Γ_K is as high as reported",
        "decision": decision,
        "rule": "CI against the seed",
        "parameters": {},
        "statistic": None,
        "test": None,
        "notes": [],
        "effect": {"name": "Γ_K", "value": 0.43, "ci_low": 0.42, "ci_high": 0.44, "confidence": 0.95, "percent": True},
        "seed": {"reported": 0.94, "relation": "above", "minimal_detectable_effect": None, "power": 0.8},
    }
    return {
        "experiment": 3,
        "config": {"arch": "efficientnet_lite0", "weights": "pretrained"},
        "num_valid": 250,
        "published": {"resnet18": {"captured_energy_at_64": 0.94}},
        "verdicts": [verdict],
    }


def test_a_row_is_its_verdict_and_follows_it(tmp_path: Path) -> None:
    allow_all_runs(tmp_path)  # a tmp tree without a manifest: every results folder counts
    write_summary(tmp_path, 3, topk_summary("fails"))
    write_summary(
        tmp_path,
        2,
        {"experiment": 2, "config": {"arch": "efficientnet_lite0", "weights": "pretrained"}, "num_valid": 250},
    )  # no block yet
    (row,) = claim_rows(tmp_path)
    assert (row.claim.label, row.reported, row.network, row.images, row.decision) == (
        "4",
        "Γ_64 ≈ 94.0 % of 256 subsets (ResNet-18)",
        "EfficientNet-Lite0",
        "250",
        "fails",
    )
    assert row.number == "Γ_K: 43.0 % [42.0 %, 44.0 %]" and row.why == "the reported 94.0 % lies above our CI"
    assert "Claim 4" in abstract_tex([row]) and "not confirmed on EfficientNet-Lite0" in abstract_tex([row])
    assert "2" in undecided(tmp_path) and "4" not in undecided(tmp_path)
    assert "Claim 2" not in claims_tex(tmp_path)  # the claim without a block is left out, with no placeholder sentence
    assert r"\newcommand{\ClaimFindingTwo}{}" in claims_tex(tmp_path)
    assert r"\newcommand{\ClaimFindingFour}{\paragraph{Against the original study" in claims_tex(tmp_path)
    write_summary(tmp_path, 3, topk_summary("holds"))
    assert "confirmed on EfficientNet-Lite0" in claims_tex(tmp_path) and "not confirmed" not in claims_tex(tmp_path)


def test_words_for_decisions_and_variants() -> None:
    assert decision_phrase("cannot tell (not converged)") == "not decided by these data (not converged)"
    assert decision_phrase("saturated") == "untestable here (the measure is saturated)"
    assert variants(["exp3c.native.lambda_k", "exp3c.smooth.lambda_k"]) == ["native", "smooth"]
    assert variants(["seed_claim"]) == [""]
    assert len({claim.label for claim in CLAIMS}) == len(CLAIMS)
