"""The 3A/3B verdicts (the :mod:`experiment_1.report.verdicts` schema), decided from the λ-sweep summary's numbers.

Paired per image (every λ is evaluated on the same images): :func:`paired_change` of κ between two λs — the
bootstrap CI of the mean change, the exact share of images where κ falls, and the two-sided sign test.

- ``migration`` (3A, per projection) — κ falls from λ = 1 to the smallest λ: holds when the paired CI lies
  below 0 and the sign test has p ≤ 0.05, fails when the CI lies above 0 with p ≤ 0.05, else cannot tell
  (never fails for want of significance); the minimum-power rule
  (:func:`experiment_1.report.verdicts.power_guard`): when the sign test's power against every image moving
  the same way is below 0.8 (fewer than 6 images), its silence is not read, and a note says so;
- ``monotone`` (per projection) — κ falls at every step of the grid: the migration rule at every step, the
  sign tests Holm-corrected over the steps; fails when one step rises significantly;
- ``seed_endpoint`` — κ^v/L at λ = 0.1 is as low as the seed's (ResNet-18, L = 8): our CI against the seed's
  value (holds at or below it, fails above it, cannot tell when it contains it);
- ``cost`` (3B) — top-1 agreement with λ = 1 stays inside the seed's range for λ ∈ [0.8, 1]: exact
  (Clopper–Pearson) intervals; holds when every one lies inside the range, fails when one lies wholly
  outside, else cannot tell;
- ``power_law`` (per projection) — every resolved order k ≥ 2 follows λ^k over the fitted λs: holds when each
  |slope − k| ≤ tolerance and its CI lies inside k ± tolerance, fails when a resolved order's CI lies wholly
  outside, else cannot tell; unresolved when no order k ≥ 2 clears the round-off floor. Order 1 is not
  counted: slope 1 at k = 1 holds for any network.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import binomtest

from experiment_1.mobius import PROJECTIONS
from experiment_1.report import (
    ALPHA,
    CANNOT_TELL,
    FAILS,
    HOLDS,
    POWER,
    UNRESOLVED,
    bootstrap_mean_ci,
    effect_from_stat,
    exact_proportion_ci,
    holm,
    hypothesis_test,
    power_guard,
    proportion_effect,
    seed_comparison,
    sign_test_power,
    verdict,
)

SEED_BLOCKS = 8  # ResNet-18's residual blocks: the seed's κ is on 1 … 8
SEED_ENDPOINT_LAMBDA = 0.1
SEED_AGREEMENT_LAMBDAS = (0.8, 1.0)
RULES = {
    "migration": (
        "holds when the 95 % CI of the paired per-image change κ(λ_min) − κ(1) lies below 0 and the two-sided sign test has p ≤ 0.05, "
        "fails when the CI lies above 0 with p ≤ 0.05, else cannot tell; with sign-test power < 0.8 against every image moving "
        "the same way, a silent test decides nothing (cannot tell)"
    ),
    "monotone": (
        "holds when at every step of the λ grid the 95 % CI of the paired per-image change of κ lies below 0 and the sign test "
        "(Holm over the steps) has p ≤ 0.05, fails when at some step the CI lies above 0 with Holm p ≤ 0.05, else cannot tell; "
        "the same power rule"
    ),
    "seed_endpoint": "our 95 % CI of κ^v/L at λ = 0.1 against the seed's (L = 8): holds when it lies at or below, fails "
    "when above, cannot tell when it contains it",
    "cost": "holds when the exact 95 % CI of top-1 agreement at every λ ∈ [0.8, 1] lies inside the seed's range, fails "
    "when one lies wholly outside it, else cannot tell",
    "power_law": (
        "over the resolved orders k ≥ 2: holds when every slope's 95 % CI lies inside k ± tolerance, fails when one lies wholly outside it, "
        "else cannot tell; unresolved when no order k ≥ 2 clears the round-off floor (order 1 is not counted: slope 1 holds for any network)"
    ),
}


def paired_change(before: np.ndarray, after: np.ndarray, seed: int) -> dict[str, Any]:
    """Per image ``after − before``: mean with bootstrap CI, the exact share of images that fall, the sign test (ties dropped)."""
    change = np.asarray(after, dtype=np.float64) - np.asarray(before, dtype=np.float64)
    falls, rises = int((change < 0).sum()), int((change > 0).sum())
    untied = falls + rises
    return {
        "change": bootstrap_mean_ci(change, seed=seed),
        "share_falling": exact_proportion_ci((change < 0).astype(np.float64)),
        "falls": falls,
        "rises": rises,
        "sign_test_p": float(binomtest(falls, untied).pvalue) if untied else 1.0,
        "sign_test_power": sign_test_power(untied, 1.0),
    }


def kappa_changes(arrays: dict[str, np.ndarray], valid: np.ndarray, lambdas: list[float], seed: int) -> dict[str, Any]:
    """Per projection: the paired change of κ at every step of the grid and from λ = 1 to the smallest λ."""
    result = {}
    for projection in PROJECTIONS:
        kappa = np.asarray(arrays[f"kappa_{projection}"], dtype=np.float64)[valid]
        steps = [
            {
                "from": lambdas[column],
                "to": lambdas[column + 1],
                **paired_change(kappa[:, column], kappa[:, column + 1], seed),
            }
            for column in range(len(lambdas) - 1)
        ]
        start = lambdas.index(1.0) if 1.0 in lambdas else 0
        end = int(np.argmin(lambdas))
        result[projection] = {
            "steps": steps,
            "end_to_end": {
                "from": lambdas[start],
                "to": lambdas[end],
                **paired_change(kappa[:, start], kappa[:, end], seed),
            },
        }
    return result


def _side(stat: dict[str, float]) -> int:
    return -1 if stat["ci_high"] < 0 else 1 if stat["ci_low"] > 0 else 0


def _decide(change: dict[str, Any], p_value: float) -> str:
    """Holds (κ falls) / fails (κ rises) when the paired CI excludes 0 on that side and the sign test is significant."""
    side = _side(change)
    if p_value <= ALPHA and side != 0:
        return HOLDS if side < 0 else FAILS
    return CANNOT_TELL


def migration_verdict(summary: dict[str, Any], projection: str) -> dict[str, Any]:
    entry = summary["kappa_changes"][projection]["end_to_end"]
    share = entry["share_falling"]
    notes = [
        f"κ falls on {entry['falls']} of {share['n']} images ({100 * share['mean']:.0f} % [{100 * share['ci_low']:.0f}, {100 * share['ci_high']:.0f}], exact)"
    ]
    decision, guard = power_guard(
        _decide(entry["change"], entry["sign_test_p"]),
        entry["sign_test_power"],
        significant=entry["sign_test_p"] <= ALPHA,
    )
    return verdict(
        f"migration.{projection}",
        f"3A, {projection} projection: the spectrum migrates to lower orders (κ falls from λ = {entry['from']:g} to λ = {entry['to']:g})",
        decision,
        RULES["migration"],
        effect=effect_from_stat(f"κ(λ = {entry['to']:g}) − κ(λ = {entry['from']:g}), paired", entry["change"]),
        test=hypothesis_test("two-sided sign test over images", entry["sign_test_p"]),
        parameters={"alpha": ALPHA, "power": POWER, "sign_test_power": entry["sign_test_power"]},
        notes=notes + guard,
    )


def monotone_verdict(summary: dict[str, Any], projection: str) -> dict[str, Any]:
    steps = summary["kappa_changes"][projection]["steps"]
    adjusted = holm([step["sign_test_p"] for step in steps])
    decisions = [_decide(step["change"], p_value) for step, p_value in zip(steps, adjusted)]
    decision = (
        FAILS
        if FAILS in decisions
        else HOLDS
        if decisions and all(part == HOLDS for part in decisions)
        else CANNOT_TELL
    )
    decision, guard = power_guard(
        decision, min((step["sign_test_power"] for step in steps), default=0.0), significant=decision != CANNOT_TELL
    )
    notes = [
        "; ".join(
            f"λ {step['from']:g} → {step['to']:g}: {step['falls']}/{step['share_falling']['n']} fall" for step in steps
        )
    ]
    unclear = [f"λ {step['from']:g} → {step['to']:g}" for step, part in zip(steps, decisions) if part != HOLDS]
    if unclear and decision != FAILS:
        notes.append(f"no significant fall at {', '.join(unclear)}")
    return verdict(
        f"monotone.{projection}",
        f"{projection} projection: κ falls at every step as λ decreases",
        decision,
        RULES["monotone"],
        test=None
        if not steps
        else hypothesis_test(
            "two-sided sign test, the weakest step",
            steps[int(np.argmax(adjusted))]["sign_test_p"],
            p_adjusted=max(adjusted),
            correction="Holm",
            family_size=len(steps),
        ),
        parameters={"alpha": ALPHA, "power": POWER},
        notes=notes + guard,
    )


def _entry_at(summary: dict[str, Any], value: float) -> dict[str, Any] | None:
    return next((entry for entry in summary["per_lambda"] if abs(entry["lambda"] - value) < 1e-12), None)


def seed_endpoint_verdict(summary: dict[str, Any]) -> dict[str, Any] | None:
    entry = _entry_at(summary, SEED_ENDPOINT_LAMBDA)
    if entry is None:
        return None
    blocks = summary["binomial_null"]["num_blocks"]
    kappa = entry["projections"]["vector"]["kappa"]
    scaled = {key: kappa[key] / blocks for key in ("mean", "ci_low", "ci_high")}
    reported = summary["published"]["resnet18"]["kappa_at_lambda_0.1"] / SEED_BLOCKS
    effect = effect_from_stat(f"κ^v / L at λ = {SEED_ENDPOINT_LAMBDA:g}", scaled)
    relation = seed_comparison(reported, effect)
    decision = (
        CANNOT_TELL if relation["relation"] in (None, "inside") else HOLDS if relation["relation"] == "above" else FAILS
    )
    return verdict(
        "seed_endpoint",
        f"κ^v falls as far as the seed reports at λ = {SEED_ENDPOINT_LAMBDA:g} (κ/L; the seed reports ResNet-18, L = {SEED_BLOCKS})",
        decision,
        RULES["seed_endpoint"],
        effect=effect,
        seed=relation,
        notes=[
            f"the seed reports κ^v = {summary['published']['resnet18']['kappa_at_lambda_0.1']:g} on L = {SEED_BLOCKS}; "
            f"ours is {kappa['mean']:.3g} on L = {blocks}"
        ],
    )


def cost_verdict(summary: dict[str, Any]) -> dict[str, Any] | None:
    low, high = summary["published"]["resnet18"]["agreement_range_lambda_0.8_to_1"]
    entries = [
        entry
        for entry in summary["per_lambda"]
        if SEED_AGREEMENT_LAMBDAS[0] <= entry["lambda"] <= SEED_AGREEMENT_LAMBDAS[1] and entry["lambda"] != 1.0
    ]
    if not entries:
        return None
    stats = [entry["top1_agreement_with_lambda_1"] for entry in entries]
    inside = all(low <= stat["ci_low"] and stat["ci_high"] <= high for stat in stats)
    outside = any(stat["ci_high"] < low or stat["ci_low"] > high for stat in stats)
    worst = min(range(len(stats)), key=lambda index: stats[index]["mean"])
    return verdict(
        "cost",
        f"3B: top-1 agreement with λ = 1 stays inside the seed's {100 * low:.0f}–{100 * high:.0f} % for λ ∈ [0.8, 1)",
        HOLDS if inside else FAILS if outside else CANNOT_TELL,
        RULES["cost"],
        effect=proportion_effect(
            f"top-1 agreement at λ = {entries[worst]['lambda']:g} (the lowest in range)", stats[worst]
        ),
        notes=["the seed's range is wide: inside it says little about the cost"],
    )


def power_law_verdict(summary: dict[str, Any], projection: str, assumption: str) -> dict[str, Any]:
    law = summary["power_law"]
    tolerance = law["slope_tolerance"]
    rows = [row for row in law["projections"][projection] if row["order"] >= 2]
    resolved = [row for row in rows if row["resolved"]]
    inside = all(
        row["order"] - tolerance <= row["ci_low"] and row["ci_high"] <= row["order"] + tolerance for row in resolved
    )
    outside = [
        row for row in resolved if row["ci_high"] < row["order"] - tolerance or row["ci_low"] > row["order"] + tolerance
    ]
    decision = UNRESOLVED if not resolved else HOLDS if inside else FAILS if outside else CANNOT_TELL
    notes = [assumption]
    if outside:
        notes.append(
            f"outside at k = {', '.join(str(row['order']) for row in outside)} (slopes "
            f"{min(row['slope'] for row in outside):.2f}–{max(row['slope'] for row in outside):.2f})"
        )
    unresolved = [row["order"] for row in rows if not row["resolved"]]
    if unresolved:
        notes.append(
            f"not resolved (within {law['floor_margin']:g}× the round-off floor at a fitted λ): k = {', '.join(map(str, unresolved))}"
        )
    if projection == "scalar":
        notes.append(
            "the scalar projection follows c = argmax h_λ(full), which may change with λ, so its slopes need not be integers"
        )
    fitted = ", ".join(f"{value:g}" for value in law["fit_lambdas"])
    return verdict(
        f"power_law.{projection}",
        f"{projection} projection: every resolved order k ≥ 2 follows the λ^k law over λ ∈ {{{fitted}}}",
        decision,
        RULES["power_law"],
        parameters={"slope_tolerance": tolerance, "floor_margin": law["floor_margin"]},
        notes=notes,
    )


def law_assumption(config: dict[str, Any]) -> str:
    """Whether this network meets the λ^k law's assumption (smoothness in λ), and which assumption fails if not."""
    if "smooth_activations" in config:
        return "the law is proved for residual stacks smooth in λ; every activation here is smooth (the Experiment 3C swap), so its assumption holds"
    kink = (
        "a ReLU follows every sum"
        if "ReLU" in config.get("post_activation", [])
        else "nothing follows the sum, but ReLU/ReLU6 sit inside the branches and on the fixed path"
    )
    return (
        f"the law's assumption, smoothness in λ, does not hold here ({kink}: piecewise-linear activations), so a deviation measures that "
        "assumption, not the theorem; Experiment 3C derives the law such activations follow"
    )


def verdicts(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The verdicts block (see the module docstring); the seed comparisons are left out where their λ is not on the grid."""
    assumption = law_assumption(summary["config"])
    block: list[dict[str, Any] | None] = [migration_verdict(summary, projection) for projection in PROJECTIONS]
    block += [monotone_verdict(summary, projection) for projection in PROJECTIONS]
    block += [seed_endpoint_verdict(summary), cost_verdict(summary)]
    block += [power_law_verdict(summary, projection, assumption) for projection in PROJECTIONS]
    return [entry for entry in block if entry is not None]
