"""Experiment 2's spectrum verdicts (experiment_2/spectrum/verdicts.py) on hand-built summaries, compared whole to
hand-written entries, so a changed id, claim, rule, statistic, effect, parameter or note shows: a resolved projection
whose every rule holds and an unresolved one (two orders under the floor) beside it, their Walsh entries (one resolved,
one with a single unresolved order) and the basis entries (a cancellation ratio and none); a null tied at two peak
orders (odd L) and one peaking at one (even L, also from a summary written before ``peak_orders``); the paired κ^s − κ^v
and the input rule at their thresholds; every side combination of the shape and middle-peak rules with their notes and
every place of the peak; and the summary statistics under them (the floor check, the input dependence, the paired
difference) on planted arrays: float32 inputs averaged in float64, a floor exactly 0, one image against two, a mean
exactly 0. Written against the survivors of `make mutation MODULES=experiment_2/spectrum/verdicts.py`."""

from __future__ import annotations

import math
import statistics
import warnings
from math import comb
from pathlib import Path

import numpy as np
import pytest

from experiment_1.errors import PipelineError
from experiment_1.mobius import binomial_null
from experiment_1.report import ALPHA, CANNOT_TELL, FAILS, HOLDS, UNRESOLVED, bootstrap_mean_ci, by_id
from experiment_2.spectrum.verdicts import (
    BASIS,
    DIFFER,
    FLOOR_MARGIN,
    INPUT,
    INPUT_SPREAD,
    LOW_ORDERS,
    MIDDLE_PEAK,
    PEAK,
    RESOLVED,
    SHAPE,
    UNRESOLVED_NOTE,
    WALSH_RESOLVED,
    check_random_init_null,
    floor_check,
    input_dependence,
    middle_peak_decision,
    paired_kappa_difference,
    projection_verdicts,
    shape_decision,
    verdicts,
)

L = 9
NULL = binomial_null(L)  # κ = 2304/511 ≈ 4.509 (κ/L 0.501), C≤3 = 129/511 ≈ 25.2 %, peak tied at 4 and 5


def stat(mean: float, low: float, high: float) -> dict:
    return {"mean": mean, "ci_low": low, "ci_high": high}


def effect(name: str, value: dict) -> dict:
    return {
        "name": name,
        "value": value["mean"],
        "ci_low": value["ci_low"],
        "ci_high": value["ci_high"],
        "confidence": 1 - ALPHA,
        "percent": False,
    }


def shift(value: dict, by: float) -> dict:
    return {key: value[key] - by for key in ("mean", "ci_low", "ci_high")}


# vector: κ above the null's and C≤3 below (higher orders), the per-image peak past the tied orders and in the middle
VECTOR = {
    "kappa": stat(5.4, 5.0, 5.8),
    "c_le3": stat(0.125, 0.1, 0.15),
    "peak_order": stat(6.0, 5.5, 6.5),
    "mean_spectrum_peak_order": 6,
}
# scalar: κ below and C≤3 above (lower orders), the peak at the low orders — every reading of it unresolved
SCALAR = {
    "kappa": stat(3.6, 3.0, 4.0),
    "c_le3": stat(0.5, 0.4, 0.6),
    "peak_order": stat(2.0, 1.5, 2.5),
    "mean_spectrum_peak_order": 2,
}
# the order-0 ratio is the smallest of all but is not an interaction order; order 1's is the smallest of k ≥ 1
VECTOR_FLOOR = {"floor_ratio": [10.0, 2000.0] + [4000.0] * (L - 1), "unresolved_orders": []}
SCALAR_FLOOR = {"floor_ratio": [5000.0, 800.0, 300.0] + [5000.0] * (L - 2), "unresolved_orders": [1, 2]}
# Walsh: the vector peak CI is exactly the null's tied range (the peak rule fails); the scalar has one unresolved order
WALSH_VECTOR = {
    "kappa": stat(5.4, 5.0, 5.8),
    "c_le3": stat(0.125, 0.1, 0.15),
    "peak_order": stat(4.5, 4.0, 5.0),
    "mean_spectrum_peak_order": 5,
}
WALSH_VECTOR_FLOOR = {"floor_ratio": [1e6, 3000.0, 1500.0] + [3000.0] * (L - 2), "unresolved_orders": []}
WALSH_SCALAR_FLOOR = {"floor_ratio": [1e6] * 3 + [20.0] + [1e6] * (L - 3), "unresolved_orders": [3]}
CANCELLATION = stat(12.0, 10.0, 14.0)
DIFFERENCE = stat(0.3, 0.1, 0.5)


def summary(walsh: bool = True) -> dict:
    planted = {
        "binomial_null": NULL,
        "projections": {"vector": VECTOR, "scalar": SCALAR},
        "roundoff": {"vector": VECTOR_FLOOR, "scalar": SCALAR_FLOOR},
        "kappa_scalar_minus_vector": DIFFERENCE,
        "input_dependence": {"distinct_predictions": 7, "trunk_energy_relative_spread": 0.02},
    }
    if walsh:
        planted["walsh"] = {
            "projections": {"vector": WALSH_VECTOR, "scalar": SCALAR},
            "roundoff": {"vector": WALSH_VECTOR_FLOOR, "scalar": WALSH_SCALAR_FLOOR},
            "cancellation_ratio": {"vector": CANCELLATION, "scalar": None},
        }
    return planted


VECTOR_SHAPE_NOTE = "κ/L = 0.600 (null 0.501); C≤3 = 12.5 % [10.0, 15.0] (null 25.2 %)"
SCALAR_SHAPE_NOTE = "κ/L = 0.400 (null 0.501); C≤3 = 50.0 % [40.0, 60.0] (null 25.2 %)"
TIED = "the null's peak is tied at k = 4 and 5"


def entry(verdict_id: str, claim: str, decision: str, rule: str, **fields) -> dict:
    return {
        "id": verdict_id,
        "claim": claim,
        "decision": decision,
        "rule": rule,
        "parameters": fields.get("parameters", {}),
        "statistic": fields.get("statistic"),
        "effect": fields.get("effect"),
        "test": None,
        "seed": None,
        "notes": fields.get("notes", []),
    }


EXPECTED = {
    "resolved.vector": entry(
        "resolved.vector",
        "vector projection: every interaction order clears the round-off floor",
        HOLDS,
        RESOLVED.text,
        parameters={"floor_margin": FLOOR_MARGIN},
        statistic={"name": "smallest mean E_k / round-off floor over k ≥ 1", "value": 2000.0},
    ),
    "shape.vector": entry(
        "shape.vector",
        "vector projection: the energy sits at higher orders than subset counting (the binomial null) predicts",
        HOLDS,
        SHAPE.text,
        effect=effect("κ − null κ", shift(VECTOR["kappa"], NULL["kappa"])),
        notes=[VECTOR_SHAPE_NOTE, "the energy sits at higher orders than subset counting predicts"],
    ),
    "peak.vector": entry(
        "peak.vector",
        "vector projection: the spectrum peaks at another order than subset counting predicts",
        HOLDS,
        PEAK.text,
        effect=effect("per-image peak order", VECTOR["peak_order"]),
        parameters={"null_peak_orders": [4, 5]},
        notes=[f"mean spectrum peaks at k = 6; {TIED}"],
    ),
    "middle_peak.vector": entry(
        "middle_peak.vector",
        "vector projection: the spectrum peaks at a middle order, with no low-order bias (the original study's claim; "
        "Möbius basis)",
        HOLDS,
        MIDDLE_PEAK.text,
        effect=effect("per-image peak order", VECTOR["peak_order"]),
        parameters={"middle_orders": [4, 8]},
        notes=[
            "per-image peak order 6 [5.5, 6.5] lies within the middle orders 4–8",
            "κ lies above subset counting's: no low-order bias",
            VECTOR_SHAPE_NOTE,
        ],
    ),
    "resolved.scalar": entry(
        "resolved.scalar",
        "scalar projection: every interaction order clears the round-off floor",
        UNRESOLVED,
        RESOLVED.text,
        parameters={"floor_margin": FLOOR_MARGIN},
        statistic={"name": "smallest mean E_k / round-off floor over k ≥ 1", "value": 300.0},
        notes=[f"unresolved orders: 1, 2; {UNRESOLVED_NOTE}"],
    ),
    "shape.scalar": entry(  # the rule alone would fail it (lower orders): its note is left out with the decision
        "shape.scalar",
        "scalar projection: the energy sits at higher orders than subset counting (the binomial null) predicts",
        UNRESOLVED,
        SHAPE.text,
        effect=effect("κ − null κ", shift(SCALAR["kappa"], NULL["kappa"])),
        notes=[SCALAR_SHAPE_NOTE, UNRESOLVED_NOTE],
    ),
    "peak.scalar": entry(  # the rule alone would hold it (below the tied orders)
        "peak.scalar",
        "scalar projection: the spectrum peaks at another order than subset counting predicts",
        UNRESOLVED,
        PEAK.text,
        effect=effect("per-image peak order", SCALAR["peak_order"]),
        parameters={"null_peak_orders": [4, 5]},
        notes=[f"mean spectrum peaks at k = 2; {TIED}", UNRESOLVED_NOTE],
    ),
    "middle_peak.scalar": entry(  # the rule alone would fail it (a low-order peak and bias)
        "middle_peak.scalar",
        "scalar projection: the spectrum peaks at a middle order, with no low-order bias (the original study's claim; "
        "Möbius basis)",
        UNRESOLVED,
        MIDDLE_PEAK.text,
        effect=effect("per-image peak order", SCALAR["peak_order"]),
        parameters={"middle_orders": [4, 8]},
        notes=[
            "per-image peak order 2 [1.5, 2.5] lies at the low orders",
            "κ below and C≤3 above subset counting's: a low-order bias",
            SCALAR_SHAPE_NOTE,
            UNRESOLVED_NOTE,
        ],
    ),
    "projections_differ": entry(
        "projections_differ",
        "the scalar (predicted-class) spectrum differs from the vector one (κ^s ≠ κ^v)",
        UNRESOLVED,  # the scalar projection is: its CI excluding 0 decides nothing
        DIFFER.text,
        effect=effect("κ^s − κ^v, paired per image", DIFFERENCE),
        parameters={"alpha": ALPHA},
        notes=[UNRESOLVED_NOTE],
    ),
    "input_dependent": entry(
        "input_dependent",
        "the network is a function of its input (h(full) moves with the image)",
        HOLDS,
        INPUT.text,
        statistic={"name": "relative spread of the trunk energy over images", "value": 0.02},
        parameters={"threshold": INPUT_SPREAD},
        notes=["7 distinct predicted classes"],
    ),
    "walsh.resolved.vector": entry(
        "walsh.resolved.vector",
        "vector projection, Walsh basis: every interaction order clears the round-off floor",
        HOLDS,
        WALSH_RESOLVED.text,
        parameters={"floor_margin": FLOOR_MARGIN},
        statistic={"name": "smallest mean W_k / round-off floor over k ≥ 1", "value": 1500.0},
    ),
    "walsh.shape.vector": entry(
        "walsh.shape.vector",
        "vector projection, Walsh basis: the energy sits at higher orders than subset counting (the binomial null) "
        "predicts",
        HOLDS,
        SHAPE.text,
        effect=effect("κ − null κ", shift(WALSH_VECTOR["kappa"], NULL["kappa"])),
        notes=[VECTOR_SHAPE_NOTE, "the energy sits at higher orders than subset counting predicts"],
    ),
    "walsh.peak.vector": entry(
        "walsh.peak.vector",
        "vector projection, Walsh basis: the spectrum peaks at another order than subset counting predicts",
        FAILS,  # its CI is exactly the tied range 4 … 5
        PEAK.text,
        effect=effect("per-image peak order", WALSH_VECTOR["peak_order"]),
        parameters={"null_peak_orders": [4, 5]},
        notes=[f"mean spectrum peaks at k = 5; {TIED}"],
    ),
    "walsh.resolved.scalar": entry(
        "walsh.resolved.scalar",
        "scalar projection, Walsh basis: every interaction order clears the round-off floor",
        UNRESOLVED,
        WALSH_RESOLVED.text,
        parameters={"floor_margin": FLOOR_MARGIN},
        statistic={"name": "smallest mean W_k / round-off floor over k ≥ 1", "value": 20.0},
        notes=[f"unresolved orders: 3; {UNRESOLVED_NOTE}"],
    ),
    "walsh.shape.scalar": entry(
        "walsh.shape.scalar",
        "scalar projection, Walsh basis: the energy sits at higher orders than subset counting (the binomial null) "
        "predicts",
        UNRESOLVED,
        SHAPE.text,
        effect=effect("κ − null κ", shift(SCALAR["kappa"], NULL["kappa"])),
        notes=[SCALAR_SHAPE_NOTE, UNRESOLVED_NOTE],
    ),
    "walsh.peak.scalar": entry(
        "walsh.peak.scalar",
        "scalar projection, Walsh basis: the spectrum peaks at another order than subset counting predicts",
        UNRESOLVED,
        PEAK.text,
        effect=effect("per-image peak order", SCALAR["peak_order"]),
        parameters={"null_peak_orders": [4, 5]},
        notes=[f"mean spectrum peaks at k = 2; {TIED}", UNRESOLVED_NOTE],
    ),
    "basis.vector": entry(
        "basis.vector",
        "vector projection: the Möbius shape reading (where the energy sits against subset counting) holds in the "
        "Walsh basis too",
        HOLDS,
        BASIS.text,
        effect=effect("cancellation ratio Σ_{k≥1} E_k / ‖h(full) − h(∅)‖²", CANCELLATION),
        notes=["Möbius shape: holds; Walsh shape: holds"],
    ),
    "basis.scalar": entry(
        "basis.scalar",
        "scalar projection: the Möbius shape reading (where the energy sits against subset counting) holds in the "
        "Walsh basis too",
        UNRESOLVED,
        BASIS.text,
        notes=[
            "Möbius shape: unresolved; Walsh shape: unresolved",
            "the cancellation ratio is undefined on every image (h(full) = h(∅))",
        ],
    ),
}
MOBIUS_IDS = [f"{rule}.{p}" for p in ("vector", "scalar") for rule in ("resolved", "shape", "peak", "middle_peak")]
WALSH_IDS = [f"walsh.{rule}.{p}" for p in ("vector", "scalar") for rule in ("resolved", "shape", "peak")]


def test_the_whole_block_in_order_and_by_hand() -> None:
    block = verdicts(summary())
    assert [e["id"] for e in block] == [
        *MOBIUS_IDS,
        "projections_differ",
        "input_dependent",
        *WALSH_IDS,
        "basis.vector",
        "basis.scalar",
    ]
    for got in block:
        assert got == EXPECTED[got["id"]], got["id"]


def test_a_summary_without_walsh_spectra_has_no_walsh_or_basis_entries() -> None:
    block = verdicts(summary(walsh=False))
    assert [e["id"] for e in block] == [*MOBIUS_IDS, "projections_differ", "input_dependent"]
    assert block == [EXPECTED[e["id"]] for e in block]


def resolved_summary(difference: dict) -> dict:
    planted = summary(walsh=False)
    planted["roundoff"] = {"vector": VECTOR_FLOOR, "scalar": VECTOR_FLOOR}
    planted["kappa_scalar_minus_vector"] = difference
    return planted


TINY = np.nextafter(0.0, 1.0)


@pytest.mark.parametrize(
    ("difference", "decision"),
    [
        (stat(1.0, 0.5, 1.5), HOLDS),  # excludes 0 (and contains 1)
        (stat(0.0, -0.5, 0.5), CANNOT_TELL),  # contains 0 (and excludes 1)
        (stat(0.5, 0.0, 1.0), CANNOT_TELL),  # a bound exactly at 0 contains it
        (stat(0.5, TINY, 1.0), HOLDS),  # just above
        (stat(-0.5, -1.0, 0.0), CANNOT_TELL),
        (stat(-0.5, -1.0, -TINY), HOLDS),  # just below
    ],
)
def test_projections_differ_at_zero_when_both_projections_are_resolved(difference: dict, decision: str) -> None:
    got = by_id(verdicts(resolved_summary(difference)))["projections_differ"]
    assert got == {
        **EXPECTED["projections_differ"],
        "decision": decision,
        "effect": effect("κ^s − κ^v, paired per image", difference),
        "notes": [],
    }


@pytest.mark.parametrize(
    ("spread", "decision"),
    [
        (INPUT_SPREAD, FAILS),  # exactly the threshold does not exceed it
        (np.nextafter(INPUT_SPREAD, 1.0), HOLDS),
        (np.nextafter(INPUT_SPREAD, 0.0), FAILS),
        (0.0, FAILS),
    ],
)
def test_the_input_rule_at_its_threshold(spread: float, decision: str) -> None:
    planted = summary(walsh=False)
    planted["input_dependence"] = {"distinct_predictions": 1, "trunk_energy_relative_spread": spread}
    got = by_id(verdicts(planted))["input_dependent"]
    assert got == {
        **EXPECTED["input_dependent"],
        "decision": decision,
        "statistic": {"name": "relative spread of the trunk energy over images", "value": spread},
        "notes": ["1 distinct predicted classes"],
    }


@pytest.mark.parametrize("recorded_ties", [True, False])
def test_a_null_peaking_at_one_order_at_even_l_also_from_a_summary_without_peak_orders(recorded_ties: bool) -> None:
    null = binomial_null(8)  # κ = 1024/255 (κ/L 0.502), C≤3 = 92/255 ≈ 36.1 %, one peak at 4
    if not recorded_ties:
        del null["peak_orders"]  # written before the ties were: the single lowest peak order is read
    planted = {
        "binomial_null": null,
        "projections": {"vector": VECTOR},
        "roundoff": {"vector": VECTOR_FLOOR},
    }
    resolved, shape, peak, middle = projection_verdicts(planted, "vector")
    note = "κ/L = 0.675 (null 0.502); C≤3 = 12.5 % [10.0, 15.0] (null 36.1 %)"
    assert shape["notes"] == [note, "the energy sits at higher orders than subset counting predicts"]
    assert peak == {
        **EXPECTED["peak.vector"],
        "parameters": {"null_peak_orders": [4]},
        "notes": ["mean spectrum peaks at k = 6; the null peaks at k = 4"],
    }
    assert middle == {
        **EXPECTED["middle_peak.vector"],
        "parameters": {"middle_orders": [4, 7]},
        "notes": [
            "per-image peak order 6 [5.5, 6.5] lies within the middle orders 4–7",
            "κ lies above subset counting's: no low-order bias",
            note,
        ],
    }
    assert resolved == EXPECTED["resolved.vector"]


WIDER = (
    "κ and C≤3 both lie on the same side of the null: the spectrum is wider than subset counting (more weight at both "
    "ends), not shifted to higher or lower orders"
)
NARROWER = WIDER.replace("wider", "narrower")


@pytest.mark.parametrize(
    ("kappa", "c_le3", "expected"),
    [
        (1, -1, (HOLDS, ["the energy sits at higher orders than subset counting predicts"])),
        (-1, 1, (FAILS, ["the energy sits at lower orders than subset counting predicts"])),
        (1, 1, (CANNOT_TELL, [WIDER])),
        (-1, -1, (CANNOT_TELL, [NARROWER])),
        (0, 0, (CANNOT_TELL, [])),
        (0, 1, (CANNOT_TELL, [])),
        (0, -1, (CANNOT_TELL, [])),
        (1, 0, (CANNOT_TELL, [])),
        (-1, 0, (CANNOT_TELL, [])),
    ],
)
def test_the_shape_rule_and_its_note_in_every_combination(kappa: int, c_le3: int, expected: tuple) -> None:
    assert shape_decision(kappa, c_le3) == expected


ABOVE = "κ lies above subset counting's: no low-order bias"
BIASED = "κ below and C≤3 above subset counting's: a low-order bias"
OPEN = "κ's CI does not lie above subset counting's: a low-order bias is not excluded"


@pytest.mark.parametrize(
    ("kappa", "c_le3", "decision", "reading"),
    [
        (1, -1, HOLDS, ABOVE),
        (1, 0, HOLDS, ABOVE),
        (1, 1, HOLDS, ABOVE),  # C≤3 above too: wider, not biased
        (0, -1, CANNOT_TELL, OPEN),
        (0, 0, CANNOT_TELL, OPEN),
        (0, 1, CANNOT_TELL, OPEN),  # C≤3 above but κ's CI covers the null's: no bias shown, none excluded
        (-1, -1, CANNOT_TELL, OPEN),
        (-1, 0, CANNOT_TELL, OPEN),  # κ below but C≤3's CI covers the null's
        (-1, 1, FAILS, BIASED),
    ],
)
def test_the_bias_part_of_the_middle_peak_rule_in_every_combination(
    kappa: int, c_le3: int, decision: str, reading: str
) -> None:
    peak = stat(6.0, 5.5, 6.5)
    assert middle_peak_decision(peak, kappa, c_le3, L) == (
        decision,
        ["per-image peak order 6 [5.5, 6.5] lies within the middle orders 4–8", reading],
    )


AFTER, BEFORE = np.nextafter(float(LOW_ORDERS), 9.0), np.nextafter(float(L), 0.0)


@pytest.mark.parametrize(
    ("peak", "kappa", "decision", "place"),
    [
        (stat(6.0, 4.0, 8.0), 1, HOLDS, "6 [4, 8] lies within the middle orders 4–8"),  # exactly the middle orders
        (stat(2.0, 1.0, 3.0), 1, FAILS, "2 [1, 3] lies at the low orders"),  # its top exactly at LOW_ORDERS
        (stat(2.0, 1.0, 3.0), 0, FAILS, "2 [1, 3] lies at the low orders"),  # a low peak fails whatever κ says
        (stat(3.0, 1.0, AFTER), 1, CANNOT_TELL, "3 [1, 3] lies partly outside the middle orders 4–8"),
        (stat(9.0, 9.0, 9.0), 1, FAILS, "9 [9, 9] lies at the top order"),  # its bottom exactly at L
        (stat(9.0, 9.0, 9.5), 0, FAILS, "9 [9, 9.5] lies at the top order"),
        (stat(8.5, BEFORE, 9.0), 1, CANNOT_TELL, "8.5 [9, 9] lies partly outside the middle orders 4–8"),
        (stat(4.0, 3.5, 4.5), 1, CANNOT_TELL, "4 [3.5, 4.5] lies partly outside the middle orders 4–8"),
        (stat(8.0, 7.5, 8.5), -1, CANNOT_TELL, "8 [7.5, 8.5] lies partly outside the middle orders 4–8"),
        (stat(6.0, 5.0, 7.0), -1, CANNOT_TELL, "6 [5, 7] lies within the middle orders 4–8"),  # middle, κ below
    ],
)
def test_every_place_of_the_peak_with_its_note(peak: dict, kappa: int, decision: str, place: str) -> None:
    reading = ABOVE if kappa > 0 else OPEN
    assert middle_peak_decision(peak, kappa, 0, L) == (decision, [f"per-image peak order {place}", reading])


# --- the summary statistics under the verdicts, on planted arrays -------------------------------------------------------

VARIANCE = 2.0**-20  # a power of two: every floor below is exact


def mobius_floor(num_blocks: int, variance: float = VARIANCE) -> list[float]:
    return [comb(num_blocks, k) * 2.0**k * variance for k in range(num_blocks + 1)]


def test_the_floor_block_whole_with_order_0_and_order_1_below_the_margin() -> None:
    floors = np.array(mobius_floor(3))
    vector_ratio = [512.0, 1024.0, 2048.0, 4096.0]  # order 0 under the margin: not an interaction order
    scalar_ratio = [4096.0, 512.0, 1024.0, 1000.0]  # order 1 under it; order 3 exactly at it (resolved)
    arrays = {
        "energy_vector": (np.array(vector_ratio) * floors)[None, :],
        "energy_scalar": (np.array(scalar_ratio) * floors)[None, :],
        "roundoff_variance_vector": np.array([VARIANCE]),
        "roundoff_variance_scalar": np.array([VARIANCE]),
    }
    assert floor_check(arrays, np.array([True]), 3) == {
        "floor_margin": FLOOR_MARGIN,
        "vector": {"floor_ratio": vector_ratio, "resolved": [False, True, True, True], "unresolved_orders": []},
        "scalar": {"floor_ratio": scalar_ratio, "resolved": [True, False, True, True], "unresolved_orders": [1]},
    }


@pytest.mark.parametrize("basis", ["mobius", "walsh"])
def test_float32_energies_and_rounding_variances_are_averaged_in_float64(basis: str) -> None:
    """Over two images, 1 and 1 + 2^-23 average to 1 + 2^-24 in float64; float32 rounds the sum 2 + 2^-23 to 2."""
    pair = np.array([1.0, 1.0 + 2.0**-23], dtype=np.float32)
    prefix = "walsh_" if basis == "walsh" else ""
    energy = np.stack([pair] * 3, axis=1)  # (2 images, L + 1 = 3 orders): every order's mean is 1 + 2^-24
    arrays = {}
    for projection in ("vector", "scalar"):
        arrays[f"{prefix}energy_{projection}"] = energy * np.float32(2.0**-10)
        arrays[f"roundoff_variance_{projection}"] = pair * np.float32(VARIANCE)
    block = floor_check(arrays, np.array([True, True]), 2, basis=basis)
    # (1 + 2^-24)·2^-10 over (1 + 2^-24)·2^-20·(C(2,k)·2^k, or C(2,k)/2^2): the factor 1 + 2^-24 cancels exactly, which
    # an energy or a variance averaged in float32 (to 2^-10 or 2^-20) would not
    expected = [4096.0, 2048.0, 4096.0] if basis == "walsh" else [1024.0, 256.0, 256.0]
    assert block["vector"]["floor_ratio"] == block["scalar"]["floor_ratio"] == expected


def test_a_zero_floor_resolves_every_order_without_a_warning() -> None:
    """Rounding variance 0 (an exact network): every order clears a zero floor, an order of zero energy too; the division
    by zero it guards warns nothing (raised here as an error)."""
    energy = np.array([[0.0, 1.0, 0.0]])
    arrays = {
        "energy_vector": energy,
        "energy_scalar": energy,
        "roundoff_variance_vector": np.array([0.0]),
        "roundoff_variance_scalar": np.array([0.0]),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        block = floor_check(arrays, np.array([True]), 2)
    inf = float("inf")
    expected = {"floor_ratio": [inf, inf, inf], "resolved": [True, True, True], "unresolved_orders": []}
    assert block == {"floor_margin": FLOOR_MARGIN, "vector": expected, "scalar": expected}


def trunk_arrays(trunk: list[float], dtype: type = np.float64) -> dict[str, np.ndarray]:
    energy = np.zeros((len(trunk), 3), dtype=dtype)
    energy[:, 0] = trunk
    energy[:, 1] = 5.0  # the other orders are not read
    return {"energy_vector": energy, "full_prediction": np.arange(len(trunk)) % 2}


@pytest.mark.parametrize(
    ("trunk", "valid", "spread", "distinct"),
    [
        # float32 0.5 and 0.5 + 2^-24 in float64: mean 0.5 + 2^-25, sample std 2^-25·√2 (float32 would round the mean
        # to 0.5)
        ([0.5, 0.5 + 2.0**-24, 7.0], [True, True, False], 2.0**-25 * math.sqrt(2.0) / (0.5 + 2.0**-25), 2),
        ([2.0, 6.0], [True, True], math.sqrt(8.0) / 4.0, 2),  # mean 4, sample std √8 (the population SD would be 2)
        ([0.0, 0.0], [True, True], 0.0, 2),  # mean exactly 0: no spread, not 0/0
        ([0.0], [True], 0.0, 1),
        ([3.0], [True], 0.0, 1),  # one image: no spread
        ([float("inf")], [True], 0.0, 1),  # … whatever its energy
        ([-2.0, -6.0], [True, True], 0.0, 2),  # a mean below 0 is no energy
    ],
)
def test_the_input_dependence_by_hand(trunk: list[float], valid: list[bool], spread: float, distinct: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = input_dependence(trunk_arrays(trunk, np.float32), np.array(valid))
    assert got == {"distinct_predictions": distinct, "trunk_energy_relative_spread": spread}


def test_the_spread_is_the_sample_standard_deviation_over_the_mean() -> None:
    trunk = np.random.default_rng(4).uniform(1.0, 3.0, size=4)  # four images, as in the null's runs
    got = input_dependence(trunk_arrays(list(trunk)), np.ones(4, dtype=bool))["trunk_energy_relative_spread"]
    assert got == pytest.approx(statistics.stdev(trunk) / statistics.mean(trunk), rel=1e-12)
    assert got != pytest.approx(statistics.pstdev(trunk) / statistics.mean(trunk), rel=1e-3)


def test_the_paired_kappa_difference_is_scalar_minus_vector_over_the_valid_images_with_its_seed() -> None:
    scalar = np.array([3.0, 2.5, 4.0, 9.0, 3.5, 2.0], dtype=np.float32)
    vector = np.array([2.0, 2.0, 3.0, 0.0, 2.0, 2.5], dtype=np.float32)
    valid = np.array([True, True, True, False, True, True])
    got = paired_kappa_difference({"kappa_scalar": scalar, "kappa_vector": vector}, valid, seed=11)
    assert got == bootstrap_mean_ci(np.array([1.0, 0.5, 1.0, 1.5, -0.5]), seed=11)
    assert got["mean"] == 0.7 and got["n"] == 5
    assert got != bootstrap_mean_ci(np.array([1.0, 0.5, 1.0, 1.5, -0.5]), seed=0)  # the seed is the one passed


BASE = {
    "run_id": "a",
    "weights": "IMAGENET1K_V1",
    "arch": "resnet18",
    "sample_list_sha256": "s",
    "sample_index": "l.json",
}
NULL_CONFIG = {**BASE, "run_id": "b", "weights": "random"}


def test_a_null_and_a_run_that_record_no_image_count_are_taken_as_the_same_list(tmp_path: Path) -> None:
    check_random_init_null({"config": BASE}, tmp_path / "s.json", {"config": NULL_CONFIG}, tmp_path / "n.json")
    check_random_init_null(
        {"config": {**BASE, "num_images": 1}}, tmp_path / "s.json", {"config": NULL_CONFIG}, tmp_path / "n.json"
    )


def test_a_null_with_images_beside_a_run_that_records_none_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PipelineError) as refused:
        check_random_init_null(
            {"config": BASE}, tmp_path / "s.json", {"config": {**NULL_CONFIG, "num_images": 1}}, tmp_path / "n.json"
        )
    assert str(refused.value) == (
        f"{tmp_path / 'n.json'}: evaluated another sample list (l.json, 1 images) than {tmp_path / 's.json'} (l.json, "
        "None images); run the null on the same list (--limit N for its first N images)"
    )
