"""Random sub-cubes (experiment_2.past_exhaustive.sampling.subcubes): the mask ids of a sub-cube, the draws, per-draw order means that
average to the exact mean coefficient energies over all sub-cubes (unbiasedness, by brute force), and the coverage of
the intervals over replications, inside a band an exact binomial argument sets (and a too-narrow interval outside it)."""

from __future__ import annotations

import itertools
from math import comb

import numpy as np
import pytest
from sampling_tables import mobius_by_definition, popcount, residual_game_table
from scipy import stats

from experiment_2.past_exhaustive.sampling.subcubes import (
    INTERVAL,
    MIN_COEFFICIENTS,
    NO_INTERVAL,
    draw_subcubes,
    interval_orders,
    subcube_estimates,
    subcube_mask_ids,
    subcube_order_means,
)

REPLICATIONS = 1000
TAIL = 1e-4  # a method whose true coverage lies in [0.93, 0.97] leaves the band with probability below TAIL per side


def coverage_band(replications: int) -> tuple[int, int]:
    """Counts of covering replications consistent with a true coverage between 93 % and 97 %."""
    low = int(stats.binom.ppf(TAIL, replications, 0.93))
    high = int(stats.binom.isf(TAIL, replications, 0.97))
    return low, high


def mean_energies_by_definition(table: np.ndarray) -> np.ndarray:
    """``ē_k = E_k / C(L, k)`` for ``k = 0 … L``."""
    num_blocks = len(table).bit_length() - 1
    energies = np.square(mobius_by_definition(table)).sum(axis=1)
    orders = np.array([popcount(s) for s in range(len(table))])
    return np.array([energies[orders == k].sum() / comb(num_blocks, k) for k in range(num_blocks + 1)])


def test_subcube_mask_ids_by_hand() -> None:
    blocks = np.array([1, 3, 4])
    expected = [0, 2, 8, 10, 16, 18, 24, 26]  # local bit j ↔ block blocks[j]
    assert subcube_mask_ids(blocks).tolist() == expected
    assert subcube_mask_ids(blocks).dtype == np.int64
    rows = np.array([[1, 3, 4], [0, 5, 61]])
    np.testing.assert_array_equal(subcube_mask_ids(rows), np.stack([subcube_mask_ids(row) for row in rows]))
    assert int(subcube_mask_ids(np.array([0, 5, 61]))[-1]) == 1 + (1 << 5) + (1 << 61)
    assert subcube_mask_ids(np.array([], dtype=np.int64)).tolist() == [0]


def test_draws_are_seeded_ascending_uniform_subsets() -> None:
    draws = draw_subcubes(50, 12, 4000, seed=3)
    assert draws.shape == (4000, 12) and draws.dtype == np.int64
    assert (np.diff(draws, axis=1) > 0).all() and draws.min() >= 0 and draws.max() < 50
    np.testing.assert_array_equal(draws, draw_subcubes(50, 12, 4000, seed=3))
    assert not np.array_equal(draws, draw_subcubes(50, 12, 4000, seed=4))
    # each block is in a draw with probability 12/50: every count inside the central 1 − 1e-6 binomial range
    counts = np.bincount(draws.ravel(), minlength=50)
    low, high = stats.binom.ppf(5e-7, 4000, 12 / 50), stats.binom.isf(5e-7, 4000, 12 / 50)
    assert ((counts >= low) & (counts <= high)).all()
    # and every 2-subset of 5 blocks equally often (chi-square, p far from 0)
    small = draw_subcubes(5, 2, 5000, seed=0)
    frequencies = np.unique(small[:, 0] * 5 + small[:, 1], return_counts=True)[1]
    assert len(frequencies) == 10 and stats.chisquare(frequencies).pvalue > 1e-4
    with pytest.raises(ValueError, match="size"):
        draw_subcubes(4, 5, 1, seed=0)


@pytest.mark.parametrize("num_blocks", [4, 5, 6, 7])
def test_order_means_over_all_subcubes_equal_the_exact_mean_energies(num_blocks: int) -> None:
    table = np.random.default_rng(num_blocks).normal(size=(2**num_blocks, 3)) + 2.0
    exact = mean_energies_by_definition(table)
    for size in range(1, num_blocks + 1):
        subsets = np.array(list(itertools.combinations(range(num_blocks), size)))
        means = subcube_order_means(table[subcube_mask_ids(subsets)])
        assert means.shape == (len(subsets), size + 1)
        np.testing.assert_allclose(means.mean(axis=0), exact[: size + 1], rtol=1e-10, atol=0)


def test_order_means_of_one_subcube_by_hand() -> None:
    table = residual_game_table(5, 2, seed=1)
    blocks = np.array([0, 2, 3])
    coefficients = mobius_by_definition(table)  # Δ_S of the full game; the sub-cube's are those with S ⊆ U
    ids = subcube_mask_ids(blocks)
    energies = np.square(coefficients[ids]).sum(axis=1)
    sizes = np.array([popcount(t) for t in range(8)])
    expected = [energies[sizes == k].mean() for k in range(4)]
    np.testing.assert_allclose(subcube_order_means(table[ids][None])[0], expected, rtol=1e-12)


def replicated_intervals(confidence: float, replications: int) -> tuple[np.ndarray, np.ndarray]:
    """Over independent designs of 30 draws of 6 of 9 blocks: whether each order's interval covers the exact ē_k,
    shape (replications, 6) (the top order k = 6, one coefficient per draw, has none: never covered), and the
    estimates relative to ē_k."""
    table = residual_game_table(9, 3, seed=0)
    exact = mean_energies_by_definition(table)[1:7]
    subsets = np.array(list(itertools.combinations(range(9), 6)))
    per_subset = subcube_order_means(table[subcube_mask_ids(subsets)])  # every sub-cube once
    lookup = {tuple(row): index for index, row in enumerate(subsets)}
    covered, estimates = [], []
    for replication in range(replications):
        draws = draw_subcubes(9, 6, 30, seed=replication)
        chosen = per_subset[[lookup[tuple(d)] for d in draws]]
        rows = subcube_estimates(chosen, confidence, seed=replication, num_resamples=999)
        covered.append([row["ci_low"] <= truth <= row["ci_high"] for row, truth in zip(rows, exact)])
        estimates.append([row["mean"] for row in rows])
    return np.array(covered), np.array(estimates) / exact


def test_intervals_cover_at_their_rate_and_estimates_are_unbiased() -> None:
    covered, relative = replicated_intervals(0.95, REPLICATIONS)
    low, high = coverage_band(REPLICATIONS)
    counts = covered[:, :5].sum(axis=0)  # orders 1 … 5 (6 to 20 coefficients per draw); the top order 6 has none
    assert ((counts >= low) & (counts <= high)).all(), (counts, (low, high))
    assert not covered[:, 5].any()
    # unbiased: the mean relative estimate over replications within 4 standard errors of 1
    spread = relative.std(axis=0) / np.sqrt(REPLICATIONS)
    assert (np.abs(relative.mean(axis=0) - 1) < 4 * spread).all()
    # the band can fail: 80 % intervals fall below it
    narrow, _ = replicated_intervals(0.80, 200)
    assert (narrow[:, :5].mean(axis=0) < low / REPLICATIONS).all()


def test_an_order_gets_an_interval_when_each_draw_averages_enough_of_its_coefficients() -> None:
    assert MIN_COEFFICIENTS == 6
    assert interval_orders(4).tolist() == [False, True, False, False]  # C(4, k) = 4, 6, 4, 1
    assert interval_orders(6).tolist() == [True] * 5 + [False]  # 6, 15, 20, 15, 6, 1
    assert interval_orders(8).tolist() == [True] * 7 + [False]
    assert interval_orders(4, min_coefficients=4).tolist() == [True, True, True, False]
    assert interval_orders(3, min_coefficients=1).all() and not interval_orders(3, min_coefficients=7).any()
    assert interval_orders(0).shape == (0,)
    draws = np.random.default_rng(5).gamma(0.5, size=(30, 5))  # ‖h(∅)‖² and orders 1 … 4
    default, every = subcube_estimates(draws), subcube_estimates(draws, min_coefficients=1)
    assert [row["interval"] == INTERVAL for row in default] == [False, True, False, False]
    assert all(np.isnan([row["ci_low"], row["ci_high"]]).all() for row in default if row["interval"] == NO_INTERVAL)
    assert [row["interval"] == INTERVAL for row in every] == [True] * 4
    # each order's limits read the same resamples whichever other orders get one
    assert (default[1]["ci_low"], default[1]["ci_high"]) == pytest.approx((every[1]["ci_low"], every[1]["ci_high"]))
    assert [row["mean"] for row in default] == [row["mean"] for row in every]


def test_estimates_rows_and_small_inputs() -> None:
    means = np.array([[1.0, 2.0, 5.0, 4.0], [1.0, 2.0, 7.0, 0.0], [1.0, 2.0, 9.0, 8.0], [1.0, 2.0, 3.0, 1.0]])
    rows = subcube_estimates(means, min_coefficients=3)  # a 3-block sub-cube: 3, 3 and 1 coefficients per draw
    assert [row["order"] for row in rows] == [1, 2, 3] and rows[0]["draws"] == 4
    assert rows[0]["mean"] == rows[0]["ci_low"] == rows[0]["ci_high"] == 2.0  # all draws alike
    assert rows[1]["mean"] == 6.0 and rows[1]["ci_low"] < 6.0 < rows[1]["ci_high"]
    assert rows[1]["se"] == pytest.approx(np.std([5.0, 7.0, 9.0, 3.0], ddof=1) / 2, rel=1e-12)
    assert rows[1] == subcube_estimates(means, min_coefficients=3)[1]  # seeded
    assert "bootstrap" in rows[1]["interval"]
    # the top order (one coefficient per draw): the unbiased mean and its SE, no interval (the design rule)
    assert rows[2]["mean"] == 3.25 and np.isnan(rows[2]["ci_low"]) and np.isnan(rows[2]["ci_high"])
    assert rows[2]["interval"] == NO_INTERVAL and rows[2]["se"] > 0
    assert all(row["interval"] == NO_INTERVAL for row in subcube_estimates(means))  # the default: too few anywhere
    two = subcube_estimates(means[:2], min_coefficients=3)
    assert two[1]["mean"] == 6.0 and np.isnan(two[1]["ci_low"])
