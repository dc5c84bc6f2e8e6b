"""Step 11's calibration over tables (experiment_2/past_exhaustive/validation/calibration.py): the pooled coverage and its exact CI
from the cells' counts, the homogeneity test against the chi-square statistic written out, Holm over the groups, and
each verdict of the rule on planted cells."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from experiment_2.past_exhaustive.validation import calibration
from experiment_2.past_exhaustive.validation.replications import chance_failure


def cells(coverages: list[float], replications: int = 1000, statistic: str = "w1", budget: str = "m=1024") -> list:
    return [
        {
            "estimator": "walsh",
            "statistic": statistic,
            "budget": budget,
            "replications": replications,
            "coverage": coverage,
            "interval_reported": True,
        }
        for coverage in coverages
    ]


def only_group(entries: list) -> dict:
    (row,) = calibration.over_tables(entries)["groups"]
    return row


def test_the_pooled_coverage_is_the_counts_over_every_table_with_its_exact_ci() -> None:
    row = only_group(cells([0.94, 0.96, 0.95], replications=400))
    assert row["tables"] == 3 and row["coverage"] == pytest.approx((376 + 384 + 380) / 1200, abs=1e-15)
    interval = stats.binomtest(1140, 1200).proportion_ci(method="exact")
    assert row["coverage_ci"] == pytest.approx([interval.low, interval.high], abs=1e-15)
    assert (row["lowest_table_coverage"], row["highest_table_coverage"]) == (0.94, 0.96)


def test_homogeneity_is_pearsons_chi_square_over_the_tables() -> None:
    covered, total = np.array([900, 950, 930, 970]), np.array([1000, 1000, 1000, 1000])
    missed = total - covered
    expected_covered = total * covered.sum() / total.sum()
    expected_missed = total - expected_covered
    statistic = (np.square(covered - expected_covered) / expected_covered).sum() + (
        np.square(missed - expected_missed) / expected_missed
    ).sum()
    assert calibration.homogeneity_p(covered, total) == pytest.approx(stats.chi2.sf(statistic, 3), rel=1e-12)
    assert calibration.homogeneity_p(np.array([1000, 1000]), total[:2]) == 1.0  # no miss anywhere: no variation
    assert calibration.homogeneity_p(np.array([950]), total[:1]) == 1.0  # one table: nothing to compare


def test_each_verdict_of_the_rule_on_planted_tables() -> None:
    assert only_group(cells([0.95] * 10))["verdict"] == calibration.CALIBRATED
    varied = only_group(cells([0.90] * 5 + [0.99] * 5))  # pooled 94.5 %, in the band, but the tables differ
    assert varied["coverage_ci"][0] > 0.93 and varied["verdict"] == calibration.TABLE_DEPENDENT
    assert only_group(cells([0.90] * 10))["verdict"] == calibration.UNDER
    assert only_group(cells([0.985] * 10))["verdict"] == calibration.OVER
    straddling = only_group(cells([0.93, 0.93], replications=200))  # the CI reaches below the band's edge
    assert straddling["coverage_ci"][0] < 0.93 < straddling["coverage_ci"][1]
    assert straddling["verdict"] == calibration.CANNOT_TELL


def test_holm_adjusts_the_homogeneity_tests_over_the_groups() -> None:
    mild = cells([0.936, 0.955, 0.945, 0.963], statistic="w1")  # unadjusted p 0.034
    flat = cells([0.95] * 4, statistic="w2")
    summary = calibration.over_tables(mild + flat)
    first, second = summary["groups"]
    assert 0.025 < first["homogeneity_p"] < 0.05 and second["homogeneity_p"] == 1.0
    assert first["homogeneity_p_holm"] == pytest.approx(2 * first["homogeneity_p"], rel=1e-12)
    assert first["verdict"] == calibration.CALIBRATED  # rejected alone, not after Holm
    assert calibration.over_tables(mild)["groups"][0]["verdict"] == calibration.TABLE_DEPENDENT
    assert summary["counts"] == {
        calibration.CALIBRATED: 2,
        calibration.TABLE_DEPENDENT: 0,
        calibration.UNDER: 0,
        calibration.OVER: 0,
        calibration.CANNOT_TELL: 0,
    }


def test_groups_are_per_statistic_and_budget_and_skip_cells_without_an_interval() -> None:
    entries = cells([0.95, 0.95], budget="m=1024") + cells([0.95], budget="m=2048")
    entries.append({**entries[0], "interval_reported": False, "coverage": None})
    groups = calibration.over_tables(entries)["groups"]
    assert [(row["budget"], row["tables"]) for row in groups] == [("m=1024", 2), ("m=2048", 1)]
    assert groups[0]["cells_outside_band"] == 0
    assert only_group(cells([0.92, 0.95, 0.975]))["cells_outside_band"] == 2


def test_the_verdicts_edges_belong_to_the_band_and_alpha_rejects_only_below() -> None:
    """A CI exactly on the band's edges is inside it; one that ends on an edge is not wholly outside; a p-value of
    exactly α does not reject."""
    assert calibration.group_verdict((0.93, 0.97), calibration.ALPHA) == calibration.CALIBRATED
    assert calibration.group_verdict((0.90, 0.93), 1.0) == calibration.CANNOT_TELL
    assert calibration.group_verdict((0.97, 0.99), 1.0) == calibration.CANNOT_TELL
    assert calibration.group_verdict((0.96, 0.98), 1.0) == calibration.CANNOT_TELL
    assert calibration.group_verdict((0.96, 0.98), 0.049) == calibration.TABLE_DEPENDENT
    assert only_group(cells([0.93, 0.97, 0.95]))["cells_outside_band"] == 0


def test_two_tables_are_compared_without_yates_correction() -> None:
    covered, total = np.array([900, 960]), np.array([1000, 1000])
    statistic = stats.chi2_contingency(np.stack([covered, total - covered]), correction=False).statistic
    assert calibration.homogeneity_p(covered, total) == pytest.approx(stats.chi2.sf(statistic, 1), rel=1e-12)
    assert calibration.homogeneity_p(covered, total) < 1e-6


def test_the_summary_names_each_group_and_its_test() -> None:
    summary = calibration.over_tables(cells([0.95, 0.94], statistic="w3", budget="m=2048"))
    (row,) = summary["groups"]
    assert (row["estimator"], row["statistic"], row["budget"]) == ("walsh", "w3", "m=2048")
    assert summary["rule"] == calibration.RULE
    assert "chi-square" in summary["test"] and "no continuity correction" in summary["test"]
    assert summary["test"].endswith("Holm-adjusted")


def test_the_chance_of_leaving_the_band_at_a_given_coverage_is_the_binomial_sum() -> None:
    for replications in (200, 1000, 1001):
        inside = range(math.ceil(0.93 * replications - 1e-9), math.floor(0.97 * replications + 1e-9) + 1)
        for coverage in (0.95, 0.94, 0.965):
            pmf = [math.comb(replications, k) * coverage**k * (1 - coverage) ** (replications - k) for k in inside]
            assert calibration.outside_band_probability(coverage, replications) == pytest.approx(1 - sum(pmf), rel=1e-9)
        nominal = calibration.outside_band_probability(0.95, replications)
        assert nominal == pytest.approx(chance_failure(replications), rel=1e-12)
    # both ends count: 93 % and 97 % are inside, one replication past either is outside
    assert calibration.outside_band_probability(1.0, 100) == pytest.approx(1.0)
    assert calibration.outside_band_probability(0.0, 100) == pytest.approx(1.0)
    assert calibration.outside_band_probability(0.95, 1000) < calibration.outside_band_probability(0.94, 1000)


def test_at_least_probability_is_the_poisson_binomial_tail() -> None:
    probabilities = np.array([0.1, 0.5, 0.02, 0.9, 0.3, 0.07])
    for count in range(-1, 8):
        by_enumeration = sum(
            np.prod(np.where(outcome, probabilities, 1 - probabilities))
            for outcome in itertools.product([False, True], repeat=len(probabilities))
            if sum(outcome) >= count
        )
        assert calibration.at_least_probability(probabilities, count) == pytest.approx(by_enumeration, abs=1e-14)
    assert calibration.at_least_probability(np.full(40, 0.2), 11) == pytest.approx(stats.binom.sf(10, 40, 0.2))
    assert calibration.at_least_probability(np.array([]), 0) == 1.0


def test_the_cells_outside_the_band_are_set_against_each_groups_own_coverage() -> None:
    low = cells([0.925, 0.94, 0.95, 0.945], statistic="w1")  # pooled 94 %: one cell outside
    high = cells([0.96] * 3, statistic="w2", replications=400)  # pooled 96 %: none
    summary = calibration.over_tables(low + high)
    first, second = summary["groups"]
    assert first["cells_outside_band"] == 1 and second["cells_outside_band"] == 0
    assert first["expected_outside_band"] == pytest.approx(4 * calibration.outside_band_probability(0.94, 1000))
    assert second["expected_outside_band"] == pytest.approx(3 * calibration.outside_band_probability(0.96, 400))
    outside = summary["outside_band"]
    probabilities = [calibration.outside_band_probability(0.94, 1000)] * 4 + [
        calibration.outside_band_probability(0.96, 400)
    ] * 3
    assert outside["cells"] == 7 and outside["observed"] == 1
    assert outside["expected_at_pooled_coverage"] == pytest.approx(sum(probabilities))
    assert outside["p_at_least_observed"] == pytest.approx(1 - np.prod(1 - np.array(probabilities)))


def test_the_tail_is_read_in_float64_and_never_passes_one() -> None:
    single = np.array([0.1, 0.2, 0.3, 0.7], dtype=np.float32)  # float32 steps (1 − p) would move the tail by ~1e-9
    for count in range(5):
        expected = calibration.at_least_probability(single.astype(np.float64), count)
        assert calibration.at_least_probability(single, count) == pytest.approx(expected, rel=1e-14, abs=0)

    def raw_total(probabilities: np.ndarray) -> float:
        distribution = np.ones(1)
        for probability in probabilities:
            distribution = np.convolve(distribution, [1 - probability, probability])
        return float(distribution.sum())

    draws = (np.random.default_rng(seed).uniform(size=30) for seed in range(1000))
    over = next(probabilities for probabilities in draws if raw_total(probabilities) > 1)  # round-off above 1
    assert calibration.at_least_probability(over, 0) == 1.0
