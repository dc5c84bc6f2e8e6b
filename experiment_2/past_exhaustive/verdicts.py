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

The decision is :func:`experiment_1.report.decide_by_ci` on the CI shifted by the threshold. What no estimate here
can decide — the Möbius spectrum's fractions, κ, C≤k and its peak order — is listed by :func:`out_of_reach` with the
reason.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from experiment_1.report import (
    NEAR_BOUND_MARGIN,
    OUT_OF_RANGE,
    SATURATED,
    SATURATION_SHARE,
    bootstrap_mean_ci_rows,
    decide_by_ci,
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


def _threshold_decision(low: float, high: float, threshold: float, side: str) -> str:
    """holds when the CI lies on ``side`` (above / below) of ``threshold``, fails when on the other, else cannot tell."""
    return decide_by_ci(
        {"ci_low": low - threshold, "ci_high": high - threshold}, "positive" if side == "above" else "negative"
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
    decision = _threshold_decision(stat["ci_low"], stat["ci_high"], LOW_DEGREE_SHARE, "above")
    notes = [
        "interval: the bootstrap CI over images of the mean, widened to cover every image's own 95 % interval "
        f"(a bootstrap-t over the design's samples); {len(share)} image(s)"
    ]
    outside = outside_range(share, 0.0, 1.0, "the share")
    at_bound = saturation(share, bounds=(0.0, 1.0), margin=NEAR_BOUND_MARGIN)
    if outside is not None:
        notes.append(f"{outside}{_noise_clause(errors, num_samples)}; the rule alone would have said {decision}")
        decision = OUT_OF_RANGE
    elif at_bound is not None and at_bound["at"] != "mode" and np.isfinite(share).all():
        notes.append(
            f"saturated: the estimate sits at or near the share's bound {at_bound['value']:g} on "
            f"{at_bound['share']:.0%} of the images (estimates {float(np.min(share)):.3g} … {float(np.max(share)):.3g}); "
            f"the rule alone would have said {decision}"
        )
        decision = SATURATED
    return verdict(
        f"walsh_low_degree_share.{projection}",
        f"the Walsh degrees 1–3 hold more than {LOW_DEGREE_SHARE:g} of Var h ({projection} projection)",
        decision,
        f"holds when the 95 % CI of the mean low-degree Walsh share lies above {LOW_DEGREE_SHARE:g}, "
        f"fails when below {LOW_DEGREE_SHARE:g}, else cannot tell; {OUT_OF_RANGE} when an image's estimate lies "
        "outside the share's range [0, 1]; saturated when the estimates sit at or near its bound 0 or 1 (within "
        f"{NEAR_BOUND_MARGIN:g} of it) on at least {SATURATION_SHARE * 100:g} % of the images",
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
        _threshold_decision(stat["ci_low"], stat["ci_high"], SURROGATE_R2, "above"),
        f"holds when the 95 % bootstrap CI of the mean R² lies above {SURROGATE_R2:g}, "
        f"fails when below {SURROGATE_R2:g}, else cannot tell",
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
    estimated: bool = False,
    outside: str | None = None,
    random_init: bool = True,
) -> dict[str, Any]:
    """Does ``quantity`` (its log10 with ``log``) fall (``direction`` "falls") or rise ("rises") from depth
    ``depths[0]`` to ``depths[1]``? ``change``: per image (paired), the deeper run's value minus the shallower's, on
    that scale; ``own``: each image's interval of that change from the two runs' own intervals (interval arithmetic),
    which widens the bootstrap CI as in :func:`low_degree_share_verdict`; ``estimated``: a sampled quantity, whose rule
    has the out-of-range clause; ``outside``: the note of :func:`outside_range` when an estimate of either run leaves
    the quantity's range (the decision is then :data:`~experiment_1.report.OUT_OF_RANGE`); ``random_init``: both runs
    random-init networks (the null's note)."""
    if direction not in ("falls", "rises"):
        raise ValueError(f"direction must be 'falls' or 'rises', not {direction!r}")
    stat = {
        name: values[0] for name, values in bootstrap_mean_ci_rows(change[:, None], seed=seed).items() if name != "n"
    }
    if own is not None:
        stat = _widened(stat, *own)
    shallow, deep = depths
    scaled = f"log10({quantity})" if log else quantity
    side, other = ("below", "above") if direction == "falls" else ("above", "below")
    decision = _threshold_decision(stat["ci_low"], stat["ci_high"], 0.0, side)
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
    if outside is not None:
        notes.append(f"{outside}; the rule alone would have said {decision}")
        decision = OUT_OF_RANGE
    return verdict(
        verdict_id,
        f"{quantity} {direction} from L = {shallow} to L = {deep}",
        decision,
        f"holds when the 95 % CI of the mean change of {scaled} lies {side} 0, fails when {other} 0, else cannot tell"
        + (f"; {OUT_OF_RANGE} when an estimate of either run lies outside the quantity's range" if estimated else ""),
        parameters={"threshold": 0.0},
        effect=effect_from_stat(f"{scaled} at L = {deep} minus at L = {shallow}", stat),
        notes=[*notes, *([NULL_NOTE] if random_init else [])],
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
