"""The Walsh module's helpers (experiment_2.past_exhaustive.sampling.walsh) by hand: the design's argument checks at and around every
limit, the Krawtchouk table's dtype, the stability interval on both scales, a unit ratio's value and gradient, and the
unit statistics' bootstrap-t where resamples are degenerate — each edge quiet (no numpy warning)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from experiment_2.past_exhaustive.sampling import walsh
from experiment_2.past_exhaustive.sampling.bootstrap import resample_counts
from experiment_2.past_exhaustive.sampling.walsh import krawtchouk, walsh_design

QUANTILE = float(stats.norm.ppf(0.975))


@pytest.mark.parametrize("num_blocks", [1, 62])
def test_the_design_takes_one_to_sixty_two_blocks(num_blocks: int) -> None:
    design = walsh_design(num_blocks, 2, seed=4, rhos=(-1.0, 1.0))
    assert design.num_blocks == num_blocks and design.seed == 4 and len(design.base) == 2
    np.testing.assert_array_equal(design.correlated[1], design.base)  # ρ = 1: the copy is the mask
    np.testing.assert_array_equal(design.correlated[0], design.base ^ ((1 << num_blocks) - 1))  # ρ = −1: every bit
    assert int(design.all_ids().max()) < 2**num_blocks


@pytest.mark.parametrize(
    ("num_blocks", "samples", "rhos", "message"),
    [
        (0, 2, (), "a Walsh design needs 1 ≤ num_blocks ≤ 62, got 0"),
        (63, 2, (), "a Walsh design needs 1 ≤ num_blocks ≤ 62, got 63"),
        (4, 1, (), "a Walsh design needs at least 2 samples, got 1"),
        (4, 2, (1.5,), r"every ρ must lie in \[−1, 1\], got \(1.5,\)"),
        (4, 2, (-1.5,), r"every ρ must lie in \[−1, 1\], got \(-1.5,\)"),
        (4, 2, (1.0000001,), r"every ρ must lie in \[−1, 1\], got \(1.0000001,\)"),
        (4, 2, (-1.0000001,), r"every ρ must lie in \[−1, 1\], got \(-1.0000001,\)"),
    ],
)
def test_the_design_refuses_what_it_cannot_draw(num_blocks: int, samples: int, rhos: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{message}$"):
        walsh_design(num_blocks, samples, seed=0, rhos=rhos)


def test_a_design_without_copies() -> None:
    design = walsh_design(3, 2, seed=0, rhos=())
    assert design.correlated.shape == (0, 2) and design.correlated.dtype == np.int64 and design.rhos == ()
    np.testing.assert_array_equal(design.all_ids(), np.unique(np.concatenate([design.base, design.flipped])))


def test_the_krawtchouk_table_is_float64_from_exact_integers() -> None:
    table = krawtchouk(62, 3)
    assert table.dtype == np.float64 and table.shape == (63,)
    assert table[0] == 37820 and table[62] == -37820  # C(62, 3) and (−1)^3 C(62, 3)


def test_the_stability_interval_on_both_scales() -> None:
    """Below 1: 1 − (1 − s)·e^{±z·SE/(1 − s)}; at or above 1: s ± z·SE; an SE far above 1 − s overflows quietly to
    (−∞, 1)."""
    low, high, name = walsh._stability_interval(0.75, 0.05, QUANTILE)
    factor = np.exp(QUANTILE * 0.05 / 0.25)
    assert (low, high) == pytest.approx((1 - 0.25 * factor, 1 - 0.25 / factor), rel=1e-14)
    assert name == walsh.STABILITY_INTERVAL
    low, high, name = walsh._stability_interval(1.25, 0.5, QUANTILE)
    assert (low, high) == pytest.approx((1.25 - QUANTILE * 0.5, 1.25 + QUANTILE * 0.5), rel=1e-14)
    assert name == walsh.NORMAL_INTERVAL
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        low, high, _ = walsh._stability_interval(0.5, 1e6, QUANTILE)
    assert low == -np.inf and high == 1.0


def test_a_unit_ratio_and_its_gradient() -> None:
    means = np.array([[2.0, 4.0], [3.0, 0.0]])
    value, gradient = walsh._unit_ratio(means, (0, None, 8.0))
    np.testing.assert_array_equal(value, [0.25, 0.375])
    np.testing.assert_array_equal(gradient, [[0.125, 0.0], [0.125, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a denominator of 0: no value, quietly
        value, gradient = walsh._unit_ratio(means, (0, 1, 2.0))
    assert value[0] == 0.25 and np.isinf(value[1])
    np.testing.assert_array_equal(gradient[0], [1 / 8, -0.25 / 4])


def test_the_unit_bootstrap_t_with_one_resample_or_none() -> None:
    """The unit statistics' bootstrap-t: one resample with a pivot gives an interval from it; one whose resample has no
    spread gets (−∞, ∞), and the next name is still read; quietly."""
    seed = next(s for s in range(1000) if resample_counts(4, 1, s)[0, 3] == 0)
    terms = np.array([[1.0, 1.0, 1.0, 5.0], [1.0, 2.0, 4.0, 8.0]])
    ratios = {"flat": (0, None, 1.0), "varied": (1, None, 1.0)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = walsh._unit_bootstrap_t_intervals(terms, ratios, 0.05, seed, resamples=1)
    assert got["flat"] == (-np.inf, np.inf)
    row = resample_counts(4, 1, seed)[0]
    sample = np.repeat(terms[1], row.astype(int))
    error = terms[1].std(ddof=1) / 2
    pivot = (sample.mean() - terms[1].mean()) / (sample.std(ddof=1) / 2)
    assert got["varied"] == pytest.approx((terms[1].mean() - pivot * error,) * 2, rel=1e-12)
