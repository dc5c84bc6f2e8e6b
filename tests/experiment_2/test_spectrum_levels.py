"""Experiment 2's spectrum summary at the level step 1 passes (a seed, never a level), on projections that differ:
κ, C≤3, the trunk share, the per-image peak order and the Walsh cancellation ratio against :func:`scipy.stats.bootstrap`
at 95 % over the valid images (the same draws), and the paired κ^s − κ^v taken scalar less vector, image by image."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from experiment_2.spectrum.evaluation import summarize

L, COUNT = 5, 24


def spectrum_arrays() -> dict[str, np.ndarray]:
    """Per-image arrays of a run of 24 images (the last two not valid) whose scalar projection sits at higher orders
    than its vector projection, with the Walsh statistics beside them."""
    rng = np.random.default_rng(50)
    arrays = {"valid": np.arange(COUNT) < COUNT - 2, "full_prediction": rng.integers(0, 4, COUNT)}
    for prefix in ("", "walsh_"):
        for projection, shift in (("vector", 0.0), ("scalar", 1.0)):
            energy = rng.lognormal(size=(COUNT, L + 1)) * 1e3
            arrays[f"{prefix}energy_{projection}"] = energy
            arrays[f"{prefix}spectrum_{projection}"] = energy[:, 1:] / energy[:, 1:].sum(axis=1, keepdims=True)
            arrays[f"{prefix}peak_order_{projection}"] = energy[:, 1:].argmax(axis=1) + 1
            arrays[f"{prefix}kappa_{projection}"] = 1.5 + shift + rng.random(COUNT)
            arrays[f"{prefix}c_le3_{projection}"] = rng.random(COUNT)
            arrays[f"{prefix}trunk_share_{projection}"] = rng.random(COUNT)
            arrays[f"roundoff_variance_{projection}"] = np.full(COUNT, 1e-30)
    for projection in ("vector", "scalar"):
        ratio = rng.lognormal(size=COUNT)
        ratio[3] = np.nan  # h(full) = h(∅) on one image: no ratio there
        arrays[f"cancellation_ratio_{projection}"] = ratio
    return arrays


def scipy_ci(values: np.ndarray, seed: int) -> tuple[float, float]:
    interval = stats.bootstrap(
        (values,),
        np.mean,
        n_resamples=2000,
        method="percentile",
        confidence_level=0.95,
        rng=np.random.default_rng(seed),
    ).confidence_interval
    return float(interval.low), float(interval.high)


@pytest.fixture(scope="module")
def run() -> tuple[dict[str, np.ndarray], dict]:
    arrays = spectrum_arrays()
    return arrays, summarize(arrays, {"num_blocks": L}, seed=6)


def test_every_spectrum_interval_is_scipys_95_percent_bootstrap_over_the_valid_images(run: tuple) -> None:
    arrays, summary = run
    valid = arrays["valid"]
    for projection in ("vector", "scalar"):
        block = summary["projections"][projection]
        for name in ("kappa", "c_le3", "trunk_share", "peak_order"):
            values = np.asarray(arrays[f"{name}_{projection}"], dtype=np.float64)[valid]
            low, high = scipy_ci(values, 6)
            assert (block[name]["mean"], block[name]["ci_low"], block[name]["ci_high"]) == (
                pytest.approx(values.mean(), rel=1e-12),
                pytest.approx(low, rel=1e-12),
                pytest.approx(high, rel=1e-12),
            ), (projection, name)
        ratio = arrays[f"cancellation_ratio_{projection}"][valid]
        defined = ratio[np.isfinite(ratio)]
        entry = summary["walsh"]["cancellation_ratio"][projection]
        assert entry["num_undefined"] == 1
        assert (entry["ci_low"], entry["ci_high"]) == tuple(
            pytest.approx(end, rel=1e-12) for end in scipy_ci(defined, 6)
        )


def test_the_paired_kappa_difference_is_scalar_less_vector_at_95_percent(run: tuple) -> None:
    arrays, summary = run
    valid = arrays["valid"]
    difference = summary["kappa_scalar_minus_vector"]
    per_image = arrays["kappa_scalar"][valid] - arrays["kappa_vector"][valid]
    assert difference["mean"] == pytest.approx(per_image.mean(), rel=1e-12) and difference["mean"] > 0.5
    low, high = scipy_ci(per_image, 6)
    assert (difference["ci_low"], difference["ci_high"]) == (
        pytest.approx(low, rel=1e-12),
        pytest.approx(high, rel=1e-12),
    )
