"""The depth ladder's rules (:mod:`paper.depth_ladder` builds the comparisons they read), declared once.

Rule (:func:`paired_verdict`): the mean paired difference with a 95 % bootstrap CI and an exact
two-sided sign test; the claim holds when the CI lies above 0 and the sign test's p < 0.05, fails
when the CI lies below 0 and p < 0.05, and otherwise the data cannot tell — with fewer than six
shared images no sign test can reach p < 0.05, so few images give "cannot tell", never a verdict
from a collapsed bootstrap CI. Bounds (the preserving fraction cannot exceed 1): when the shallower
network already sits at the bound on ≥ 90 % of its images, the measure cannot move in the claimed
direction and the claim is "saturated"; when the deeper one does, the measure is censored there (every image where the
shallower network is below the bound counts as up, so the test would read the shallower network alone) and the claim is
"saturated" too, its note naming the censoring. The width control (two rungs of equal L, the wider minus the narrower)
and the resolution control (the shallower network at the deeper one's input size, ``depth_analysis(control=…)``) are
"no change" claims: equivalence within ±margin by two one-sided t-tests (TOST, :func:`experiment_1.report.tost`), the
margin :data:`DEPTH_MARGIN_FRACTION` of the depth effect of the same measure on the same images (holds: the 90 %
t-interval inside ±margin; fails: wholly beyond it; else cannot tell; saturated where a network sits at the bound) —
a small but consistent shift inside the margin does not contradict it, and a note says so.

Each rule reads the comparison record its verdict's id names in depth.json's ``comparisons`` (``<measure>.<kind>.<from>-<to>``):
the paired difference, its sign test and each network's share at the measure's bound; a "no change" step also its
equivalence test and the depth comparison whose effect sizes its margin.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from experiment_1.report import (
    ALPHA,
    CANNOT_TELL,
    EQUIVALENCE_RULE,
    FAILS,
    HOLDS,
    SATURATED,
    SATURATION_SHARE,
    TOST_NAME,
    Contradiction,
    Missing,
    Reading,
    Rule,
    decide_equivalence,
    effect_from_stat,
    equivalence_margin,
    hypothesis_test,
    same,
    tost,
)

MIN_PAIRED_IMAGES = 6  # the smallest n at which an exact two-sided sign test can reach p < 0.05 (2 / 2^6 = 0.031)
# "no change" (a width step at equal L, a change of input resolution at equal L) is equivalence within ±margin by TOST, the
# margin this fraction of the depth effect it must be told apart from (the same measure's mean paired depth difference on
# the same images): a step inside it moves the measure by under a quarter of what depth does (README, Equivalence margins)
DEPTH_MARGIN_FRACTION = 0.25


def _comparison_of(reading: Reading) -> dict[str, Any]:
    """The comparison record (``comparisons[]`` of depth.json) a depth verdict's id names: measure, kind, from-to."""
    measure, kind, pair = (reading.parts + ["", ""])[:3]
    first, _, second = pair.partition("-")
    for record in reading.summary.get("comparisons", ()):
        if (record.get("measure"), record.get("kind"), record.get("from"), record.get("to")) == (
            measure,
            kind,
            first,
            second,
        ):
            return record
    raise Missing(f"comparisons[{measure}, {kind}, {first} → {second}]")


def _at_bound(record: dict[str, Any]) -> list[float]:
    """The share of images at the measure's bound of each network the comparison reads (0 where it is not there)."""
    return [0.0 if diagnosis is None else diagnosis["share"] for diagnosis in record.get("at_bound", [None, None])]


def _read_paired(reading: Reading) -> dict[str, Any]:
    record = _comparison_of(reading)
    reading.copied("effect", record.get("difference"))
    reading.copied("test", {"p_value": record.get("sign_test_p")}, ("p_value",))
    reading.copied("statistic", {"value": record.get("num_finite")}, ("value",))
    return {
        "at_bound": _at_bound(record),
        "low": record["difference"]["ci_low"],
        "high": record["difference"]["ci_high"],
        "p_value": record["sign_test_p"],
        "count": record["num_finite"],
    }


def _decide_paired(at_bound: list[float], low: float, high: float, p_value: float, count: int) -> str:
    if max(at_bound) >= SATURATION_SHARE:
        return SATURATED
    if count >= MIN_PAIRED_IMAGES and p_value < ALPHA:
        return HOLDS if low > 0 else FAILS if high < 0 else CANNOT_TELL
    return CANNOT_TELL


PAIRED = Rule(
    "depth.paired",
    f"holds when the 95 % CI of the paired difference lies above 0 and the exact sign test gives p < {ALPHA:g} "
    f"(at least {MIN_PAIRED_IMAGES} shared images); fails when the CI lies below 0 with p < {ALPHA:g}; otherwise cannot tell; "
    "saturated when either network's measure sits at its bound on ≥ 90 % of images (the shallower: it cannot move; "
    "the deeper: censored, the test would read only how often the shallower sits below the bound)",
    _read_paired,
    _decide_paired,
)


def _read_equivalence(reading: Reading) -> dict[str, Any]:
    """The TOST of the comparison record the id names, its margin re-derived from the depth comparison it names as its
    reference (a fixed fraction of that step's mean difference), and the rungs' shares at the bound."""
    record = _comparison_of(reading)
    result = record.get("equivalence")
    if not isinstance(result, dict):
        raise Missing(f"comparisons[{'.'.join(reading.parts)}].equivalence")
    depth_effect = margin = None
    if result.get("reference") is not None:
        first, second = result["reference"]
        reference = _comparison_of(Reading({"id": f"{reading.parts[0]}.depth.{first}-{second}"}, reading.summary))
        depth_effect = reference["difference"]["mean"]
        margin = equivalence_margin(depth_effect, DEPTH_MARGIN_FRACTION)
    for source in (result, reading.entry["parameters"]):
        if not (same(source.get("margin"), margin) and same(source.get("depth_effect"), depth_effect)):
            raise Contradiction(
                f"its margin {source.get('margin')!r} is not {DEPTH_MARGIN_FRACTION:g} × its reference depth effect {depth_effect!r}"
            )
    reading.copied("effect", result)
    reading.copied("test", result, ("p_value",))
    reading.copied("parameters", result, ("p_beyond",))
    reading.copied("statistic", {"value": result["n"]}, ("value",))
    return {
        "at_bound": _at_bound(record),
        "margin": margin,
        **{key: result[key] for key in ("n", "p_value", "p_beyond")},
    }


def _decide_no_change(at_bound: list[float], n: int, p_value: float, p_beyond: float, margin: float | None) -> str:
    if max(at_bound) >= SATURATION_SHARE:
        return SATURATED
    if not margin:
        return CANNOT_TELL
    return decide_equivalence({"n": n, "p_value": p_value, "p_beyond": p_beyond, "margin": margin})


NO_CHANGE = Rule(
    "depth.no_change",
    EQUIVALENCE_RULE + "; the margin is a fixed fraction of the depth effect; saturated when either network sits at "
    "the measure's bound on ≥ 90 % of images",
    _read_equivalence,
    _decide_no_change,
)


def paired_verdict(
    verdict_id: str,
    claim: str,
    paired: dict[str, Any],
    effect_name: str,
    saturated: list[str],
    notes: list[str] | None = None,
) -> dict[str, Any]:
    """One "grows with depth" claim on a comparison record (:data:`PAIRED`); ``saturated``: why the measure cannot be
    compared (a network at its bound, from the record's ``at_bound``; empty when it can)."""
    count = paired["num_finite"]
    all_notes = [
        f"{count} shared image(s): {paired['positive']} up, {paired['negative']} down, {paired['ties']} tied"
    ] + list(notes or [])
    all_notes += saturated
    if 0 < count < MIN_PAIRED_IMAGES:
        all_notes.append(
            f"fewer than {MIN_PAIRED_IMAGES} shared images: no sign test can reach p < {ALPHA:g}, so the data cannot decide"
        )
    return PAIRED.verdict(
        verdict_id,
        {"comparisons": [paired]},
        claim,
        parameters={"alpha": ALPHA, "min_paired_images": MIN_PAIRED_IMAGES},
        statistic={"name": "shared images", "value": count},
        effect=effect_from_stat(effect_name, paired["difference"]),
        test=hypothesis_test("exact two-sided sign test", paired["sign_test_p"]),
        notes=all_notes,
    )


def equivalence_block(differences: np.ndarray, reference: dict[str, Any] | None) -> dict[str, Any]:
    """The TOST of paired per-image ``differences`` within ±margin, the margin :data:`DEPTH_MARGIN_FRACTION` of the
    ``reference`` depth comparison's mean (the effect it must be told apart from; ``None`` without one)."""
    depth_effect = None if reference is None else reference["difference"]["mean"]
    margin = None if depth_effect is None else equivalence_margin(depth_effect, DEPTH_MARGIN_FRACTION)
    result = tost(differences, 0.0 if margin is None else margin)
    reference_names = None if reference is None else [reference["from"], reference["to"]]
    return {**result, "margin": margin, "depth_effect": depth_effect, "reference": reference_names}


def equivalence_verdict(
    verdict_id: str,
    claim: str,
    paired: dict[str, Any],
    effect_name: str,
    saturated: list[str],
    notes: list[str],
    reference: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A "no change" claim (a width step, a change of input resolution) on a comparison record carrying its
    ``equivalence`` (:func:`equivalence_block`) against the ``reference`` depth comparison: :data:`NO_CHANGE`."""
    result = paired["equivalence"]
    margin, depth_effect = result["margin"], result["depth_effect"]
    all_notes = [
        f"{paired['num_finite']} shared image(s): {paired['positive']} up, {paired['negative']} down, {paired['ties']} tied "
        f"(sign test p = {paired['sign_test_p']:.3g}; 95 % bootstrap CI [{paired['difference']['ci_low']:.3g}, "
        f"{paired['difference']['ci_high']:.3g}])"
    ] + notes
    if margin is None:
        all_notes.append("no depth comparison of this measure to size the margin: cannot tell")
    else:
        first, second = result["reference"]
        all_notes.append(
            f"margin ±{margin:.3g} = {DEPTH_MARGIN_FRACTION:g} × the depth effect {depth_effect:+.3g} ({first} → {second}, same images)"
        )
    shift = (
        "a consistent shift inside the margin: the step moves the measure (sign test p < α), by less than "
        f"{DEPTH_MARGIN_FRACTION:.0%} of the depth effect"
    )
    return NO_CHANGE.verdict(
        verdict_id,
        {"comparisons": [paired] + ([reference] if reference is not None else [])},
        claim,
        parameters={
            "alpha": ALPHA,
            "margin": margin,
            "margin_fraction": DEPTH_MARGIN_FRACTION,
            "depth_effect": depth_effect,
            "p_beyond": result["p_beyond"],
        },
        statistic={"name": "shared images", "value": result["n"]},
        effect={
            "name": effect_name,
            "value": result["mean"],
            "ci_low": result["ci_low"],
            "ci_high": result["ci_high"],
            "confidence": result["confidence"],
            "interval": "t-interval (the TOST's)",
        },
        test=hypothesis_test(TOST_NAME, result["p_value"]),
        notes=lambda decision: (
            all_notes
            + ([shift] if decision == HOLDS and margin is not None and paired["sign_test_p"] < ALPHA else [])
            + saturated
        ),
    )
