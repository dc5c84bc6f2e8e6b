"""Experiment 3C's verdicts (the :mod:`experiment_1.report.verdicts` schema) on the limit slopes of
:mod:`experiment_2.limit.laws`: each law over every resolved order k ≥ 2 (:data:`LAW`, :func:`law_verdict`), and a
law at the order its prediction named as deciding (:data:`DECIDING_ORDER`, :func:`deciding_order_verdict`), each
re-scored by :func:`experiment_2.limit.laws.law_test` from the summary's limit and successive slopes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from experiment_1.report import (
    CANNOT_TELL,
    FAILS,
    HOLDS,
    NOT_CONVERGED,
    POST_HOC,
    UNRESOLVED,
    Missing,
    Reading,
    Rule,
)
from experiment_2.limit.laws import FIRST_COUNTED_ORDER, LAW_NAMES, LIMIT_POINTS, law_test, predicted_slopes

LAW_RULE = (
    "per order k ≥ 1: an order whose window lacks one of its λs (the round-off floor) or whose successive slopes inside the window differ "
    "by more than ± tolerance has not converged: cannot tell (not converged); at a converged order, holds when the 95 % bootstrap CI of the "
    "limit slope lies within ± tolerance of the law's slope, fails when it lies wholly outside, else cannot tell (orders without two λs above "
    "floor_margin × the round-off floor are unresolved, not judged); over k ≥ 2 (slope 1 at k = 1 holds in any network), the law fails when it "
    "fails at any converged order, holds when it holds at every resolved order, else cannot tell; a law fitted to these very data reads "
    "consistent (post hoc) where it would hold"
)
# the same rule where the window's slopes are held to their own, tighter tolerance (the a priori tests' prediction files)
LAW_TEST_RULE = LAW_RULE.replace("differ by more than ± tolerance", "differ by more than ± convergence_tolerance")
DECIDING_ORDER_RULE = (
    "at the deciding order alone (parameters.order): unresolved without two λs above floor_margin × the round-off floor; "
    "cannot tell (not converged) when its window lacks one of its λs or its successive slopes inside the window differ by "
    "more than ± convergence_tolerance; else holds when the 95 % bootstrap CI of the limit slope lies within ± tolerance "
    "of the law's slope, fails when it lies wholly outside, else cannot tell"
)
LAW_CLAIMS = {
    "lambda_k": "slope k at every order",
    "kink": "slope min(k, s) at every order k ≥ 1",
    "kink_chain": "slope 1 up to order R, 3/2 above",
}


def _read_law(reading: Reading) -> dict[str, Any]:
    """A 3C law verdict's inputs from the summary's ``variants.<variant>``: its limit and successive slopes, the law's
    predicted slopes (the entry's ``parameters.predicted`` must be them), the tolerances its run was judged with and
    whether the law was fitted to these data; ``order`` for a verdict at the deciding order (``….k<order>``)."""
    variant, law = reading.parts[1], reading.parts[2]
    block = reading.at("variants", variant)
    try:
        limit, pairs = block["limit_slopes"], block["successive_slopes"]
        predicted = predicted_slopes(law, len(limit) - 1, block["kink_exponent"], block["exact_zero_chain"] or 0)
        post_hoc = block["laws"][law]["post_hoc"] is True
    except (KeyError, TypeError, ValueError, IndexError):
        raise Missing(f"variants.{variant}.limit_slopes / successive_slopes / kink_exponent / laws.{law}") from None
    reading.copied("parameters", {"predicted": predicted.tolist()}, ("predicted",))
    tolerance = reading.number("slope_tolerance")
    settled = reading.summary.get("convergence_tolerance", tolerance)
    reading.copied(
        "parameters", {"tolerance": tolerance, "convergence_tolerance": settled}, ("tolerance", "convergence_tolerance")
    )
    inputs = {
        "limit": [{**row, "slope": row["slope"] if row["resolved"] else None} for row in limit],
        "pairs": [
            {**pair, "slope": [slope if clear else None for slope, clear in zip(pair["slope"], pair["resolved"])]}
            for pair in pairs
        ],
        "predicted": predicted.tolist(),
        "tolerance": tolerance,
        "settled": settled,
        "post_hoc": post_hoc,
    }
    if len(reading.parts) > 3:
        order = int(reading.parts[3].removeprefix("k"))
        reading.copied("parameters", {"order": order}, ("order",))
        inputs["order"] = order
    return inputs


def _tested(limit: list, pairs: list, predicted: list, tolerance: float, settled: float, post_hoc: bool) -> dict:
    return law_test(limit, pairs, np.asarray(predicted), tolerance, post_hoc=post_hoc, convergence_tolerance=settled)


def _decide_law(**inputs: Any) -> str:
    overall = _tested(**inputs)["verdict"]
    return overall if overall in (HOLDS, FAILS, NOT_CONVERGED, POST_HOC) else CANNOT_TELL


LAW = Rule(
    "exp3c.law",
    lambda entry: (
        LAW_RULE
        if entry["parameters"].get("convergence_tolerance") == entry["parameters"].get("tolerance")
        else LAW_TEST_RULE
    ),
    _read_law,
    _decide_law,
    "{variant} activations follow the {name} ({slopes})",
)
DECIDING_ORDER = Rule(
    "exp3c.law_at_deciding_order",
    DECIDING_ORDER_RULE,
    _read_law,
    lambda order, **inputs: _tested(**inputs)["per_order"][order - 1],
    "{variant} activations have the {name}'s slope {slope:g} at the deciding order k = {order}",
)


def _outcomes(per_order: list[str]) -> str:
    """``holds at k ∈ {1, 2}; fails at k ∈ {3}`` — each outcome that occurs, with its orders."""
    parts = []
    for outcome in (HOLDS, FAILS, CANNOT_TELL, NOT_CONVERGED, UNRESOLVED):
        orders = [str(order) for order, value in enumerate(per_order, start=1) if value == outcome]
        if orders:
            parts.append(f"{outcome} at k ∈ {{{', '.join(orders)}}}")
    return "; ".join(parts)


def _as_stored(variant: str, block: dict[str, Any], tolerance: float, settled: float) -> dict[str, Any]:
    """What the law rules read of a summary_3c.json, as it will hold the variant's block and its tolerances."""
    return {"variants": {variant: block}, "slope_tolerance": tolerance, "convergence_tolerance": settled}


def law_verdict(
    variant: str,
    law: str,
    block: dict[str, Any],
    expected: bool,
    tolerance: float,
    floor_margin: float,
    convergence_tolerance: float | None = None,
) -> dict[str, Any]:
    """The verdict (:mod:`experiment_1.report.verdicts` schema) on one law for one variant, from its 3C limit block
    (scored with ``convergence_tolerance``, default ``tolerance``: :func:`scored`).

    Decision: the law test's overall verdict (:func:`law_test`). Effect: the converged order k ≥ 2 whose limit
    slope lies farthest from the law's slope, with its CI.
    """
    test = block["laws"][law]
    predicted = test["predicted"]
    counted = [
        row
        for row in block["limit_slopes"]
        if row["order"] >= FIRST_COUNTED_ORDER and row["resolved"] and test["converged"][row["order"] - 1]
    ]
    effect = None
    notes = ["the law derived for these activations" if expected else "the other law: expected not to hold"]
    if law == "kink_chain":
        notes.append(
            f"refined after measuring ResNet-18 (R = {block['exact_zero_chain']}); "
            + (
                "these are the data it was fitted to: post hoc, not a test of a prior prediction"
                if test["post_hoc"]
                else "a network it was not fitted to, its prediction stated before running (experiment_2/README.md): a test"
            )
        )
    if counted:
        worst = max(counted, key=lambda row: abs(row["slope"] - predicted[row["order"]]))
        target = predicted[worst["order"]]
        effect = {
            "name": f"limit slope − law's slope at the farthest converged order (k = {worst['order']})",
            "value": worst["slope"] - target,
            "ci_low": worst["ci_low"] - target,
            "ci_high": worst["ci_high"] - target,
            "confidence": 0.95,
            "percent": False,
        }
    if any(row["resolved"] for row in block["limit_slopes"] if row["order"] >= 1):
        notes.append(
            "limit slopes k = 1 … L: "
            + ", ".join(
                f"{row['slope']:.3g} [{row['ci_low']:.3g}, {row['ci_high']:.3g}]" if row["resolved"] else "unresolved"
                for row in block["limit_slopes"]
                if row["order"] >= 1
            )
        )
        notes.append(_outcomes(test["per_order"]))
        converged = [str(order) for order, value in enumerate(test["converged"], start=1) if value]
        notes.append(f"converged at k ∈ {{{', '.join(converged)}}}" if converged else "converged at no order")
        notes += [f"k = {order}: {reason}" for order, reason in test["not_converged_reasons"].items()]
    else:
        notes.append("no order k ≥ 1 is resolved: nothing to judge")
    visible = test["visible_from_lambda"]
    notes.append(
        f"visible at every resolved order from λ = {visible:g} down"
        if visible is not None
        else "not visible at every resolved order on any λ step of this grid"
    )
    notes.append(
        "visible per order k = 1 … L from λ = "
        + ", ".join("—" if value is None else f"{value:g}" for value in test["visible_from_lambda_per_order"])
    )
    settled = tolerance if convergence_tolerance is None else convergence_tolerance
    return LAW.verdict(
        f"exp3c.{variant}.{law}",
        _as_stored(variant, block, tolerance, settled),
        fields={"variant": variant, "name": LAW_NAMES[law], "slopes": LAW_CLAIMS[law]},
        parameters={
            "tolerance": tolerance,
            "convergence_tolerance": settled,
            "limit_points": LIMIT_POINTS,
            "floor_margin": floor_margin,
            "first_counted_order": FIRST_COUNTED_ORDER,
            "predicted": predicted,
        },
        effect=effect,
        notes=notes,
    )


def deciding_order_verdict(
    variant: str,
    law: str,
    block: dict[str, Any],
    order: int,
    tolerance: float,
    convergence_tolerance: float,
    floor_margin: float,
) -> dict[str, Any]:
    """The verdict on one law at the order its prediction named as deciding (``exp3c.<variant>.<law>.k<order>``), from
    the block :func:`scored` with ``convergence_tolerance``: that order's entry of the law test, its limit slope − the
    law's slope as the effect, its window's successive slopes in the notes."""
    test = block["laws"][law]
    row = block["limit_slopes"][order]
    predicted = test["predicted"][order]
    window = block["convergence"][order]
    effect = (
        {
            "name": f"limit slope − law's slope at k = {order}",
            "value": row["slope"] - predicted,
            "ci_low": row["ci_low"] - predicted,
            "ci_high": row["ci_high"] - predicted,
            "confidence": 0.95,
            "percent": False,
        }
        if row["resolved"]
        else None
    )
    notes = [
        f"limit slope over λ ∈ {{{', '.join(f'{value:g}' for value in row['fit_lambdas'])}}}",
        "successive slopes in the window: " + ", ".join(f"{slope:.3g}" for slope in window["window_slopes"]),
    ]
    if window["reason"]:
        notes.append(f"k = {order}: {window['reason']}")
    return DECIDING_ORDER.verdict(
        f"exp3c.{variant}.{law}.k{order}",
        _as_stored(variant, block, tolerance, convergence_tolerance),
        fields={"variant": variant, "name": LAW_NAMES[law], "slope": predicted, "order": order},
        parameters={
            "order": order,
            "tolerance": tolerance,
            "convergence_tolerance": convergence_tolerance,
            "limit_points": LIMIT_POINTS,
            "floor_margin": floor_margin,
            "predicted": test["predicted"],
        },
        effect=effect,
        notes=notes,
    )
