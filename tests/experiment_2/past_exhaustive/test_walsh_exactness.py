"""The Walsh estimators (experiment_2.past_exhaustive.sampling.walsh) against brute force, with no sampling error: the mean of the
estimates over every tuple of base masks equals the exact value (unbiasedness by enumeration, not by replication); a
design holding every (mask, flipped block) pair once gives the exact influence; a design holding every mask once
gives the U-statistic's closed form over all pairs. Seconds, so the mutation run maps these to the module."""

from __future__ import annotations

import itertools
import warnings
from math import comb

import numpy as np
import pytest
from sampling_tables import residual_game_table, walsh_by_definition

from experiment_2.past_exhaustive.sampling.walsh import WalshDesign, walsh_design, walsh_estimates, walsh_exact


def fixed_design(num_blocks: int, base: list[int], flip_bits: list[int] | None = None) -> WalshDesign:
    """A design with the given base masks and flipped blocks (block 0 when none are given) and no ρ-copies."""
    base_ids = np.array(base, dtype=np.int64)
    flips = np.zeros(len(base), dtype=np.int64) if flip_bits is None else np.array(flip_bits, dtype=np.int64)
    return WalshDesign(
        num_blocks=num_blocks,
        seed=0,
        rhos=(),
        base=base_ids,
        flip_bits=flips,
        flipped=base_ids ^ (np.int64(1) << flips),
        correlated=np.zeros((0, len(base)), dtype=np.int64),
    )


@pytest.mark.parametrize("columns", [1, 3])
def test_the_mean_over_every_base_tuple_is_the_exact_value(columns: int) -> None:
    """L = 2 and m = 4: all 4^4 = 256 equally likely tuples of base masks (repeats included, as independent uniform
    draws make them); the mean of the variance, w1 and w2 estimates equals the exact value to round-off (w3 has no
    character at L = 2: exactly 0)."""
    num_blocks, count = 2, 4
    table = residual_game_table(num_blocks, columns, seed=5)
    ids, exact = np.arange(4), walsh_exact(table, rhos=())
    names = ("variance", "w1", "w2", "w3")
    draws = np.array(
        [
            [walsh_estimates(fixed_design(num_blocks, list(base)), ids, table)[name]["estimate"] for name in names]
            for base in itertools.product(range(4), repeat=count)
        ]
    )
    np.testing.assert_allclose(draws.mean(axis=0), [exact[name] for name in names], rtol=1e-12, atol=1e-12)
    assert exact["w1"] > 0 and exact["w2"] > 0 and (draws[:, 3] == 0).all()
    assert draws[:, 1].std() > 0.1 * exact["w1"]  # the tuples differ: the mean is not one repeated value


def test_every_mask_and_block_once_gives_the_exact_influence() -> None:
    """Units (x, i) over all 2^3 masks and 3 blocks: the influence estimate, a mean over units of
    L/4·‖h(x) − h(x ⊕ e_i)‖², is the exact Σ_S |S| ‖f̂(S)‖²; the variance estimate of these n = 24 units (every mask L
    times) is the exact variance times n/(n − 1), and κ_W, κ_W / L their ratios."""
    num_blocks = 3
    table = residual_game_table(num_blocks, 2, seed=7)
    units = list(itertools.product(range(2**num_blocks), range(num_blocks)))
    design = fixed_design(num_blocks, [mask for mask, _ in units], [block for _, block in units])
    estimates = walsh_estimates(design, np.arange(2**num_blocks), table)
    exact = walsh_exact(table, rhos=())
    assert estimates["influence"]["estimate"] == pytest.approx(exact["influence"], rel=1e-12)
    count = len(units)
    variance = exact["variance"] * count / (count - 1)  # every mask L times: the sample variance with divisor n − 1
    assert estimates["variance"]["estimate"] == pytest.approx(variance, rel=1e-12)
    assert estimates["kappa_w"]["estimate"] == pytest.approx(exact["influence"] / variance, rel=1e-12)
    assert estimates["kappa_w_per_block"]["estimate"] == pytest.approx(
        exact["influence"] / variance / num_blocks, rel=1e-12
    )


@pytest.mark.parametrize("num_blocks", [4, 5])
def test_every_mask_once_gives_the_u_statistics_closed_form(num_blocks: int) -> None:
    """Base masks = all N = 2^L masks once: Σ_{a≠b} ⟨g_a, g_b⟩ K_k(d_ab) = N² w_k − C(L, k) Σ_a ‖g_a‖² (the sum over
    all ordered pairs is N² Σ_{|S|=k} ‖ĝ(S)‖², the diagonal holds K_k(0) = C(L, k)), so the estimate is that over
    N(N − 1), divided by the centring's shrinkage 1 − 2/N + 2/N²; the share is their sum over the variance."""
    size = 2**num_blocks
    table = residual_game_table(num_blocks, 2, seed=num_blocks)
    estimates = walsh_estimates(fixed_design(num_blocks, list(range(size))), np.arange(size), table)
    coefficients = walsh_by_definition(table)
    orders = np.bitwise_count(np.arange(size))
    squares = float(np.square(table - table.mean(axis=0)).sum())
    weights = []
    for degree in (1, 2, 3):
        weight = float(np.square(coefficients[orders == degree]).sum())
        closed = (size**2 * weight - comb(num_blocks, degree) * squares) / (size * (size - 1))
        weights.append(closed / (1 - 2 / size + 2 / size**2))
        assert estimates[f"w{degree}"]["estimate"] == pytest.approx(weights[-1], rel=1e-10), degree
    variance = squares / (size - 1)
    assert estimates["variance"]["estimate"] == pytest.approx(variance, rel=1e-12)
    assert estimates["low_degree_share"]["estimate"] == pytest.approx(sum(weights) / variance, rel=1e-10)


def test_every_standard_error_is_the_u_statistic_variance_by_brute_force() -> None:
    """Each statistic's ``se`` from the degree-2 U-statistic with kernel φ(a, b) = A_a + A_b + P(a, b) (A: half the
    unit terms in the statistic's linearisation, P: its pair kernels), with Q₄ the mean of φ(a, b)·φ(c, d) over every
    ordered quadruple of distinct units (all 1 680 of m = 8) and T the mean of φ(a, b)·φ(a, c) over every ordered
    triple: for the unit statistics the root of the unbiased variance U² − Q₄; for W_1 … W_3 and the share the root
    of its linear part 4(T − Q₄)/m and its degenerate part 2(mean φ² − Q₄ − 2(T − Q₄))/(m(m − 1)), each cut at 0.
    The kernels and unit terms written from their definitions; on this design W_2's linear part is negative and
    larger than its degenerate part, so the cut decides its SE."""
    num_blocks, count = 4, 8
    table = residual_game_table(num_blocks, 2, seed=11) * 3.0 + 1.0
    design = walsh_design(num_blocks, count, seed=3, rhos=(0.5,))
    estimates = walsh_estimates(design, np.arange(2**num_blocks), table, seed=2)
    base = table[design.base]
    centre = base.mean(axis=0)
    centred = base - centre
    shrink, scale = count / (count - 1), 1 / (1 - 2 / count + 2 / count**2)
    square = shrink * np.square(centred).sum(axis=1)
    influence = num_blocks / 4 * np.square(base - table[design.flipped]).sum(axis=1)
    product = shrink * (centred * (table[design.correlated[0]] - centre)).sum(axis=1)
    distance = np.bitwise_count(design.base[:, None] ^ design.base[None, :])
    pairs = [
        scale * (centred @ centred.T) * np.vectorize(lambda d, k=k: kernel_value(num_blocks, k, d))(distance)
        for k in (1, 2, 3)
    ]
    variance, total = square.mean(), influence.mean()
    weights = [float(p[~np.eye(count, dtype=bool)].mean()) for p in pairs]
    share, kappa, stability = sum(weights) / variance, total / variance, product.mean() / variance
    zero = np.zeros((count, count))
    linear = {  # name: (unit terms A_a·2, pair kernel)
        "variance": (square, zero),
        "influence": (influence, zero),
        "kappa_w": (influence / variance - kappa * square / variance, zero),
        "stability_0.5": (product / variance - stability * square / variance, zero),
        "w1": (np.zeros(count), pairs[0]),
        "w2": (np.zeros(count), pairs[1]),
        "w3": (np.zeros(count), pairs[2]),
        "low_degree_share": (-share * square / variance, sum(pairs) / variance),
    }
    for name, (units, pair) in linear.items():
        kernel = (units[:, None] + units[None, :]) / 2 + pair
        mean = kernel[~np.eye(count, dtype=bool)].mean()
        fourth = float(np.mean([kernel[a, b] * kernel[c, d] for a, b, c, d in itertools.permutations(range(count), 4)]))
        if name.startswith("w") or name == "low_degree_share":
            first = float(np.mean([kernel[a, b] * kernel[a, c] for a, b, c in itertools.permutations(range(count), 3)]))
            first -= fourth
            second = float(np.mean(np.square(kernel[~np.eye(count, dtype=bool)]))) - fourth
            linear_part, degenerate_part = 4 * first / count, 2 * (second - 2 * first) / (count * (count - 1))
            expected = np.sqrt(max(linear_part, 0.0) + max(degenerate_part, 0.0))
            if name == "w2":
                assert linear_part + degenerate_part < 0 < degenerate_part
        else:
            expected = np.sqrt(max(mean**2 - fourth, 0.0))
        assert expected > 0, name
        assert estimates[name]["se"] == pytest.approx(expected, rel=1e-9), name
    assert estimates["kappa_w_per_block"]["se"] == pytest.approx(estimates["kappa_w"]["se"] / num_blocks, rel=1e-12)


def kernel_value(num_blocks: int, degree: int, distance: int) -> float:
    """K_degree(d) = Σ_{|S|=degree} χ_S(z) for a z of weight d, summed over the subsets by brute force."""
    z = (1 << distance) - 1
    return float(
        sum(
            (-1) ** bin(sum(1 << b for b in subset) & z).count("1")
            for subset in itertools.combinations(range(num_blocks), degree)
        )
    )


def test_the_unit_intervals_are_cut_to_their_ranges() -> None:
    """Four base masks, three alike (L = 2): the variance's bootstrap-t reaches below 0 and κ_W's lies above L before
    the cut; after it the variance's starts at 0 and κ_W's, κ_W / L's sit at their ceilings L and 1."""
    table = residual_game_table(2, 3, seed=5)
    estimates = walsh_estimates(fixed_design(2, [1, 1, 1, 2]), np.arange(4), table)
    assert (
        estimates["variance"]["ci_low"] == 0.0 < estimates["variance"]["estimate"] <= estimates["variance"]["ci_high"]
    )
    assert estimates["kappa_w"]["estimate"] > 2
    assert (estimates["kappa_w"]["ci_low"], estimates["kappa_w"]["ci_high"]) == (2.0, 2.0)
    assert (estimates["kappa_w_per_block"]["ci_low"], estimates["kappa_w_per_block"]["ci_high"]) == (1.0, 1.0)
    assert estimates["influence"]["ci_low"] >= 0.0


def test_a_constant_table_gives_non_finite_ratios_without_a_warning() -> None:
    """h equal on every base mask: variance 0, so κ_W, the stabilities and the share have no value; κ_W's and the
    share's intervals are their whole ranges, the stabilities' NaN, and numpy says nothing."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        constant = walsh_estimates(walsh_design(2, 4, seed=0), np.arange(4), np.ones((4, 2)))
        alike = walsh_estimates(fixed_design(2, [1, 1, 1, 1]), np.arange(4), residual_game_table(2, 3, seed=5))
    for estimates in (constant, alike):
        assert estimates["variance"]["estimate"] == 0.0
        assert (estimates["kappa_w"]["ci_low"], estimates["kappa_w"]["ci_high"]) == (1.0, 2.0)
        assert (estimates["kappa_w_per_block"]["ci_low"], estimates["kappa_w_per_block"]["ci_high"]) == (0.5, 1.0)
        share = estimates["low_degree_share"]
        assert np.isnan(share["estimate"]) and (share["ci_low"], share["ci_high"]) == (0.0, 1.0)
    assert all(np.isnan(constant[f"stability_{rho}"]["ci_low"]) for rho in (0.95, 0.9, 0.75, 0.5))
    assert np.isinf(alike["kappa_w"]["estimate"])  # an influence above 0 over a variance of 0


def test_the_stability_intervals_are_cut_to_their_range() -> None:
    """``stability_ρ`` is a mean of ``ρ^{|S|}`` over degrees 1 … L, so it lies in [ρ^L, ρ] (checked on exact values
    of residual games); on eight base masks its log-scale interval reaches past ρ and the cut moves the end to ρ, and
    below ρ^L to ρ^L."""
    num_blocks = 3
    for seed in range(5):
        exact = walsh_exact(residual_game_table(num_blocks, 2, seed=seed))
        for rho in (0.95, 0.9, 0.75, 0.5):
            assert rho**num_blocks <= exact[f"stability_{rho}"] <= rho
    ends = set()
    for seed in range(20):
        design = walsh_design(num_blocks, 8, seed=seed)
        estimates = walsh_estimates(design, np.arange(2**num_blocks), residual_game_table(num_blocks, 2, seed=seed))
        for rho in design.rhos:
            entry = estimates[f"stability_{rho}"]
            assert entry["interval"].endswith(", cut to [ρ^L, ρ]")
            assert rho**num_blocks <= entry["ci_low"] <= entry["ci_high"] <= rho
            ends |= {("floor", rho)} if entry["ci_low"] == rho**num_blocks else set()
            ends |= {("ceiling", rho)} if entry["ci_high"] == rho else set()
    assert {kind for kind, _ in ends} == {"floor", "ceiling"}
