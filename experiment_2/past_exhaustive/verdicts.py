"""What step 8's estimates decide, as verdict data (:mod:`experiment_1.report`'s schema), and what they cannot.

Thresholds are fixed here, before any run:

- ``walsh_low_degree_share.<projection>``: do the Walsh degrees 1–3 hold more than :data:`LOW_DEGREE_SHARE` of Var h?
  The interval is the bootstrap CI over images of the mean share, widened to cover every image's own 95 % interval
  (the estimator's): with a handful of images the bootstrap alone cannot see the sampling error of each estimate.
  An image's estimate beyond the share's range [0, 1] makes the verdict ``cannot tell (estimator out of range)``
  (:data:`~experiment_1.report.OUT_OF_RANGE`): the share cannot leave [0, 1], so such an estimate says the weights'
  pair noise dominates at that depth and budget, not where the share lies. Estimates inside the range at or near
  (within :data:`~experiment_1.report.NEAR_BOUND_MARGIN`) a bound on at least
  :data:`~experiment_1.report.SATURATION_SHARE` of the images make it ``saturated`` (a measure at its bound).
- ``surrogate_r2.<projection>``: does the exact order-≤k Möbius expansion about the all-off network explain more than
  :data:`SURROGATE_R2` of the spread of h over the design's uniformly random masks (R² over all of them)? Bootstrap CI
  over images (the R² of an image is computed on its masks, without an interval of its own).
- across depths (:func:`depth_change_verdict`, used by step 12): does a quantity (or its log10) fall — or rise — from
  one depth to the next? The paired bootstrap CI over the images both runs evaluated of the mean change; an estimate
  outside its quantity's range in either run makes it ``cannot tell (estimator out of range)``
  (:func:`outside_range`).

The decision is :func:`experiment_1.report.ci_against` (the CI against the threshold), declared once in the rules below. What no estimate here
can decide — the Möbius spectrum's fractions, κ, C≤k and its peak order — is listed by :func:`out_of_reach` with the
reason.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from experiment_1.report import (
    CANNOT_TELL,
    FAILS,
    HOLDS,
    NEAR_BOUND_MARGIN,
    OUT_OF_RANGE,
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


def random_init_reading(config: dict[str, Any]) -> str | None:
    """What a run's random-init network can and cannot tell about trained ones (its ``config``: ``weights`` and
    ``batchnorm_calibration``); ``None`` for trained weights."""
    if config["weights"] != "random":
        return None
    calibration = config.get("batchnorm_calibration")
    if not calibration:
        return (
            "Random-init weights with batch norm at its initial statistics: the activations grow or vanish with depth, "
            "so every ratio across depths measures that growth, not the function's structure — no evidence about "
            "depth until calibrated (--calibrate-batchnorm N)."
        )
    return (
        f"Random-init weights, batch norm calibrated on {calibration['images']} held-out images (as Experiment 2's "
        "null over networks): the activations keep their scale with depth, so the numbers describe each architecture's "
        "function before any training — what depth alone does to its interaction spectrum, a null for a trained "
        "network of the same depth. They cannot tell what the trained network's spectrum is, nor test the original "
        "study's claims, which are about trained networks: training moves the spectrum (Experiment 2 ranks the trained "
        "Lite0 against its null over random networks), and one initialisation per architecture leaves the spread "
        "between networks out of every interval."
    )


def _widened(stat: dict[str, float], low: np.ndarray, high: np.ndarray) -> dict[str, float]:
    """``stat`` with its CI widened to cover every interval ``[low_i, high_i]``; an undefined (NaN) bound makes the CI's
    end NaN (no decision), never one left out."""
    return {
        **stat,
        "ci_low": float(np.min(np.append(low, stat["ci_low"]))),
        "ci_high": float(np.max(np.append(high, stat["ci_high"]))),
    }


def count_outside(estimates: np.ndarray, floor: float, ceiling: float) -> int:
    """How many ``estimates`` lie outside ``[floor, ceiling]`` (a NaN lies in no range and is not counted)."""
    estimates = np.asarray(estimates, dtype=np.float64)
    return int(np.sum((estimates < floor) | (estimates > ceiling)))


def outside_range(estimates: np.ndarray, floor: float, ceiling: float, quantity: str) -> str | None:
    """The note of :data:`~experiment_1.report.OUT_OF_RANGE` when an estimate of ``quantity`` lies outside its range
    ``[floor, ceiling]`` (a sampled estimate, unbiased but not cut to the range), else ``None``."""
    estimates = np.asarray(estimates, dtype=np.float64)
    outside = count_outside(estimates, floor, ceiling)
    if not outside:
        return None
    return (
        f"{OUT_OF_RANGE}: {outside} of {len(estimates)} estimates of {quantity} lie outside its range "
        f"[{floor:.3g}, {ceiling:.3g}] (estimates {float(np.nanmin(estimates)):.3g} … {float(np.nanmax(estimates)):.3g}): "
        "the estimator's noise at this depth and budget, not a value of the quantity"
    )


def _outside_share(shares: list[float]) -> bool:
    """An estimate of the share beyond its range [0, 1] (a NaN is none: the non-finite guard reads it)."""
    return count_outside(np.asarray(shares, dtype=np.float64), 0.0, 1.0) > 0


def _at_bound(shares: list[float]) -> dict[str, Any] | None:
    """Where the share estimates (inside its range) sit at or near a bound of the share on at least the saturation
    share of images."""
    values = np.asarray(shares, dtype=np.float64)
    at_bound = saturation(values, bounds=(0.0, 1.0), margin=NEAR_BOUND_MARGIN)
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


def _decide_share(low: float, high: float, shares: list[float]) -> str:
    """Out of range before saturated before the CI against :data:`LOW_DEGREE_SHARE` (module docstring)."""
    if _outside_share(shares):
        return OUT_OF_RANGE
    return SATURATED if _at_bound(shares) else ci_against(low, high, LOW_DEGREE_SHARE)


LOW_DEGREE = Rule(
    "low_orders.walsh_low_degree_share",
    f"holds when the 95 % CI of the mean low-degree Walsh share lies above {LOW_DEGREE_SHARE:g}, "
    f"fails when below {LOW_DEGREE_SHARE:g}, else cannot tell; {OUT_OF_RANGE} when an image's estimate lies "
    "outside the share's range [0, 1]; saturated when the estimates sit at or near its bound 0 or 1 (within "
    f"{NEAR_BOUND_MARGIN:g} of it) on at least {SATURATION_SHARE * 100:g} % of the images",
    _read_share,
    _decide_share,
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

SHARE = "low_degree_share"  # the estimate whose change is also saturated where either run's own share verdict is


def _sides(direction: str) -> tuple[str, str]:
    """Where a change's CI lies when it holds, and when it fails: a fall holds below 0, a rise above."""
    if direction not in ("falls", "rises"):
        raise ValueError(f"direction must be 'falls' or 'rises', not {direction!r}")
    return ("below", "above") if direction == "falls" else ("above", "below")


def _depth_change_text(entry: dict[str, Any]) -> str:
    """The rule of a change, from its ``parameters``: ``scale`` (what changes, on the scale judged), ``direction`` and
    ``estimate`` (the levels' name of a sampled quantity, else ``None``)."""
    parameters = entry.get("parameters") or {}
    side, other = _sides(parameters.get("direction", "falls"))
    estimate = parameters.get("estimate")
    return (
        f"holds when the 95 % CI of the mean change of {parameters.get('scale')} lies {side} 0, fails when {other} 0, "
        "else cannot tell"
        + (f"; {OUT_OF_RANGE} when an estimate of either run lies outside the quantity's range" if estimate else "")
        + ("; saturated when either run's own low-degree-share verdict is" if estimate == SHARE else "")
    )


def _levels_of(reading: Reading) -> list[dict[str, Any]]:
    """The two runs' levels of the change's projection (the id's last parts: ``<projection>.L<a>_to_L<b>``)."""
    projection, span = reading.parts[-2:]
    depths = {int(end.removeprefix("L")) for end in span.split("_to_")}
    levels = [
        level for level in reading.at("levels") if level["projection"] == projection and level["num_blocks"] in depths
    ]
    if not levels:
        raise Missing(f"levels of the {projection} projection at L = {sorted(depths)}")
    return levels


def _read_change(reading: Reading) -> dict[str, Any]:
    """The change's CI (kept in the verdict alone: the two runs' per-image values are in their own summaries), its
    direction and, for a sampled quantity, from the summary's ``levels`` whether an estimate of either run lies outside
    its range and (the share) whether either run's own share verdict is saturated."""
    effect = reading.entry.get("effect") or {}
    if not ("ci_low" in effect and "ci_high" in effect):
        raise Missing("effect.ci_low / ci_high")
    estimate = reading.own("parameters", "estimate")
    levels = _levels_of(reading) if estimate else []
    return {
        "low": effect["ci_low"],
        "high": effect["ci_high"],
        "direction": reading.own("parameters", "direction"),
        "outside": any(level[f"{estimate}_outside_range"] for level in levels),
        "saturated": estimate == SHARE and any(level[f"{SHARE}_decision"] == SATURATED for level in levels),
    }


def _decide_change(low: float, high: float, direction: str, outside: bool, saturated: bool) -> str:
    """Out of range before saturated before the CI against 0 on the direction's side (module docstring)."""
    if outside:
        return OUT_OF_RANGE
    return SATURATED if saturated else ci_against(low, high, 0.0, _sides(direction)[0])


DEPTH_CHANGE = Rule("low_orders.depth_change", _depth_change_text, _read_change, _decide_change)

BASIS_READINGS = {
    (True, False): "Möbius only",
    (False, True): "Walsh only",
    (False, False): "neither basis decides",
}


def _read_bases(reading: Reading) -> dict[str, str]:
    """The decisions of the Möbius change (the all-off network's mean order) and the Walsh change (κ_W / L) of the same
    projection and depths, from the summary's verdicts."""
    projection, span = reading.parts[-2:]
    return {
        "mobius": reading.decision_of(f"mobius_mean_order.off.{projection}.{span}"),
        "walsh": reading.decision_of(f"walsh_kappa_per_block.{projection}.{span}"),
    }


def basis_reading(mobius: str, walsh: str) -> tuple[str, str]:
    """The decision and its reading: both decided and agreeing holds, both decided and disagreeing fails ("reverses in
    the Walsh basis"), else cannot tell (Möbius only, Walsh only, or neither)."""
    decided = (mobius in (HOLDS, FAILS), walsh in (HOLDS, FAILS))
    if all(decided):
        return (HOLDS, "both bases agree") if mobius == walsh else (FAILS, "reverses in the Walsh basis")
    return CANNOT_TELL, BASIS_READINGS[decided]


BASIS_CHANGE = Rule(
    "low_orders.basis_change",
    "holds when the Möbius and the Walsh change verdicts are both decided (holds or fails) and agree, fails when both are "
    "decided and disagree (reverses in the Walsh basis), else cannot tell (Möbius only, Walsh only, or neither)",
    _read_bases,
    lambda mobius, walsh: basis_reading(mobius, walsh)[0],
)


def _noise_clause(errors: np.ndarray, num_samples: int) -> str:
    """Why a share estimate lies beyond its bound, and the base masks that would bring its standard error (the median
    of ``errors`` over the images, at ``num_samples`` masks) under :data:`~experiment_1.report.NEAR_BOUND_MARGIN`:
    the pair noise falls as 1/m and the rest as 1/√m, so ``m · SE / margin`` masks is a lower bound."""
    clause = "; the weights' pair noise dominates it"
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
    ``cannot tell (estimator out of range)`` where an estimate lies beyond the share's range, ``saturated`` where the
    estimates sit at or near a bound inside it (module docstring). ``errors``: each image's standard error of the
    share, from ``num_samples`` random base masks; where an estimate lies beyond a bound they size the masks that would
    resolve it (:func:`_noise_clause`)."""
    stat = {
        name: values[0] for name, values in bootstrap_mean_ci_rows(share[:, None], seed=seed).items() if name != "n"
    }
    stat = _widened(stat, low, high)
    alone = LOW_DEGREE.decide_on({"low": stat["ci_low"], "high": stat["ci_high"], "shares": []})
    decision = LOW_DEGREE.decide_on({"low": stat["ci_low"], "high": stat["ci_high"], "shares": share.tolist()})
    notes = [
        "interval: the bootstrap CI over images of the mean, widened to cover every image's own 95 % interval "
        f"(a bootstrap-t over the design's samples); {len(share)} image(s)"
    ]
    if decision == OUT_OF_RANGE:
        outside = outside_range(share, 0.0, 1.0, "the share")
        notes.append(f"{outside}{_noise_clause(errors, num_samples)}; the rule alone would have said {alone}")
    elif decision == SATURATED and (at_bound := _at_bound(share.tolist())) is not None:
        notes.append(
            f"saturated: the estimate sits at or near the share's bound {at_bound['value']:g} on "
            f"{at_bound['share']:.0%} of the images (estimates {float(np.min(share)):.3g} … {float(np.max(share)):.3g}); "
            f"the rule alone would have said {alone}"
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
    *,
    direction: str = "falls",
    estimate: str | None = None,
    levels: list[dict[str, Any]] = (),
    outside: str | None = None,
    random_init: bool = True,
) -> dict[str, Any]:
    """Does ``quantity`` (its log10 with ``log``) fall (``direction`` "falls") or rise ("rises") from depth
    ``depths[0]`` to ``depths[1]``? ``change``: per image (paired), the deeper run's value minus the shallower's, on
    that scale; ``own``: each image's interval of that change from the two runs' own intervals (interval arithmetic),
    which widens the bootstrap CI as in :func:`low_degree_share_verdict`; ``estimate``: a sampled quantity's name in
    ``levels`` (step 12's per-run levels: its ``<estimate>_outside_range`` count, and for the share each run's own
    decision), whose rule has the out-of-range clause; ``outside``: the note of :func:`outside_range` that says which
    estimates left the range; ``random_init``: both runs random-init networks (the null's note). Decided by
    :data:`DEPTH_CHANGE` on ``levels``, as the checker re-decides it on the summary."""
    _sides(direction)
    stat = {
        name: values[0] for name, values in bootstrap_mean_ci_rows(change[:, None], seed=seed).items() if name != "n"
    }
    if own is not None:
        stat = _widened(stat, *own)
    shallow, deep = depths
    scaled = f"log10({quantity})" if log else quantity
    alone = DEPTH_CHANGE.decide_on(
        {"low": stat["ci_low"], "high": stat["ci_high"], "direction": direction, "outside": False, "saturated": False}
    )
    notes = [
        f"paired over the {len(change)} image(s) both runs evaluated"
        + (
            "; interval: the bootstrap CI over images of the mean change, widened to cover every image's own "
            "interval of the change (from the two runs' per-image 95 % intervals)"
            if own is not None
            else "; interval: the bootstrap CI over images of the mean change"
        ),
        "different architectures, one initialisation each: the spread between networks is not in the interval",
    ]
    if own is not None and not np.isfinite(np.concatenate(own)).all():
        notes.append("an image's own interval is unbounded or undefined, so the change's interval is too")
    saturated = [
        f"L = {level['num_blocks']}"
        for level in levels
        if estimate == SHARE and level["num_blocks"] in depths and level.get(f"{SHARE}_decision") == SATURATED
    ]

    def decided(decision: str) -> list[str]:
        said = {
            OUT_OF_RANGE: [f"{outside}; the rule alone would have said {alone}"],
            SATURATED: [
                f"saturated: the low-degree share of the run at {' and '.join(saturated)} is saturated (its estimates "
                f"sit at or near a bound of the share; that run's REPORT); the rule alone would have said {alone}"
            ],
        }
        return [*notes, *said.get(decision, []), *([NULL_NOTE] if random_init else [])]

    return DEPTH_CHANGE.verdict(
        verdict_id,
        {"levels": list(levels)},
        f"{quantity} {direction} from L = {shallow} to L = {deep}",
        parameters={"threshold": 0.0, "scale": scaled, "direction": direction, "estimate": estimate},
        effect=effect_from_stat(f"{scaled} at L = {deep} minus at L = {shallow}", stat),
        notes=decided,
    )


def basis_verdict(mobius: dict[str, Any], walsh: dict[str, Any], projection: str, depths: tuple[int, int]) -> dict:
    """The Möbius reading of the order's change with depth (the all-off network's mean order, verdict ``mobius``)
    against the Walsh one (κ_W / L, ``walsh``), with the reading named (:func:`basis_reading`)."""
    first, second = mobius["decision"], walsh["decision"]
    reading = basis_reading(first, second)[1]
    words = {HOLDS: "rises", FAILS: "falls"}
    entry = BASIS_CHANGE.verdict(
        f"basis.{projection}.L{depths[0]}_to_L{depths[1]}",
        {"verdicts": [mobius, walsh]},
        f"{projection} projection, L = {depths[0]} → {depths[1]}: the Möbius reading of the order's change (the mean "
        "order of ē_1 … ē_k at the all-off network) holds in the Walsh basis too (κ_W / L)",
        notes=[f"{reading}: Möbius {words.get(first, first)}, Walsh {words.get(second, second)}"],
    )
    return entry | {"reading": reading, "projection": projection, "depths": list(depths)}


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
