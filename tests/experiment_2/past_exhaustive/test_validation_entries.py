"""Step 11's validation statistics entry by entry (experiment_2/past_exhaustive/validation/replications.py): one cell's coverage, bias
and error compared whole with hand computations at and around every threshold, the verdict of a (table, statistic)
whole, the chance of a calibrated interval failing the band against the binomial sum by hand, the exact ē_k against
brute-force subset sums, and the replications against the estimators called directly with the same seeds."""

from __future__ import annotations

from itertools import combinations
from math import comb, sqrt

import numpy as np
import pytest
from scipy import stats

from experiment_1.report import exact_proportion_ci
from experiment_2.past_exhaustive.sampling.subcubes import (
    draw_subcubes,
    subcube_estimates,
    subcube_mask_ids,
    subcube_order_means,
)
from experiment_2.past_exhaustive.sampling.walsh import RHOS, estimate_names, walsh_design, walsh_estimates, walsh_exact
from experiment_2.past_exhaustive.validation import replications as rep

INF = float("inf")


def test_a_cell_entry_whole_with_the_exact_value_on_the_interval_ends() -> None:
    """Five replications: the exact value 1.0 on a lower end, on an upper end, inside, above and below an interval."""
    estimate = np.array([1.5, 0.5, 1.0, 0.0, 3.0])
    ci_low = np.array([1.0, 0.0, 0.5, -1.0, 2.0])
    ci_high = np.array([2.0, 1.0, 1.5, 0.5, 4.0])
    spread = float(np.std(estimate, ddof=1))
    bias = 1.2 - 1.0
    half = (ci_high - ci_low) / 2
    coverage = exact_proportion_ci(np.array([1.0, 1.0, 1.0, 0.0, 0.0]))
    assert rep.cell(estimate, ci_low, ci_high, 1.0) == {
        "exact": 1.0,
        "mean_estimate": pytest.approx(1.2),
        "replications": 5,
        "interval_reported": True,
        "bias": pytest.approx(bias),
        "estimator_se": pytest.approx(spread),
        "bias_in_se": pytest.approx(bias / spread),
        "bias_t": pytest.approx(bias / (spread / sqrt(5))),
        "relative_rmse": pytest.approx(sqrt((0.25 + 0.25 + 0 + 1 + 4) / 5) / 1.0),
        "coverage": pytest.approx(0.6),
        "coverage_ci": [pytest.approx(coverage["ci_low"]), pytest.approx(coverage["ci_high"])],
        "exact_above_interval": pytest.approx(0.2),
        "exact_below_interval": pytest.approx(0.2),
        "estimate_half_width_rank_correlation": pytest.approx(stats.spearmanr(estimate, half).statistic),
        "mean_ci_half_width": pytest.approx(float(half.mean())),
        "passes": False,
    }


def test_the_bias_in_se_at_exactly_one_fails_and_its_t_uses_the_sample_sd() -> None:
    """Estimates 1, 3, 5 (SD exactly 2 with divisor n − 1) against exact 1: bias 2 = 1 SE, which fails the rule with
    an interval or without; against exact 3.5 the bias is 0.25 SE and its t is 0.25 × √3."""
    estimate = np.array([1.0, 3.0, 5.0])
    wide = np.full(3, 100.0)
    at_one = rep.cell(estimate, -wide, wide, 1.0)
    assert at_one["estimator_se"] == 2.0 and at_one["bias_in_se"] == 1.0 and at_one["coverage"] == 1.0
    assert not at_one["passes"]
    no_interval = rep.cell(estimate, np.full(3, np.nan), np.full(3, np.nan), 1.0)
    assert no_interval["coverage"] is None and no_interval["coverage_ci"] is None and not no_interval["passes"]
    small = rep.cell(estimate, -wide, wide, 2.5)
    assert small["bias_in_se"] == 0.25 and small["bias_t"] == pytest.approx(0.25 * sqrt(3))
    # an SD below 1 still gives a bias t
    tight = rep.cell(np.array([0.1, 0.2, 0.3]), -wide, wide, 0.1)
    assert tight["bias_t"] == pytest.approx(0.1 / (0.1 / sqrt(3)))
    assert tight["relative_rmse"] == pytest.approx(sqrt((0 + 0.01 + 0.04) / 3) / 0.1)


def test_a_constant_estimator_and_an_exact_zero() -> None:
    """No spread: bias 0 gives 0 SE and passes; any bias gives infinitely many SE and fails; an exact value of 0
    has an infinite relative error; a constant estimate has no rank correlation."""
    constant = np.full(4, 2.0)
    wide = np.full(4, 10.0)
    same = rep.cell(constant, -wide, wide, 2.0)
    assert (same["bias_in_se"], same["bias_t"], same["estimator_se"], same["passes"]) == (0.0, 0.0, 0.0, False)
    assert same["coverage"] == 1.0  # above the band: fails on coverage alone
    assert rep.cell(constant, np.full(4, np.nan), np.full(4, np.nan), 2.0)["passes"] is True
    assert same["estimate_half_width_rank_correlation"] is None
    off = rep.cell(constant, -wide, wide, 1.0)
    assert off["bias_in_se"] == INF and off["bias_t"] == 0.0 and not off["passes"]
    zero = rep.cell(np.array([-1.0, 1.0, 0.5, -0.5]), -wide, wide, 0.0)
    assert zero["relative_rmse"] == INF and zero["passes"] is False  # covers all: above the band
    biased_constant = rep.cell(constant, np.full(4, np.nan), np.full(4, np.nan), 1.0)
    assert biased_constant["bias_in_se"] == INF and not biased_constant["passes"]


def test_an_interval_with_one_finite_end_is_an_interval() -> None:
    """Only the lower ends finite: the estimator reports an interval (NaN upper ends cover nothing) with no mean
    half-width (None, and no numpy warning); an infinite end gives an infinite one."""
    estimate = np.array([0.9, 1.1, 1.0])
    entry = rep.cell(estimate, np.zeros(3), np.full(3, np.nan), 1.0)
    assert entry["interval_reported"] and entry["coverage"] == 0.0 and entry["mean_ci_half_width"] is None
    entry = rep.cell(estimate, np.full(3, np.nan), np.full(3, 2.0), 1.0)
    assert entry["interval_reported"] and entry["coverage"] == 0.0
    entry = rep.cell(estimate, np.array([0.0, np.nan, 0.5]), np.array([np.inf, 2.0, 1.5]), 1.0)
    assert entry["mean_ci_half_width"] == np.inf and entry["coverage"] == pytest.approx(2 / 3)


def test_a_bias_of_exactly_one_se_fails_inside_the_band() -> None:
    """100 estimates with mean 0 and SD exactly 1 (22 at ±1.5, 56 at 0), 95 covered: in the band; against exact −1
    the bias is exactly 1 SE, which fails; against −0.5 it passes."""
    estimate = np.r_[np.full(22, 1.5), np.full(22, -1.5), np.zeros(56)]
    ci_low = np.r_[np.full(95, -5.0), np.full(5, 1.0)]
    at_one = rep.cell(estimate, ci_low, ci_low + 10.0, -1.0)
    assert at_one["estimator_se"] == 1.0 and at_one["bias_in_se"] == 1.0 and at_one["coverage"] == 0.95
    assert not at_one["passes"]
    assert rep.cell(estimate, ci_low, ci_low + 10.0, -0.5)["passes"]


def test_coverage_at_the_lower_band_edge_passes() -> None:
    """93 of 100 replications covered, unbiased: in the band; 92 is not."""
    rng = np.random.default_rng(3)
    estimate = rng.normal(0.0, 1.0, 100)
    estimate -= estimate.mean()
    for covered, passes in ((93, True), (92, False)):
        ci_low = np.r_[np.full(covered, -5.0), np.full(100 - covered, 1.0)]
        entry = rep.cell(estimate, ci_low, ci_low + 10.0, 0.0)
        assert entry["coverage"] == pytest.approx(covered / 100) and entry["passes"] is passes


def test_the_rank_correlation_needs_three_half_widths_and_spread_above_round_off() -> None:
    """Three finite half-widths give a correlation (two do not); half-widths equal to round-off at a large magnitude,
    or all zero, give none."""
    estimate = np.array([1.0, 2.0, 3.0, 4.0])
    ci_low = np.array([0.0, 0.0, 0.0, np.nan])
    entry = rep.cell(estimate, ci_low, np.array([1.0, 3.0, 2.0, np.nan]), 2.0)
    assert entry["estimate_half_width_rank_correlation"] == pytest.approx(0.5)
    assert (
        rep.cell(estimate, ci_low, np.array([1.0, np.nan, 2.0, np.nan]), 2.0)["estimate_half_width_rank_correlation"]
        is None
    )
    big = 1e6 + np.array([0.0, 1e-7, 2e-7, 3e-7])  # a spread of 3e-7, below 1e-12 of 2e6
    entry = rep.cell(estimate, -big, big, 2.0)
    assert entry["estimate_half_width_rank_correlation"] is None
    assert rep.cell(estimate, estimate, estimate, 2.0)["estimate_half_width_rank_correlation"] is None
    spread_out = 1e6 + np.array([0.0, 1.0, 3.0, 2.0])
    assert rep.cell(estimate, -spread_out, spread_out, 2.0)["estimate_half_width_rank_correlation"] == (
        pytest.approx(0.8)
    )


def test_a_verdict_entry_whole() -> None:
    """A validated budget beside a failing one: the verdict, the counts, the failing cell's numbers with its misses,
    the rule; a failing budget without an interval keeps only the keys it has."""
    rng = np.random.default_rng(5)
    estimate = rng.normal(0.0, 1.0, 200)
    estimate -= estimate.mean()
    good = {**rep.cell(estimate, estimate - 1.96, estimate + 1.96, 0.0), "budget": "a"}
    narrow = {**rep.cell(estimate, estimate - 0.5, estimate + 0.5, 0.0), "budget": "b"}
    keys = ("budget", "coverage", "coverage_ci", "bias_in_se", "relative_rmse", "replications", "interval_reported")
    misses = ("exact_above_interval", "exact_below_interval", "estimate_half_width_rank_correlation")
    assert rep.decide([good, narrow]) == {
        "verdict": rep.NOT_VALIDATED,
        "budgets": 2,
        "budgets_with_interval": 2,
        "failing": [{key: narrow[key] for key in keys + misses}],
        "rule": rep.RULE,
    }
    biased = {**rep.cell(estimate + 5.0, np.full(200, np.nan), np.full(200, np.nan), 0.0), "budget": "c"}
    assert rep.decide([good, biased]) == {
        "verdict": rep.NOT_VALIDATED,
        "budgets": 2,
        "budgets_with_interval": 1,
        "failing": [{key: biased[key] for key in keys}],
        "rule": rep.RULE,
    }


def test_wide_at_exactly_one_se_of_bias_is_not_conservative() -> None:
    """Covering every time with a bias of exactly 1 SE: the bias fails the rule, so it is not merely conservative."""
    estimate = np.array([1.0, 3.0, 5.0])
    wide = {**rep.cell(estimate, np.full(3, -100.0), np.full(3, 100.0), 1.0), "budget": "a"}
    assert wide["coverage"] == 1.0 and wide["bias_in_se"] == 1.0
    assert rep.decide([wide])["verdict"] == rep.NOT_VALIDATED


@pytest.mark.parametrize("replications", [100, 150, 200, 1000, 37])
def test_chance_failure_is_the_binomial_mass_outside_the_band(replications: int) -> None:
    """The band in counts is [⌈0.93 n⌉, ⌊0.97 n⌋] (integer arithmetic); the chance is the binomial mass outside it."""
    low, high = -(-93 * replications // 100), 97 * replications // 100
    outside = sum(
        comb(replications, k) * 0.95**k * 0.05 ** (replications - k)
        for k in range(replications + 1)
        if not low <= k <= high
    )
    assert rep.chance_failure(replications) == pytest.approx(outside, rel=1e-9, abs=1e-15)


def test_exact_per_coefficient_equals_brute_force_subset_sums() -> None:
    """ē_k of a float32 (2^3, 3) table: every Δ_S by its subset sum in float64, squared, summed per order, over C(3, k)."""
    table = np.random.default_rng(7).standard_normal((8, 3)).astype(np.float32) * 1e3
    values = table.astype(np.float64)
    energies = np.zeros(4)
    for subset in range(8):
        bits = [bit for bit in range(3) if subset >> bit & 1]
        delta = sum(
            (-1) ** (len(bits) - size) * values[sum(1 << bit for bit in chosen)]
            for size in range(len(bits) + 1)
            for chosen in combinations(bits, size)
        )
        energies[len(bits)] += float(np.square(delta).sum())
    expected = energies / np.array([comb(3, k) for k in range(4)])
    assert np.allclose(rep.exact_per_coefficient(table), expected, rtol=1e-13, atol=0)


def test_replication_seeds_are_the_seed_sequence_of_their_parts() -> None:
    assert rep.replication_seed(3, 4) == int(np.random.SeedSequence([3, 4]).generate_state(1)[0])
    assert rep.replication_seed(3, 4) == rep.replication_seed(3, 4) != rep.replication_seed(4, 3)


def _tiny_table() -> np.ndarray:
    return np.random.default_rng(11).standard_normal((2**4, 2))


def test_subcube_replications_are_the_estimator_at_their_seeds() -> None:
    """4-block sub-cubes of 6 blocks: order 2 has C(4, 2) = 6 coefficients a draw, so an interval, whose limits read
    the resamples' seed; the other orders have none."""
    table = np.random.default_rng(11).standard_normal((2**6, 2))
    out = rep.subcube_replications(rep.DenseTable(table), 4, 5, 3, seed=9)
    assert np.isfinite(out["ci_low"][:, 1]).all() and np.isfinite(out["ci_high"][:, 1]).all()
    assert np.isnan(out["ci_low"][:, [0, 2, 3]]).all()
    for replication in range(3):
        blocks = draw_subcubes(6, 4, 5, rep.replication_seed(9, replication))
        rows = subcube_estimates(
            subcube_order_means(table[subcube_mask_ids(blocks)]),
            confidence=rep.NOMINAL,
            seed=rep.replication_seed(9, replication, 1),
        )
        for key, name in (("estimate", "mean"), ("ci_low", "ci_low"), ("ci_high", "ci_high")):
            assert np.array_equal(out[key][replication], [row[name] for row in rows], equal_nan=True)


def test_walsh_replications_are_the_estimator_at_their_seeds() -> None:
    table = _tiny_table()
    names = ["variance", "w2", "low_degree_share"]
    out = rep.walsh_replications(rep.DenseTable(table), 6, 2, seed=13, names=names)
    for replication in range(2):
        design = walsh_design(4, 6, rep.replication_seed(13, replication), RHOS)
        ids = design.all_ids()
        result = walsh_estimates(
            design, ids, table[ids], confidence=rep.NOMINAL, seed=rep.replication_seed(13, replication, 1)
        )
        assert out["masks"][replication] == len(ids)
        for key in ("estimate", "ci_low", "ci_high"):
            assert np.array_equal(out[key][replication], [result[name][key] for name in names])


def test_replicate_table_is_every_budget_cell_by_hand() -> None:
    """Two budgets: each statistic's cell from the replications at budget i's seed and the exact value of the table."""
    table = _tiny_table()
    budgets = [
        {"estimator": "subcubes", "size": 2, "draws": 4, "name": "u=2×4"},
        {"estimator": "walsh", "samples": 6, "name": "m=6"},
    ]
    cells = rep.replicate_table(rep.DenseTable(table), budgets, 3, seed=17)
    ebar = rep.exact_per_coefficient(table)
    sub = rep.subcube_replications(rep.DenseTable(table), 2, 4, 3, rep.replication_seed(17, 0))
    names = list(estimate_names())
    walsh = rep.walsh_replications(rep.DenseTable(table), 6, 3, rep.replication_seed(17, 1), names)
    exact = walsh_exact(table)
    expected = [
        {
            "estimator": "subcubes",
            "statistic": f"ebar_{k}",
            "budget": "u=2×4",
            **rep.cell(sub["estimate"][:, k - 1], sub["ci_low"][:, k - 1], sub["ci_high"][:, k - 1], ebar[k]),
        }
        for k in (1, 2)
    ] + [
        {
            "estimator": "walsh",
            "statistic": name,
            "budget": "m=6",
            **rep.cell(
                walsh["estimate"][:, column], walsh["ci_low"][:, column], walsh["ci_high"][:, column], exact[name]
            ),
            "mean_distinct_masks": float(walsh["masks"].mean()),
        }
        for column, name in enumerate(names)
    ]
    assert_same_cells(cells, expected)
    # one estimator's budgets alone: the same cells, each budget still seeded by its place in the whole list
    for estimator in ("subcubes", "walsh"):
        alone = rep.replicate_table(rep.DenseTable(table), budgets, 3, seed=17, estimator=estimator)
        assert_same_cells(alone, [entry for entry in expected if entry["estimator"] == estimator])


def assert_same_cells(cells: list[dict], expected: list[dict]) -> None:
    """The same cells in the same order, every entry equal (NaN where both are NaN)."""
    assert len(cells) == len(expected)
    for got, want in zip(cells, expected):
        assert got.keys() == want.keys()
        for key in want:
            assert got[key] == want[key] or (got[key] != got[key] and want[key] != want[key]), (got["statistic"], key)
