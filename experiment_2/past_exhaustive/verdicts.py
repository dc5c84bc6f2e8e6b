"""What step 8's estimates decide, as verdict data (:mod:`experiment_1.report`'s schema), and what they cannot.

Thresholds are fixed here, before any run:

- ``walsh_low_degree_share.<projection>``: do the Walsh degrees 1–3 hold more than :data:`LOW_DEGREE_SHARE` of Var h?
  The interval is the bootstrap CI over images of the mean share, widened to cover every image's own 95 % interval
  (the estimator's): with a handful of images the bootstrap alone cannot see the sampling error of each estimate.
  An estimate at, near (within :data:`~experiment_1.report.NEAR_BOUND_MARGIN`) or beyond the share's bounds 0 and 1
  on at least :data:`~experiment_1.report.SATURATION_SHARE` of the images makes the verdict ``saturated``: the share cannot leave [0, 1], so an estimate
  beyond a bound says the weights' pair noise dominates at that depth and budget, not where the share lies.
- ``surrogate_r2.<projection>``: does the exact order-≤k Möbius expansion about the all-off network explain more than
  :data:`SURROGATE_R2` of the spread of h over the design's uniformly random masks (R² over all of them)? Bootstrap CI
  over images (the R² of an image is computed on its masks, without an interval of its own).
- across depths (:func:`depth_change_verdict`, used by step 12): does a ratio (or its log10) fall from one depth to
  the next? The paired bootstrap CI over the images both runs evaluated of the mean change.

The decision is :func:`experiment_1.report.ci_against` (the CI against the threshold), declared once in the rules below. What no estimate here
can decide — the Möbius spectrum's fractions, κ, C≤k and its peak order — is listed by :func:`out_of_reach` with the
reason.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from experiment_1.report import (
    NEAR_BOUND_MARGIN,
    SATURATED,
    SATURATION_SHARE,
    Missing,
    Reading,
    Rule,
    bootstrap_mean_ci_rows,
    ci_against,
    effect_from_stat,
    saturation,
    verdict,
)

LOW_DEGREE_SHARE = 0.5
SURROGATE_R2 = 0.5
NULL_NOTE = (
    "random-init weights: a demonstration of the method and a null, not a finding about a trained network "
    "(nor the original study's claim)"
)


def _widened(stat: dict[str, float], low: np.ndarray, high: np.ndarray) -> dict[str, float]:
    """``stat`` with its CI widened to cover every interval ``[low_i, high_i]``; an undefined (NaN) bound makes the CI's
    end NaN (no decision), never one left out."""
    return {
        **stat,
        "ci_low": float(np.min(np.append(low, stat["ci_low"]))),
        "ci_high": float(np.max(np.append(high, stat["ci_high"]))),
    }


def _at_bound(shares: list[float]) -> dict[str, Any] | None:
    """Where the share estimates sit at, near or beyond a bound of the share on at least the saturation share of images."""
    values = np.asarray(shares, dtype=np.float64)
    at_bound = saturation(np.clip(values, 0.0, 1.0), bounds=(0.0, 1.0), margin=NEAR_BOUND_MARGIN)
    return at_bound if at_bound is not None and at_bound["at"] != "mode" and np.isfinite(values).all() else None


def _read_share(reading: Reading) -> dict[str, Any]:
    """The mean share's bootstrap CI widened over every image's own interval, and the per-image estimates, from the
    summary's ``walsh.projections.<projection>.low_degree_share``."""
    block = reading.at("walsh", "projections", reading.parts[-1], "low_degree_share")
    try:
        shares = [row[0] for row in block["per_image"]]
        stat = _widened(
            {"ci_low": block["ci_low"][0], "ci_high": block["ci_high"][0]},
            np.asarray(block["per_image_ci_low"], dtype=np.float64),
            np.asarray(block["per_image_ci_high"], dtype=np.float64),
        )
    except (KeyError, IndexError, TypeError):
        raise Missing(f"walsh.projections.{reading.parts[-1]}.low_degree_share per image") from None
    reading.copied("effect", stat)
    return {"low": stat["ci_low"], "high": stat["ci_high"], "shares": shares}


LOW_DEGREE = Rule(
    "low_orders.walsh_low_degree_share",
    f"holds when the 95 % CI of the mean low-degree Walsh share lies above {LOW_DEGREE_SHARE:g}, "
    f"fails when below {LOW_DEGREE_SHARE:g}, else cannot tell; saturated when the estimates sit at or beyond "
    f"the share's bound 0 or 1 (within {NEAR_BOUND_MARGIN:g} of it) on at least {SATURATION_SHARE * 100:g} % of the images",
    _read_share,
    lambda low, high, shares: SATURATED if _at_bound(shares) else ci_against(low, high, LOW_DEGREE_SHARE),
)


def _read_r2(reading: Reading) -> dict[str, float]:
    """The R² over all the design's masks (the last column of ``surrogate_r2_by_size``) and its bootstrap CI."""
    rows = reading.at("surrogate_r2_by_size", "projections", reading.parts[-1])
    try:
        stat = {"ci_low": rows["ci_low"][-1], "ci_high": rows["ci_high"][-1]}
    except (KeyError, IndexError, TypeError):
        raise Missing(f"surrogate_r2_by_size.projections.{reading.parts[-1]}.ci_low / ci_high") from None
    reading.copied("effect", stat)
    return {"low": stat["ci_low"], "high": stat["ci_high"]}


SURROGATE = Rule(
    "low_orders.surrogate_r2",
    f"holds when the 95 % bootstrap CI of the mean R² lies above {SURROGATE_R2:g}, "
    f"fails when below {SURROGATE_R2:g}, else cannot tell",
    _read_r2,
    lambda low, high: ci_against(low, high, SURROGATE_R2),
)


def _changed(entry: dict[str, Any]) -> tuple[str, bool]:
    """What a depth-change verdict's id says falls: its quantity on the scale it is judged on, and whether it is the
    low-degree share (whose change is saturated where either run's share is)."""
    quantity, projection = entry["id"].split(".")[:2]
    if quantity == "low_degree_share":
        return f"(W_1 + W_2 + W_3) / Var h ({projection})", True
    order = entry["id"].split(".")[2].removeprefix("order_")
    return f"log10(E_{order} / Var h ({projection}))", False


def _depth_change_text(entry: dict[str, Any]) -> str:
    scaled, share = _changed(entry)
    text = f"holds when the 95 % CI of the mean change of {scaled} lies below 0, fails when above 0, else cannot tell"
    return text + ("; saturated when either run's own low-degree-share verdict is" if share else "")


def _read_change(reading: Reading) -> dict[str, Any]:
    """The change's CI (kept in the verdict alone: the two runs' per-image values are in their own summaries) and, for a
    share change, each run's own low-degree-share decision from the summary's ``levels``."""
    effect = reading.entry.get("effect") or {}
    if not ("ci_low" in effect and "ci_high" in effect):
        raise Missing("effect.ci_low / ci_high")
    saturated = False
    if _changed(reading.entry)[1]:
        projection, span = reading.parts[1], reading.parts[2]
        depths = {int(end.removeprefix("L")) for end in span.split("_to_")}
        levels = [
            level
            for level in reading.at("levels")
            if level["projection"] == projection and level["num_blocks"] in depths
        ]
        saturated = any(level.get("low_degree_share_decision") == SATURATED for level in levels)
    return {"low": effect["ci_low"], "high": effect["ci_high"], "saturated": saturated}


DEPTH_CHANGE = Rule(
    "low_orders.depth_change",
    _depth_change_text,
    _read_change,
    lambda low, high, saturated: SATURATED if saturated else ci_against(low, high, 0.0, "below"),
)


def _noise_clause(errors: np.ndarray, num_samples: int) -> str:
    """Why a share estimate lies beyond its bound, and the base masks that would bring its standard error (the median
    of ``errors`` over the images, at ``num_samples`` masks) under :data:`~experiment_1.report.NEAR_BOUND_MARGIN`:
    the pair noise falls as 1/m and the rest as 1/√m, so ``m · SE / margin`` masks is a lower bound."""
    clause = ": an estimate beyond a bound is the weights' pair noise, which dominates at this depth and budget"
    error = float(np.median(errors))
    if not np.isfinite(error):
        return clause
    clause += f" (the share's SE {error:.2g}, median over the images, at {num_samples} random base masks"
    needed = int(np.ceil(num_samples * error / NEAR_BOUND_MARGIN))
    if needed <= num_samples:
        return f"{clause})"
    return f"{clause}; the pair noise falls as 1/m, so an SE under {NEAR_BOUND_MARGIN:g} takes at least {needed} masks)"


def low_degree_share_verdict(
    projection: str,
    share: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    seed: int,
    weights: str,
    *,
    errors: np.ndarray,
    num_samples: int,
) -> dict[str, Any]:
    """The low-degree Walsh share against :data:`LOW_DEGREE_SHARE` (per-image estimates and intervals);
    ``saturated`` where the estimates sit at or beyond a bound of the share (module docstring). ``errors``: each
    image's standard error of the share, from ``num_samples`` random base masks; where an estimate lies beyond a bound
    they size the masks that would resolve it (:func:`_noise_clause`)."""
    stat = {
        name: values[0] for name, values in bootstrap_mean_ci_rows(share[:, None], seed=seed).items() if name != "n"
    }
    stat = _widened(stat, low, high)
    unsaturated = LOW_DEGREE.decide_on({"low": stat["ci_low"], "high": stat["ci_high"], "shares": []})
    decision = LOW_DEGREE.decide_on({"low": stat["ci_low"], "high": stat["ci_high"], "shares": share.tolist()})
    notes = [
        "interval: the bootstrap CI over images of the mean, widened to cover every image's own 95 % interval "
        f"(a bootstrap-t over the design's samples); {len(share)} image(s)"
    ]
    at_bound = _at_bound(share.tolist())
    if decision == SATURATED and at_bound is not None:
        beyond = int(np.sum((share < 0) | (share > 1)))
        noise = _noise_clause(errors, num_samples) if beyond else ""
        notes.append(
            f"saturated: the estimate sits at or near the share's bound {at_bound['value']:g} on "
            f"{at_bound['share']:.0%} of the images, {beyond} of {len(share)} beyond it (estimates "
            f"{float(np.min(share)):.3g} … {float(np.max(share)):.3g}){noise}; the rule alone would have said {unsaturated}"
        )
    return verdict(
        f"walsh_low_degree_share.{projection}",
        f"the Walsh degrees 1–3 hold more than {LOW_DEGREE_SHARE:g} of Var h ({projection} projection)",
        decision,
        LOW_DEGREE.text,
        parameters={"threshold": LOW_DEGREE_SHARE, "bounds": [0.0, 1.0], "near_bound_margin": NEAR_BOUND_MARGIN},
        effect=effect_from_stat("(W_1 + W_2 + W_3) / Var h", stat, percent=True),
        notes=[*notes, *([] if weights != "random" else [NULL_NOTE])],
    )


def surrogate_verdict(projection: str, r2: np.ndarray, order: int, seed: int, weights: str) -> dict[str, Any]:
    """The order-≤k surrogate's R² over all the design's masks against :data:`SURROGATE_R2` (per-image R²)."""
    stat = {name: values[0] for name, values in bootstrap_mean_ci_rows(r2[:, None], seed=seed).items() if name != "n"}
    return verdict(
        f"surrogate_r2.{projection}",
        f"the exact order-≤{order} Möbius expansion about the all-off network explains more than {SURROGATE_R2:g} "
        f"of the spread of h over uniformly random masks ({projection} projection)",
        SURROGATE.decide_on({"low": stat["ci_low"], "high": stat["ci_high"]}),
        SURROGATE.text,
        parameters={"threshold": SURROGATE_R2},
        effect=effect_from_stat("R² of the order-≤k surrogate on the design's masks", stat),
        notes=[f"bootstrap over {len(r2)} image(s)", *([] if weights != "random" else [NULL_NOTE])],
    )


def depth_change_verdict(
    verdict_id: str,
    quantity: str,
    depths: tuple[int, int],
    change: np.ndarray,
    seed: int,
    log: bool = True,
    own: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, Any]:
    """Does ``quantity`` (its log10 with ``log``) fall from depth ``depths[0]`` to ``depths[1]``? ``change``: per image
    (paired), the deeper run's value minus the shallower's, on that scale; ``own``: each image's interval of that change
    from the two runs' own intervals (interval arithmetic), which widens the bootstrap CI as in
    :func:`low_degree_share_verdict`."""
    stat = {
        name: values[0] for name, values in bootstrap_mean_ci_rows(change[:, None], seed=seed).items() if name != "n"
    }
    if own is not None:
        stat = _widened(stat, *own)
    shallow, deep = depths
    scaled = f"log10({quantity})" if log else quantity
    return verdict(
        verdict_id,
        f"{quantity} falls from L = {shallow} to L = {deep}",
        DEPTH_CHANGE.decide_on({"low": stat["ci_low"], "high": stat["ci_high"], "saturated": False}),
        f"holds when the 95 % CI of the mean change of {scaled} lies below 0, fails when above 0, else cannot tell",
        parameters={"threshold": 0.0},
        effect=effect_from_stat(f"{scaled} at L = {deep} minus at L = {shallow}", stat),
        notes=[
            f"paired over the {len(change)} image(s) both runs evaluated"
            + (
                "; interval: the bootstrap CI over images of the mean change, widened to cover every image's own "
                "interval of the change (from the two runs' per-image 95 % intervals)"
                if own is not None
                else "; interval: the bootstrap CI over images of the mean change"
            ),
            "different architectures, one random initialisation each: the spread between networks is not in the interval",
            *(
                [
                    "an image's own interval is unbounded or undefined (a run's per-image 95 % interval of Var h "
                    "reaches 0: h is heavy-tailed over masks), so the change's interval is too"
                ]
                if own is not None and not np.isfinite(np.concatenate(own)).all()
                else []
            ),
            NULL_NOTE,
        ],
    )


def out_of_reach(num_blocks: int, exhaustive_limit: int, order: int, subcube_size: int) -> list[dict[str, str]]:
    """What the run cannot decide, with the reason (never a verdict: nothing was measured)."""
    beyond = "" if num_blocks > exhaustive_limit else f" (here L = {num_blocks}: the exhaustive step 1 gives them)"
    return [
        {
            "quantity": "where the Möbius spectrum peaks (the peak order), κ, p_j and C≤k",
            "status": "out of reach",
            "reason": f"each needs every order's energy Σ_j E_j, i.e. all 2^{num_blocks} − 1 coefficients; the exact "
            f"family stops at order {order} and the sub-cubes"
            + (f" at order {subcube_size}" if subcube_size else " were not run")
            + f"; the per-order sampling of single coefficients cannot reach the middle orders{beyond}",
        },
        {
            "quantity": "the Walsh weights W_j of degree j > 3 one by one",
            "status": "out of reach",
            "reason": "the U-statistic's variance grows with C(L, j); only their sum (Var h − W_1 − W_2 − W_3) and "
            "moments (influence, noise stability) are estimated",
        },
    ]
