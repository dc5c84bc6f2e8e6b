"""Walsh summaries from random masks (experiment_2.past_exhaustive.sampling.walsh): the exact summaries against the definitions
(per-coefficient transform, the influence and noise-stability definitions), the Krawtchouk identity behind the
exact-degree U-statistics (the double sum over all pairs equals w_k; a planted sign error is caught), the design's
masks, the estimates' convergence, the intervals by hand and the surrogate's R² by hand. Unbiasedness and coverage
over replications (minutes): test_sampling_walsh_replications.py."""

from __future__ import annotations

import itertools
import json
from math import comb

import numpy as np
import pytest
from sampling_tables import mobius_by_definition, popcount, residual_game_table, subset_of, walsh_by_definition
from scipy import stats

from experiment_1.errors import PipelineError
from experiment_2.past_exhaustive.sampling import walsh
from experiment_2.past_exhaustive.sampling.bootstrap import linearised_bootstrap_t_limits
from experiment_2.past_exhaustive.sampling.u_statistics import KernelSums, kernel_sums, variance_parts
from experiment_2.past_exhaustive.sampling.walsh import (
    RHOS,
    estimate_names,
    krawtchouk,
    surrogate_r2_by_size,
    walsh_design,
    walsh_estimates,
    walsh_exact,
)


def exact_by_definition(table: np.ndarray) -> dict[str, float]:
    """Every summary from its definition: variance over masks, Σ_i E‖h(x) − h(x ⊕ e_i)‖²/4, the ρ-noise operator
    summed over all pairs, and w_k from the per-coefficient transform."""
    size, num_blocks = len(table), len(table).bit_length() - 1
    masks = np.arange(size)
    variance = float(np.square(table - table.mean(axis=0)).sum(axis=1).mean())
    influence = sum(float(np.square(table - table[masks ^ (1 << i)]).sum(axis=1).mean()) / 4 for i in range(num_blocks))
    result = {
        "variance": variance,
        "influence": influence,
        "kappa_w": influence / variance,
        "kappa_w_per_block": influence / variance / num_blocks,
    }
    distance = np.array([[popcount(x ^ y) for y in range(size)] for x in range(size)])
    inner = table @ table.T
    mean_square = float(np.square(table.mean(axis=0)).sum())
    for rho in RHOS:
        transition = ((1 + rho) / 2) ** (num_blocks - distance) * ((1 - rho) / 2) ** distance  # P(y | x)
        result[f"stability_{rho}"] = (float((transition * inner).sum()) / size - mean_square) / variance
    coefficients = walsh_by_definition(table)
    orders = np.array([popcount(s) for s in range(size)])
    for k in (1, 2, 3):
        result[f"w{k}"] = float(np.square(coefficients[orders == k]).sum())
    result["low_degree_share"] = (result["w1"] + result["w2"] + result["w3"]) / variance
    return result


@pytest.mark.parametrize("num_blocks", [4, 5, 6, 7])
def test_exact_summaries_equal_their_definitions(num_blocks: int) -> None:
    table = residual_game_table(num_blocks, 3, seed=num_blocks)
    exact, expected = walsh_exact(table), exact_by_definition(table)
    assert list(exact) == list(estimate_names())
    for name in exact:
        assert exact[name] == pytest.approx(expected[name], rel=1e-10), name


def test_krawtchouk_counts_characters() -> None:
    num_blocks = 6
    for degree in range(num_blocks + 1):
        table = krawtchouk(num_blocks, degree)
        for z in range(2**num_blocks):  # Σ_{|S|=k} χ_S(z), χ_S(z) = (−1)^{|S ∩ z|}
            direct = sum((-1) ** popcount(s & z) for s in range(2**num_blocks) if popcount(s) == degree)
            assert table[popcount(z)] == direct
    assert krawtchouk(50, 3)[0] == comb(50, 3)


def pair_expectation(table: np.ndarray, kernel: np.ndarray) -> float:
    """E over independent uniform x, y of ⟨h(x), h(y)⟩ kernel[d(x, y)], by the double sum over all pairs."""
    size = len(table)
    distance = np.array([[popcount(x ^ y) for y in range(size)] for x in range(size)])
    return float((table @ table.T * kernel[distance]).sum()) / size**2


@pytest.mark.parametrize("num_blocks", [4, 6])
def test_krawtchouk_pair_expectation_is_the_exact_degree_weight(num_blocks: int) -> None:
    table = residual_game_table(num_blocks, 2, seed=7)
    coefficients = walsh_by_definition(table)
    orders = np.array([popcount(s) for s in range(len(table))])
    for degree in range(num_blocks + 1):
        weight = float(np.square(coefficients[orders == degree]).sum())
        assert pair_expectation(table, krawtchouk(num_blocks, degree)) == pytest.approx(weight, rel=1e-10, abs=1e-9)
    # a planted sign error in the kernel is caught: Σ_j C(d, j) C(L − d, k − j) is not w_k
    wrong = np.array([sum(comb(d, j) * comb(num_blocks - d, 2 - j) for j in range(3)) for d in range(num_blocks + 1)])
    weight = float(np.square(coefficients[orders == 2]).sum())
    assert abs(pair_expectation(table, wrong) - weight) > 0.1 * weight


def test_design_masks() -> None:
    num_blocks, count = 40, 5000
    design = walsh_design(num_blocks, count, seed=11)
    assert design.base.dtype == design.flipped.dtype == design.correlated.dtype == np.int64
    assert design.correlated.shape == (len(RHOS), count) and design.rhos == RHOS
    np.testing.assert_array_equal(design.flipped, design.base ^ (np.int64(1) << design.flip_bits))
    assert (np.bitwise_count(design.base ^ design.flipped) == 1).all()
    bits = (design.base[:, None] >> np.arange(num_blocks)) & 1
    trials = count * num_blocks  # every bit of every mask: one Bernoulli trial each
    low, high = stats.binom.ppf(5e-7, trials, 0.5), stats.binom.isf(5e-7, trials, 0.5)
    assert low <= bits.sum() <= high
    flips = np.bincount(design.flip_bits, minlength=num_blocks)
    assert flips.min() >= stats.binom.ppf(5e-7, count, 1 / num_blocks)
    assert flips.max() <= stats.binom.isf(5e-7, count, 1 / num_blocks)
    for rho, copies in zip(RHOS, design.correlated):
        agree = trials - int(np.bitwise_count(design.base ^ copies).sum())
        keep = (1 + rho) / 2
        assert stats.binom.ppf(5e-7, trials, keep) <= agree <= stats.binom.isf(5e-7, trials, keep), rho
    ids = design.all_ids()
    assert (np.diff(ids) > 0).all()
    assert set(ids.tolist()) == set(np.concatenate([design.base, design.flipped, design.correlated.ravel()]).tolist())
    again = walsh_design(num_blocks, count, seed=11)
    np.testing.assert_array_equal(again.correlated, design.correlated)
    assert json.loads(json.dumps(design.describe())) == again.describe()
    assert design.describe() != walsh_design(num_blocks, count, seed=12).describe()
    wide = walsh_design(62, 1000, seed=0)
    assert wide.all_ids().min() >= 0 and int(wide.all_ids().max()) < 2**62


def test_estimates_converge_and_take_ids_in_any_order() -> None:
    num_blocks = 6
    table = residual_game_table(num_blocks, 3, seed=2)
    exact = walsh_exact(table)
    design = walsh_design(num_blocks, 3000, seed=5)
    ids = np.arange(2**num_blocks)
    estimates = walsh_estimates(design, ids, table)
    assert list(estimates) == list(estimate_names())
    wide = walsh_estimates(design, ids, table, confidence=0.9999)
    for name, value in estimates.items():  # 3000 samples: every estimate within 10 %, inside its 99.99 % interval
        assert abs(value["estimate"] - exact[name]) <= 0.1 * abs(exact[name]), name
        assert wide[name]["ci_low"] <= exact[name] <= wide[name]["ci_high"], name
        assert value["ci_low"] < value["estimate"] < value["ci_high"], name
        assert value["se"] > 0
    intervals = {name: value["interval"] for name, value in estimates.items()}
    assert intervals == {
        **{name: f"{walsh.INTERVAL}, cut at 0" for name in ("variance", "influence")},
        "kappa_w": f"{walsh.INTERVAL}, cut to [1, L]",
        "kappa_w_per_block": f"{walsh.INTERVAL}, cut to [1/L, 1]",
        **{f"stability_{rho}": f"{walsh.STABILITY_INTERVAL}, cut to [ρ^L, ρ]" for rho in walsh.RHOS},
        **{f"w{k}": f"{walsh.PAIR_INTERVAL}, cut at 0" for k in (1, 2, 3)},
        "low_degree_share": f"{walsh.PAIR_INTERVAL}, cut to [0, 1]",
    }
    order = np.random.default_rng(0).permutation(len(ids))
    shuffled = walsh_estimates(design, ids[order], table[order])
    for name in estimates:  # the share's bootstrap runs over the design's units, whatever the order of the ids
        for key in ("estimate", "ci_low", "ci_high"):
            assert shuffled[name][key] == pytest.approx(estimates[name][key], rel=1e-12), (name, key)
    with pytest.raises(PipelineError, match="no value"):
        walsh_estimates(design, ids[1:], table[1:])


def test_surrogate_r2_is_one_with_every_coefficient() -> None:
    num_blocks = 6
    table = residual_game_table(num_blocks, 3, seed=4)
    rows = surrogate_r2_by_size(np.arange(2**num_blocks), mobius_by_definition(table), np.arange(64), table, 6)
    assert [row["size"] for row in rows] == [*range(num_blocks + 1), "all"]
    assert [row["count"] for row in rows] == [*(comb(num_blocks, k) for k in range(num_blocks + 1)), 64]
    for row in rows:
        if row["count"] > 1:
            assert row["r2"] == pytest.approx(1.0, abs=1e-10)
        else:  # one mask of that size: no spread
            assert np.isnan(row["r2"])


def test_surrogate_r2_by_hand() -> None:
    num_blocks = 6
    table = residual_game_table(num_blocks, 3, seed=4)
    coefficients = mobius_by_definition(table)
    kept = np.array([s for s in range(64) if popcount(s) <= 2])
    masks = np.random.default_rng(1).integers(0, 64, size=40)
    rows = surrogate_r2_by_size(kept, coefficients[kept], masks, table[masks], num_blocks)
    surrogate = np.array([sum(coefficients[s] for s in kept if subset_of(s, t)) for t in masks])
    for row in rows:
        chosen = (
            np.ones(len(masks), bool) if row["size"] == "all" else np.array([popcount(t) == row["size"] for t in masks])
        )
        spread = np.square(table[masks][chosen] - table[masks][chosen].mean(axis=0)).sum()
        expected = 1 - np.square(table[masks][chosen] - surrogate[chosen]).sum() / spread
        assert row["count"] == chosen.sum() and row["r2"] == pytest.approx(expected, rel=1e-12)


def test_surrogate_at_fifty_blocks_equals_a_subset_loop() -> None:
    num_blocks = 50
    kept = np.array(
        [sum(1 << b for b in combo) for k in range(4) for combo in itertools.combinations(range(num_blocks), k)]
    )
    assert len(kept) == 20876
    rng = np.random.default_rng(3)
    coefficients = rng.normal(size=(len(kept), 2))
    masks = np.array(
        [sum(1 << int(b) for b in rng.choice(num_blocks, size, replace=False)) for size in [5, 20, 45] * 3]
    )
    row_of = {int(s): i for i, s in enumerate(kept)}
    by_hand = []
    for t in masks:  # g(T) = Σ over the subsets S of T with |S| ≤ 3
        bits = [b for b in range(num_blocks) if (int(t) >> b) & 1]
        sets = (sum(1 << b for b in combo) for k in range(4) for combo in itertools.combinations(bits, k))
        by_hand.append(sum(coefficients[row_of[s]] for s in sets))
    rows = surrogate_r2_by_size(kept, coefficients, masks, np.array(by_hand), num_blocks)
    assert [row["size"] for row in rows] == [5, 20, 45, "all"]
    assert all(row["r2"] == pytest.approx(1.0, abs=1e-12) for row in rows)


def test_the_pair_intervals_read_pseudo_values_by_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the intervals of w1 … w3 and the share read, each recomputed from the kernels written out: the estimates'
    pseudo-values ``m·θ̂ − (m − 1)·θ̂₍₋ₐ₎`` (θ̂₍₋ₐ₎ the statistic of the other units, the same centred values, with the
    centring's correction; the share over the others' mean ‖g_b‖²·m/(m − 1)); the pseudo-values of each statistic's
    U-statistic variance, that of its kernel on the other units (the share's linearised at the others' share and
    variance, (P − s₍₋ₐ₎·A) / V₍₋ₐ₎, not at the whole sample's); the SEs
    from the linear and degenerate parts of the whole kernel, each cut at 0; the bounds, the tail and the call's seed;
    and the intervals returned are the ones reported."""
    seen = {}
    real = walsh._pair_intervals

    def record(*args: object) -> list:
        seen["args"] = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
        seen["out"] = real(*args)
        return seen["out"]

    monkeypatch.setattr(walsh, "_pair_intervals", record)
    num_blocks, count = 5, 12
    table = residual_game_table(num_blocks, 2, seed=6)
    design = walsh_design(num_blocks, count, seed=3)
    estimates = walsh_estimates(design, np.arange(2**num_blocks), table, confidence=0.9, seed=8)
    centred = table[design.base] - table[design.base].mean(axis=0)
    correction = 1 / (1 - 2 / count + 2 / count**2)
    distance = np.bitwise_count(design.base[:, None] ^ design.base[None, :])
    gram = centred @ centred.T
    np.fill_diagonal(gram, 0.0)
    pairs = [correction * gram * krawtchouk(num_blocks, k)[distance] for k in (1, 2, 3)]
    square = count / (count - 1) * np.square(centred).sum(axis=1)
    variance = square.mean()
    weights = [p.sum() / (count * (count - 1)) for p in pairs]
    share = sum(weights) / variance
    units = -share * square / variance
    kernels = [*pairs, (units[:, None] + units[None, :]) / 2 + sum(pairs) / variance]
    for kernel in kernels:
        np.fill_diagonal(kernel, 0.0)

    def sums(kernel: np.ndarray) -> KernelSums:
        return kernel_sums(kernel.sum(axis=1), np.square(kernel).sum(axis=1))

    without = np.zeros((count, 4))
    variance_without = np.zeros((count, 4))
    for left_out in range(count):
        rest = [a for a in range(count) if a != left_out]
        inner = [p[np.ix_(rest, rest)].sum() / ((count - 1) * (count - 2)) for p in pairs]
        without[left_out] = [*inner, sum(inner) / square[rest].mean()]
        units_left = -without[left_out, 3] * square / square[rest].mean()  # the share linearised at the others'
        share_left = (units_left[:, None] + units_left[None, :]) / 2 + sum(pairs) / square[rest].mean()
        np.fill_diagonal(share_left, 0.0)
        variance_without[left_out] = [sums(k[np.ix_(rest, rest)]).variance() for k in [*pairs, share_left]]
    names = ["w1", "w2", "w3", "low_degree_share"]
    pair_estimates, errors, estimate_pseudo, variance_pseudo, tail, seed, bounds = seen["args"]
    assert (tail, seed, bounds.tolist()) == (pytest.approx(0.1), 8, [np.inf, np.inf, np.inf, 1.0])
    assert pair_estimates.tolist() == [estimates[name]["estimate"] for name in names]
    np.testing.assert_allclose(pair_estimates, [*weights, share], rtol=1e-10)
    np.testing.assert_allclose(estimate_pseudo, count * pair_estimates - (count - 1) * without, rtol=1e-10, atol=1e-12)
    whole = np.array([sums(kernel).variance() for kernel in kernels])
    np.testing.assert_allclose(variance_pseudo, count * whole - (count - 1) * variance_without, rtol=1e-8)
    parts = [variance_parts(sums(kernel)) for kernel in kernels]
    np.testing.assert_allclose(errors, [np.sqrt(max(a, 0) + max(b, 0)) for a, b in parts], rtol=1e-9)
    assert errors.tolist() == [estimates[name]["se"] for name in names]
    assert [(estimates[name]["ci_low"], estimates[name]["ci_high"]) for name in names] == seen["out"]


def test_the_pair_intervals_are_the_linearised_bootstrap_cut_to_range() -> None:
    """``_pair_intervals`` is the linearised bootstrap-t of each column, each end cut to [0, its bound]: a lower end
    below 0 moved to 0, an upper end above the bound moved to it; a column with no interval (a non-finite
    pseudo-value) gets [0, its bound]."""
    rng = np.random.default_rng(5)
    estimate_pseudo = np.column_stack([rng.lognormal(size=40) * 0.1 + 0.01, rng.normal(size=40) * 0.1 + 0.98])
    estimate_pseudo = np.column_stack([estimate_pseudo, estimate_pseudo[:, 0]])
    estimate_pseudo[0, 2] = np.nan
    variance_pseudo = np.square(estimate_pseudo) * 0.01
    estimates = np.array([0.02, 0.98, 0.02])
    errors = np.array([0.03, 0.03, 0.03])
    bounds = np.array([np.inf, 1.0, 1.0])
    limits = linearised_bootstrap_t_limits(estimates, errors, estimate_pseudo, variance_pseudo, 0.05, 3, 400)
    assert limits[0, 0] < 0 and limits[1, 1] > 1  # the cuts below have something to do
    got = walsh._pair_intervals(estimates, errors, estimate_pseudo, variance_pseudo, 0.05, 3, bounds, 400)
    assert got == [(0.0, limits[1, 0]), (limits[0, 1], 1.0), (0.0, 1.0)]


def test_the_unit_bootstrap_t_by_hand() -> None:
    """The intervals of the variance, influence and κ_W recomputed with a loop over the resamples: each resample's
    ratio of means and its delta-method SE from the resample's covariance (divisor m − 1), the pivots' 2.5 % and
    97.5 % quantiles, the sample's SE; the estimate when the terms do not spread; another seed, other draws."""
    from experiment_2.past_exhaustive.sampling.walsh import _unit_bootstrap_t_intervals

    rng = np.random.default_rng(4)
    count = 40
    terms = np.vstack([rng.lognormal(size=count), rng.lognormal(size=count) * 2 + 0.5, rng.normal(size=count)])
    ratios = {"mean": (0, None, 1.0), "ratio": (1, 0, 1.0), "per_block": (1, 0, 7.0), "third": (2, None, 3.0)}
    draws = np.random.default_rng(13)
    resamples = [draws.integers(0, count, size=count) for _ in range(300)]

    def ratio_and_error(sample: np.ndarray, ratio: tuple) -> tuple[float, float]:
        numerator, denominator, divisor = ratio
        means = sample.mean(axis=1)
        gradient = np.zeros(len(means))
        if denominator is None:
            value = means[numerator] / divisor
            gradient[numerator] = 1 / divisor
        else:
            value = means[numerator] / means[denominator] / divisor
            gradient[numerator] = 1 / means[denominator] / divisor
            gradient[denominator] = -value / means[denominator]
        return value, float(np.sqrt(gradient @ np.cov(sample, ddof=1) @ gradient / sample.shape[1]))

    got = _unit_bootstrap_t_intervals(terms, ratios, 0.05, 13, 300)
    assert list(got) == list(ratios)
    for name, ratio in ratios.items():
        estimate, error = ratio_and_error(terms, ratio)
        pivots = []
        for chosen in resamples:
            value, spread = ratio_and_error(terms[:, chosen], ratio)
            pivots.append((value - estimate) / spread)
        upper, lower = np.quantile(pivots, [0.975, 0.025])
        want = (estimate - upper * error, estimate - lower * error)
        assert got[name] == (pytest.approx(want[0], rel=1e-9), pytest.approx(want[1], rel=1e-9)), name
        assert want[0] < estimate < want[1]
    low, high = got["mean"]
    mean = terms[0].mean()
    assert high - mean > mean - low  # right-skewed terms: the interval reaches further up than down
    assert _unit_bootstrap_t_intervals(terms, ratios, 0.05, 14, 300)["mean"] != got["mean"]
    flat = np.vstack([np.full(count, 2.0), np.full(count, 3.0), np.full(count, -1.0)])
    assert _unit_bootstrap_t_intervals(flat, ratios, 0.05, 13, 300) == {
        "mean": (2.0, 2.0),
        "ratio": (1.5, 1.5),
        "per_block": (1.5 / 7, 1.5 / 7),
        "third": (-1 / 3, -1 / 3),
    }


def test_unit_intervals_use_the_u_statistic_se() -> None:
    """For the variance, influence and κ_W the SE that studentises the interval is the reported ``se`` (the U-statistic
    variance of a function of means is the delta method's with divisor m − 1): the interval's half-widths, in units of
    ``se``, are the bootstrap pivots' quantiles, and they differ from the normal interval's."""
    table = residual_game_table(8, 2, seed=3)
    design = walsh_design(8, 300, seed=1)
    ids = design.all_ids()
    result = walsh_estimates(design, ids, table[ids], seed=5)
    from experiment_2.past_exhaustive.sampling.walsh import _unit_bootstrap_t_intervals

    base = table[design.base]
    centred = base - base.mean(axis=0)
    shrink = 300 / 299
    terms = np.vstack(
        [shrink * np.square(centred).sum(axis=1), 8 / 4 * np.square(base - table[design.flipped]).sum(axis=1)]
    )
    ratios = {"variance": (0, None, 1.0), "influence": (1, None, 1.0), "kappa_w": (1, 0, 1.0)}
    quantile = float(stats.norm.ppf(0.975))
    expected = _unit_bootstrap_t_intervals(terms, ratios, 0.05, 5)
    for name in ratios:
        entry = result[name]
        assert (entry["ci_low"], entry["ci_high"]) == (
            pytest.approx(expected[name][0]),
            pytest.approx(expected[name][1]),
        )
        estimate, gradient = walsh._unit_ratio(terms.mean(axis=1), ratios[name])
        assert entry["estimate"] == pytest.approx(float(estimate), rel=1e-12)
        assert entry["se"] == pytest.approx(float(np.sqrt(gradient @ np.cov(terms) @ gradient / 300)), rel=1e-9)
        normal = (entry["estimate"] - quantile * entry["se"], entry["estimate"] + quantile * entry["se"])
        assert (entry["ci_low"], entry["ci_high"]) != pytest.approx(normal, rel=1e-6)


@pytest.mark.parametrize("chunk", [1_000_000, 25])
def test_the_kernel_rows_equal_the_kernel_written_out(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    """``R_a``, ``r_a`` and ``(φR)_a`` of linearised kernels A_a + A_b + Σ_j w_j k_j(a, b) (unit weights on every
    unit row, pair weights on every degree, each alone and mixed) from the binned pair sums equal the kernel matrix's,
    in one block of rows or in blocks of two."""
    monkeypatch.setattr(walsh, "_CHUNK_ENTRIES", chunk)
    num_blocks, count = 5, 11
    rng = np.random.default_rng(0)
    design = walsh_design(num_blocks, count, seed=3, rhos=(0.5,))
    values = rng.standard_normal((count, 3))
    terms = rng.standard_normal((3, count))
    pairs = walsh._pair_sums(values, design.base, num_blocks, terms, 1.3)
    distance = np.bitwise_count(design.base[:, None] ^ design.base[None, :])
    gram = values @ values.T
    np.fill_diagonal(gram, 0.0)
    kernels = [1.3 * gram * krawtchouk(num_blocks, k)[distance] for k in (1, 2, 3)]
    cases = [
        (np.array([0.3, -1.0, 0.2]), np.array([0.5, 1.5, -0.7])),
        (np.zeros(3), np.array([0.0, 1.0, 0.0])),
        (np.array([0.0, 0.0, 2.0]), np.zeros(3)),
    ]
    for unit_weights, pair_weights in cases:
        half = unit_weights @ terms / 2
        kernel = half[:, None] + half[None, :] + sum(w * k for w, k in zip(pair_weights, kernels))
        np.fill_diagonal(kernel, 0.0)
        rows = kernel.sum(axis=1)
        got = walsh._kernel_rows(unit_weights, terms, pair_weights, pairs)
        for have, want in zip(got, (rows, np.square(kernel).sum(axis=1), kernel @ rows)):
            np.testing.assert_allclose(have, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
