"""Per-image spectrum arrays → the summary blocks that Experiments 2 and 3A cite.

For each projection (vector, scalar) over the valid images: the mean order energies ``E_k``
(k = 0 … L) and the mean interaction spectrum ``p_k`` (k = 1 … L) with 95 % bootstrap CIs from one
shared set of image resamples (:func:`experiment_1.report.stats.bootstrap_mean_ci_rows`); the peak order
of the mean spectrum and the distribution of per-image peak orders; ``κ``, ``C_{≤3}`` (both over
k ≥ 1) and the trunk share (order 0 over all orders) as means with CIs; and the distribution of
per-image ``κ`` as quantiles plus a histogram (bins of width 1/4 order on ``[1, L]``), so that plots
need only the JSON. Images without interaction energy have no spectrum; they are counted and left
out of the spectrum statistics.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from experiment_1.mobius import PROJECTIONS
from experiment_1.report import bootstrap_mean_ci, bootstrap_mean_ci_rows

KAPPA_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
KAPPA_BINS_PER_ORDER = 4


def kappa_distribution(kappa: np.ndarray, num_blocks: int) -> dict[str, Any]:
    """Quantiles and a fixed-bin histogram of per-image ``κ`` (NaNs dropped); bins span ``[1, L]``."""
    kappa = np.asarray(kappa, dtype=np.float64)
    kappa = kappa[~np.isnan(kappa)]
    edges = np.linspace(1.0, float(num_blocks), KAPPA_BINS_PER_ORDER * (num_blocks - 1) + 1)
    counts, _ = np.histogram(np.clip(kappa, 1.0, float(num_blocks)), bins=edges)
    quantiles = np.quantile(kappa, KAPPA_QUANTILES).tolist() if len(kappa) else [float("nan")] * len(KAPPA_QUANTILES)
    return {
        "quantiles": {f"{q:g}": value for q, value in zip(KAPPA_QUANTILES, quantiles)},
        "histogram": {"edges": edges.tolist(), "counts": counts.tolist()},
    }


def projection_summary(arrays: dict[str, np.ndarray], projection: str, valid: np.ndarray, num_blocks: int, seed: int) -> dict[str, Any]:
    """Every spectrum statistic of one projection (``vector`` or ``scalar``) over the valid images."""
    energy = np.asarray(arrays[f"energy_{projection}"], dtype=np.float64)[valid]
    spectrum = np.asarray(arrays[f"spectrum_{projection}"], dtype=np.float64)[valid]
    defined = ~np.isnan(spectrum).any(axis=1)
    mean_spectrum = bootstrap_mean_ci_rows(spectrum[defined], seed=seed)
    peaks = np.asarray(arrays[f"peak_order_{projection}"])[valid][defined]
    peak_counts = np.bincount(peaks, minlength=num_blocks + 1)[1:]
    return {
        "mean_energy": bootstrap_mean_ci_rows(energy, seed=seed),
        "mean_spectrum": mean_spectrum,
        "mean_spectrum_peak_order": int(np.argmax(mean_spectrum["mean"])) + 1,
        "peak_order_distribution": {"orders": list(range(1, num_blocks + 1)), "counts": peak_counts.tolist(), "fraction": (peak_counts / max(len(peaks), 1)).tolist()},
        "peak_order": bootstrap_mean_ci(peaks, seed=seed),
        "kappa": bootstrap_mean_ci(np.asarray(arrays[f"kappa_{projection}"])[valid], seed=seed),
        "kappa_distribution": kappa_distribution(np.asarray(arrays[f"kappa_{projection}"])[valid], num_blocks),
        "c_le3": bootstrap_mean_ci(np.asarray(arrays[f"c_le3_{projection}"])[valid], seed=seed),
        "trunk_share": bootstrap_mean_ci(np.asarray(arrays[f"trunk_share_{projection}"])[valid], seed=seed),
        "num_without_interaction_energy": int((~defined).sum()),
    }


def spectrum_summary(arrays: dict[str, np.ndarray], valid: np.ndarray, num_blocks: int, seed: int) -> dict[str, dict[str, Any]]:
    """:func:`projection_summary` of both projections, keyed by projection."""
    return {projection: projection_summary(arrays, projection, valid, num_blocks, seed) for projection in PROJECTIONS}
