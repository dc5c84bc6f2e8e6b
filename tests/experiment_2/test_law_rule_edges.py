"""The 3C limit's per-order rule and renormalised spectrum (experiment_2/limit/laws.py) at their edges: the interval
exactly on either end of predicted ± tolerance and one dyadic step off it (all values dyadic, so the comparisons are
exact), and a spectrum whose high orders sum to 0 (NaN, no warning) or to less than 1. Written against the
survivors of `make mutation MODULES=experiment_2/limit/laws.py`."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from experiment_2.limit.laws import order_verdict, predicted_slopes, renormalised_spectrum

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
