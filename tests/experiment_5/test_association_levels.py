"""Experiment 5's intervals at the levels the analysis passes, and its Holm families where the correction matters.

Each interval is read from the function :func:`experiment_5.summary.analyze` calls, with the arguments it passes (a
seed and a resample count, never a level), on two groups that differ, and checked against scipy at the documented
level: the hard − easy (and incorrect − correct) difference against :func:`scipy.stats.bootstrap` at 95 % (the same
draws: each group resampled on its own, the second group first), the equivalence test's interval against Welch's 90 %
t-interval (TOST at α = 0.05 is the 1 − 2α interval), Spearman ρ and the partial ρ against a paired 95 % bootstrap. The
multiplicity corrections run on families whose Holm, Bonferroni and unadjusted decisions differ, with the adjusted
p-values written out by hand."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from experiment_1.report import CANNOT_TELL, FAILS, HOLDS, by_id
from experiment_5 import verdicts as e5
from experiment_5.association import EQUIVALENCE_SD_FRACTION
from experiment_5.summary import correctness_analysis, quartile_analysis
from tests.experiment_5.test_measure_entries import analysis as hand_built_analysis

RESAMPLES = 400


def test_the_equivalence_margin_written_out() -> None:
    assert EQUIVALENCE_SD_FRACTION == 0.25  # a quarter pooled SD (README, Equivalence margins)


def groups_that_differ() -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """A score over 40 images and one measure whose hard quartile (the 10 highest scores) sits higher and spreads
    wider than its easy quartile (the 10 lowest): ``(score, measure, {"easy": …, "hard": …})``, each group's images in
    increasing score (the order the bootstrap draws them in)."""
    rng = np.random.default_rng(41)
    score = rng.permutation(40).astype(np.float64)
    measure = np.where(score >= 30, 3.0 + 2.0 * rng.standard_normal(40), rng.standard_normal(40))
    by_score = np.argsort(score)
    return score, measure, {"easy": measure[by_score[:10]], "hard": measure[by_score[30:]]}


def difference_of_means(first: np.ndarray, second: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(first, axis=axis) - np.mean(second, axis=axis)


def scipy_difference_ci(minuend: np.ndarray, subtrahend: np.ndarray, seed: int) -> tuple[float, float]:
    """The 95 % percentile bootstrap of mean(minuend) − mean(subtrahend), each group resampled on its own."""
    result = stats.bootstrap(
        (minuend, subtrahend),
        difference_of_means,
        paired=False,
        vectorized=True,
        n_resamples=RESAMPLES,
        method="percentile",
        confidence_level=0.95,
        rng=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def test_hard_minus_easy_is_the_hard_quartile_less_the_easy_one_at_95_percent() -> None:
    score, measure, groups = groups_that_differ()
    entry = quartile_analysis(score, {"m": measure}, 7, RESAMPLES)["measures"]["m"]
    difference = entry["hard_minus_easy"]
    assert difference["mean"] == pytest.approx(groups["hard"].mean() - groups["easy"].mean(), rel=1e-12)
    assert difference["mean"] > 1.0  # the groups differ: a swapped subtraction changes the sign
    low, high = scipy_difference_ci(groups["hard"], groups["easy"], 7)
    assert (difference["ci_low"], difference["ci_high"]) == (
        pytest.approx(low, rel=1e-12),
        pytest.approx(high, rel=1e-12),
    )
    narrower = stats.bootstrap(
        (groups["hard"], groups["easy"]),
        difference_of_means,
        vectorized=True,
        n_resamples=RESAMPLES,
        method="percentile",
        confidence_level=0.90,
        rng=np.random.default_rng(7),
    ).confidence_interval
    assert difference["ci_high"] - difference["ci_low"] > 1.1 * (narrower.high - narrower.low)  # 95 %, not 90 %


def test_the_equivalence_interval_is_welchs_90_percent_t_interval_within_a_quarter_pooled_sd() -> None:
    score, measure, groups = groups_that_differ()
    equivalence = quartile_analysis(score, {"m": measure}, 7, RESAMPLES)["measures"]["m"]["equivalence"]
    easy, hard = groups["easy"], groups["hard"]
    pooled = np.sqrt((9 * easy.var(ddof=1) + 9 * hard.var(ddof=1)) / 18)
    margin = 0.25 * pooled
    welch = stats.ttest_ind(hard, easy, equal_var=False)
    interval = welch.confidence_interval(0.90)
    assert equivalence["confidence"] == pytest.approx(0.90, abs=1e-12)
    assert equivalence["margin"] == pytest.approx(margin, rel=1e-12)
    assert equivalence["mean"] == pytest.approx(hard.mean() - easy.mean(), rel=1e-12)
    assert (equivalence["ci_low"], equivalence["ci_high"]) == (
        pytest.approx(interval.low, rel=1e-10),
        pytest.approx(interval.high, rel=1e-10),
    )
    above = stats.ttest_ind(hard - (-margin), easy, equal_var=False, alternative="greater").pvalue
    below = stats.ttest_ind(hard - margin, easy, equal_var=False, alternative="less").pvalue
    assert equivalence["p_value"] == pytest.approx(max(above, below), rel=1e-9)


def test_incorrect_minus_correct_is_the_incorrect_images_less_the_correct_ones_at_95_percent() -> None:
    rng = np.random.default_rng(43)
    correct = np.arange(30) % 3 != 0  # 20 correct, 10 incorrect
    measure = np.where(correct, 1.0, 4.0) + rng.standard_normal(30)
    entry = correctness_analysis(correct, {"m": measure}, 3, RESAMPLES)["measures"]["m"]
    difference = entry["incorrect_minus_correct"]
    assert difference["mean"] == pytest.approx(measure[~correct].mean() - measure[correct].mean(), rel=1e-12)
    assert difference["mean"] > 1.5
    low, high = scipy_difference_ci(measure[~correct], measure[correct], 3)
    assert (difference["ci_low"], difference["ci_high"]) == (
        pytest.approx(low, rel=1e-12),
        pytest.approx(high, rel=1e-12),
    )


# ---- Holm over the judged measures, on families where Holm, Bonferroni and no correction decide differently


def with_mann_whitney(p_values: dict[str, float]) -> dict:
    """The hand-built analysis (five judged measures; K_τ^err saturated) with the primary score's Mann–Whitney ps."""
    built = hand_built_analysis()
    for name, p_value in p_values.items():
        built["quartiles"]["cross_entropy"]["measures"][name]["mann_whitney_p"] = p_value
    return built


def test_holm_over_the_measures_where_bonferroni_would_not_reject() -> None:
    """Raw ps (C≤3^s 0.009, N_eff^v 0.011, three at 0.5) of five judged measures: Holm gives 0.045, 0.045 — both
    ≤ α — where Bonferroni gives 0.045 and 0.055 (N_eff^v not rejected) and no correction rejects both."""
    built = with_mann_whitney(
        {"c_le3_scalar": 0.009, "n_eff_vector": 0.011, "kappa_vector": 0.5, "kappa_scalar": 0.5, "k_err_tau_0.3": 0.5}
    )
    entries = by_id(e5.verdicts(built))
    n_eff, c_le3 = entries["n_eff_vector.hard_minus_easy"], entries["c_le3_scalar.hard_minus_easy"]
    assert c_le3["test"]["p_adjusted"] == pytest.approx(0.045, rel=1e-12)
    assert n_eff["test"]["p_adjusted"] == pytest.approx(0.045, rel=1e-12)  # max(5 × 0.009, 4 × 0.011)
    for name in ("kappa_vector", "kappa_scalar", "k_err_tau_0.3"):
        assert entries[f"{name}.hard_minus_easy"]["test"]["p_adjusted"] == 1.0  # 3 × 0.5, capped
    assert n_eff["test"]["family_size"] == 5 and n_eff["test"]["correction"] == "Holm"
    assert n_eff["decision"] == HOLDS  # Bonferroni (0.055) would say cannot tell
    assert c_le3["decision"] == FAILS  # significant, CI below 0, beyond its margin


def test_holm_over_the_measures_where_the_raw_ps_would_reject() -> None:
    """Raw ps 0.011 and 0.011: each ≤ α alone, but Holm gives 0.055 to both (5 × 0.011, then max(0.055, 4 × 0.011))."""
    built = with_mann_whitney(
        {"c_le3_scalar": 0.011, "n_eff_vector": 0.011, "kappa_vector": 0.5, "kappa_scalar": 0.5, "k_err_tau_0.3": 0.5}
    )
    entries = by_id(e5.verdicts(built))
    n_eff, c_le3 = entries["n_eff_vector.hard_minus_easy"], entries["c_le3_scalar.hard_minus_easy"]
    assert n_eff["test"]["p_adjusted"] == pytest.approx(0.055, rel=1e-12)
    assert c_le3["test"]["p_adjusted"] == pytest.approx(0.055, rel=1e-12)
    assert n_eff["decision"] == CANNOT_TELL and c_le3["decision"] == CANNOT_TELL


def with_tost_p(p_values: dict[str, float]) -> dict:
    built = hand_built_analysis()
    for name, p_value in p_values.items():
        built["quartiles"]["cross_entropy"]["measures"][name]["equivalence"]["p_value"] = p_value
    return built


@pytest.mark.parametrize(
    ("raw", "adjusted", "decisions"),
    [
        # Holm 0.036, 0.048 (both hold); Bonferroni 0.036, 0.072 would not reject κ^s
        ((0.012, 0.024, 0.5), (0.036, 0.048, 0.5), (HOLDS, HOLDS)),
        # each raw p ≤ α, Holm 0.06 for both: neither holds
        ((0.02, 0.02, 0.5), (0.06, 0.06, 0.5), (CANNOT_TELL, CANNOT_TELL)),
    ],
    ids=["holm-rejects-where-bonferroni-would-not", "raw-ps-would-reject-where-holm-does-not"],
)
def test_holm_over_the_order_measures_equivalence(raw: tuple, adjusted: tuple, decisions: tuple) -> None:
    """The TOST ps of the three judged order measures (κ^v, κ^s, C≤3^s), Holm-adjusted over them."""
    names = ("kappa_vector", "kappa_scalar", "c_le3_scalar")
    entries = by_id(e5.verdicts(with_tost_p(dict(zip(names, raw)))))
    for name, expected in zip(names, adjusted):
        assert entries[f"{name}.hard_minus_easy"]["parameters"]["tost_p_adjusted"] == pytest.approx(expected, rel=1e-12)
    assert (
        entries["kappa_vector.hard_minus_easy"]["decision"],
        entries["kappa_scalar.hard_minus_easy"]["decision"],
    ) == (decisions)
