"""The shared verdict core: decision rules on planted numbers, Holm against brute force, the guards, the renderer."""

from __future__ import annotations

import json

import numpy as np
import pytest

from experiment_1.report.markdown import ReportDocument, check_seed_wording, verdict_lines
from experiment_1.report.rules import ci_against
from experiment_1.report.stats import bootstrap_mean_ci
from experiment_1.report.verdicts import (
    CANNOT_TELL,
    CONSTANT,
    DECISIONS,
    FAILS,
    HOLDS,
    NON_FINITE,
    SATURATED,
    by_id,
    conjunction,
    effect_from_stat,
    holm,
    hypothesis_test,
    saturation,
    seed_comparison,
    verdict,
)


def _holm_brute_force(p: list[float]) -> list[float]:
    """Holm by its definition: p_adj(i) = max over the j ranked at or before i of min(1, (m − rank_j)·p_j)."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    for position, index in enumerate(order):
        out[index] = max(min(1.0, (m - rank) * p[order[rank]]) for rank in range(position + 1))
    return out


def test_holm_matches_its_definition_and_rejects_like_the_step_down_procedure() -> None:
    rng = np.random.default_rng(0)
    for m in (1, 2, 5, 9):
        p = rng.uniform(0, 0.1, m).tolist()
        adjusted = holm(p)
        assert adjusted == pytest.approx(_holm_brute_force(p), abs=0)
        # rejecting at adjusted ≤ α is the step-down: reject the k smallest while p_(k) ≤ α/(m − k + 1)
        order = np.argsort(p)
        step_down = set()
        for rank, index in enumerate(order):
            if p[index] > 0.05 / (m - rank):
                break
            step_down.add(int(index))
        assert {i for i, value in enumerate(adjusted) if value <= 0.05} == step_down
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])


def test_holm_keeps_a_non_finite_p_in_the_family_and_returns_nan_for_it() -> None:
    adjusted = holm([0.01, float("nan"), 0.02])
    assert adjusted[0] == pytest.approx(0.03) and adjusted[2] == pytest.approx(0.04) and np.isnan(adjusted[1])


def test_ci_rule_on_planted_effects_present_absent_and_reversed() -> None:
    rng = np.random.default_rng(1)
    present = effect_from_stat("d", bootstrap_mean_ci(rng.normal(1.0, 1.0, 400)))
    absent = effect_from_stat("d", bootstrap_mean_ci(rng.normal(0.0, 1.0, 400)))
    assert ci_against(present["ci_low"], present["ci_high"], 0.0) == HOLDS
    assert ci_against(present["ci_low"], present["ci_high"], 0.0, "below") == FAILS
    assert ci_against(absent["ci_low"], absent["ci_high"], 0.0) == CANNOT_TELL


def test_a_claim_made_of_parts_holds_only_when_every_part_holds() -> None:
    assert conjunction([HOLDS, HOLDS]) == HOLDS and conjunction([HOLDS, SATURATED]) == CANNOT_TELL
    assert (
        conjunction([CANNOT_TELL, FAILS, HOLDS]) == FAILS
        and conjunction([FAILS, NON_FINITE]) == NON_FINITE
        and conjunction([]) == CANNOT_TELL
    )
    block = [verdict("a", "c", HOLDS, "r"), verdict("b", "c", FAILS, "r")]
    assert by_id(block)["b"]["decision"] == FAILS


def test_saturation_flags_a_measure_at_its_bound_or_one_value_but_not_one_that_moves() -> None:
    rng = np.random.default_rng(2)
    at_bound = np.where(rng.uniform(size=1000) < 0.993, 512.0, rng.integers(1, 512, 1000))  # K^err = 2^L on 99.3 %
    assert saturation(at_bound, bounds=(1, 512)) == {
        "decision": SATURATED,
        "value": 512.0,
        "share": pytest.approx(np.mean(at_bound == 512)),
        "at": "bound",
    }
    mostly_one = np.where(rng.uniform(size=1000) < 0.95, 7.0, rng.normal(size=1000))
    assert saturation(mostly_one)["at"] == "mode"
    assert saturation(np.full(50, 3.0))["decision"] == CONSTANT
    assert saturation(rng.normal(size=1000), bounds=(0.0,)) is None
    assert saturation(np.where(rng.uniform(size=1000) < 0.85, 512.0, 3.0), bounds=(512,)) is None  # 85 % < 90 %


def test_a_non_finite_input_never_gives_a_confident_verdict() -> None:
    clean = verdict(
        "x", "it rises", HOLDS, "CI excludes 0", effect={"name": "d", "value": 1.0, "ci_low": 0.5, "ci_high": 1.5}
    )
    assert clean["decision"] == HOLDS and clean["notes"] == []
    for spoiled in (
        {"effect": {"name": "d", "value": float("nan"), "ci_low": 0.5, "ci_high": 1.5}},
        {"test": hypothesis_test("U", float("inf"))},
        {"inputs": [np.array([1.0, np.nan])]},
    ):
        entry = verdict("x", "it rises", HOLDS, "CI excludes 0", **spoiled)
        assert entry["decision"] == NON_FINITE and "no verdict" in entry["notes"][0]
    with pytest.raises(ValueError, match="not one of"):
        verdict("x", "c", "invariant", "r")


def test_seed_comparison_says_cannot_tell_when_our_ci_contains_the_seed_and_gives_the_detectable_effect() -> None:
    effect = {"name": "hard − easy", "value": 3.0, "ci_low": -2.4, "ci_high": 8.4, "confidence": 0.95}
    inside = seed_comparison(1.4, effect)
    assert inside["relation"] == "inside"
    assert inside["minimal_detectable_effect"] == pytest.approx((1.959964 + 0.841621) * 10.8 / (2 * 1.959964), rel=1e-5)
    assert seed_comparison(9.0, effect)["relation"] == "above" and seed_comparison(-3.0, effect)["relation"] == "below"
    assert seed_comparison(float("nan"), effect)["relation"] is None


def test_renderer_states_decision_evidence_corrected_p_seed_and_rule_once() -> None:
    effect = {"name": "hard − easy", "value": 3.0, "ci_low": -2.4, "ci_high": 8.4, "confidence": 0.95}
    test = hypothesis_test(
        "label permutation", 0.000999, p_adjusted=0.002997, correction="Holm", family_size=3, p_floor=1 / 1001
    )
    block = [
        verdict(
            "a",
            "N_eff^v is higher on hard images",
            CANNOT_TELL,
            "the CI rule",
            effect=effect,
            seed=seed_comparison(1.4, effect),
        ),
        verdict(
            "b",
            "the ranking is class-aligned",
            HOLDS,
            "the CI rule",
            test=test,
            statistic={"name": "AUC", "value": 0.61},
        ),
    ]
    block = json.loads(json.dumps(block))  # survives the summary JSON
    lines = verdict_lines(block)
    assert lines[0].startswith(
        "- N_eff^v is higher on hard images: **cannot tell** — hard − easy = 3 [-2.4, 8.4] (95 % CI); "
        "the original study reports 1.4; our CI contains it (the smallest effect these data detect at 80 % power: 7.72)"
    )
    assert (
        "label permutation p = 9.99e-04 (the test's floor), Holm over 3 tests p = 0.003" in lines[1]
        and "AUC = 0.61" in lines[1]
    )
    assert lines.count("1. the CI rule") == 1 and all("rule 1" in line for line in lines[:2])
    assert set(DECISIONS) >= {entry["decision"] for entry in block}


def test_report_fills_its_verdict_section_from_the_block_and_enforces_the_seed_wording() -> None:
    summary = {
        "config": {"arch": "resnet18", "weights": "IMAGENET1K_V1", "num_blocks": 8, "sample_index": "s.json"},
        "question": "Q?",
        "num_valid": 4,
        "num_skipped_corrupt": 0,
    }
    block = [
        verdict(
            "a", "the spectrum is dense", HOLDS, "rule r", statistic={"name": "Γ_128", "value": 0.43, "percent": True}
        )
    ]
    text = ReportDocument(
        title="T",
        summary=summary,
        method="",
        results=[],
        seed_rows=[],
        seed_source="s",
        verdict=[],
        generator="g",
        verdicts=block,
    ).render()
    section = text.split("## Verdict")[1].split("## Configuration")[0]
    assert "- the spectrum is dense: **holds** — Γ_128 = 43.0 % (rule 1)." in section and "1. rule r" in section
    for bad in (
        "Lite0 is denser than the seed's ResNet-18",
        "the seed's network is sparse",
        "Lite0 is denser than the original study's ResNet-18",
        "the original study's network is sparse",
    ):
        with pytest.raises(ValueError, match="the original study reports"):
            ReportDocument(
                title="T",
                summary=summary,
                method="",
                results=[],
                seed_rows=[],
                seed_source="s",
                verdict=[bad],
                generator="g",
            ).render()
    check_seed_wording("Γ = 43 %, where the seed reports 94 %; the seed's claim holds here.")
    check_seed_wording("Γ = 43 %, where the original study reports 94 %; the original study's claim holds here.")
