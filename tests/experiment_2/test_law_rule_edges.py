"""The 3C limit's per-order rule and renormalised spectrum (experiment_2/limit/laws.py) at their edges: the interval
exactly on either end of predicted ± tolerance and one dyadic step off it (all values dyadic, so the comparisons are
exact), and a spectrum whose high orders sum to 0 (NaN, no warning) or to less than 1. Written against the
survivors of `make mutation MODULES=experiment_2/limit/laws.py`."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from experiment_1.report import bootstrap_mean_ci_rows
from experiment_2.limit.laws import (
    LIMIT_POINTS,
    SLOPE_ROUNDING,
    convergence,
    kink_exponent,
    limit_slopes,
    limit_summary,
    order_verdict,
    predicted_slopes,
    renormalised_spectrum,
    resolved_per_lambda,
    scored,
    successive_slopes,
    visible_from,
)

STEP = 2.0**-10  # predicted 1 ± tolerance 1/4: the band is [0.75, 1.25]


@pytest.mark.parametrize(
    "low, high, expected",
    [
        (0.75, 1.25, "holds"),  # the band itself
        (0.75 - STEP, 1.0, "cannot tell"),
        (1.0, 1.25 + STEP, "cannot tell"),
        (0.5, 0.75 - STEP, "fails"),  # wholly below
        (0.5, 0.75, "cannot tell"),  # touching the band from below
        (1.25 + STEP, 1.5, "fails"),  # wholly above
        (1.25, 1.5, "cannot tell"),  # touching it from above
        (0.5, 1.0, "cannot tell"),  # across the lower end
        (1.0, 1.5, "cannot tell"),  # across the upper end
    ],
)
def test_order_rule_at_the_ends_of_the_band(low: float, high: float, expected: str) -> None:
    assert order_verdict(low, high, 1.0, 0.25) == expected


def test_a_spectrum_without_high_order_energy_is_nan_without_a_warning() -> None:
    energies = np.array([[[9.0, 1.0, 0.0, 0.0, 0.0], [9.0, 1.0, 0.25, 0.125, 0.125]]])  # (1 image, 2 λ, L + 1 = 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spectrum = renormalised_spectrum(energies)
    assert np.isnan(spectrum[0, 0]).all()
    assert spectrum[0, 1].tolist() == [0.5, 0.25, 0.25]  # a total of 1/2 < 1 still divides


def test_predicted_slopes_are_floats_for_every_law() -> None:
    for law in ("lambda_k", "kink", "kink_chain"):
        slopes = predicted_slopes(law, 3, 1.5, 1)
        assert slopes.dtype == np.float64, law  # written to JSON: 1.0, never 1
    assert predicted_slopes("lambda_k", 3, 1.5, 1).tolist() == [0.0, 1.0, 2.0, 3.0]


def pair(lambdas: tuple[float, float], slope: float, resolved: bool = True) -> dict:
    return {"lambdas": list(lambdas), "slope": [0.0, slope], "resolved": [True, resolved]}


def test_convergence_rows_whole() -> None:
    tolerance = 0.25
    edge = tolerance + SLOPE_ROUNDING  # a spread of exactly this is still within the tolerance
    full = [0.25, 0.5, 1.0]
    limit = [
        {"order": 1, "fit_lambdas": full, "resolved": True},
        {"order": 1, "fit_lambdas": [0.5, 1.0], "resolved": True},  # the floor cut the window short
    ]
    at_edge = [pair((0.25, 0.5), 0.0), pair((0.5, 1.0), edge)]
    rows = convergence(limit, at_edge, tolerance)
    assert rows == [
        {"order": 1, "converged": True, "window_slopes": [0.0, edge], "spread": edge, "reason": None},
        {
            "order": 1,
            "converged": False,
            "window_slopes": [edge],  # the one pair the short window holds whole
            "spread": 0.0,
            "reason": f"the round-off floor leaves 2 of the {LIMIT_POINTS} λs of the window",
        },
    ]
    beyond = convergence(limit[:1], [pair((0.25, 0.5), 0.0), pair((0.5, 1.0), edge + 2**-20)], tolerance)
    assert beyond[0]["converged"] is False and beyond[0]["reason"].startswith("successive slopes in the window")
    gap = convergence(limit[:1], [pair((0.25, 0.5), 0.0, resolved=False), pair((0.5, 1.0), 1.0)], tolerance)
    assert gap == [
        {
            "order": 1,
            "converged": False,
            "window_slopes": [1.0],
            "spread": 0.0,
            "reason": "the window's λs are not successive on the grid (an unresolved λ between them)",
        }
    ]


def test_limit_summary_is_its_parts_at_its_seed_read_post_hoc() -> None:
    rng = np.random.default_rng(3)
    lambdas = np.array([1.0, 0.5, 0.25, 0.125])
    orders = np.arange(4)
    energies = rng.uniform(0.5, 2.0, (8, 1, 4)) * lambdas[None, :, None] ** (2 * orders)  # E_k ∝ λ^{2k}
    energies *= rng.uniform(0.8, 1.25, (8, 4, 4))  # per-image noise, so each bootstrap depends on its seed
    energies[0, 2, 2:] = 0.0  # one image without energy above order 1 at one λ: left out of that spectrum row
    floor = np.zeros((8, 4))
    summary = limit_summary(lambdas.astype(np.float32), energies, floor, ["relu"], 1, seed=5, tolerance=0.25)
    resolved = resolved_per_lambda(energies, floor)
    block = {
        "resolved": resolved.tolist(),
        "successive_slopes": successive_slopes(lambdas, energies, resolved, 5),
        "limit_slopes": limit_slopes(lambdas, energies, resolved, 5),
        "kink_exponent": kink_exponent(["relu"]),
        "exact_zero_chain": 1,
        "renormalised_spectrum": [],
    }
    spectra = renormalised_spectrum(energies)
    for column in range(4):
        kept = spectra[:, column][~np.isnan(spectra[:, column]).any(axis=1)]
        assert len(kept) == (7 if column == 2 else 8)
        block["renormalised_spectrum"].append(bootstrap_mean_ci_rows(kept, seed=5))
    expected = {**block, **scored(block, 0.25, post_hoc=True)}
    assert summary == expected
    chain_slopes = np.array([0.0, 1.0, 1.5, 1.5])  # the refined kink law with an exact-zero chain of 1
    followed = rng.uniform(0.5, 2.0, (8, 1, 4)) * lambdas[None, :, None] ** (2 * chain_slopes)
    laws = limit_summary(lambdas, followed, floor, ["relu"], 1, seed=5, tolerance=0.25)["laws"]
    assert laws["kink_chain"]["verdict"] == "consistent (post hoc)"  # fitted to the data it is read on


def test_the_law_is_visible_from_the_largest_lambda_before_the_first_miss() -> None:
    predicted = np.array([0.0, 1.0])
    pairs = [pair((2.0, 1.0), 3.0), pair((1.0, 0.5), 1.1), pair((0.5, 0.25), 0.9)]  # largest λ first
    assert visible_from(pairs, predicted, 0.25, [1]) == 1.0  # the step from 2 to 1 misses: seen from λ = 1 down
    assert visible_from(pairs[:1], predicted, 0.25, [1]) is None
    assert visible_from(pairs[1:], predicted, 0.25, [1]) == 1.0
