"""The core's levels and thresholds as the pipeline uses them, written out: the rule constants every experiment decides
with; Experiment 1's summary intervals (what step 3 and paper.resummarize call, with a seed and never a level) against
scipy at 95 %; the level an effect entry records and the smallest detectable effect computed from it with
``scipy.stats.norm.ppf``; and Holm on a family whose Holm, Bonferroni and unadjusted decisions all differ."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from experiment_1 import report
from experiment_1.reconstruction.summary import summarize
from experiment_1.report import effect_from_stat, holm, proportion_effect, seed_comparison


def test_the_rule_constants_written_out() -> None:
    assert report.ALPHA == 0.05
    assert report.POWER == 0.8
    assert report.SATURATION_SHARE == 0.9
    assert report.NEAR_BOUND_MARGIN == 0.05
    assert report.NUM_RESAMPLES == 2000


def reconstruction_arrays() -> dict[str, np.ndarray]:
    """Six images (the fifth not valid, the sixth unlabelled): relative errors spread over a decade, top-1 agreements
    of 0/1, the full mask's correctness."""
    rng = np.random.default_rng(49)
    count = 6
    arrays = {"valid": np.array([1, 1, 1, 1, 0, 1], bool), "label": np.array([3, 1, 4, 1, 5, -1])}
    arrays["index"] = np.arange(count)
    for name in ("mobius_rel_error_float32", "mobius_rel_error_float64", "max_subset_rel_error_float32"):
        arrays[name] = 10.0 ** rng.uniform(-8, -7, count)
    for name in ("max_subset_rel_error_float64", "naive_sum_rel_error", "first_order_rel_error"):
        arrays[name] = rng.uniform(0.5, 2.0, count)
    for name in ("mobius_top1_agreement_float32", "mobius_top1_agreement_float64"):
        arrays[name] = np.ones(count)
    for name in ("naive_sum_top1_agreement", "first_order_top1_agreement", "empty_top1_agreement"):
        arrays[name] = np.array([1.0, 0.0, 1.0, 0.0, 1.0, 0.0])
    arrays["full_correct"] = np.array([1.0, 1.0, 0.0, 1.0, 1.0, 0.0])
    return arrays


def test_experiment_1s_summary_intervals_are_scipys_at_95_percent() -> None:
    arrays = reconstruction_arrays()
    valid = arrays["valid"]
    metrics = summarize(arrays, {"num_blocks": 4}, seed=11)["metrics"]
    errors = arrays["naive_sum_rel_error"][valid]
    reference = stats.bootstrap(
        (errors,), np.mean, n_resamples=2000, method="percentile", confidence_level=0.95, rng=np.random.default_rng(11)
    ).confidence_interval
    entry = metrics["naive_sum_rel_error"]
    assert (entry["mean"], entry["ci_low"], entry["ci_high"]) == (
        pytest.approx(errors.mean(), rel=1e-12),
        pytest.approx(reference.low, rel=1e-12),
        pytest.approx(reference.high, rel=1e-12),
    )
    share = metrics["first_order_top1_agreement"]  # 1, 0, 1, 0, 0 over the five valid images (the fifth left out)
    exact = stats.binomtest(2, 5).proportion_ci(confidence_level=0.95, method="exact")
    assert (share["successes"], share["n"]) == (2, 5)
    assert (share["ci_low"], share["ci_high"]) == (
        pytest.approx(exact.low, rel=1e-12),
        pytest.approx(exact.high, rel=1e-12),
    )
    accuracy = metrics["full_mask_top1_accuracy"]  # the four labelled valid images: 1, 1, 0, 1
    exact = stats.binomtest(3, 4).proportion_ci(confidence_level=0.95, method="exact")
    assert (accuracy["ci_low"], accuracy["ci_high"]) == (
        pytest.approx(exact.low, rel=1e-12),
        pytest.approx(exact.high, rel=1e-12),
    )


def test_an_effect_records_95_percent_and_its_detectable_effect_reads_it() -> None:
    stat = {"mean": 2.0, "ci_low": 1.0, "ci_high": 3.0}
    effect = effect_from_stat("d", stat)
    assert (
        effect["confidence"] == 0.95 and proportion_effect("p", {**stat, "successes": 3, "n": 5})["confidence"] == 0.95
    )
    z_975, z_95, z_80 = (float(stats.norm.ppf(q)) for q in (0.975, 0.95, 0.8))
    # the SE read off a 95 % CI of width 2 is 2 / (2 · z_0.975); the smallest effect a two-sided 5 % test detects
    # with power 0.8 is (z_0.975 + z_0.8) · SE
    assert seed_comparison(5.0, effect)["minimal_detectable_effect"] == pytest.approx((z_975 + z_80) / z_975, rel=1e-9)
    assert seed_comparison(5.0, {**effect, "confidence": 0.90})["minimal_detectable_effect"] == pytest.approx(
        (z_975 + z_80) / z_95, rel=1e-9
    )
    assert seed_comparison(5.0, {"ci_low": 1.0, "ci_high": 3.0})["minimal_detectable_effect"] == pytest.approx(
        (z_975 + z_80) / z_975, rel=1e-9
    )  # an effect that names no level is read at 95 %


def test_holm_on_a_family_where_holm_bonferroni_and_no_correction_all_differ() -> None:
    raw = [0.03, 0.06, 0.01, 0.015]  # sorted 0.01, 0.015, 0.03, 0.06
    # Holm by hand: 4 × 0.01 = 0.04; max(0.04, 3 × 0.015) = 0.045; max(0.045, 2 × 0.03) = 0.06; max(0.06, 0.06)
    assert holm(raw) == pytest.approx([0.06, 0.06, 0.04, 0.045], rel=1e-12)
    rejected = {
        "none": sum(p <= 0.05 for p in raw),
        "Holm": sum(p <= 0.05 for p in holm(raw)),
        "Bonferroni": sum(min(1.0, 4 * p) <= 0.05 for p in raw),
    }
    assert rejected == {"none": 3, "Holm": 2, "Bonferroni": 1}
