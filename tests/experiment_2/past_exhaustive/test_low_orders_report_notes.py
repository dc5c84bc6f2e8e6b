"""Experiment 2 step 8's note under the Walsh table: the CI over images leaves out the masks' sampling error (one design
for every image), and a mean outside the span of the images' own (range-cut) intervals is named, with its projection."""

from __future__ import annotations

from experiment_2.past_exhaustive import evaluation
from experiment_2.past_exhaustive.evaluation import shared_design_note
from experiment_2.past_exhaustive.sampled import NOT_VALIDATED_AT_DEPTH, STRESS_REPORT


def block(mean: float, lows: list, highs: list) -> dict:
    return {"mean": [mean], "per_image_ci_low": lows, "per_image_ci_high": highs}


def walsh(projections: dict) -> dict:
    return {"design": {"num_samples": 1024, "seed": 7}, "projections": projections}


def test_a_mean_outside_the_images_intervals_is_named() -> None:
    note = shared_design_note(
        walsh(
            {
                "vector": {
                    "stability_0.95": block(0.99, [0.44, 0.5], [0.95, 0.95]),  # above every image's interval
                    "w3": block(-0.5, [0.0, 0.0], [3.0, 2.0]),  # below
                    "variance": block(2.0, [1.0, 1.5], [3.0, 2.5]),  # inside
                },
                "scalar": {
                    "stability_0.95": block(0.95, [0.8, 0.9], [0.95, 0.95]),  # at the end: inside
                    "stability_0.5": block(0.4, [None, None], [None, None]),  # no interval: never named
                },
            }
        )
    )
    assert note.startswith("Every image is read on the same 1024 base masks (seed 7): the CI over images")
    assert note.endswith("that shared error: stability_0.95 (vector, mean 0.99), w3 (vector, mean -0.5).")


def test_no_mean_outside_gives_the_plain_note() -> None:
    note = shared_design_note(walsh({"vector": {"variance": block(2.0, [1.0], [3.0])}}))
    assert note.endswith("(each is unbiased, or a ratio of unbiased ones).")
    assert "shared error:" not in note


def test_an_image_estimate_outside_its_statistic_range_is_marked() -> None:
    """The Walsh table marks the images whose estimate leaves the statistic's range (the share [0, 1], κ_W / L
    [1/L, 1]); an estimate at a bound is inside it."""
    assert evaluation.out_of_range_count("low_degree_share", {"per_image": [[1.0], [0.0]]}, 50) == ""
    marked = evaluation.out_of_range_count("low_degree_share", {"per_image": [[1.3], [0.5], [-0.1]]}, 50)
    assert marked == " (2 of 3 out of range: cannot tell)"
    below = {"per_image": [[1 / 40], [0.5]]}  # 1/40: below 1/33, above 1/50
    assert evaluation.out_of_range_count("kappa_w_per_block", below, 33) == " (1 of 2 out of range: cannot tell)"
    assert evaluation.out_of_range_count("kappa_w_per_block", below, 50) == ""


def depth_summary(num_blocks: int) -> dict:
    """A step-8 summary's Walsh part with two statistics, variance (withheld past the exhaustive limit) and w1."""
    stat = {
        "mean": [2.0],
        "ci_low": [1.0],
        "ci_high": [3.0],
        "per_image": [[2.0], [2.0]],
        "per_image_ci_low": [1.0, 1.0],
        "per_image_ci_high": [3.0, 3.0],
        "per_image_se": [0.5, 0.25],
    }
    projections = {name: {"variance": stat, "w1": stat} for name in ("vector", "scalar")}
    return {
        "num_blocks": num_blocks,
        "walsh": {"design": {"num_samples": 1024, "seed": 7, "num_ids": 5000}, "projections": projections},
        "surrogate_r2_by_size": None,
        "subcubes": None,
    }


def test_past_the_exhaustive_limit_the_estimators_step_15_fails_are_withheld_and_named() -> None:
    assert evaluation.withheld(depth_summary(16)) == ()
    assert evaluation.withheld(depth_summary(17)) == NOT_VALIDATED_AT_DEPTH
    at_limit = evaluation.sampled_sections(depth_summary(16))[0]
    assert "| vector | variance |" in at_limit and "Not given" not in at_limit
    deep = evaluation.sampled_sections(depth_summary(33))[0]
    assert "| vector | variance |" not in deep and "| vector | w1 |" in deep
    assert "Not given at L = 33: ebar_4" in deep and STRESS_REPORT in deep
    assert (
        "relative standard error of Var h (median over images): vector 0.188; scalar 0.188." in deep
    )  # (0.25 + 0.125) / 2
