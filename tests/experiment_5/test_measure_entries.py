"""Experiment 5's measure verdicts (experiment_5/verdicts.py) on one hand-built analysis, compared whole to hand-written
entries, so a changed id, claim, parameter, test, seed comparison or note shows: a breadth measure that holds, an order
measure that fails beyond its margin and one shown equivalent, a saturated K_τ^err; the measure rule at α, at 0 and just
off them for both kinds of measure; the direction note's four readings; the saturation note's three places. p-values are
dyadic, so the Holm products are exact. Written against the survivors of `make mutation MODULES=experiment_5/verdicts.py`."""

from __future__ import annotations

import copy

import pytest

from experiment_1.report import (
    ALPHA,
    CANNOT_TELL,
    FAILS,
    HOLDS,
    NON_FINITE,
    SATURATED,
    SATURATION_SHARE,
    by_id,
    seed_comparison,
)
from experiment_5 import verdicts as e5
from experiment_5.association import EQUIVALENCE_SD_FRACTION

EPS = 1e-9
SCORES = ["cross_entropy", "entropy", "negative_margin"]
MEASURES = ["kappa_vector", "kappa_scalar", "n_eff_vector", "k_err", "k_err_tau_0.3", "c_le3_scalar"]


def ci(mean: float, low: float, high: float) -> dict:
    return {"mean": mean, "ci_low": low, "ci_high": high}


def equivalence(p_value: float, p_beyond: float, margin: float, low: float, high: float) -> dict:
    return {"p_value": p_value, "p_beyond": p_beyond, "margin": margin, "ci_low": low, "ci_high": high}


def quartile_measures() -> dict:
    return {
        "kappa_vector": {
            "hard_minus_easy": ci(0.01, -0.02, 0.04),
            "mann_whitney_p": 0.5,
            "equivalence": equivalence(1 / 128, 0.9, 0.1, -0.015, 0.035),
        },
        "kappa_scalar": {
            "hard_minus_easy": ci(0.02, -0.01, 0.05),
            "mann_whitney_p": 1 / 16,
            "equivalence": equivalence(0.25, 0.9, 0.1, -0.005, 0.045),
        },
        "n_eff_vector": {  # compare_groups writes a TOST for every measure: only the order measures read theirs
            "hard_minus_easy": ci(2.0, 1.0, 3.0),
            "mann_whitney_p": 1 / 128,
            "equivalence": equivalence(0.75, 1 / 1024, 0.5, 1.2, 2.8),  # in the family it would make κ^v 4/128
        },
        "k_err": {"hard_minus_easy": ci(0.0, 0.0, 0.0), "mann_whitney_p": 1.0},
        "k_err_tau_0.3": {"hard_minus_easy": ci(0.5, -0.5, 1.5), "mann_whitney_p": 0.25},
        "c_le3_scalar": {
            "hard_minus_easy": ci(-0.05, -0.08, -0.02),
            "mann_whitney_p": 1 / 256,
            "equivalence": equivalence(0.5, 1 / 64, 0.01, -0.075, -0.025),
        },
    }


def analysis() -> dict:
    """Holm over the five judged measures: c_le3^s 5/256, N_eff^v 4/128, κ^s 3/16, K (τ = 0.3) and κ^v 0.5; the TOST's
    Holm over the three order measures: κ^v 3/128, κ^s and C≤3^s 0.5. Under the entropy score C≤3^s is not shown beyond
    its margin."""
    quartiles = {score: {"measures": quartile_measures()} for score in SCORES}
    quartiles["entropy"]["measures"]["c_le3_scalar"]["equivalence"]["p_beyond"] = 0.5
    return {
        "settings": {"primary_score": "cross_entropy", "taus": [0.1, 0.3]},
        "scores": SCORES,
        "measures": MEASURES,
        "headline_measures": ["n_eff_vector", "k_err"],
        "saturation": {name: None for name in MEASURES}
        | {"k_err": {"decision": SATURATED, "value": 16.0, "share": 0.95, "at": "bound"}},
        "quartiles": quartiles,
        "score_agreement": {
            "spearman": {"cross_entropy": {"cross_entropy": 1.0, "entropy": 0.8, "negative_margin": 0.65}}
        },
        "published": {
            "resnet18": {
                "invariant_measures": ["kappa"],
                "n_eff_vector_hard_minus_easy": 5.0,
                "k_tau_err_hard_minus_easy": 3.0,
            }
        },
        "spearman": {
            "cross_entropy": {
                "k_err": {
                    "rho": 0.3,
                    "ci_low": 0.1,
                    "ci_high": 0.5,
                    "partial_rho": 0.2,
                    "partial_ci_low": 0.05,
                    "partial_ci_high": 0.35,
                    "partial_p_value": 0.003,
                }
            }
        },
        "partial_check": {"cross_entropy": HOLDS, "entropy": HOLDS, "negative_margin": HOLDS},
    }


SAME = "sensitivity: the other 2 difficulty scores (ρ with cross-entropy 0.65–0.80) give the same decision"
BASE_PARAMETERS = {"alpha": ALPHA, "saturation_share": SATURATION_SHARE, "primary_score": "cross_entropy"}


def effect(stat: dict, percent: bool = False) -> dict:
    return {"name": "hard − easy", "value": stat["mean"], "ci_low": stat["ci_low"], "ci_high": stat["ci_high"]} | {
        "confidence": 1 - ALPHA,
        "percent": percent,
    }


def mann_whitney(p_value: float, p_adjusted: float) -> dict:
    return {
        "name": "Mann–Whitney U, hard vs easy quartile",
        "p_value": p_value,
        "p_adjusted": p_adjusted,
        "correction": "Holm",
        "family_size": 5,
        "p_floor": None,
    }


def test_the_whole_block_in_order_and_by_hand() -> None:
    block = e5.verdicts(analysis())
    assert [entry["id"] for entry in block] == [
        "n_eff_vector.hard_minus_easy",
        "k_err.hard_minus_easy",
        "kappa_vector.hard_minus_easy",
        "kappa_scalar.hard_minus_easy",
        "k_err_tau_0.3.hard_minus_easy",
        "c_le3_scalar.hard_minus_easy",
        "seed_claim",
        "k_err.partial",
    ]
    entries = {entry["id"].removesuffix(".hard_minus_easy"): entry for entry in block}
    n_eff = effect(ci(2.0, 1.0, 3.0))
    assert entries["n_eff_vector"] == {
        "id": "n_eff_vector.hard_minus_easy",
        "claim": "N_eff^v is larger on hard than on easy images (cross-entropy quartiles)",
        "decision": HOLDS,
        "rule": e5.RULES["measure"],
        "parameters": BASE_PARAMETERS,
        "statistic": None,
        "effect": n_eff,
        "test": mann_whitney(1 / 128, 4 / 128),
        "seed": seed_comparison(5.0, n_eff),
        "notes": ["more subsets on hard images", SAME],
    }
    c_le3 = effect(ci(-0.05, -0.08, -0.02), percent=True)
    assert entries["c_le3_scalar"] == {
        "id": "c_le3_scalar.hard_minus_easy",
        "claim": "difficulty (cross-entropy quartiles) does not move C≤3 (scalar) (the seed reports it invariant)",
        "decision": FAILS,
        "rule": e5.RULES["measure"],
        "parameters": BASE_PARAMETERS
        | {
            "margin": 0.01,
            "margin_sd_fraction": EQUIVALENCE_SD_FRACTION,
            "tost_p": 0.5,
            "tost_p_adjusted": 0.5,
            "p_beyond": 1 / 64,
            "tost_ci_low": -0.075,
            "tost_ci_high": -0.025,
        },
        "statistic": None,
        "effect": c_le3,
        "test": mann_whitney(1 / 256, 5 / 256),
        "seed": seed_comparison(0.0, c_le3),
        "notes": [
            "hard images sit at higher orders",  # less mass at orders ≤ 3
            f"equivalence margin ±0.01 ({EQUIVALENCE_SD_FRACTION:g} pooled SD): 90 % t-interval [-0.075, -0.025], "
            "TOST Holm p = 0.5",
            SAME + " except softmax entropy: cannot tell",
        ],
    }
    kappa = entries["kappa_vector"]
    assert kappa["decision"] == HOLDS and kappa["parameters"]["tost_p_adjusted"] == 3 / 128
    assert kappa["notes"][0] == "hard images sit at higher orders" and kappa["test"] == mann_whitney(0.5, 0.5)
    assert entries["kappa_scalar"]["decision"] == CANNOT_TELL and entries["kappa_scalar"]["notes"][0].startswith(
        "equivalence"
    )
    assert entries["kappa_scalar"]["test"]["p_adjusted"] == 3 / 16
    assert entries["kappa_vector"]["seed"] == seed_comparison(0.0, effect(ci(0.01, -0.02, 0.04)))
    assert entries["k_err_tau_0.3"]["decision"] == CANNOT_TELL and entries["k_err_tau_0.3"]["notes"] == [SAME]
    assert entries["k_err_tau_0.3"]["seed"] is None  # a breadth measure the seed gives no number for
    assert (
        entries["k_err_tau_0.3"]["claim"]
        == "K_τ^err (τ = 0.3) is larger on hard than on easy images (cross-entropy quartiles)"
    )
    assert entries["k_err"] == {
        "id": "k_err.hard_minus_easy",
        "claim": "K_τ^err is larger on hard than on easy images (cross-entropy quartiles)",
        "decision": SATURATED,
        "rule": e5.RULES["measure"],
        "parameters": BASE_PARAMETERS,
        "statistic": None,
        "effect": effect(ci(0.0, 0.0, 0.0)),
        "test": None,
        "seed": None,
        "notes": [
            "at its bound 16 on 95.0 % of images; it moves at K_τ^err (τ = 0.3); a step-1 run with --extra-taus "
            "0.3 0.4 0.5 0.6 0.7 adds the grid where it moves"
        ],
    }
    assert entries["seed_claim"]["notes"][0] == (
        "N_eff^v: holds; K_τ^err: saturated; κ (vector): holds; κ (scalar): cannot tell"
    )


def test_another_primary_score_is_read_everywhere() -> None:
    study = analysis()
    study["settings"]["primary_score"] = "entropy"
    study["score_agreement"]["spearman"]["entropy"] = {"cross_entropy": 0.8, "entropy": 1.0, "negative_margin": 0.7}
    study["spearman"]["entropy"] = study["spearman"]["cross_entropy"]
    entry = by_id(e5.verdicts(study))["c_le3_scalar.hard_minus_easy"]
    assert entry["decision"] == CANNOT_TELL and entry["parameters"]["primary_score"] == "entropy"
    assert (
        entry["claim"]
        == "difficulty (softmax entropy quartiles) does not move C≤3 (scalar) (the seed reports it invariant)"
    )
    assert entry["notes"][-1] == (
        "sensitivity: the other 2 difficulty scores (ρ with softmax entropy 0.70–0.80) give the same decision except "
        "cross-entropy: fails; −(top-1 − top-2 margin): fails"
    )


@pytest.mark.parametrize(
    "measure, difference, p_adjusted, tost, decision",
    [
        ("n_eff_vector", ci(1.0, EPS, 2.0), ALPHA, None, HOLDS),  # at α, the CI just above 0
        ("n_eff_vector", ci(1.0, EPS, 2.0), ALPHA + EPS, None, CANNOT_TELL),  # just above α
        ("n_eff_vector", ci(1.0, 0.0, 2.0), ALPHA, None, CANNOT_TELL),  # the CI touches 0
        ("k_mass", ci(-1.0, -2.0, -EPS), ALPHA, None, FAILS),  # fewer subsets on hard images
        ("k_err", ci(-1.0, -2.0, 0.0), ALPHA, None, CANNOT_TELL),
        ("n_eff_vector", ci(1.0, float("nan"), 2.0), 0.01, None, NON_FINITE),
        ("n_eff_vector", ci(1.0, 0.5, float("inf")), 0.01, None, NON_FINITE),
        ("n_eff_vector", ci(1.0, 0.5, 2.0), float("nan"), None, NON_FINITE),
        ("kappa_vector", ci(1.0, EPS, 2.0), ALPHA, None, FAILS),  # no margin: a significant order shift fails …
        ("kappa_vector", ci(1.0, EPS, 2.0), ALPHA + EPS, None, CANNOT_TELL),  # … else cannot tell, never holds
        ("kappa_vector", ci(-1.0, -2.0, -EPS), ALPHA, {"p_adjusted": 0.5, "p_beyond": ALPHA}, FAILS),  # beyond, at α
        ("kappa_vector", ci(-1.0, -2.0, -EPS), ALPHA, {"p_adjusted": 0.5, "p_beyond": ALPHA + EPS}, CANNOT_TELL),
        ("kappa_vector", ci(-1.0, -2.0, 0.0), ALPHA, {"p_adjusted": 0.5, "p_beyond": ALPHA}, CANNOT_TELL),  # CI at 0
        ("kappa_vector", ci(-1.0, -2.0, -EPS), 0.5, {"p_adjusted": 0.5, "p_beyond": 0.01}, CANNOT_TELL),  # p disagrees
        ("kappa_vector", ci(1.0, EPS, 2.0), ALPHA, {"p_adjusted": ALPHA, "p_beyond": 0.01}, HOLDS),  # equivalent first
        ("kappa_vector", ci(0.0, -1.0, 1.0), 0.9, {"p_adjusted": ALPHA + EPS, "p_beyond": 1.0}, CANNOT_TELL),
    ],
)
def test_the_measure_rule_at_alpha_and_at_zero(
    measure: str, difference: dict, p_adjusted: float, tost: dict | None, decision: str
) -> None:
    inputs = {"low": difference["ci_low"], "high": difference["ci_high"], "p_adjusted": p_adjusted, "equivalence": tost}
    assert e5.MEASURE.decide_on({**inputs, "breadth": measure.startswith(e5.BREADTH_PREFIXES)}) == decision


@pytest.mark.parametrize(
    "measure, mean, note",
    [
        ("n_eff_vector", 0.5, "more subsets on hard images"),
        ("k_mass", -0.5, "fewer subsets on hard images"),
        ("k_err", 0.0, "fewer subsets on hard images"),  # no change is not "more"
        ("kbar_vector", 0.5, "hard images sit at higher orders"),
        ("kappa_scalar", -0.5, "hard images sit at lower orders"),
        ("kbar_scalar", 0.0, "hard images sit at lower orders"),
        ("c_le3_vector", 0.5, "hard images sit at lower orders"),  # more mass at orders ≤ 3
        ("c_le3_scalar", -0.5, "hard images sit at higher orders"),
    ],
)
def test_the_direction_note(measure: str, mean: float, note: str) -> None:
    assert e5._direction(measure, ci(mean, mean, mean)) == note


@pytest.mark.parametrize(
    "measure, saturation, moving, note",
    [
        ("kappa_vector", {"value": 2.0, "share": 0.9, "at": "mode"}, True, "at one value 2 on 90.0 % of images"),
        (
            "c_le3_vector",
            {"value": 1.0, "share": 0.975, "at": "near_bound", "margin": 0.005},
            True,
            "at within 0.005 of its bound 1 on 97.5 % of images",
        ),
        (
            "c_le3_vector",
            {"value": 1.0, "share": 0.95, "at": "near_bound"},
            True,
            "at within 0 of its bound 1 on 95.0 % of images",
        ),
        (
            "k_err",
            {"value": 16.0, "share": 1.0, "at": "bound"},
            False,
            "at its bound 16 on 100.0 % of images; it moves at no τ of this run; a step-1 run with --extra-taus "
            "0.3 0.4 0.5 0.6 0.7 adds the grid where it moves",
        ),
    ],
)
def test_the_saturation_note(measure: str, saturation: dict, moving: bool, note: str) -> None:
    study = analysis()
    study["saturation"][measure] = saturation
    if not moving:
        study["saturation"]["k_err_tau_0.3"] = saturation
    assert e5._saturation_note(study, measure) == note


def test_the_extra_taus_leave_out_the_headline_tau_and_merge_the_rest() -> None:
    study = copy.deepcopy(analysis())
    study["settings"]["taus"] = [0.5, 0.05, 0.6]  # the headline τ first; the others join the suggested grid once each
    assert e5._saturation_note(study, "k_err").endswith(
        "--extra-taus 0.05 0.4 0.5 0.6 0.7 adds the grid where it moves"
    )


def test_an_analysis_written_before_the_equivalence_test_has_no_margin() -> None:
    study = analysis()
    for score in SCORES:
        del study["quartiles"][score]["measures"]["c_le3_scalar"]["equivalence"]
    entries = by_id(e5.verdicts(study))
    c_le3 = entries["c_le3_scalar.hard_minus_easy"]
    assert c_le3["decision"] == FAILS and c_le3["parameters"] == BASE_PARAMETERS  # significant, no margin: fails
    assert c_le3["notes"] == ["hard images sit at higher orders", SAME]
    # the other order measures' TOST is Holm-adjusted over the two left: κ^v 2/128, κ^s 0.25
    assert entries["kappa_vector.hard_minus_easy"]["parameters"]["tost_p_adjusted"] == 2 / 128
    assert entries["kappa_scalar.hard_minus_easy"]["parameters"]["tost_p_adjusted"] == 0.25


def test_a_saturated_order_measure_leaves_the_tost_family() -> None:
    study = analysis()
    study["saturation"]["kappa_scalar"] = {"decision": SATURATED, "value": 4.0, "share": 0.96, "at": "mode"}
    entries = by_id(e5.verdicts(study))
    assert entries["kappa_scalar.hard_minus_easy"]["decision"] == SATURATED
    # Holm over κ^v and C≤3^s only: κ^v 2/128; the Mann–Whitney family loses κ^s too (four measures)
    assert entries["kappa_vector.hard_minus_easy"]["parameters"]["tost_p_adjusted"] == 2 / 128
    assert entries["c_le3_scalar.hard_minus_easy"]["test"]["family_size"] == 4


def test_the_saturation_note_names_every_tau_where_k_err_moves() -> None:
    study = analysis()
    study["measures"] = [*MEASURES, "k_err_tau_0.2"]
    study["saturation"]["k_err_tau_0.2"] = None
    assert "; it moves at K_τ^err (τ = 0.3), K_τ^err (τ = 0.2); " in e5._saturation_note(study, "k_err")
