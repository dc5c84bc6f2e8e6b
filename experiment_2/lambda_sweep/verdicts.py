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

from typing import Any, Mapping

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
    Missing,
    Reading,
    Rule,
    bootstrap_mean_ci,
    ci_against,
    effect_from_stat,
    every_part,
    exact_proportion_ci,
    holm,
    hypothesis_test,
    power_guard,
    proportion_effect,
    seed_comparison,
    sign_test_power,
    significant_side,
)

SEED_BLOCKS = 8  # ResNet-18's residual blocks: the seed's κ is on 1 … 8
SEED_ENDPOINT_LAMBDA = 0.1
SEED_AGREEMENT_LAMBDAS = (0.8, 1.0)


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


def _falls(change: dict[str, Any], p_value: float) -> str:
    """Holds (κ falls) / fails (κ rises) when the paired CI excludes 0 on that side and the sign test is significant."""
    return significant_side(change["ci_low"], change["ci_high"], p_value, ALPHA, holds=-1)


def _interval(stat: Mapping[str, Any]) -> dict[str, float]:
    return {"ci_low": stat["ci_low"], "ci_high": stat["ci_high"]}


def _read_migration(reading: Reading) -> dict[str, Any]:
    entry = reading.at("kappa_changes", reading.parts[-1], "end_to_end")
    reading.copied("effect", entry.get("change"))
    reading.copied("test", {"p_value": entry.get("sign_test_p")}, ("p_value",))
    return {"change": _interval(entry["change"]), "p_value": entry["sign_test_p"], "power": entry["sign_test_power"]}


def _decide_migration(change: dict[str, Any], p_value: float, power: float) -> str:
    return power_guard(_falls(change, p_value), power, significant=p_value <= ALPHA)[0]


MIGRATION = Rule(
    "exp3ab.migration",
    "holds when the 95 % CI of the paired per-image change κ(λ_min) − κ(1) lies below 0 and the two-sided sign test has p ≤ 0.05, "
    "fails when the CI lies above 0 with p ≤ 0.05, else cannot tell; with sign-test power < 0.8 against every image moving "
    "the same way, a silent test decides nothing (cannot tell)",
    _read_migration,
    _decide_migration,
    "3A, {projection} projection: the spectrum migrates to lower orders (κ falls from λ = {start:g} to λ = {end:g})",
)


def _read_monotone(reading: Reading) -> dict[str, Any]:
    steps = reading.at("kappa_changes", reading.parts[-1], "steps")
    try:
        return {
            "changes": [_interval(step["change"]) for step in steps],
            "p_values": [step["sign_test_p"] for step in steps],
            "powers": [step["sign_test_power"] for step in steps],
        }
    except (KeyError, TypeError):
        raise Missing(f"kappa_changes.{reading.parts[-1]}.steps[].change / sign_test_p / sign_test_power") from None


def _decide_monotone(changes: list[dict[str, Any]], p_values: list[float], powers: list[float]) -> str:
    decision = every_part([_falls(change, p_value) for change, p_value in zip(changes, holm(p_values))])
    return power_guard(decision, min(powers, default=0.0), significant=decision != CANNOT_TELL)[0]


MONOTONE = Rule(
    "exp3ab.monotone",
    "holds when at every step of the λ grid the 95 % CI of the paired per-image change of κ lies below 0 and the sign test "
    "(Holm over the steps) has p ≤ 0.05, fails when at some step the CI lies above 0 with Holm p ≤ 0.05, else cannot tell; "
    "the same power rule",
    _read_monotone,
    _decide_monotone,
    "{projection} projection: κ falls at every step as λ decreases",
)


def _entry_at(summary: Mapping[str, Any], value: float) -> dict[str, Any] | None:
    return next((entry for entry in summary["per_lambda"] if abs(entry["lambda"] - value) < 1e-12), None)


def _endpoint(summary: Mapping[str, Any]) -> tuple[dict[str, float], float] | None:
    """κ^v / L at λ = 0.1 with its CI, and the seed's κ^v / 8 there; ``None`` when λ = 0.1 is not on the grid."""
    entry = _entry_at(summary, SEED_ENDPOINT_LAMBDA)
    if entry is None:
        return None
    kappa, blocks = entry["projections"]["vector"]["kappa"], summary["binomial_null"]["num_blocks"]
    scaled = {key: kappa[key] / blocks for key in ("mean", "ci_low", "ci_high")}
    return scaled, summary["published"]["resnet18"]["kappa_at_lambda_0.1"] / SEED_BLOCKS


def _read_endpoint(reading: Reading) -> dict[str, float]:
    try:
        place = _endpoint(reading.summary)
    except (KeyError, TypeError):
        place = None
    if place is None:
        raise Missing(f"per_lambda at λ = {SEED_ENDPOINT_LAMBDA:g} / binomial_null.num_blocks / published")
    reading.copied("effect", place[0])
    return {"low": place[0]["ci_low"], "high": place[0]["ci_high"], "reported": place[1]}


SEED_ENDPOINT = Rule(
    "exp3ab.seed_endpoint",
    "our 95 % CI of κ^v/L at λ = 0.1 against the seed's (L = 8): holds when it lies at or below, fails "
    "when above, cannot tell when it contains it",
    _read_endpoint,
    lambda low, high, reported: ci_against(low, high, reported, "below", at_or=True),
    f"κ^v falls as far as the seed reports at λ = {SEED_ENDPOINT_LAMBDA:g} (κ/L; the seed reports ResNet-18, L = {SEED_BLOCKS})",
)


def _in_range(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The per-λ entries with λ ∈ [0.8, 1) (λ = 1 itself agrees with itself)."""
    return [
        entry
        for entry in summary["per_lambda"]
        if SEED_AGREEMENT_LAMBDAS[0] <= entry["lambda"] <= SEED_AGREEMENT_LAMBDAS[1] and entry["lambda"] != 1.0
    ]


def _read_cost(reading: Reading) -> dict[str, Any]:
    try:
        stats = [entry["top1_agreement_with_lambda_1"] for entry in _in_range(reading.summary)]
        low, high = reading.summary["published"]["resnet18"]["agreement_range_lambda_0.8_to_1"]
    except (KeyError, TypeError, ValueError):
        raise Missing("per_lambda[].top1_agreement_with_lambda_1 / published agreement range") from None
    if stats:
        reading.copied("effect", min(stats, key=lambda stat: stat["mean"]))
    return {"intervals": [(stat["ci_low"], stat["ci_high"]) for stat in stats], "low": low, "high": high}


def _decide_cost(intervals: list[tuple[float, float]], low: float, high: float) -> str:
    if all(low <= ci_low and ci_high <= high for ci_low, ci_high in intervals):
        return HOLDS
    return FAILS if any(ci_high < low or ci_low > high for ci_low, ci_high in intervals) else CANNOT_TELL


COST = Rule(
    "exp3ab.cost",
    "holds when the exact 95 % CI of top-1 agreement at every λ ∈ [0.8, 1] lies inside the seed's range, fails "
    "when one lies wholly outside it, else cannot tell",
    _read_cost,
    _decide_cost,
    "3B: top-1 agreement with λ = 1 stays inside the seed's {low:.0f}–{high:.0f} % for λ ∈ [0.8, 1)",
)


def _read_power_law(reading: Reading) -> dict[str, Any]:
    tolerance = reading.number("power_law", "slope_tolerance")
    reading.copied("parameters", {"slope_tolerance": tolerance}, ("slope_tolerance",))
    rows = reading.at("power_law", "projections", reading.parts[-1])
    try:
        resolved = [
            (row["order"], row["ci_low"], row["ci_high"]) for row in rows if row["order"] >= 2 and row["resolved"]
        ]
    except (KeyError, TypeError):
        raise Missing(f"power_law.projections.{reading.parts[-1]}[].order / resolved / ci_low / ci_high") from None
    return {"resolved": resolved, "tolerance": tolerance}


def _decide_power_law(resolved: list[tuple[int, float, float]], tolerance: float) -> str:
    if not resolved:
        return UNRESOLVED
    if all(k - tolerance <= low and high <= k + tolerance for k, low, high in resolved):
        return HOLDS
    return FAILS if any(high < k - tolerance or low > k + tolerance for k, low, high in resolved) else CANNOT_TELL


POWER_LAW = Rule(
    "exp3ab.power_law",
    "over the resolved orders k ≥ 2: holds when every slope's 95 % CI lies inside k ± tolerance, fails when one lies wholly outside it, "
    "else cannot tell; unresolved when no order k ≥ 2 clears the round-off floor (order 1 is not counted: slope 1 holds for any network)",
    _read_power_law,
    _decide_power_law,
    "{projection} projection: every resolved order k ≥ 2 follows the λ^k law over λ ∈ {{{fitted}}}",
)


def migration_verdict(summary: dict[str, Any], projection: str) -> dict[str, Any]:
    entry = summary["kappa_changes"][projection]["end_to_end"]
    share = entry["share_falling"]
    notes = [
        f"κ falls on {entry['falls']} of {share['n']} images ({100 * share['mean']:.0f} % [{100 * share['ci_low']:.0f}, {100 * share['ci_high']:.0f}], exact)"
    ]
    _, guard = power_guard(
        _falls(entry["change"], entry["sign_test_p"]),
        entry["sign_test_power"],
        significant=entry["sign_test_p"] <= ALPHA,
    )
    return MIGRATION.verdict(
        f"migration.{projection}",
        summary,
        fields={"projection": projection, "start": entry["from"], "end": entry["to"]},
        effect=effect_from_stat(f"κ(λ = {entry['to']:g}) − κ(λ = {entry['from']:g}), paired", entry["change"]),
        test=hypothesis_test("two-sided sign test over images", entry["sign_test_p"]),
        parameters={"alpha": ALPHA, "power": POWER, "sign_test_power": entry["sign_test_power"]},
        notes=notes + guard,
    )


def monotone_verdict(summary: dict[str, Any], projection: str) -> dict[str, Any]:
    steps = summary["kappa_changes"][projection]["steps"]
    adjusted = holm([step["sign_test_p"] for step in steps])
    parts = [_falls(step["change"], p_value) for step, p_value in zip(steps, adjusted)]
    _, guard = power_guard(
        every_part(parts),
        min((step["sign_test_power"] for step in steps), default=0.0),
        significant=every_part(parts) != CANNOT_TELL,
    )
    notes = [
        "; ".join(
            f"λ {step['from']:g} → {step['to']:g}: {step['falls']}/{step['share_falling']['n']} fall" for step in steps
        )
    ]
    unclear = [f"λ {step['from']:g} → {step['to']:g}" for step, part in zip(steps, parts) if part != HOLDS]
    return MONOTONE.verdict(
        f"monotone.{projection}",
        summary,
        fields={"projection": projection},
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
        notes=lambda decision: (
            notes + ([f"no significant fall at {', '.join(unclear)}"] if unclear and decision != FAILS else []) + guard
        ),
    )


def seed_endpoint_verdict(summary: dict[str, Any]) -> dict[str, Any] | None:
    place = _endpoint(summary)
    if place is None:
        return None
    scaled, reported = place
    effect = effect_from_stat(f"κ^v / L at λ = {SEED_ENDPOINT_LAMBDA:g}", scaled)
    kappa = _entry_at(summary, SEED_ENDPOINT_LAMBDA)["projections"]["vector"]["kappa"]
    return SEED_ENDPOINT.verdict(
        "seed_endpoint",
        summary,
        effect=effect,
        seed=seed_comparison(reported, effect),
        notes=[
            f"the seed reports κ^v = {summary['published']['resnet18']['kappa_at_lambda_0.1']:g} on L = {SEED_BLOCKS}; "
            f"ours is {kappa['mean']:.3g} on L = {summary['binomial_null']['num_blocks']}"
        ],
    )


def cost_verdict(summary: dict[str, Any]) -> dict[str, Any] | None:
    low, high = summary["published"]["resnet18"]["agreement_range_lambda_0.8_to_1"]
    entries = _in_range(summary)
    if not entries:
        return None
    worst = min(entries, key=lambda entry: entry["top1_agreement_with_lambda_1"]["mean"])
    return COST.verdict(
        "cost",
        summary,
        fields={"low": 100 * low, "high": 100 * high},
        effect=proportion_effect(
            f"top-1 agreement at λ = {worst['lambda']:g} (the lowest in range)", worst["top1_agreement_with_lambda_1"]
        ),
        notes=["the seed's range is wide: inside it says little about the cost"],
    )


def power_law_verdict(summary: dict[str, Any], projection: str, assumption: str) -> dict[str, Any]:
    law = summary["power_law"]
    tolerance = law["slope_tolerance"]
    rows = [row for row in law["projections"][projection] if row["order"] >= 2]
    resolved = [row for row in rows if row["resolved"]]
    outside = [
        row for row in resolved if row["ci_high"] < row["order"] - tolerance or row["ci_low"] > row["order"] + tolerance
    ]
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
    return POWER_LAW.verdict(
        f"power_law.{projection}",
        summary,
        fields={"projection": projection, "fitted": ", ".join(f"{value:g}" for value in law["fit_lambdas"])},
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
