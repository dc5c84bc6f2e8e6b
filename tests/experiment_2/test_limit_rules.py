"""The 3C limit rule on planted synthetic limit blocks: an unconverged order reads "cannot tell (not converged)",
never "fails"; a law on its own data reads "consistent (post hoc)", never "holds"; order 1 does not count."""

from __future__ import annotations

import pytest
from planted_laws import LAMBDAS, block

from experiment_1.errors import PipelineError
from experiment_2.limit.law_test import summarize
from experiment_2.limit.laws import (
    NOT_CONVERGED,
    POST_HOC,
    REFINED_LAW_FITTED_TO,
    is_post_hoc,
    law_test,
    predicted_slopes,
    scored,
)
from experiment_2.limit.verdicts import law_verdict


def test_slopes_still_climbing_read_not_converged_not_fails() -> None:
    # smooth Lite0 at k = 3: successive slopes 1.6 → 2.2 → 2.9 (still climbing towards 3); a tight CI around 2.55 lies wholly outside 3 ± 0.25
    planted = block([[0.0, 1.0, 2.0, 1.6], [0.0, 1.0, 2.0, 2.2], [0.0, 1.0, 2.0, 2.9]])
    test = law_test(
        planted["limit_slopes"], planted["successive_slopes"], predicted_slopes("lambda_k", 3, 1.5, 0), 0.25
    )
    assert test["per_order"] == ["holds", "holds", NOT_CONVERGED] and test["verdict"] == NOT_CONVERGED
    assert test["converged"] == [True, True, False] and "still move by 0.70" in test["not_converged_reasons"]["3"]
    entry = law_verdict("smooth", "lambda_k", {**planted, **scored(planted, 0.25, post_hoc=False)}, True, 0.25, 1000.0)
    assert entry["decision"] == NOT_CONVERGED


def test_converged_slopes_decide_holds_and_fails() -> None:
    planted = block(
        [[0.0, 1.0, 2.0, 2.6], [0.0, 1.0, 2.0, 2.55], [0.0, 1.0, 2.0, 2.6]]
    )  # k = 3 settled at 2.58: the λ^k law fails there
    assert (
        law_test(planted["limit_slopes"], planted["successive_slopes"], predicted_slopes("lambda_k", 3, 1.5, 0), 0.25)[
            "verdict"
        ]
        == "fails"
    )
    settled = block([[0.0, 1.0, 2.0, 2.95], [0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 3.0]])
    assert (
        law_test(settled["limit_slopes"], settled["successive_slopes"], predicted_slopes("lambda_k", 3, 1.5, 0), 0.25)[
            "verdict"
        ]
        == "holds"
    )


def test_a_window_cut_short_by_the_floor_has_not_converged() -> None:
    # order 3 resolved only at the two largest λs: one successive slope, nothing to check convergence on
    planted = block([[0.0, 1.0, 2.0, 2.0], [0.0, 1.0, 2.0, 2.0], [0.0, 1.0, 2.0, 2.0]], resolved_to=[3, 3, 3, 1])
    test = law_test(
        planted["limit_slopes"], planted["successive_slopes"], predicted_slopes("lambda_k", 3, 1.5, 0), 0.25
    )
    assert (
        test["per_order"][2] == NOT_CONVERGED
        and "round-off floor leaves 2 of the 3" in test["not_converged_reasons"]["3"]
    )


def test_order_one_alone_decides_nothing() -> None:
    # slope 1 at k = 1 holds in any network; with k = 2 unresolved the law has nothing counted
    planted = block([[0.0, 1.0, 1.5], [0.0, 1.0, 1.5], [0.0, 1.0, 1.5]], resolved_to=[3, 3, 0])
    assert (
        law_test(planted["limit_slopes"], planted["successive_slopes"], predicted_slopes("lambda_k", 2, 1.5, 0), 0.25)[
            "verdict"
        ]
        == "unresolved"
    )


def test_a_law_on_its_own_data_is_consistent_post_hoc_never_holds() -> None:
    planted = block(
        [[0.0, 1.0, 1.0, 1.5], [0.0, 1.0, 1.0, 1.5], [0.0, 1.0, 1.0, 1.5]], chain=2, exponent=1.0
    )  # the refined law, R = 2, met exactly
    fitted = {**planted, **scored(planted, 0.25, post_hoc=True)}
    assert (
        fitted["laws"]["kink_chain"]["verdict"] == POST_HOC and fitted["laws"]["kink"]["verdict"] == "fails"
    )  # the first law is not post hoc
    assert law_verdict("native", "kink_chain", fitted, True, 0.25, 1000.0)["decision"] == POST_HOC
    fresh = {**planted, **scored(planted, 0.25, post_hoc=False)}
    assert law_verdict("native", "kink_chain", fresh, True, 0.25, 1000.0)["decision"] == "holds"
    assert is_post_hoc(dict(REFINED_LAW_FITTED_TO, limit=6)) and not is_post_hoc(
        dict(REFINED_LAW_FITTED_TO, arch="experiment_2.held_block:resnet18_first_block_held")
    )


def test_the_refined_law_is_not_tested_twice_where_it_equals_the_first() -> None:
    planted = block([[0.0, 1.0, 1.5, 1.5]] * 3, chain=0, exponent=1.5)  # Lite0: R = 0
    assert set(scored(planted, 0.25, post_hoc=True)["laws"]) == {"lambda_k", "kink"}


def test_law_test_step_refuses_the_laws_own_data() -> None:
    planted = block([[0.0, 1.0, 1.0, 1.5]] * 3, chain=2, exponent=1.0)
    sweep = {
        "config": {**REFINED_LAW_FITTED_TO, "gated_recursion": "x", "num_blocks": 3},
        "lambdas": LAMBDAS,
        "num_valid": 6,
        "num_images": 6,
        "num_skipped_corrupt": 0,
        "per_lambda": [],
        "limit": {
            "method": "m",
            "limit_points": 3,
            "slope_tolerance": 0.25,
            "floor_margin": 1000.0,
            "projections": {"vector": planted},
        },
    }
    with pytest.raises(PipelineError, match="own data"):
        summarize(sweep)
    sweep["config"]["arch"] = "experiment_2.held_block:resnet18_first_block_held"
    with pytest.raises(PipelineError, match="not an a priori test of the refined law: it records no commit"):
        summarize(sweep)
    sweep["config"]["git_commit"] = (
        "6acf06ba1da23a49abde1416febd3e61f48262b2"  # the committed held-block run's, after the prediction
    )
    assert [entry["decision"] for entry in summarize(sweep)["verdicts"]] == ["fails", "fails", "holds", "holds"]
