"""Experiment 2's verdicts (the :mod:`experiment_1.report.verdicts` schema), decided from the summary's numbers.

First the floor check, per projection: an order k ≥ 1 is *resolved* when its mean energy is at least
:data:`FLOOR_MARGIN` (1000) × its round-off floor C(L,k)·2^k·(variance of rounding the logits to the network's
arithmetic) (:func:`floor_check`). A projection with an unresolved order is noise there: every verdict on
its spectrum is ``unresolved`` — never a null, never a finding. Then, per resolved projection:

- ``resolved`` — every order clears the floor;
- ``shape`` — the spectrum departs from subset counting (the binomial null p_k ∝ C(L,k)), read from κ and
  C≤3 together: higher orders when κ lies above the null's and C≤3 below it (both 95 % CIs excluding the
  null's value), lower orders when the reverse; when both exclude the null on the same side (κ and C≤3 both
  above: more weight at both ends) the spectrum is wider or narrower than counting, not shifted: cannot tell
  which way, said in a note. κ/L beside it, since κ scales with L;
- ``peak`` — the mean spectrum peaks at another order than the null, tie-aware: the null's peak is every
  order of largest C(L,k) (two at odd L); holds when the per-image peak order's CI lies outside the null's
  tied range, fails when inside it, else cannot tell. This is the reading "shifted beyond subset counting";
- ``middle_peak`` — the original study's claim as it states it (Möbius basis): a middle-order peak and no low-order
  bias. Holds when the per-image peak order's CI lies within the middle orders 4 … L − 1 (above the low orders
  k ≤ 3 that C≤3 counts, below the top order) and κ's CI lies above the null's κ (the mean order is not pulled
  below subset counting's; without an equivalence margin fixed before the run, "no bias" is shown only this way);
  fails when the peak order's CI lies at or below 3 or at L, or when κ's CI lies below the null's and C≤3's above
  the null's (a low-order bias); else cannot tell (also at L < 5, which has no middle order).

Across projections, ``projections_differ``: the paired per-image κ^s − κ^v has a CI excluding 0. And
``input_dependent``: h(full) moves with the image (the trunk energy's relative spread over images exceeds
:data:`INPUT_SPREAD`, far above float32 round-off): a null that is a constant function is no null.

The same shape and peak rules in the Walsh (±1 Fourier) basis, when the run recorded its Walsh spectra (``walsh.shape.*``,
``walsh.peak.*``: the Walsh energy W_k of order k against the same binomial null — all 2^L coefficients of equal
energy — behind the Walsh round-off floor C(L,k)·(rounding variance)/2^L), and ``basis.*``: the Möbius shape reading
holds in the Walsh basis too (holds when both bases decide it the same way, fails when they decide it differently, else
cannot tell). Beside it the cancellation ratio Σ_{k≥1} E_k / ‖h(full) − h(∅)‖²: how much Möbius energy cancels.

:func:`null_verdicts` compares a run with its random-init null: ``unresolved`` when the null (or the run)
is, cannot tell when the null is a constant function, else holds when the two κ^v CIs are disjoint.
"""

from __future__ import annotations

from math import comb
from pathlib import Path
from typing import Any

import numpy as np

from experiment_1.errors import PipelineError
from experiment_1.mobius import PROJECTIONS
from experiment_1.report import (
    ALPHA,
    CANNOT_TELL,
    FAILS,
    HOLDS,
    UNRESOLVED,
    Reading,
    Rule,
    bootstrap_mean_ci,
    effect_from_stat,
    excludes_zero,
    side,
)

FLOOR_MARGIN = 1000.0  # an order is resolved when its mean energy is at least this multiple of its round-off floor
LOW_ORDERS = 3  # the orders k ≤ 3 that C≤3 counts: a peak there is a low-order peak, not a middle-order one
INPUT_SPREAD = 1e-4  # relative spread of the trunk energy over images below which h(full) does not depend on the image
UNRESOLVED_NOTE = "orders within the round-off floor are noise: no null and no finding is drawn from them"


def roundoff_floor(roundoff_variance: np.ndarray, num_blocks: int) -> np.ndarray:
    """Mean over images of ``C(L,k)·2^k·roundoff_variance`` for ``k = 0 … L``: ``(N,)`` → ``(L+1,)``."""
    factors = np.array([comb(num_blocks, order) * 2.0**order for order in range(num_blocks + 1)])
    return float(np.mean(roundoff_variance)) * factors


def walsh_roundoff_floor(roundoff_variance: np.ndarray, num_blocks: int) -> np.ndarray:
    """Mean over images of ``C(L,k)·roundoff_variance/2^L`` for ``k = 0 … L``: a Walsh coefficient is 2^{−L} times a signed sum
    of 2^L rounded values, so its rounding variance is ``roundoff_variance/2^L``: ``(N,)`` → ``(L+1,)``."""
    factors = np.array([comb(num_blocks, order) / 2.0**num_blocks for order in range(num_blocks + 1)])
    return float(np.mean(roundoff_variance)) * factors


def floor_check(
    arrays: dict[str, np.ndarray], valid: np.ndarray, num_blocks: int, basis: str = "mobius"
) -> dict[str, Any]:
    """Per projection: mean E_k (or, with ``basis="walsh"``, W_k) over images, its round-off floor, their ratio and whether
    each order is resolved."""
    block: dict[str, Any] = {"floor_margin": FLOOR_MARGIN}
    prefix, floor_of = ("walsh_", walsh_roundoff_floor) if basis == "walsh" else ("", roundoff_floor)
    for projection in PROJECTIONS:
        energy = np.asarray(arrays[f"{prefix}energy_{projection}"], dtype=np.float64)[valid].mean(axis=0)
        floor = floor_of(np.asarray(arrays[f"roundoff_variance_{projection}"], dtype=np.float64)[valid], num_blocks)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(floor > 0, energy / floor, np.inf)
        block[projection] = {
            "floor_ratio": ratio.tolist(),
            "resolved": [bool(value >= FLOOR_MARGIN) for value in ratio],
            "unresolved_orders": [order for order in range(1, num_blocks + 1) if not ratio[order] >= FLOOR_MARGIN],
        }
    return block


def input_dependence(arrays: dict[str, np.ndarray], valid: np.ndarray) -> dict[str, Any]:
    """How much h(full) moves with the image: distinct predicted classes and the trunk energy's relative spread (its
    sample standard deviation over images, ``ddof = 1``, over its mean)."""
    trunk = np.asarray(arrays["energy_vector"], dtype=np.float64)[valid][:, 0]
    spread = float(trunk.std(ddof=1) / trunk.mean()) if len(trunk) > 1 and trunk.mean() > 0 else 0.0
    return {
        "distinct_predictions": int(len(np.unique(np.asarray(arrays["full_prediction"])[valid]))),
        "trunk_energy_relative_spread": spread,
    }


def paired_kappa_difference(arrays: dict[str, np.ndarray], valid: np.ndarray, seed: int) -> dict[str, float]:
    """Per-image κ^s − κ^v: mean with a bootstrap CI over images."""
    return bootstrap_mean_ci(
        np.asarray(arrays["kappa_scalar"], dtype=np.float64)[valid]
        - np.asarray(arrays["kappa_vector"], dtype=np.float64)[valid],
        seed=seed,
    )


def shape_decision(kappa_side: int, c_le3_side: int) -> tuple[str, list[str]]:
    """The shape rule on which side of the null κ's and C≤3's CIs lie (+1 above, −1 below, 0 containing it)."""
    if kappa_side > 0 and c_le3_side < 0:
        return HOLDS, ["the energy sits at higher orders than subset counting predicts"]
    if kappa_side < 0 and c_le3_side > 0:
        return FAILS, ["the energy sits at lower orders than subset counting predicts"]
    if kappa_side != 0 and kappa_side == c_le3_side:
        return CANNOT_TELL, [
            "κ and C≤3 both lie on the same side of the null: the spectrum is "
            + ("wider" if kappa_side > 0 else "narrower")
            + " than subset counting (more weight at both ends), not shifted to higher or lower orders"
        ]
    return CANNOT_TELL, []


def peak_decision(peak: dict[str, float], tied: list[int]) -> str:
    """The peak rule: the per-image peak order's CI against the null's tied peak orders."""
    if peak["ci_high"] < min(tied) or peak["ci_low"] > max(tied):
        return HOLDS
    return FAILS if min(tied) <= peak["ci_low"] and peak["ci_high"] <= max(tied) else CANNOT_TELL


def _peak_place(middle: bool, at_low: bool, at_top: bool, orders: str) -> str:
    if middle:
        return f"within the middle orders {orders}"
    if at_low or at_top:
        return "at the low orders" if at_low else "at the top order"
    return f"partly outside the middle orders {orders}"


def _bias_reading(unbiased: bool, biased: bool) -> str:
    if unbiased:
        return "κ lies above subset counting's: no low-order bias"
    if biased:
        return "κ below and C≤3 above subset counting's: a low-order bias"
    return "κ's CI does not lie above subset counting's: a low-order bias is not excluded"


def middle_peak_decision(
    peak: dict[str, float], kappa_side: int, c_le3_side: int, num_blocks: int
) -> tuple[str, list[str]]:
    """The ``middle_peak`` rule on the per-image peak order's CI and the sides of the null on which κ's and C≤3's CIs lie
    (+1 above, −1 below, 0 containing it), with a note on each part."""
    low, high = LOW_ORDERS + 1, num_blocks - 1
    if low > high:
        return CANNOT_TELL, [f"L = {num_blocks} has no middle order between the low orders k ≤ {LOW_ORDERS} and L"]
    at_low, at_top = peak["ci_high"] <= LOW_ORDERS, peak["ci_low"] >= num_blocks
    middle = low <= peak["ci_low"] and peak["ci_high"] <= high
    biased, unbiased = kappa_side < 0 and c_le3_side > 0, kappa_side > 0
    notes = [
        f"per-image peak order {peak['mean']:.3g} [{peak['ci_low']:.3g}, {peak['ci_high']:.3g}] lies "
        + _peak_place(middle, at_low, at_top, f"{low}–{high}"),
        _bias_reading(unbiased, biased),
    ]
    if at_low or at_top or biased:
        return FAILS, notes
    return (HOLDS if middle and unbiased else CANNOT_TELL), notes


def _null_peaks(null: dict[str, Any]) -> list[int]:
    return null.get("peak_orders", [null["peak_order"]])


def _where(reading: Reading) -> tuple[tuple[str, ...], str]:
    """The summary block a projection verdict reads (``("walsh",)`` for a ``walsh.*`` id) and its projection."""
    return (("walsh",) if reading.parts[0] == "walsh" else ()), reading.parts[-1]


def _read_resolved(reading: Reading) -> dict[str, Any]:
    """Every order's mean energy / round-off floor (k ≥ 1); the statistic must be the smallest."""
    prefix, projection = _where(reading)
    ratios = reading.at(*prefix, "roundoff", projection, "floor_ratio")[1:]
    reading.copied("statistic", {"value": min(ratios, default=None)}, ("value",))
    return {"ratios": ratios}


def _decide_resolved(ratios: list[float]) -> str:
    return HOLDS if all(ratio >= FLOOR_MARGIN for ratio in ratios) else UNRESOLVED


RESOLVED = Rule(
    "exp2.resolved",
    f"holds when every order k ≥ 1 has mean energy ≥ {FLOOR_MARGIN:g}× its round-off floor C(L,k)·2^k·(rounding variance); else unresolved",
    _read_resolved,
    _decide_resolved,
    "{named}: every interaction order clears the round-off floor",
)
WALSH_RESOLVED = Rule(
    "exp2.walsh_resolved",
    f"holds when every order k ≥ 1 has mean Walsh energy ≥ {FLOOR_MARGIN:g}× its round-off floor "
    "C(L,k)·(rounding variance)/2^L; else unresolved",
    _read_resolved,
    _decide_resolved,
    RESOLVED.claim,
)


def _read_shape(reading: Reading) -> dict[str, Any]:
    """κ's and C≤3's CIs of the projection against the binomial null's values, and its unresolved orders; the entry's
    effect must be κ − null κ."""
    prefix, projection = _where(reading)
    kappa = reading.interval(*prefix, "projections", projection, "kappa")
    null_kappa = reading.number("binomial_null", "kappa")
    reading.copied("effect", {"ci_low": kappa[0] - null_kappa, "ci_high": kappa[1] - null_kappa})
    return {
        "kappa": kappa,
        "c_le3": reading.interval(*prefix, "projections", projection, "c_le3"),
        "null_kappa": null_kappa,
        "null_c_le3": reading.number("binomial_null", "c_le3"),
        "unresolved": reading.at(*prefix, "roundoff", projection, "unresolved_orders"),
    }


SHAPE = Rule(
    "exp2.shape",
    "holds (higher orders) when the 95 % CI of κ lies above the binomial null's κ and that of C≤3 below the null's C≤3; fails "
    "(lower orders) when the reverse; else cannot tell (a CI covering the null's value, or both statistics on one side: "
    "a spectrum wider or narrower than counting, not shifted)",
    _read_shape,
    lambda kappa, c_le3, null_kappa, null_c_le3, unresolved: (
        UNRESOLVED if unresolved else shape_decision(side(*kappa, null_kappa), side(*c_le3, null_c_le3))[0]
    ),
    "{named}: the energy sits at higher orders than subset counting (the binomial null) predicts",
)


def _read_peak(reading: Reading) -> dict[str, Any]:
    """The per-image peak order's CI, the null's tied peaks and the unresolved orders (the entry's effect and
    parameters must be those)."""
    prefix, projection = _where(reading)
    peak = reading.at(*prefix, "projections", projection, "peak_order")
    reading.copied("effect", peak)
    tied = _null_peaks(reading.at("binomial_null"))
    reading.copied("parameters", {"null_peak_orders": tied}, ("null_peak_orders",))
    return {
        "peak": reading.interval(*prefix, "projections", projection, "peak_order"),
        "tied": tied,
        "unresolved": reading.at(*prefix, "roundoff", projection, "unresolved_orders"),
    }


PEAK = Rule(
    "exp2.peak",
    "holds when the 95 % CI of the per-image peak order lies outside the binomial null's peak orders (all tied ones), fails "
    "when it lies inside their range, else cannot tell",
    _read_peak,
    lambda peak, tied, unresolved: (
        UNRESOLVED if unresolved else peak_decision({"ci_low": peak[0], "ci_high": peak[1]}, tied)
    ),
    "{named}: the spectrum peaks at another order than subset counting predicts",
)


def _read_middle_peak(reading: Reading) -> dict[str, Any]:
    reading.copied("effect", reading.at("projections", reading.parts[-1], "peak_order"))
    return {**_read_shape_sides(reading), "peak": reading.interval("projections", reading.parts[-1], "peak_order")}


def _read_shape_sides(reading: Reading) -> dict[str, Any]:
    """Which side of the binomial null κ's and C≤3's CIs lie on, L and the unresolved orders (Möbius basis)."""
    projection = reading.parts[-1]
    null = reading.at("binomial_null")
    return {
        "kappa_side": side(
            *reading.interval("projections", projection, "kappa"), reading.number("binomial_null", "kappa")
        ),
        "c_le3_side": side(
            *reading.interval("projections", projection, "c_le3"), reading.number("binomial_null", "c_le3")
        ),
        "num_blocks": null.get("num_blocks"),
        "unresolved": reading.at("roundoff", projection, "unresolved_orders"),
    }


MIDDLE_PEAK = Rule(
    "exp2.middle_peak",
    f"holds when the 95 % CI of the per-image peak order lies within the middle orders {LOW_ORDERS + 1} … L − 1 (above the "
    f"low orders k ≤ {LOW_ORDERS} that C≤3 counts, below the top order L) and the 95 % CI of κ lies above the binomial "
    f"null's κ (no low-order bias); fails when the peak order's CI lies at or below {LOW_ORDERS} or at L, or when κ's CI "
    "lies below the null's κ and C≤3's above the null's C≤3 (a low-order bias); else cannot tell (Möbius basis)",
    _read_middle_peak,
    lambda peak, kappa_side, c_le3_side, num_blocks, unresolved: (
        UNRESOLVED
        if unresolved
        else middle_peak_decision(
            {"mean": sum(peak) / 2, "ci_low": peak[0], "ci_high": peak[1]}, kappa_side, c_le3_side, num_blocks
        )[0]
    ),
    "{projection} projection: the spectrum peaks at a middle order, with no low-order bias (the original study's claim; Möbius basis)",
)


def _read_differ(reading: Reading) -> dict[str, Any]:
    difference = reading.at("kappa_scalar_minus_vector")
    reading.copied("effect", difference)
    return {
        "difference": reading.interval("kappa_scalar_minus_vector"),
        "unresolved": [reading.at("roundoff", projection, "unresolved_orders") for projection in PROJECTIONS],
    }


DIFFER = Rule(
    "exp2.projections_differ",
    "holds when the 95 % CI of the paired per-image κ^s − κ^v excludes 0, else cannot tell (no equivalence margin)",
    _read_differ,
    lambda difference, unresolved: UNRESOLVED if any(unresolved) else excludes_zero(*difference),
    "the scalar (predicted-class) spectrum differs from the vector one (κ^s ≠ κ^v)",
)


def _read_spread(reading: Reading) -> dict[str, float]:
    spread = reading.number("input_dependence", "trunk_energy_relative_spread")
    reading.copied("statistic", {"value": spread}, ("value",))
    return {"spread": spread}


INPUT = Rule(
    "exp2.input_dependent",
    f"holds when the relative spread (sample standard deviation / mean) of the trunk energy over images exceeds {INPUT_SPREAD:g}, else fails",
    _read_spread,
    lambda spread: HOLDS if spread > INPUT_SPREAD else FAILS,
    "the network is a function of its input (h(full) moves with the image)",
)


def _decide_basis(mobius: str, walsh: str) -> str:
    if UNRESOLVED in (mobius, walsh):
        return UNRESOLVED
    if mobius in (HOLDS, FAILS) and walsh in (HOLDS, FAILS):
        return HOLDS if mobius == walsh else FAILS
    return CANNOT_TELL


BASIS = Rule(
    "exp2.basis",
    "holds when the Möbius and the Walsh shape verdicts are both decided (holds or fails) and agree, fails when both are "
    "decided and disagree, else cannot tell; unresolved when either basis has an order within its round-off floor",
    lambda reading: {
        "mobius": reading.decision_of(f"shape.{reading.parts[-1]}"),
        "walsh": reading.decision_of(f"walsh.shape.{reading.parts[-1]}"),
    },
    _decide_basis,
    "{projection} projection: the Möbius shape reading (where the energy sits against subset counting) holds in the Walsh basis too",
)


def _read_null(reading: Reading) -> dict[str, Any]:
    """Both runs' κ CIs, their unresolved orders and whether the null is a constant function, from the comparison's
    copy of the two summaries' numbers; the entry's effect must be this run's κ."""
    projection = reading.parts[-1]
    reading.copied("effect", reading.at("kappa", "this_run", projection))
    return {
        "ours": reading.interval("kappa", "this_run", projection),
        "theirs": reading.interval("kappa", "null_run", projection),
        "unresolved": [reading.at("unresolved_orders", run, projection) for run in ("this_run", "null_run")],
        "constant": reading.at("null_constant"),
    }


def _decide_null(ours: tuple[float, float], theirs: tuple[float, float], unresolved: list, constant: bool) -> str:
    if any(unresolved):
        return UNRESOLVED
    return CANNOT_TELL if constant or not (ours[1] < theirs[0] or theirs[1] < ours[0]) else HOLDS


NULL = Rule(
    "exp2.null",
    "unresolved when either run has an order within the round-off floor; cannot tell when the null is a constant function "
    "of its input; else holds when the 95 % CIs of κ^v are disjoint, cannot tell when they overlap",
    _read_null,
    _decide_null,
    "{projection} projection: training changes the spectrum (κ differs from the random-init null's)",
)


def projection_verdicts(summary: dict[str, Any], projection: str, basis: str = "mobius") -> list[dict[str, Any]]:
    """``resolved``, ``shape`` and ``peak`` of one projection (the latter two ``unresolved`` when the floor is not cleared); with
    ``basis="walsh"`` the same rules on the summary's Walsh block, their ids prefixed ``walsh.``."""
    walsh = basis == "walsh"
    source = summary["walsh"] if walsh else summary
    block, null, floor = source["projections"][projection], summary["binomial_null"], source["roundoff"][projection]
    tag, named, energy = (
        ("walsh.", f"{projection} projection, Walsh basis", "W_k") if walsh else ("", f"{projection} projection", "E_k")
    )
    num_blocks, tied = null["num_blocks"], _null_peaks(null)
    unresolved = floor["unresolved_orders"]
    resolved = (WALSH_RESOLVED if walsh else RESOLVED).verdict(
        f"{tag}resolved.{projection}",
        summary,
        fields={"named": named},
        parameters={"floor_margin": FLOOR_MARGIN},
        statistic={
            "name": f"smallest mean {energy} / round-off floor over k ≥ 1",
            "value": float(min(floor["floor_ratio"][1:])),
        },
        notes=[f"unresolved orders: {', '.join(map(str, unresolved))}; {UNRESOLVED_NOTE}"] if unresolved else [],
    )
    kappa_shift = {key: block["kappa"][key] - null["kappa"] for key in ("mean", "ci_low", "ci_high")}
    _, shape_notes = shape_decision(
        side(block["kappa"]["ci_low"], block["kappa"]["ci_high"], null["kappa"]),
        side(block["c_le3"]["ci_low"], block["c_le3"]["ci_high"], null["c_le3"]),
    )
    notes = [
        f"κ/L = {block['kappa']['mean'] / num_blocks:.3f} (null {null['kappa'] / num_blocks:.3f}); C≤3 = {100 * block['c_le3']['mean']:.1f} % "
        f"[{100 * block['c_le3']['ci_low']:.1f}, {100 * block['c_le3']['ci_high']:.1f}] (null {100 * null['c_le3']:.1f} %)"
    ] + shape_notes
    shape = SHAPE.verdict(
        f"{tag}shape.{projection}",
        summary,
        fields={"named": named},
        effect=effect_from_stat("κ − null κ", kappa_shift),
        notes=[notes[0], UNRESOLVED_NOTE] if unresolved else notes,
    )
    tie = (
        f"the null's peak is tied at k = {' and '.join(map(str, tied))}"
        if len(tied) > 1
        else f"the null peaks at k = {tied[0]}"
    )
    peak = PEAK.verdict(
        f"{tag}peak.{projection}",
        summary,
        fields={"named": named},
        effect=effect_from_stat("per-image peak order", block["peak_order"]),
        parameters={"null_peak_orders": tied},
        notes=[f"mean spectrum peaks at k = {block['mean_spectrum_peak_order']}" + f"; {tie}"]
        + ([UNRESOLVED_NOTE] if unresolved else []),
    )
    if walsh:
        return [resolved, shape, peak]
    _, middle_notes = middle_peak_decision(
        block["peak_order"],
        side(block["kappa"]["ci_low"], block["kappa"]["ci_high"], null["kappa"]),
        side(block["c_le3"]["ci_low"], block["c_le3"]["ci_high"], null["c_le3"]),
        num_blocks,
    )
    middle = MIDDLE_PEAK.verdict(
        f"middle_peak.{projection}",
        summary,
        fields={"projection": projection},
        effect=effect_from_stat("per-image peak order", block["peak_order"]),
        parameters={"middle_orders": [LOW_ORDERS + 1, num_blocks - 1]},
        notes=middle_notes + [notes[0]] + ([UNRESOLVED_NOTE] if unresolved else []),
    )
    return [resolved, shape, peak, middle]


def basis_verdicts(summary: dict[str, Any], decided: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``walsh.*`` (the shape and peak rules in the Walsh basis) and ``basis.*`` (the Möbius shape reading holds in the Walsh
    basis too), per projection, from the summary's Walsh block and the Möbius verdicts already ``decided``."""
    block = [entry for projection in PROJECTIONS for entry in projection_verdicts(summary, projection, "walsh")]
    by_id = {entry["id"]: entry for entry in decided + block}
    parts = {**summary, "verdicts": decided + block}  # the shape verdicts it reads, as the summary will hold them
    for projection in PROJECTIONS:
        mobius, walsh = by_id[f"shape.{projection}"]["decision"], by_id[f"walsh.shape.{projection}"]["decision"]
        ratio = summary["walsh"]["cancellation_ratio"][projection]
        block.append(
            BASIS.verdict(
                f"basis.{projection}",
                parts,
                fields={"projection": projection},
                effect=None
                if ratio is None
                else effect_from_stat("cancellation ratio Σ_{k≥1} E_k / ‖h(full) − h(∅)‖²", ratio),
                notes=[f"Möbius shape: {mobius}; Walsh shape: {walsh}"]
                + (["the cancellation ratio is undefined on every image (h(full) = h(∅))"] if ratio is None else []),
            )
        )
    return block


def verdicts(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The verdicts block (see the module docstring)."""
    block = [entry for projection in PROJECTIONS for entry in projection_verdicts(summary, projection)]
    unresolved = any(summary["roundoff"][projection]["unresolved_orders"] for projection in PROJECTIONS)
    block.append(
        DIFFER.verdict(
            "projections_differ",
            summary,
            effect=effect_from_stat("κ^s − κ^v, paired per image", summary["kappa_scalar_minus_vector"]),
            parameters={"alpha": ALPHA},
            notes=[UNRESOLVED_NOTE] if unresolved else [],
        )
    )
    spread = summary["input_dependence"]
    block.append(
        INPUT.verdict(
            "input_dependent",
            summary,
            statistic={
                "name": "relative spread of the trunk energy over images",
                "value": spread["trunk_energy_relative_spread"],
            },
            parameters={"threshold": INPUT_SPREAD},
            notes=[f"{spread['distinct_predictions']} distinct predicted classes"],
        )
    )
    if "walsh" in summary:
        block += basis_verdicts(summary, block)
    return block


def check_random_init_null(
    summary: dict[str, Any], summary_path: Path, null: dict[str, Any], null_path: Path, flag: str = "--compare-summary"
) -> None:
    """Refuse a null that is not a random-init run of the same architecture on (the first N images of) the same sample list."""
    config, null_config = summary["config"], null["config"]
    if Path(null_path).resolve() == Path(summary_path).resolve() or null_config.get("run_id") == config.get("run_id"):
        raise PipelineError(
            f"{null_path}: is the same run as {summary_path}; pass to {flag} the summary of the same step run with --weights random"
        )
    if null_config.get("weights") != "random":
        raise PipelineError(
            f"{null_path}: a run with weights {null_config.get('weights')}, not a random-init null; pass to {flag} the "
            f"summary of the same step run with --weights random"
        )
    if null_config.get("arch") != config.get("arch"):
        raise PipelineError(
            f"{null_path}: a {null_config.get('arch')} run but {summary_path} is {config.get('arch')}; run the null "
            f"with --arch {config.get('arch')} --weights random"
        )
    if null_config.get("sample_list_sha256") != config.get("sample_list_sha256") or null_config.get(
        "num_images", 0
    ) > config.get("num_images", 0):
        raise PipelineError(
            f"{null_path}: evaluated another sample list ({null_config.get('sample_index')}, {null_config.get('num_images')} images) than {summary_path} "
            f"({config.get('sample_index')}, {config.get('num_images')} images); run the null on the same list (--limit N for its first N images)"
        )


def null_sources(summary: dict[str, Any], null: dict[str, Any]) -> dict[str, Any]:
    """What the comparison of a run with its random-init null reads of the two summaries: each run's κ CI and unresolved
    orders per projection, and whether the null is a constant function of its input (its ``input_dependent`` fails)."""
    runs = {"this_run": summary, "null_run": null}
    return {
        "kappa": {name: {p: run["projections"][p]["kappa"] for p in PROJECTIONS} for name, run in runs.items()},
        "unresolved_orders": {
            name: {p: run["roundoff"][p]["unresolved_orders"] for p in PROJECTIONS} for name, run in runs.items()
        },
        "null_constant": next(entry for entry in null["verdicts"] if entry["id"] == "input_dependent")["decision"]
        == FAILS,
    }


def null_verdicts(summary: dict[str, Any], null: dict[str, Any]) -> list[dict[str, Any]]:
    """The run against its random-init null (:data:`NULL`), one verdict per projection, decided on :func:`null_sources`
    (which the comparison file keeps beside them)."""
    sources = null_sources(summary, null)
    calibration = null["config"].get("batchnorm_calibration")
    label = "random init" + (
        f", batch-norm statistics re-estimated on {calibration['images']} sample images" if calibration else ""
    )
    block = []
    for projection in PROJECTIONS:
        ours, theirs = summary["projections"][projection]["kappa"], null["projections"][projection]["kappa"]
        unresolved = [
            name
            for name, source in (("the null", null), ("this run", summary))
            if source["roundoff"][projection]["unresolved_orders"]
        ]
        disjoint = ours["ci_high"] < theirs["ci_low"] or theirs["ci_high"] < ours["ci_low"]
        notes = [
            f"null ({label}): κ = {theirs['mean']:.3g} [{theirs['ci_low']:.3g}, {theirs['ci_high']:.3g}], N = {null['num_valid']}"
        ]
        if unresolved:
            notes.append(f"{' and '.join(unresolved)} has orders within the round-off floor; {UNRESOLVED_NOTE}")
        elif sources["null_constant"]:
            notes.append("the null is a constant function of its input: it is no null")
        elif disjoint:
            notes.append(
                f"training moves κ {'up' if ours['mean'] > theirs['mean'] else 'down'} by {ours['mean'] - theirs['mean']:+.3g}"
            )
        block.append(
            NULL.verdict(
                f"null.{projection}",
                sources,
                fields={"projection": projection},
                effect=effect_from_stat("κ, this run", ours),
                notes=notes,
            )
        )
    return block
