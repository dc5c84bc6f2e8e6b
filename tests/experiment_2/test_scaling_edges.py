"""The λ^k power-law fit (experiment_2/scaling.py) against hand computations: each order's slope is numpy.polyfit's
least-squares line through (log λ, ½ log Ē_k); the CI is the percentile bootstrap over images redone here from the same
multinomial draws; the per-order rows of power_law_summary are compared whole to hand-written dicts. The edges: one
image (no resampling), two images (resampled), energies constant in λ (slope exactly 0), zero and negative energies
(NaN, quietly), float32 inputs (read as float64), energies near the top of the float range, the draws cut into chunks of
at most 2,000,000 weights, and the tolerance, CI and round-off floor rules exactly at and one step off their
boundaries. Written against the survivors of `make mutation MODULES=experiment_2/scaling.py`."""

from __future__ import annotations

import warnings
from math import comb

import numpy as np
import pytest

from experiment_2.scaling import DEFAULT_SLOPE_TOLERANCE, fit_power_law, log_log_slope, power_law_summary
from experiment_2.spectrum.verdicts import FLOOR_MARGIN

LAMBDAS = np.array([0.4, 0.2, 0.1, 0.05])
FIT_KEYS = {"slope", "ci_low", "ci_high", "n"}


def planted_energies(images: int, orders: int, seed: int, lambdas: np.ndarray = LAMBDAS) -> np.ndarray:
    """Per-image order energies (images, n_λ, orders): order k scales near λ^{2k}, each image with its own slope and
    amplitude, so the bootstrap over images has a spread to find."""
    rng = np.random.default_rng(seed)
    slopes = np.arange(orders)[None, :] + rng.uniform(-0.3, 0.3, size=(images, orders))
    amplitude = rng.uniform(0.5, 2.0, size=(images, orders))
    return amplitude[:, None, :] * lambdas[None, :, None] ** (2 * slopes[:, None, :])


def hand_slope(lambdas: np.ndarray, mean_energies: np.ndarray) -> list[float]:
    """numpy.polyfit's slope of ½ log Ē_k on log λ, per order; NaN where an energy is not positive."""
    log_lambda = np.log(np.asarray(lambdas, dtype=np.float64))
    slopes = []
    for column in np.asarray(mean_energies, dtype=np.float64).T:
        if np.all(column > 0):
            slopes.append(float(np.polyfit(log_lambda, 0.5 * np.log(column), 1)[0]))
        else:
            slopes.append(float("nan"))
    return slopes


def hand_fit(lambdas: np.ndarray, energies: np.ndarray, seed: int, resamples: int, confidence: float = 0.95) -> dict:
    """The fit on all images and the percentile bootstrap over images, every resample drawn at once."""
    energies = np.asarray(energies, dtype=np.float64)
    count = len(energies)
    slope = hand_slope(lambdas, energies.mean(axis=0))
    if count == 1:
        return {"slope": slope, "ci_low": slope, "ci_high": slope, "n": 1}
    draws = np.random.default_rng(seed).multinomial(count, [1 / count] * count, size=resamples)
    boot = np.array([hand_slope(lambdas, np.tensordot(draw / count, energies, axes=1)) for draw in draws])
    low, high = np.nanquantile(boot, [(1 - confidence) / 2, (1 + confidence) / 2], axis=0)
    return {"slope": slope, "ci_low": low.tolist(), "ci_high": high.tolist(), "n": count}


def assert_fit(actual: dict, expected: dict) -> None:
    assert set(actual) == FIT_KEYS
    assert actual["n"] == expected["n"]
    for key in ("slope", "ci_low", "ci_high"):
        assert actual[key] == pytest.approx(expected[key], rel=1e-9, abs=1e-12, nan_ok=True), key


def quietly(function, *args, **kwargs):
    """Call with every warning an error: the fit must not warn on the inputs it is documented to take."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return function(*args, **kwargs)


# ---- log_log_slope


def test_slope_is_polyfits_least_squares_line_through_half_log_energy() -> None:
    means = planted_energies(6, 3, seed=1).mean(axis=0)
    assert log_log_slope(LAMBDAS, means).tolist() == pytest.approx(hand_slope(LAMBDAS, means), rel=1e-12)


def test_slope_of_a_batch_of_energy_curves_is_each_curves_own_slope() -> None:
    batch = planted_energies(5, 3, seed=2)  # (5, n_λ, K): five curves fitted at once
    assert log_log_slope(LAMBDAS, batch).shape == (5, 3)
    for row, curve in zip(log_log_slope(LAMBDAS, batch), batch):
        assert row.tolist() == pytest.approx(hand_slope(LAMBDAS, curve), rel=1e-12)


def test_energies_constant_in_lambda_have_slope_exactly_zero() -> None:
    """Two λs (the mean of two equal logs is exact) whose centred logs do not sum to exactly 0 in floating point: only
    subtracting each order's own mean over λ leaves nothing behind."""
    lambdas = np.array([0.4, 0.1])
    centred = np.log(lambdas) - np.log(lambdas).mean()
    assert centred.sum() != 0.0  # so a leftover constant would show
    means = np.array([[3.0, 7.0, 1e-5], [3.0, 7.0, 1e-5]])
    assert log_log_slope(lambdas, means).tolist() == [0.0, 0.0, 0.0]


def test_zero_and_negative_energies_give_nan_slopes_quietly() -> None:
    means = planted_energies(4, 4, seed=3).mean(axis=0)
    means[1, 1] = 0.0  # log 0 = −inf: a divide warning, silenced
    means[2, 2] = -1e-3  # log of a negative: an invalid warning, silenced
    slopes = quietly(log_log_slope, LAMBDAS, means)
    expected = hand_slope(LAMBDAS, means)
    assert np.isnan(slopes[1]) and np.isnan(slopes[2]) and np.isnan(expected[1]) and np.isnan(expected[2])
    assert slopes.tolist() == pytest.approx(expected, rel=1e-12, nan_ok=True)


def test_float32_lambdas_and_energies_are_fitted_in_float64() -> None:
    lambdas32 = LAMBDAS.astype(np.float32)
    means32 = planted_energies(3, 3, seed=4).mean(axis=0).astype(np.float32)
    as64 = log_log_slope(lambdas32.astype(np.float64), means32.astype(np.float64))
    assert log_log_slope(lambdas32, means32.astype(np.float64)).tolist() == as64.tolist()
    assert log_log_slope(lambdas32.astype(np.float64), means32).tolist() == as64.tolist()
    assert log_log_slope(lambdas32, means32).tolist() == as64.tolist()


# ---- fit_power_law


def test_fit_is_the_slope_with_the_percentile_bootstrap_over_images() -> None:
    energies = planted_energies(7, 3, seed=5)
    fit = fit_power_law(LAMBDAS, energies, seed=3, num_resamples=60)
    assert_fit(fit, hand_fit(LAMBDAS, energies, seed=3, resamples=60))
    assert all(low < high for low, high in zip(fit["ci_low"], fit["ci_high"]))


def test_fit_confidence_sets_the_percentiles() -> None:
    energies = planted_energies(9, 2, seed=6)
    for confidence in (0.5, 0.8, 0.99):
        fit = fit_power_law(LAMBDAS, energies, seed=1, num_resamples=80, confidence=confidence)
        assert_fit(fit, hand_fit(LAMBDAS, energies, seed=1, resamples=80, confidence=confidence))


def test_fit_seed_defaults_to_zero() -> None:
    energies = planted_energies(5, 2, seed=7)
    assert_fit(fit_power_law(LAMBDAS, energies, num_resamples=40), hand_fit(LAMBDAS, energies, seed=0, resamples=40))


def test_one_image_gives_its_slope_as_both_ends_of_the_interval() -> None:
    energies = planted_energies(1, 3, seed=8)
    fit = fit_power_law(LAMBDAS, energies, seed=0, num_resamples=30)
    slope = hand_slope(LAMBDAS, energies[0])
    assert_fit(fit, {"slope": slope, "ci_low": slope, "ci_high": slope, "n": 1})
    assert fit["ci_low"] == fit["slope"] == fit["ci_high"]


def test_one_image_with_a_dead_order_gives_nan_quietly_without_resampling() -> None:
    energies = planted_energies(1, 3, seed=9)
    energies[0, :, 2] = 0.0
    fit = quietly(fit_power_law, LAMBDAS, energies, seed=0, num_resamples=30)
    slope = hand_slope(LAMBDAS, energies[0])
    assert np.isnan(fit["slope"][2]) and np.isnan(fit["ci_low"][2]) and np.isnan(fit["ci_high"][2])
    assert_fit(fit, {"slope": slope, "ci_low": slope, "ci_high": slope, "n": 1})


def test_two_images_are_resampled() -> None:
    energies = planted_energies(2, 2, seed=10)
    fit = fit_power_law(LAMBDAS, energies, seed=4, num_resamples=50)
    assert_fit(fit, hand_fit(LAMBDAS, energies, seed=4, resamples=50))
    assert fit["ci_low"][1] < fit["slope"][1] < fit["ci_high"][1]  # one image alone would give slope = both ends


def test_float32_energies_are_averaged_in_float64() -> None:
    energies32 = planted_energies(5, 3, seed=11).astype(np.float32)
    fit32 = fit_power_law(LAMBDAS, energies32, seed=2, num_resamples=40)
    fit64 = fit_power_law(LAMBDAS, energies32.astype(np.float64), seed=2, num_resamples=40)
    assert fit32 == fit64


def test_energies_near_the_top_of_the_float_range_still_fit() -> None:
    """Each resample is a weighted mean (weights summing to 1): mean energies of 1e306 (images up to a few times that)
    never overflow, where a weighted sum of 20 · 20 of them would."""
    planted = planted_energies(20, 2, seed=12)
    energies = 1e306 * planted / planted.mean(axis=0).max()
    fit = fit_power_law(LAMBDAS, energies, seed=5, num_resamples=40)
    assert np.all(np.isfinite(fit["ci_low"])) and np.all(np.isfinite(fit["ci_high"]))
    assert_fit(fit, hand_fit(LAMBDAS, energies, seed=5, resamples=40))


class RecordingGenerator:
    """A numpy Generator that records the size of every multinomial draw."""

    def __init__(self, seed: int, sizes: list[int]) -> None:
        self.generator = np.random.Generator(np.random.PCG64(seed))
        self.sizes = sizes

    def multinomial(self, n, pvals, size):
        self.sizes.append(size)
        return self.generator.multinomial(n, pvals, size=size)


@pytest.mark.parametrize(
    "count, resamples, sizes",
    [
        (3, 7, [7]),  # far under the budget: one draw
        (666_667, 5, [2, 2, 1]),  # 2,000,000 // 666,667 = 2 resamples a draw (three would be 2,000,001 weights)
        (1_000_001, 3, [1, 1, 1]),  # over a million images: one resample a draw, never none
    ],
)
def test_resamples_are_drawn_at_most_two_million_weights_at_a_time(
    monkeypatch: pytest.MonkeyPatch, count: int, resamples: int, sizes: list[int]
) -> None:
    """The chunks bound the memory (count × rows ≤ 2,000,000, at least one row) and are the same resamples as one
    draw of them all."""
    lambdas = np.array([0.4, 0.1])
    rng = np.random.default_rng(13)
    energies = np.stack([rng.uniform(1.0, 2.0, count) * 0.16, rng.uniform(1.0, 2.0, count) * 0.01], axis=1)[:, :, None]
    drawn: list[int] = []
    monkeypatch.setattr(np.random, "default_rng", lambda seed: RecordingGenerator(seed, drawn))
    fit = fit_power_law(lambdas, energies, seed=6, num_resamples=resamples)
    assert drawn == sizes
    monkeypatch.undo()
    assert_fit(fit, hand_fit(lambdas, energies, seed=6, resamples=resamples))


# ---- power_law_summary


def hand_rows(lambdas, energies, roundoff_variance, seed, tolerance=DEFAULT_SLOPE_TOLERANCE) -> list[dict]:
    """The rows written out: the bootstrap fit (2000 resamples), the tolerance and CI rules, and the smallest ratio over
    λ of Ē_k to its floor mean(roundoff_variance) · C(L,k) · 2^k."""
    blocks = energies.shape[2] - 1
    fit = hand_fit(lambdas, energies, seed=seed, resamples=2000)
    mean = energies.mean(axis=0)
    rows = []
    for order in range(blocks + 1):
        ratio = min(
            mean[column, order] / (roundoff_variance[:, column].mean() * comb(blocks, order) * 2.0**order)
            for column in range(len(lambdas))
        )
        slope, low, high = fit["slope"][order], fit["ci_low"][order], fit["ci_high"][order]
        rows.append(
            {
                "order": order,
                "expected": order,
                "slope": pytest.approx(slope, rel=1e-9),
                "ci_low": pytest.approx(low, rel=1e-9),
                "ci_high": pytest.approx(high, rel=1e-9),
                "within_tolerance": abs(slope - order) <= tolerance,
                "ci_contains_expected": low <= order <= high,
                "min_floor_ratio": pytest.approx(ratio, rel=1e-12),
                "resolved": ratio >= FLOOR_MARGIN,
            }
        )
    return rows


def test_summary_rows_whole() -> None:
    energies = planted_energies(6, 4, seed=14)  # L = 3
    energies[:, :, 3] *= 1e-6  # order 3 near its floor
    variance = np.random.default_rng(15).uniform(0.5, 1.5, size=(6, 4)) * 1e-10
    rows = power_law_summary(LAMBDAS, energies, variance, seed=7)
    expected = hand_rows(LAMBDAS, energies, variance, seed=7)
    assert rows == expected
    assert [row["resolved"] for row in rows] == [True, True, True, False]
    assert [row["ci_contains_expected"] for row in rows] == [True, True, True, True]
    tight = power_law_summary(LAMBDAS, energies, variance, seed=7, tolerance=0.01)
    assert tight == hand_rows(LAMBDAS, energies, variance, seed=7, tolerance=0.01)
    assert [row["within_tolerance"] for row in tight] != [row["within_tolerance"] for row in rows]


def test_summary_tolerance_is_inclusive_at_its_boundary() -> None:
    energies = planted_energies(3, 3, seed=16)
    variance = np.full((3, 4), 1e-30)
    order_one = power_law_summary(LAMBDAS, energies, variance, seed=0)[1]
    distance = abs(order_one["slope"] - 1)
    assert distance > 0
    at = power_law_summary(LAMBDAS, energies, variance, seed=0, tolerance=distance)[1]
    below = power_law_summary(LAMBDAS, energies, variance, seed=0, tolerance=np.nextafter(distance, 0))[1]
    assert (at["within_tolerance"], below["within_tolerance"]) == (True, False)


def test_summary_ci_ending_exactly_at_the_expected_order_contains_it() -> None:
    """One image whose order 0 is 1 at every λ: slope, CI low and CI high exactly 0 — the expected order, inclusive."""
    energies = np.stack([np.ones(4), LAMBDAS**2.2], axis=1)[None]  # (1, n_λ, 2): L = 1
    rows = power_law_summary(LAMBDAS, energies, np.full((1, 4), 1e-30), seed=0)
    slope = hand_slope(LAMBDAS, energies[0])[1]
    assert rows[0]["slope"] == rows[0]["ci_low"] == rows[0]["ci_high"] == 0.0
    assert [row["ci_contains_expected"] for row in rows] == [True, False]
    assert rows[1]["slope"] == pytest.approx(slope, rel=1e-12) and rows[1]["within_tolerance"]


def test_summary_resolved_is_inclusive_at_the_floor_margin() -> None:
    """L = 1, round-off variance 1: floors 1 (order 0) and 2 (order 1); energies exactly FLOOR_MARGIN times them at the
    smallest λ, more above."""
    lambdas = np.array([0.25, 0.5, 1.0])
    energies = np.stack([np.full(3, FLOOR_MARGIN), 2 * FLOOR_MARGIN * (lambdas / 0.25) ** 2], axis=1)[None]
    rows = power_law_summary(lambdas, energies, np.ones((1, 3)), seed=0)
    assert [row["min_floor_ratio"] for row in rows] == [FLOOR_MARGIN, FLOOR_MARGIN]
    assert [row["resolved"] for row in rows] == [True, True]
    above = power_law_summary(lambdas, energies, np.full((1, 3), np.nextafter(1.0, 2.0)), seed=0)
    assert [row["resolved"] for row in above] == [False, False]
    assert all(row["min_floor_ratio"] < FLOOR_MARGIN for row in above)


def test_summary_zero_floor_gives_an_infinite_ratio_quietly() -> None:
    energies = planted_energies(3, 3, seed=17)
    rows = quietly(power_law_summary, LAMBDAS, energies, np.zeros((3, 4)), seed=0)
    assert [row["min_floor_ratio"] for row in rows] == [np.inf, np.inf, np.inf]
    assert [row["resolved"] for row in rows] == [True, True, True]
