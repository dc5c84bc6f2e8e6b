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

from typing import Any, Mapping

from experiment_1.report import (
    ALPHA,
    CANNOT_TELL,
    FAILS,
    HOLDS,
    NON_FINITE,
    SATURATION_SHARE,
    Missing,
    Reading,
    Rule,
    bounded,
    by_id,
    effect_from_stat,
    holm,
    hypothesis_test,
    parts_decision,
    seed_comparison,
)
from experiment_5.association import EQUIVALENCE_SD_FRACTION
from experiment_5.formatting import SCORE_LABELS, measure_label

BREADTH_PREFIXES = ("n_eff", "k_err", "k_mass")
SEED_DIFFERENCES = {"n_eff_vector": "n_eff_vector_hard_minus_easy", "k_err": "k_tau_err_hard_minus_easy"}
MORE_TAUS = (0.4, 0.5, 0.6, 0.7)


def _expected(measure: str) -> str:
    return "positive" if measure.startswith(BREADTH_PREFIXES) else "zero"


def _claim(measure: str, score: str) -> str:
    label = measure_label(measure)
    if _expected(measure) == "positive":
        return f"{label} is larger on hard than on easy images ({SCORE_LABELS[score]} quartiles)"
    return f"difficulty ({SCORE_LABELS[score]} quartiles) does not move {label} (the seed reports it invariant)"


def _adjusted(analysis: Mapping[str, Any], score: str) -> dict[str, float]:
    """Holm-adjusted Mann–Whitney p of every judged (not saturated) measure under ``score``."""
    judged = [name for name in analysis["measures"] if analysis["saturation"][name] is None]
    p_values = [analysis["quartiles"][score]["measures"][name]["mann_whitney_p"] for name in judged]
    return dict(zip(judged, holm(p_values)))


def _equivalence(analysis: Mapping[str, Any], score: str) -> dict[str, dict[str, Any]]:
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


def measure_inputs(analysis: Mapping[str, Any], measure: str, score: str) -> dict[str, Any]:
    """What the measure rule reads of one measure under one difficulty score: its saturation diagnosis, or the hard −
    easy CI, its Mann–Whitney p Holm-adjusted over the judged measures and (an order measure) its TOST's."""
    if analysis["saturation"][measure] is not None:
        return {"saturation": analysis["saturation"][measure]}
    difference = analysis["quartiles"][score]["measures"][measure]["hard_minus_easy"]
    equivalence = _equivalence(analysis, score).get(measure)
    return {
        "breadth": _expected(measure) == "positive",
        "low": difference["ci_low"],
        "high": difference["ci_high"],
        "p_adjusted": _adjusted(analysis, score)[measure],
        "equivalence": None if equivalence is None else {key: equivalence[key] for key in ("p_adjusted", "p_beyond")},
    }


def decide_measure(
    saturation: dict[str, Any] | None = None,
    breadth: bool = True,
    low: float = 0.0,
    high: float = 0.0,
    p_adjusted: float = 1.0,
    equivalence: dict[str, float] | None = None,
) -> str:
    """The measure rule (:data:`MEASURE`'s words) on :func:`measure_inputs`."""
    if saturation is not None:
        return bounded(saturation) or CANNOT_TELL
    significant = p_adjusted <= ALPHA and (low > 0 or high < 0)
    if not breadth:
        if equivalence is None:  # an analysis written before the equivalence test: no margin, no "holds"
            return FAILS if significant else CANNOT_TELL
        if equivalence["p_adjusted"] <= ALPHA:
            return HOLDS
        return FAILS if significant and equivalence["p_beyond"] <= ALPHA else CANNOT_TELL
    if not significant:
        return CANNOT_TELL
    return HOLDS if low > 0 else FAILS


def _read_measure(reading: Reading) -> dict[str, Any]:
    measure, score = str(reading.entry["id"]).removesuffix(".hard_minus_easy"), reading.at("settings", "primary_score")
    try:
        inputs = measure_inputs(reading.summary, measure, score)
        reading.copied("effect", reading.summary["quartiles"][score]["measures"][measure]["hard_minus_easy"])
    except (KeyError, TypeError):
        raise Missing(f"saturation / quartiles.{score}.measures.{measure} (the numbers its rule reads)") from None
    if "p_adjusted" in inputs:
        reading.copied("test", {"p_adjusted": inputs["p_adjusted"]}, ("p_adjusted",))
    return inputs


MEASURE = Rule(
    "exp5.hard_minus_easy",
    "a measure at its bound, within 5 % of its range from it, or at one value, on ≥ 90 % of the analysed images is "
    "saturated (constant: on all of them) and "
    "is not judged. Otherwise, by the hard − easy quartile difference of the primary score: a breadth measure (N_eff^v, "
    "K_τ^err, K_η^mass) holds when the Holm-adjusted Mann–Whitney p ≤ 0.05 and the 95 % CI lies above 0, fails when it "
    "lies below 0 with p ≤ 0.05, else cannot tell; an order measure (k̄, κ, C≤3; the seed reports no change) is judged "
    f"for equivalence within ±{EQUIVALENCE_SD_FRACTION:g} pooled between-image standard deviations by two one-sided "
    "Welch t-tests (TOST; its 90 % t-interval): holds when the TOST p, Holm-adjusted over the order measures judged, "
    "is ≤ 0.05; fails when the Holm-adjusted Mann–Whitney p ≤ 0.05, the CI excludes 0 and the difference lies beyond "
    "the margin (one-sided p ≤ 0.05); else cannot tell. Holm runs over every measure judged",
    _read_measure,
    decide_measure,
)


def seed_claim_decision(breadth: list[str], invariance: list[str]) -> str:
    """The seed-claim rule (:data:`SEED_CLAIM`'s words) on the decisions of its two halves."""
    if FAILS in breadth and FAILS in invariance and NON_FINITE not in breadth + invariance:
        return FAILS
    return parts_decision(breadth + invariance)


def _seed_claim_parts(analysis: Mapping[str, Any]) -> list[str]:
    """The measures the seed's claim is made of: breadth (N_eff^v, K_τ^err) first, then the invariant order measures."""
    families = analysis["published"]["resnet18"]["invariant_measures"]
    return ["n_eff_vector", "k_err"] + [
        f"{family}_{projection}" for family in families for projection in ("vector", "scalar")
    ]


def _read_seed_claim(reading: Reading) -> dict[str, Any]:
    reading.at("published", "resnet18", "invariant_measures")
    parts = _seed_claim_parts(reading.summary)
    decisions = [reading.decision_of(f"{name}.hard_minus_easy") for name in parts]
    failing = [measure_label(name) for name, part in zip(parts, decisions) if part == FAILS]
    reading.copied("parameters", {"failing_parts": failing}, ("failing_parts",))
    return {"breadth": decisions[:2], "invariance": decisions[2:]}


SEED_CLAIM = Rule(
    "exp5.seed_claim",
    "at the strength of its parts: holds when every part holds; fails when a part fails in both halves (breadth: "
    "N_eff^v, K_τ^err; invariance: the order measures) or when every part is decided and one fails; a failing part "
    "beside undecided ones gives the decision cannot tell (partly contradicted); else cannot tell (a saturated part "
    "says nothing)",
    _read_seed_claim,
    seed_claim_decision,
    "the seed's claim — difficulty broadens the support (N_eff^v, K_τ^err larger on hard images) without "
    "moving the orders (k̄, κ, C≤3)",
)
PARTIAL_NUMBERS = ("rho", "ci_low", "ci_high", "partial_rho", "partial_ci_low", "partial_ci_high")


def decide_partial(
    saturation: dict[str, Any] | None = None,
    rho: float = 0.0,
    ci_low: float = 0.0,
    ci_high: float = 0.0,
    partial_rho: float = 0.0,
    partial_ci_low: float = 0.0,
    partial_ci_high: float = 0.0,
) -> str:
    """The partial rule (:data:`PARTIAL`'s words) on one Spearman entry of a score with K_τ^err."""
    if saturation is not None:
        return bounded(saturation) or CANNOT_TELL
    if not (ci_low > 0 or ci_high < 0):
        return CANNOT_TELL
    survives = (partial_ci_low > 0 or partial_ci_high < 0) and (partial_rho > 0) == (rho > 0)
    return HOLDS if survives else FAILS


def _read_partial(reading: Reading) -> dict[str, Any]:
    saturation = reading.at("saturation", "k_err")
    if saturation is not None:
        return {"saturation": saturation}
    entry = reading.at("spearman", reading.at("settings", "primary_score"), "k_err")
    reading.copied("statistic", {"value": entry.get("rho")}, ("value",))
    return {
        key: reading.number("spearman", reading.at("settings", "primary_score"), "k_err", key)
        for key in PARTIAL_NUMBERS
    }


PARTIAL = Rule(
    "exp5.partial",
    "holds when ρ(primary score, K_τ^err) and its partial ρ given ‖h(full)‖ both have 95 % CIs excluding 0 with the same "
    "sign; fails when ρ's CI excludes 0 but the partial ρ's does not (the norm explains it); cannot tell when ρ's CI "
    "covers 0; not judged when K_τ^err is saturated",
    _read_partial,
    decide_partial,
    "the association of {score} with K_τ^err is not only the logit norm ‖h(full)‖",
)
RULES = {"measure": MEASURE.text, "seed_claim": SEED_CLAIM.text, "partial": PARTIAL.text}
"""The rules' words, as analysis.json's settings record them."""


def partial_decision(entry: Mapping[str, Any]) -> str:
    """The partial rule on one Spearman entry (K_τ^err not saturated): each score's decision of ``partial_check``."""
    return PARTIAL.decide_on({key: entry[key] for key in PARTIAL_NUMBERS})


def _direction(measure: str, difference: dict[str, float]) -> str:
    positive = difference["mean"] > 0
    if measure.startswith(BREADTH_PREFIXES):
        return "more subsets on hard images" if positive else "fewer subsets on hard images"
    higher = positive != measure.startswith("c_le3")  # more low-order mass is a shift to lower orders
    return f"hard images sit at {'higher' if higher else 'lower'} orders"


def _sensitivity(analysis: dict[str, Any], measure: str, decision: str) -> str:
    """How the other scores decide the same measure (they correlate with the primary one, so they are no replications)."""
    primary = analysis["settings"]["primary_score"]
    rho = analysis["score_agreement"]["spearman"][primary]
    others = [score for score in analysis["scores"] if score != primary]
    decisions = {score: MEASURE.decide_on(measure_inputs(analysis, measure, score)) for score in others}
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


def measure_verdict(analysis: dict[str, Any], measure: str) -> dict[str, Any]:
    """The verdict on one measure (:data:`MEASURE`)."""
    primary = analysis["settings"]["primary_score"]
    quartile = analysis["quartiles"][primary]["measures"][measure]
    effect = effect_from_stat("hard − easy", quartile["hard_minus_easy"], percent=measure.startswith("c_le3"))
    parameters = {"alpha": ALPHA, "saturation_share": SATURATION_SHARE, "primary_score": primary}
    if analysis["saturation"][measure] is not None:  # it cannot move, so neither the test nor the seed's number is read
        return MEASURE.verdict(
            f"{measure}.hard_minus_easy",
            analysis,
            _claim(measure, primary),
            notes=[_saturation_note(analysis, measure)],
            parameters=parameters,
            effect=effect,
        )
    seed_key = SEED_DIFFERENCES.get(measure)
    seed_value = (
        analysis["published"]["resnet18"][seed_key] if seed_key else (0.0 if _expected(measure) == "zero" else None)
    )
    adjusted = _adjusted(analysis, primary)
    equivalence = _equivalence(analysis, primary).get(measure)
    notes = []
    if equivalence is not None:
        parameters.update(
            margin=equivalence["margin"],
            margin_sd_fraction=EQUIVALENCE_SD_FRACTION,
            tost_p=equivalence["p_value"],
            tost_p_adjusted=equivalence["p_adjusted"],
            p_beyond=equivalence["p_beyond"],
            tost_ci_low=equivalence["ci_low"],
            tost_ci_high=equivalence["ci_high"],
        )
        notes.append(
            f"equivalence margin ±{equivalence['margin']:.3g} ({EQUIVALENCE_SD_FRACTION:g} pooled SD): 90 % t-interval "
            f"[{equivalence['ci_low']:.3g}, {equivalence['ci_high']:.3g}], TOST Holm p = {equivalence['p_adjusted']:.3g}"
        )
    return MEASURE.verdict(
        f"{measure}.hard_minus_easy",
        analysis,
        _claim(measure, primary),
        test=hypothesis_test(
            "Mann–Whitney U, hard vs easy quartile",
            quartile["mann_whitney_p"],
            p_adjusted=adjusted[measure],
            correction="Holm",
            family_size=len(adjusted),
        ),
        seed=seed_comparison(seed_value, effect) if seed_value is not None else None,
        notes=lambda decision: (
            ([_direction(measure, quartile["hard_minus_easy"])] if decision in (HOLDS, FAILS) else [])
            + notes
            + [_sensitivity(analysis, measure, decision)]
        ),
        parameters=parameters,
        effect=effect,
    )


def seed_claim_verdict(analysis: dict[str, Any], measure_verdicts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The seed's claim: difficulty broadens the support (N_eff^v, K_τ^err) without moving the orders (k̄, κ, C≤3)."""
    parts = _seed_claim_parts(analysis)
    decisions = [measure_verdicts[f"{name}.hard_minus_easy"]["decision"] for name in parts]
    failing = [measure_label(name) for name, part in zip(parts, decisions) if part == FAILS]
    notes = ["; ".join(f"{measure_label(name)}: {decision}" for name, decision in zip(parts, decisions))]
    return SEED_CLAIM.verdict(
        "seed_claim",
        {**analysis, "verdicts": list(measure_verdicts.values())},  # the parts it reads, as the summary will hold them
        parameters={"failing_parts": failing},
        notes=lambda decision: (
            notes
            + (
                [
                    f"partly contradicted: {', '.join(failing)} fails while other parts are undecided, so the claim as a "
                    "whole cannot be decided, but it does not hold as stated"
                ]
                if failing and decision != FAILS
                else []
            )
        ),
    )


def partial_verdict(analysis: dict[str, Any]) -> dict[str, Any]:
    """Does the primary score's association with K_τ^err survive controlling for ‖h(full)‖? (Other scores: a note.)"""
    primary = analysis["settings"]["primary_score"]
    entry = analysis["spearman"][primary]["k_err"]
    fields = {"score": SCORE_LABELS[primary]}
    if analysis["saturation"]["k_err"] is not None:
        return PARTIAL.verdict(
            "k_err.partial",
            analysis,
            fields=fields,
            notes=["K_τ^err is saturated, so there is no association to explain"],
        )
    others = [
        f"{SCORE_LABELS[score]}: {decision}"
        for score, decision in analysis["partial_check"].items()
        if score != primary
    ]
    return PARTIAL.verdict(
        "k_err.partial",
        analysis,
        fields=fields,
        statistic={"name": "Spearman ρ", "value": entry["rho"]},
        effect={
            "name": "partial ρ given ‖h(full)‖",
            "value": entry["partial_rho"],
            "ci_low": entry["partial_ci_low"],
            "ci_high": entry["partial_ci_high"],
            "confidence": 1 - ALPHA,
        },
        test=hypothesis_test("partial ρ t-test", entry["partial_p_value"]),
        notes=[f"ρ 95 % CI [{entry['ci_low']:.3g}, {entry['ci_high']:.3g}]", "sensitivity: " + "; ".join(others)],
    )


def verdicts(analysis: dict[str, Any]) -> list[dict[str, Any]]:
    """The verdicts block: every measure (headline ones first), the seed's claim, the partial check."""
    ordered = analysis["headline_measures"] + [
        name for name in analysis["measures"] if name not in analysis["headline_measures"]
    ]
    block = [measure_verdict(analysis, measure) for measure in ordered]
    return block + [seed_claim_verdict(analysis, by_id(block)), partial_verdict(analysis)]
