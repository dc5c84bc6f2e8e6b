"""Experiment 5's verdicts (the :mod:`experiment_1.report.verdicts` schema), decided from analysis.json's numbers.

One verdict per measure, judged by the **primary** difficulty score only: the hard (Q4) − easy (Q1)
quartile difference of the measure's mean (bootstrap 95 % CI) and its Mann–Whitney p, Holm-corrected
over every measure judged (all measures × projections × thresholds that are neither saturated nor
constant). The claim follows the seed: breadth measures (N_eff^v, K_τ^err, K_η^mass) are larger on
hard images; order measures (k̄, κ, C≤3) do not move. The other difficulty scores are a sensitivity
check, stated per verdict — they correlate with the primary one, so they are no replications. A measure
within 5 % of its range from a bound on ≥ 90 % of images is saturated (near the bound it cannot move far).
Then the seed's claim as a whole, at the strength of its parts (:func:`seed_claim_decision`), and the partial
check: does the primary score's association with K_τ^err survive controlling for ‖h(full)‖?
"""

from __future__ import annotations

from typing import Any

import numpy as np

from experiment_1.report import (
    ALPHA,
    CANNOT_TELL,
    FAILS,
    HOLDS,
    NON_FINITE,
    SATURATION_SHARE,
    by_id,
    effect_from_stat,
    holm,
    hypothesis_test,
    parts_decision,
    seed_comparison,
    verdict,
)
from experiment_5.association import EQUIVALENCE_SD_FRACTION
from experiment_5.formatting import SCORE_LABELS, measure_label

BREADTH_PREFIXES = ("n_eff", "k_err", "k_mass")
SEED_DIFFERENCES = {"n_eff_vector": "n_eff_vector_hard_minus_easy", "k_err": "k_tau_err_hard_minus_easy"}
MORE_TAUS = (0.4, 0.5, 0.6, 0.7)
RULES = {
    "measure": (
        "a measure at its bound, within 5 % of its range from it, or at one value, on ≥ 90 % of the analysed images is "
        "saturated (constant: on all of them) and "
        "is not judged. Otherwise, by the hard − easy quartile difference of the primary score: a breadth measure (N_eff^v, "
        "K_τ^err, K_η^mass) holds when the Holm-adjusted Mann–Whitney p ≤ 0.05 and the 95 % CI lies above 0, fails when it "
        "lies below 0 with p ≤ 0.05, else cannot tell; an order measure (k̄, κ, C≤3; the seed reports no change) is judged "
        f"for equivalence within ±{EQUIVALENCE_SD_FRACTION:g} pooled between-image standard deviations by two one-sided "
        "Welch t-tests (TOST; its 90 % t-interval): holds when the TOST p, Holm-adjusted over the order measures judged, "
        "is ≤ 0.05; fails when the Holm-adjusted Mann–Whitney p ≤ 0.05, the CI excludes 0 and the difference lies beyond "
        "the margin (one-sided p ≤ 0.05); else cannot tell. Holm runs over every measure judged"
    ),
    "seed_claim": (
        "at the strength of its parts: holds when every part holds; fails when a part fails in both halves (breadth: "
        "N_eff^v, K_τ^err; invariance: the order measures) or when every part is decided and one fails; a failing part "
        "beside undecided ones gives the decision cannot tell (partly contradicted); else cannot tell (a saturated part "
        "says nothing)"
    ),
    "partial": (
        "holds when ρ(primary score, K_τ^err) and its partial ρ given ‖h(full)‖ both have 95 % CIs excluding 0 with the same "
        "sign; fails when ρ's CI excludes 0 but the partial ρ's does not (the norm explains it); cannot tell when ρ's CI "
        "covers 0; not judged when K_τ^err is saturated"
    ),
}


def _expected(measure: str) -> str:
    return "positive" if measure.startswith(BREADTH_PREFIXES) else "zero"


def _claim(measure: str, score: str) -> str:
    label = measure_label(measure)
    if _expected(measure) == "positive":
        return f"{label} is larger on hard than on easy images ({SCORE_LABELS[score]} quartiles)"
    return f"difficulty ({SCORE_LABELS[score]} quartiles) does not move {label} (the seed reports it invariant)"


def _decide(
    measure: str, difference: dict[str, float], p_adjusted: float, equivalence: dict[str, Any] | None = None
) -> str:
    """The measure rule (:data:`RULES`) on one difference and its adjusted p; an order measure also reads its
    ``equivalence`` (the quartile entry's TOST with ``p_adjusted``, Holm over the order measures)."""
    if not np.isfinite([difference["ci_low"], difference["ci_high"], p_adjusted]).all():
        return NON_FINITE
    significant = p_adjusted <= ALPHA and (difference["ci_low"] > 0 or difference["ci_high"] < 0)
    if _expected(measure) == "zero":
        if equivalence is None:  # an analysis written before the equivalence test: no margin, no "holds"
            return FAILS if significant else CANNOT_TELL
        if equivalence["p_adjusted"] <= ALPHA:
            return HOLDS
        return FAILS if significant and equivalence["p_beyond"] <= ALPHA else CANNOT_TELL
    if not significant:
        return CANNOT_TELL
    return HOLDS if difference["ci_low"] > 0 else FAILS


def _adjusted(analysis: dict[str, Any], score: str) -> dict[str, float]:
    """Holm-adjusted Mann–Whitney p of every judged (not saturated) measure under ``score``."""
    judged = [name for name in analysis["measures"] if analysis["saturation"][name] is None]
    p_values = [analysis["quartiles"][score]["measures"][name]["mann_whitney_p"] for name in judged]
    return dict(zip(judged, holm(p_values)))


def _equivalence(analysis: dict[str, Any], score: str) -> dict[str, dict[str, Any]]:
    """Every judged order measure's TOST under ``score`` with its p Holm-adjusted over those measures (``p_adjusted``);
    empty for an analysis written before the equivalence test."""
    measures = analysis["quartiles"][score]["measures"]
    judged = [
        name
        for name in analysis["measures"]
        if analysis["saturation"][name] is None and _expected(name) == "zero" and "equivalence" in measures[name]
    ]
    adjusted = holm([measures[name]["equivalence"]["p_value"] for name in judged])
    return {name: {**measures[name]["equivalence"], "p_adjusted": p} for name, p in zip(judged, adjusted)}


def _direction(measure: str, difference: dict[str, float]) -> str:
    positive = difference["mean"] > 0
    if measure.startswith(BREADTH_PREFIXES):
        return "more subsets on hard images" if positive else "fewer subsets on hard images"
    higher = positive != measure.startswith("c_le3")  # more low-order mass is a shift to lower orders
    return f"hard images sit at {'higher' if higher else 'lower'} orders"


def _sensitivity(analysis: dict[str, Any], measure: str, decision: str, adjusted: dict[str, dict[str, float]]) -> str:
    """How the other scores decide the same measure (they correlate with the primary score, so they are no replications)."""
    primary = analysis["settings"]["primary_score"]
    rho = analysis["score_agreement"]["spearman"][primary]
    others = [score for score in analysis["scores"] if score != primary]
    decisions = {
        score: _decide(
            measure,
            analysis["quartiles"][score]["measures"][measure]["hard_minus_easy"],
            adjusted[score][measure],
            _equivalence(analysis, score).get(measure),
        )
        for score in others
    }
    differing = [f"{SCORE_LABELS[score]}: {other}" for score, other in decisions.items() if other != decision]
    span = f"ρ with {SCORE_LABELS[primary]} {min(rho[score] for score in others):.2f}–{max(rho[score] for score in others):.2f}"
    return f"sensitivity: the other {len(others)} difficulty scores ({span}) give the same decision" + (
        f" except {'; '.join(differing)}" if differing else ""
    )


def _saturation_note(analysis: dict[str, Any], measure: str) -> str:
    """Where the measure is stuck; for the headline K_τ^err also the τ of this run where it moves, and how to add more."""
    entry = analysis["saturation"][measure]
    where = {
        "bound": "its bound",
        "near_bound": f"within {entry.get('margin', 0):g} of its bound",
        "mode": "one value",
    }[entry["at"]]
    note = f"at {where} {entry['value']:g} on {100 * entry['share']:.1f} % of images"
    if measure == "k_err":
        taus = analysis["settings"]["taus"]
        moving = [
            name for name in analysis["measures"] if name.startswith("k_err") and analysis["saturation"][name] is None
        ]
        note += (
            f"; it moves at {', '.join(measure_label(name) for name in moving) or 'no τ of this run'}; a step-1 run with "
            f"--extra-taus {' '.join(f'{tau:g}' for tau in sorted(set(taus[1:]) | set(MORE_TAUS)))} adds the grid where it moves"
        )
    return note


def measure_verdict(analysis: dict[str, Any], measure: str, adjusted: dict[str, dict[str, float]]) -> dict[str, Any]:
    """The verdict on one measure (:data:`RULES` ``measure``)."""
    primary = analysis["settings"]["primary_score"]
    quartile = analysis["quartiles"][primary]["measures"][measure]
    effect = effect_from_stat("hard − easy", quartile["hard_minus_easy"], percent=measure.startswith("c_le3"))
    seed_key = SEED_DIFFERENCES.get(measure)
    seed_value = (
        analysis["published"]["resnet18"][seed_key] if seed_key else (0.0 if _expected(measure) == "zero" else None)
    )
    seed = seed_comparison(seed_value, effect) if seed_value is not None else None
    common = {
        "parameters": {"alpha": ALPHA, "saturation_share": SATURATION_SHARE, "primary_score": primary},
        "effect": effect,
    }
    saturated = analysis["saturation"][measure]
    if saturated is not None:  # it cannot move, so neither the test nor the seed's number is read
        return verdict(
            f"{measure}.hard_minus_easy",
            _claim(measure, primary),
            saturated["decision"],
            RULES["measure"],
            notes=[_saturation_note(analysis, measure)],
            **common,
        )
    p_adjusted = adjusted[primary][measure]
    equivalence = _equivalence(analysis, primary).get(measure)
    decision = _decide(measure, quartile["hard_minus_easy"], p_adjusted, equivalence)
    if equivalence is not None:
        common["parameters"] = {
            **common["parameters"],
            "margin": equivalence["margin"],
            "margin_sd_fraction": EQUIVALENCE_SD_FRACTION,
            "tost_p": equivalence["p_value"],
            "tost_p_adjusted": equivalence["p_adjusted"],
            "p_beyond": equivalence["p_beyond"],
            "tost_ci_low": equivalence["ci_low"],
            "tost_ci_high": equivalence["ci_high"],
        }
    test = hypothesis_test(
        "Mann–Whitney U, hard vs easy quartile",
        quartile["mann_whitney_p"],
        p_adjusted=p_adjusted,
        correction="Holm",
        family_size=len(adjusted[primary]),
    )
    notes = [_direction(measure, quartile["hard_minus_easy"])] if decision in (HOLDS, FAILS) else []
    if equivalence is not None:
        notes.append(
            f"equivalence margin ±{equivalence['margin']:.3g} ({EQUIVALENCE_SD_FRACTION:g} pooled SD): 90 % t-interval "
            f"[{equivalence['ci_low']:.3g}, {equivalence['ci_high']:.3g}], TOST Holm p = {equivalence['p_adjusted']:.3g}"
        )
    return verdict(
        f"{measure}.hard_minus_easy",
        _claim(measure, primary),
        decision,
        RULES["measure"],
        test=test,
        seed=seed,
        notes=notes + [_sensitivity(analysis, measure, decision, adjusted)],
        **common,
    )


def seed_claim_verdict(analysis: dict[str, Any], measure_verdicts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The seed's claim: difficulty broadens the support (N_eff^v, K_τ^err) without moving the orders (k̄, κ, C≤3)."""
    families = analysis["published"]["resnet18"]["invariant_measures"]
    parts = ["n_eff_vector", "k_err"] + [
        f"{family}_{projection}" for family in families for projection in ("vector", "scalar")
    ]
    decisions = [measure_verdicts[f"{name}.hard_minus_easy"]["decision"] for name in parts]
    notes = ["; ".join(f"{measure_label(name)}: {decision}" for name, decision in zip(parts, decisions))]
    decision = seed_claim_decision(decisions[:2], decisions[2:])
    failing = [measure_label(name) for name, part in zip(parts, decisions) if part == FAILS]
    if failing and decision != FAILS:
        notes.append(
            f"partly contradicted: {', '.join(failing)} fails while other parts are undecided, so the claim as a whole "
            "cannot be decided, but it does not hold as stated"
        )
    return verdict(
        "seed_claim",
        "the seed's claim — difficulty broadens the support (N_eff^v, K_τ^err larger on hard images) without "
        "moving the orders (k̄, κ, C≤3)",
        decision,
        RULES["seed_claim"],
        parameters={"failing_parts": failing},
        notes=notes,
    )


def seed_claim_decision(breadth: list[str], invariance: list[str]) -> str:
    """The seed-claim rule (:data:`RULES` ``seed_claim``) on the decisions of its two halves."""
    if FAILS in breadth and FAILS in invariance and NON_FINITE not in breadth + invariance:
        return FAILS
    return parts_decision(breadth + invariance)


def partial_decision(entry: dict[str, Any]) -> str:
    """The partial rule (:data:`RULES` ``partial``) on one Spearman entry of a score with K_τ^err."""
    if not np.isfinite([entry["ci_low"], entry["ci_high"], entry["partial_ci_low"], entry["partial_ci_high"]]).all():
        return NON_FINITE
    if not (entry["ci_low"] > 0 or entry["ci_high"] < 0):
        return CANNOT_TELL
    survives = (entry["partial_ci_low"] > 0 or entry["partial_ci_high"] < 0) and np.sign(
        entry["partial_rho"]
    ) == np.sign(entry["rho"])
    return HOLDS if survives else FAILS


def partial_verdict(analysis: dict[str, Any]) -> dict[str, Any]:
    """Does the primary score's association with K_τ^err survive controlling for ‖h(full)‖? (Other scores: a note.)"""
    primary = analysis["settings"]["primary_score"]
    entry = analysis["spearman"][primary]["k_err"]
    claim = f"the association of {SCORE_LABELS[primary]} with K_τ^err is not only the logit norm ‖h(full)‖"
    if analysis["saturation"]["k_err"] is not None:
        return verdict(
            "k_err.partial",
            claim,
            analysis["saturation"]["k_err"]["decision"],
            RULES["partial"],
            notes=["K_τ^err is saturated, so there is no association to explain"],
        )
    statistic = {"name": "Spearman ρ", "value": entry["rho"]}
    effect = {
        "name": "partial ρ given ‖h(full)‖",
        "value": entry["partial_rho"],
        "ci_low": entry["partial_ci_low"],
        "ci_high": entry["partial_ci_high"],
        "confidence": 1 - ALPHA,
    }
    others = [
        f"{SCORE_LABELS[score]}: {decision}"
        for score, decision in analysis["partial_check"].items()
        if score != primary
    ]
    return verdict(
        "k_err.partial",
        claim,
        analysis["partial_check"][primary],
        RULES["partial"],
        statistic=statistic,
        effect=effect,
        test=hypothesis_test("partial ρ t-test", entry["partial_p_value"]),
        notes=[f"ρ 95 % CI [{entry['ci_low']:.3g}, {entry['ci_high']:.3g}]", "sensitivity: " + "; ".join(others)],
    )


def verdicts(analysis: dict[str, Any]) -> list[dict[str, Any]]:
    """The verdicts block: every measure (headline ones first), the seed's claim, the partial check."""
    adjusted = {score: _adjusted(analysis, score) for score in analysis["scores"]}
    ordered = analysis["headline_measures"] + [
        name for name in analysis["measures"] if name not in analysis["headline_measures"]
    ]
    block = [measure_verdict(analysis, measure, adjusted) for measure in ordered]
    measures = by_id(block)
    return block + [seed_claim_verdict(analysis, measures), partial_verdict(analysis)]
