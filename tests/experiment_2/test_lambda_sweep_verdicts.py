"""The 3A/3B verdicts of experiment_2.lambda_sweep.verdicts on planted summaries: every rule at, just below and just
above its thresholds (p = α, a CI touching 0, the seed's value on our CI's bound, agreement on the seed's range, a slope
CI on k ± tolerance), and the whole verdict entries (ids, claims, notes, parameters) against hand-written ones."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy.stats import binomtest

from experiment_1.report import (
    CANNOT_TELL,
    FAILS,
    HOLDS,
    UNRESOLVED,
    bootstrap_mean_ci,
    exact_proportion_ci,
    holm,
    sign_test_power,
)
from experiment_2.lambda_sweep.verdicts import (
    COST,
    MIGRATION,
    MONOTONE,
    POWER_LAW,
    SEED_ENDPOINT,
    cost_verdict,
    kappa_changes,
    law_assumption,
    migration_verdict,
    monotone_verdict,
    paired_change,
    power_law_verdict,
    seed_endpoint_verdict,
    verdicts,
)

EPS = 1e-9
POWER_NOTE = "power {:.2f} < 0.80 against the effect of interest: too few observations, so the absence of significance is not read"


def change(low: float, high: float, mean: float | None = None) -> dict[str, float]:
    return {"mean": (low + high) / 2 if mean is None else mean, "ci_low": low, "ci_high": high}


def step(low: float, high: float, p: float, falls: int = 7, n: int = 10, power: float = 0.9, **where: float) -> dict:
    return {
        **where,
        "change": change(low, high),
        "share_falling": {"mean": falls / n, "ci_low": 0.25, "ci_high": 0.75, "n": n},
        "falls": falls,
        "rises": n - falls,
        "sign_test_p": p,
        "sign_test_power": power,
    }


def migration_summary(low: float, high: float, p: float, power: float = 0.9) -> dict:
    end = step(low, high, p, power=power, **{"from": 1.0, "to": 0.1})
    return {"kappa_changes": {"vector": {"end_to_end": end, "steps": []}}}


# ---- paired_change and kappa_changes


def test_paired_change_counts_falls_and_rises_and_drops_ties() -> None:
    before = np.array([5, 5, 5, 5, 5, 5, 5, 5], dtype=np.uint8)  # unsigned: the change must be taken in float64
    after = np.array([4, 3, 6, 5, 2, 1, 0, 5], dtype=np.uint8)
    result = paired_change(before, after, seed=3)
    difference = after.astype(float) - before.astype(float)
    assert result == {
        "change": bootstrap_mean_ci(difference, seed=3),
        "share_falling": exact_proportion_ci((difference < 0).astype(float)),
        "falls": 5,
        "rises": 1,
        "sign_test_p": binomtest(5, 6).pvalue,
        "sign_test_power": sign_test_power(6, 1.0),
    }


def test_paired_change_of_all_ties_has_p_1_and_no_power() -> None:
    result = paired_change(np.ones(4), np.ones(4), seed=0)
    assert (result["falls"], result["rises"], result["sign_test_p"], result["sign_test_power"]) == (0, 0, 1.0, 0.0)


def test_kappa_changes_steps_through_the_grid_and_goes_from_lambda_1_to_the_smallest() -> None:
    lambdas = [0.5, 1.0, 0.1, 0.2]
    rng = np.random.default_rng(4)
    kappa = {projection: rng.normal(size=(9, 4)) for projection in ("vector", "scalar")}
    valid = np.array([True, True, False, True, True, True, True, False, True])
    arrays = {f"kappa_{projection}": values for projection, values in kappa.items()}
    result = kappa_changes(arrays, valid, lambdas, seed=2)
    assert list(result) == ["vector", "scalar"]
    for projection, values in kappa.items():
        values = values[valid]
        steps = result[projection]["steps"]
        assert [(entry["from"], entry["to"]) for entry in steps] == [(0.5, 1.0), (1.0, 0.1), (0.1, 0.2)]
        for column, entry in enumerate(steps):
            want = paired_change(values[:, column], values[:, column + 1], 2)
            assert {key: entry[key] for key in want} == want
        end = result[projection]["end_to_end"]
        assert (end["from"], end["to"]) == (1.0, 0.1)
        assert {key: end[key] for key in want} == paired_change(values[:, 1], values[:, 2], 2)
    without_one = kappa_changes(arrays, valid, [0.5, 0.4, 0.1, 0.2], seed=2)["scalar"]["end_to_end"]
    assert (without_one["from"], without_one["to"]) == (0.5, 0.1)  # no λ = 1: from the first λ
    assert without_one["falls"] == paired_change(kappa["scalar"][valid][:, 0], kappa["scalar"][valid][:, 2], 2)["falls"]


# ---- migration: the CI side and p ≤ α, at the boundaries


@pytest.mark.parametrize(
    ("low", "high", "p", "decision"),
    [
        (-2.0, -EPS, 0.05, HOLDS),  # p at α: significant
        (-2.0, -EPS, 0.05 + EPS, CANNOT_TELL),
        (-2.0, 0.0, 0.01, CANNOT_TELL),  # a CI touching 0 does not lie below it
        (EPS, 2.0, 0.05, FAILS),
        (0.0, 2.0, 0.01, CANNOT_TELL),
        (EPS, 2.0, 0.05 + EPS, CANNOT_TELL),
        (-1.0, 1.0, 0.001, CANNOT_TELL),
    ],
)
def test_migration_rule_at_its_boundaries(low: float, high: float, p: float, decision: str) -> None:
    assert migration_verdict(migration_summary(low, high, p), "vector")["decision"] == decision


def test_a_migration_verdict_entry() -> None:
    entry = migration_verdict(migration_summary(-0.5, -0.1, 0.02), "vector")
    assert entry == {
        "id": "migration.vector",
        "claim": "3A, vector projection: the spectrum migrates to lower orders (κ falls from λ = 1 to λ = 0.1)",
        "decision": HOLDS,
        "rule": MIGRATION.text,
        "parameters": {"alpha": 0.05, "power": 0.8, "sign_test_power": 0.9},
        "statistic": None,
        "effect": {
            "name": "κ(λ = 0.1) − κ(λ = 1), paired",
            "value": -0.3,
            "ci_low": -0.5,
            "ci_high": -0.1,
            "confidence": 0.95,
            "percent": False,
        },
        "test": {
            "name": "two-sided sign test over images",
            "p_value": 0.02,
            "p_adjusted": None,
            "correction": None,
            "family_size": None,
            "p_floor": None,
        },
        "seed": None,
        "notes": ["κ falls on 7 of 10 images (70 % [25, 75], exact)"],
    }


@pytest.mark.parametrize(("power", "noted"), [(0.8 - EPS, True), (0.8, False)])
def test_a_silent_migration_test_below_the_power_minimum_is_noted(power: float, noted: bool) -> None:
    entry = migration_verdict(migration_summary(-1.0, 1.0, 0.5, power=power), "vector")
    assert entry["decision"] == CANNOT_TELL
    assert entry["notes"][1:] == ([POWER_NOTE.format(power)] if noted else [])
    significant = migration_verdict(migration_summary(-1.0, -0.5, 0.05, power=0.1), "vector")
    assert significant["decision"] == HOLDS and len(significant["notes"]) == 1  # a significant test is read


# ---- monotone: every step, Holm over the steps, a significant rise fails


def monotone_summary(*steps: dict) -> dict:
    return {"kappa_changes": {"scalar": {"steps": list(steps), "end_to_end": None}}}


def grid_step(low: float, high: float, p: float, at: tuple[float, float], power: float = 0.9, falls: int = 7) -> dict:
    return step(low, high, p, falls=falls, power=power, **{"from": at[0], "to": at[1]})


def test_monotone_holds_when_every_holm_adjusted_step_falls_at_alpha() -> None:
    # Holm over two steps: 0.025 · 2 = 0.05 and max(0.05, 0.05 · 1): both at α, both significant
    first, second = grid_step(-1.0, -0.1, 0.025, (1.0, 0.5)), grid_step(-1.0, -0.1, 0.05, (0.5, 0.1), falls=8)
    entry = monotone_verdict(monotone_summary(first, second), "scalar")
    assert entry == {
        "id": "monotone.scalar",
        "claim": "scalar projection: κ falls at every step as λ decreases",
        "decision": HOLDS,
        "rule": MONOTONE.text,
        "parameters": {"alpha": 0.05, "power": 0.8},
        "statistic": None,
        "effect": None,
        "test": {
            "name": "two-sided sign test, the weakest step",
            "p_value": 0.025,
            "p_adjusted": 0.05,
            "correction": "Holm",
            "family_size": 2,
            "p_floor": None,
        },
        "seed": None,
        "notes": ["λ 1 → 0.5: 7/10 fall; λ 0.5 → 0.1: 8/10 fall"],
    }


def test_monotone_at_holm_just_above_alpha_cannot_tell_and_names_the_steps() -> None:
    first, second = grid_step(-1.0, -0.1, 0.025 + EPS, (1.0, 0.5)), grid_step(-1.0, -0.1, 0.05, (0.5, 0.1))
    entry = monotone_verdict(monotone_summary(first, second), "scalar")
    assert entry["decision"] == CANNOT_TELL
    assert entry["notes"][1:] == ["no significant fall at λ 1 → 0.5, λ 0.5 → 0.1"]
    assert entry["test"]["p_value"] == 0.025 + EPS and entry["test"]["p_adjusted"] == max(holm([0.025 + EPS, 0.05]))


def test_one_significant_rise_fails_monotone_whatever_the_other_steps() -> None:
    rises = grid_step(0.1, 1.0, 0.001, (1.0, 0.5))
    unclear = grid_step(-1.0, 1.0, 0.9, (0.5, 0.2))
    falls = grid_step(-1.0, -0.1, 0.001, (0.2, 0.1))
    entry = monotone_verdict(monotone_summary(falls, rises, unclear), "scalar")
    assert entry["decision"] == FAILS and len(entry["notes"]) == 1  # no "no significant fall" note beside a failure
    assert entry["test"]["p_value"] == 0.9 and entry["test"]["family_size"] == 3


def test_a_significant_rise_beside_a_step_without_power_still_fails() -> None:
    rises = grid_step(0.1, 1.0, 0.001, (1.0, 0.5))
    tied = grid_step(-1.0, 1.0, 1.0, (0.5, 0.1), power=0.2, falls=2)  # most images tied at that step: little power
    entry = monotone_verdict(monotone_summary(rises, tied), "scalar")
    assert entry["decision"] == FAILS and not any("power" in note for note in entry["notes"])


def test_the_share_falling_is_printed_in_whole_percent() -> None:
    summary = migration_summary(-0.5, -0.1, 0.02)
    summary["kappa_changes"]["vector"]["end_to_end"]["share_falling"].update(ci_low=0.55, ci_high=0.875)
    assert migration_verdict(summary, "vector")["notes"] == ["κ falls on 7 of 10 images (70 % [55, 88], exact)"]


def test_monotone_reads_the_weakest_power_of_its_steps() -> None:
    weak = grid_step(-1.0, 1.0, 0.5, (1.0, 0.5), power=0.8 - EPS)
    strong = grid_step(-1.0, 1.0, 0.5, (0.5, 0.1), power=0.95)
    entry = monotone_verdict(monotone_summary(weak, strong), "scalar")
    assert entry["decision"] == CANNOT_TELL and entry["notes"][-1] == POWER_NOTE.format(0.8 - EPS)
    at_minimum = grid_step(-1.0, 1.0, 0.5, (1.0, 0.5), power=0.8)
    assert POWER_NOTE.format(0.8) not in monotone_verdict(monotone_summary(at_minimum, strong), "scalar")["notes"]


def test_monotone_without_steps_cannot_tell_and_has_no_test() -> None:
    entry = monotone_verdict(monotone_summary(), "scalar")
    assert entry["decision"] == CANNOT_TELL and entry["test"] is None
    assert entry["notes"] == ["", POWER_NOTE.format(0.0)]


# ---- the seed's κ^v/L at λ = 0.1


def endpoint_summary(low: float, high: float, reported: float, at: float = 0.1, blocks: int = 4) -> dict:
    kappa = {"mean": (low + high) / 2 * blocks, "ci_low": low * blocks, "ci_high": high * blocks}
    return {
        "per_lambda": [{"lambda": 1.0, "projections": {}}, {"lambda": at, "projections": {"vector": {"kappa": kappa}}}],
        "binomial_null": {"num_blocks": blocks},
        "published": {"resnet18": {"kappa_at_lambda_0.1": reported * 8}},
    }


@pytest.mark.parametrize(
    ("reported", "decision", "relation"),
    [
        (0.5, HOLDS, "inside"),  # the rule's words: our CI "at or below" the seed's value holds
        (0.5 + EPS, HOLDS, "above"),
        (0.25, CANNOT_TELL, "inside"),
        (0.25 - EPS, FAILS, "below"),
        (0.375, CANNOT_TELL, "inside"),
    ],
)
def test_the_seed_endpoint_at_our_ci_bounds(reported: float, decision: str, relation: str) -> None:
    entry = seed_endpoint_verdict(endpoint_summary(0.25, 0.5, reported))
    assert entry["decision"] == decision and entry["seed"]["relation"] == relation


def test_a_seed_endpoint_entry() -> None:
    entry = seed_endpoint_verdict(endpoint_summary(0.25, 0.5, 0.75, at=0.1 + 1e-13))
    assert entry["id"] == "seed_endpoint" and entry["rule"] == SEED_ENDPOINT.text and entry["decision"] == HOLDS
    assert entry["claim"] == "κ^v falls as far as the seed reports at λ = 0.1 (κ/L; the seed reports ResNet-18, L = 8)"
    assert entry["effect"] == {
        "name": "κ^v / L at λ = 0.1",
        "value": 0.375,
        "ci_low": 0.25,
        "ci_high": 0.5,
        "confidence": 0.95,
        "percent": False,
    }
    assert entry["seed"]["reported"] == 0.75
    assert entry["notes"] == ["the seed reports κ^v = 6 on L = 8; ours is 1.5 on L = 4"]


def test_no_seed_endpoint_without_lambda_0_1_on_the_grid() -> None:
    assert seed_endpoint_verdict(endpoint_summary(0.25, 0.5, 0.75, at=0.1 + 1e-11)) is None


# ---- 3B: top-1 agreement inside the seed's range for λ ∈ [0.8, 1)


def cost_summary(*intervals: tuple[float, float, float], seed_range: tuple[float, float] = (0.6, 0.9)) -> dict:
    """``intervals``: (λ, CI low, CI high) of the agreement; λ = 1 agrees with itself (never read)."""
    entries = [{"lambda": 1.0, "top1_agreement_with_lambda_1": {"mean": 1.0, "ci_low": 1.0, "ci_high": 1.0}}]
    for at, low, high in intervals:
        stat = {"mean": (low + high) / 2, "ci_low": low, "ci_high": high, "successes": 3, "n": 4, "method": "exact"}
        entries.append({"lambda": at, "top1_agreement_with_lambda_1": stat})
    return {"per_lambda": entries, "published": {"resnet18": {"agreement_range_lambda_0.8_to_1": list(seed_range)}}}


@pytest.mark.parametrize(
    ("low", "high", "decision"),
    [
        (0.6, 0.9, HOLDS),  # on the range's ends: inside
        (0.6 - EPS, 0.9, CANNOT_TELL),
        (0.6, 0.9 + EPS, CANNOT_TELL),
        (0.3, 0.6, CANNOT_TELL),  # touching the range is not wholly outside it
        (0.3, 0.6 - EPS, FAILS),
        (0.9, 0.95, CANNOT_TELL),
        (0.9 + EPS, 0.95, FAILS),
    ],
)
def test_cost_rule_at_the_seeds_range(low: float, high: float, decision: str) -> None:
    assert cost_verdict(cost_summary((0.9, 0.7, 0.8), (0.8, low, high)))["decision"] == decision


def test_a_cost_entry_names_the_lowest_agreement_in_range() -> None:
    entry = cost_verdict(cost_summary((0.9, 0.7, 0.8), (0.8, 0.65, 0.7), (0.5, 0.1, 0.2), (0.8 - EPS, 0.0, 0.1)))
    assert entry == {
        "id": "cost",
        "claim": "3B: top-1 agreement with λ = 1 stays inside the seed's 60–90 % for λ ∈ [0.8, 1)",
        "decision": HOLDS,  # λ = 0.5 and λ just below 0.8 are outside [0.8, 1]: not read
        "rule": COST.text,
        "parameters": {},
        "statistic": None,
        "effect": {
            "name": "top-1 agreement at λ = 0.8 (the lowest in range)",
            "value": 0.675,
            "ci_low": 0.65,
            "ci_high": 0.7,
            "confidence": 0.95,
            "percent": True,
            "successes": 3,
            "n": 4,
            "interval": "exact",
        },
        "test": None,
        "seed": None,
        "notes": ["the seed's range is wide: inside it says little about the cost"],
    }


def test_no_cost_verdict_without_a_lambda_in_range_below_1() -> None:
    assert cost_verdict(cost_summary((0.5, 0.1, 0.2))) is None


# ---- the λ^k power law over the resolved orders k ≥ 2


def law_summary(rows: list[dict[str, Any]], tolerance: float = 0.25) -> dict:
    return {
        "power_law": {
            "slope_tolerance": tolerance,
            "floor_margin": 10.0,
            "fit_lambdas": [0.1, 0.05],
            "projections": {"vector": rows, "scalar": rows},
        }
    }


def law_row(order: int, low: float, high: float, resolved: bool = True) -> dict[str, Any]:
    return {"order": order, "slope": (low + high) / 2, "ci_low": low, "ci_high": high, "resolved": resolved}


@pytest.mark.parametrize(
    ("low", "high", "decision"),
    [
        (1.75, 2.25, HOLDS),  # on k ± tolerance: inside
        (1.75 - EPS, 2.0, CANNOT_TELL),
        (2.0, 2.25 + EPS, CANNOT_TELL),
        (1.0, 1.75, CANNOT_TELL),  # touching the band is not wholly outside it
        (1.0, 1.75 - EPS, FAILS),
        (2.25, 3.0, CANNOT_TELL),
        (2.25 + EPS, 3.0, FAILS),
    ],
)
def test_power_law_rule_at_k_plus_minus_the_tolerance(low: float, high: float, decision: str) -> None:
    rows = [law_row(1, 5.0, 6.0), law_row(2, low, high), law_row(3, 2.9, 3.1), law_row(4, 0.0, 9.0, resolved=False)]
    assert power_law_verdict(law_summary(rows), "vector", "assumed")["decision"] == decision


def test_order_1_is_not_counted_and_nothing_resolved_is_unresolved() -> None:
    rows = [law_row(1, 5.0, 6.0), law_row(2, 0.0, 1.0, resolved=False), law_row(3, 0.0, 1.0, resolved=False)]
    entry = power_law_verdict(law_summary(rows), "vector", "assumed")
    assert entry["decision"] == UNRESOLVED
    assert entry["notes"] == ["assumed", "not resolved (within 10× the round-off floor at a fitted λ): k = 2, 3"]
    assert power_law_verdict(law_summary([law_row(1, 5.0, 6.0)]), "vector", "a")["decision"] == UNRESOLVED


def test_a_power_law_entry_names_the_orders_outside() -> None:
    rows = [law_row(2, 1.0, 1.2), law_row(3, 2.9, 3.1), law_row(4, 4.5, 4.9), law_row(5, 0.0, 9.0, resolved=False)]
    entry = power_law_verdict(law_summary(rows), "scalar", "assumed")
    assert entry == {
        "id": "power_law.scalar",
        "claim": "scalar projection: every resolved order k ≥ 2 follows the λ^k law over λ ∈ {0.1, 0.05}",
        "decision": FAILS,
        "rule": POWER_LAW.text,
        "parameters": {"slope_tolerance": 0.25, "floor_margin": 10.0},
        "statistic": None,
        "effect": None,
        "test": None,
        "seed": None,
        "notes": [
            "assumed",
            "outside at k = 2, 4 (slopes 1.10–4.70)",
            "not resolved (within 10× the round-off floor at a fitted λ): k = 5",
            "the scalar projection follows c = argmax h_λ(full), which may change with λ, so its slopes need not be integers",
        ],
    }
    assert power_law_verdict(law_summary(rows[1:2]), "vector", "assumed")["notes"] == ["assumed"]


# ---- the law's assumption and the block


def test_law_assumption_names_the_kink() -> None:
    smooth = law_assumption({"smooth_activations": "gelu"})
    assert smooth == (
        "the law is proved for residual stacks smooth in λ; every activation here is smooth (the Experiment 3C swap), "
        "so its assumption holds"
    )
    tail = ": piecewise-linear activations), so a deviation measures that assumption, not the theorem; Experiment 3C derives the law such activations follow"
    head = "the law's assumption, smoothness in λ, does not hold here ("
    assert law_assumption({"post_activation": ["ReLU"]}) == head + "a ReLU follows every sum" + tail
    inside = "nothing follows the sum, but ReLU/ReLU6 sit inside the branches and on the fixed path"
    assert law_assumption({"post_activation": ["Identity"]}) == law_assumption({}) == head + inside + tail


def block_summary(per_lambda: list[dict[str, Any]]) -> dict[str, Any]:
    end = step(-1.0, -0.5, 0.01, **{"from": 1.0, "to": 0.1})
    return {
        "config": {"post_activation": ["ReLU"]},
        "kappa_changes": {projection: {"end_to_end": end, "steps": [end]} for projection in ("vector", "scalar")},
        "per_lambda": per_lambda,
        "binomial_null": {"num_blocks": 4},
        "published": {"resnet18": {"kappa_at_lambda_0.1": 6.0, "agreement_range_lambda_0.8_to_1": [0.6, 0.9]}},
        **law_summary([law_row(2, 1.9, 2.1)]),
    }


def test_the_block_in_order_and_without_the_seed_comparisons_off_the_grid() -> None:
    at_1 = {"lambda": 1.0, "top1_agreement_with_lambda_1": {"mean": 1.0, "ci_low": 1.0, "ci_high": 1.0}}
    at_08 = {"lambda": 0.8, "top1_agreement_with_lambda_1": {"mean": 0.7, "ci_low": 0.65, "ci_high": 0.75}}
    at_01 = endpoint_summary(0.25, 0.5, 0.75)["per_lambda"][1]
    migration = ["migration.vector", "migration.scalar", "monotone.vector", "monotone.scalar"]
    law = ["power_law.vector", "power_law.scalar"]
    summary = block_summary([at_1, at_08, at_01])
    block = verdicts(summary)
    assert [entry["id"] for entry in block] == [*migration, "seed_endpoint", "cost", *law]
    assert block[-1]["notes"][0] == law_assumption(summary["config"])
    assert [entry["id"] for entry in verdicts(block_summary([at_1]))] == migration + law
