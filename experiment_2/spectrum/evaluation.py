"""Experiment 2's evaluation: all masks → per-image spectrum arrays (shared with the 3A/3B sweep), and Experiment 2's
part of an all-mask pass (per-batch arrays → summary.json, per_image.npz).

The per-batch arrays are the order spectrum of both projections and the round-off variance of the logits. The spectrum
itself (order energies, p_k, κ, C≤3, the binomial null) is set-function mathematics and lives in
:mod:`experiment_1.mobius`; this module applies it to one batch of all-mask logits.

Experiment 2's summary: a pure function of the per-image spectrum arrays and the run's configuration.

experiment_2.step_1_evaluate writes it after evaluating; paper.resummarize rebuilds it from a
committed per_image.npz without evaluating a mask.

The blocks it is built from (:func:`spectrum_summary`, which the 3A/3B summary cites too): for each projection
(vector, scalar) over the valid images, the mean order energies ``E_k``
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
import torch

from experiment_1.mobius import (
    PROJECTIONS,
    binomial_null,
    full_mask_index,
    mobius_transform,
    num_blocks_from_size,
    order_energies,
    scalar_projection,
    spectrum_statistics,
    unit_in_last_place,
    walsh_transform,
)
from experiment_1.report import bootstrap_mean_ci, bootstrap_mean_ci_rows, published_numbers
from experiment_1.run import (
    DTYPES,
    MOBIUS_DTYPES,
    UNSCALED,
    BatchFunction,
    EvaluationSetup,
    ExperimentPass,
    image_counts,
    provenance,
    run_per_image,
    valid_images,
    write_results,
)
from experiment_2.spectrum.verdicts import floor_check, input_dependence, paired_kappa_difference, verdicts

QUESTION = "How is the Möbius energy of the logits distributed across interaction orders?"
KAPPA_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
KAPPA_BINS_PER_ORDER = 4


def summarize(arrays: dict[str, np.ndarray], config: dict[str, Any], seed: int) -> dict[str, Any]:
    """The Experiment 2 summary: both projections' spectrum statistics, the binomial null, the seed's numbers, the
    round-off floor check, how much h(full) moves with the image, the paired κ^s − κ^v and the verdicts block
    (:mod:`experiment_2.spectrum.verdicts`)."""
    valid = valid_images(arrays)
    num_blocks = int(config["num_blocks"])
    summary = {
        "experiment": 2,
        "question": QUESTION,
        "config": config,
        "residual_scale": UNSCALED,  # the pass evaluates the network as it is
        **image_counts(valid),
        "projections": spectrum_summary(arrays, valid, num_blocks, seed),
        "binomial_null": binomial_null(num_blocks),
        "published": published_numbers("experiment_2"),
        "roundoff": floor_check(arrays, valid, num_blocks),
        "input_dependence": input_dependence(arrays, valid),
        "kappa_scalar_minus_vector": paired_kappa_difference(arrays, valid, seed),
    }
    if "walsh_energy_vector" in arrays:  # runs evaluated before the Walsh control have none
        summary["walsh"] = walsh_summary(arrays, valid, num_blocks, seed)
    summary["verdicts"] = verdicts(summary)
    return summary


def rebuild(
    summary: dict[str, Any], arrays: dict[str, np.ndarray], config: dict[str, Any], seed: int
) -> dict[str, Any]:
    """The current summary of a run's per-image arrays (the record's ``rebuild``: ``python -m paper.resummarize``)."""
    return summarize(arrays, config, seed)


def walsh_summary(arrays: dict[str, np.ndarray], valid: np.ndarray, num_blocks: int, seed: int) -> dict[str, Any]:
    """The Walsh-basis control: :func:`spectrum_summary` of the Walsh statistics (W_k, their spectrum over k ≥ 1, κ_W, the
    low-degree share C≤3, the peak), their round-off floor, and the per-image cancellation ratio of the Möbius expansion."""
    walsh = {name[len("walsh_") :]: value for name, value in arrays.items() if name.startswith("walsh_")}
    return {
        "projections": spectrum_summary(walsh, valid, num_blocks, seed),
        "roundoff": floor_check(arrays, valid, num_blocks, basis="walsh"),
        "cancellation_ratio": {
            projection: cancellation_ratio(arrays, projection, valid, seed) for projection in PROJECTIONS
        },
    }


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


def projection_summary(
    arrays: dict[str, np.ndarray], projection: str, valid: np.ndarray, num_blocks: int, seed: int
) -> dict[str, Any]:
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
        "peak_order_distribution": {
            "orders": list(range(1, num_blocks + 1)),
            "counts": peak_counts.tolist(),
            "fraction": (peak_counts / max(len(peaks), 1)).tolist(),
        },
        "peak_order": bootstrap_mean_ci(peaks, seed=seed),
        "kappa": bootstrap_mean_ci(np.asarray(arrays[f"kappa_{projection}"])[valid], seed=seed),
        "kappa_distribution": kappa_distribution(np.asarray(arrays[f"kappa_{projection}"])[valid], num_blocks),
        "c_le3": bootstrap_mean_ci(np.asarray(arrays[f"c_le3_{projection}"])[valid], seed=seed),
        "trunk_share": bootstrap_mean_ci(np.asarray(arrays[f"trunk_share_{projection}"])[valid], seed=seed),
        "num_without_interaction_energy": int((~defined).sum()),
    }


def spectrum_summary(
    arrays: dict[str, np.ndarray], valid: np.ndarray, num_blocks: int, seed: int
) -> dict[str, dict[str, Any]]:
    """:func:`projection_summary` of both projections, keyed by projection."""
    return {projection: projection_summary(arrays, projection, valid, num_blocks, seed) for projection in PROJECTIONS}


def cancellation_ratio(
    arrays: dict[str, np.ndarray], projection: str, valid: np.ndarray, seed: int
) -> dict[str, Any] | None:
    """The mean per-image cancellation ratio with its CI over the images where it is defined (h(full) ≠ h(∅)), and how many
    images it is undefined on (``None`` when it is undefined on every image)."""
    ratio = np.asarray(arrays[f"cancellation_ratio_{projection}"], dtype=np.float64)[valid]
    defined = np.isfinite(ratio)
    if not defined.any():
        return None
    return {**bootstrap_mean_ci(ratio[defined], seed=seed), "num_undefined": int((~defined).sum())}


SPECTRUM_STAGE = "experiment_2.step_1_evaluate/spectrum"


def _roundoff_variance(logits: torch.Tensor, network_dtype: torch.dtype, dtype: torch.dtype) -> torch.Tensor:
    """Per image and class, the mean over masks of ``ulp(h(S)[c])² / 12`` — the variance of rounding
    each logit to ``network_dtype`` (the precision of the network's output): ``(B, 2^L, C)`` → ``(B, C)``."""
    ulp = unit_in_last_place(logits.abs().to(network_dtype)).to(dtype)
    return ulp.square_().mean(dim=1) / 12  # in place: one (B, 2^L, C) copy fewer


def spectrum_metrics(
    logits: torch.Tensor, dtype: torch.dtype = torch.float64, network_dtype: torch.dtype = torch.float32
) -> dict[str, torch.Tensor]:
    """Experiment 2's per-image arrays for a batch of all-mask logits ``(B, 2^L, C)``.

    The Möbius transform and every statistic run in ``dtype``; ``network_dtype`` is the arithmetic
    the logits were computed in (they arrive as float32 whatever it is). Keys: the
    :func:`spectrum_statistics` of the vector projection suffixed ``_vector`` and of the scalar
    projection suffixed ``_scalar``; ``full_prediction`` (``argmax h(full)``); and
    ``roundoff_variance_vector`` / ``roundoff_variance_scalar``: the variance that rounding the
    logits to ``network_dtype`` adds to each term ``h(T)`` of ``Δ_S h`` (summed over classes for
    the vector projection, class ``c`` for the scalar one). Independent rounding errors give a
    coefficient of order ``k`` the energy ``2^k`` times that, so ``C(L,k)·2^k·roundoff_variance``
    is a lower bound on the round-off floor of ``E_k``.

    The same statistics in the Walsh (±1 Fourier) basis, prefixed ``walsh_`` (``walsh_energy_*``: ``W_k``, the energy of
    the Walsh coefficients of order k, Σ_{k≥1} W_k = the variance of h over masks; ``walsh_kappa_*`` = κ_W, the total
    influence over the variance), and ``cancellation_ratio_*``: Σ_{k≥1} E_k / ‖h(full) − h(∅)‖², the Möbius interaction
    energy over the squared change it adds up to (1 when the coefficients are orthogonal; far above 1 when large coefficients
    cancel).
    """
    num_blocks = num_blocks_from_size(logits.shape[1])
    full = logits[:, full_mask_index(num_blocks)]
    coefficients = mobius_transform(logits, dim=1, dtype=dtype)
    roundoff = _roundoff_variance(logits, network_dtype, dtype)
    predicted = full.argmax(dim=-1)
    metrics: dict[str, torch.Tensor] = {"full_prediction": predicted}
    for projection, values in (("vector", coefficients), ("scalar", scalar_projection(coefficients, full))):
        for name, value in spectrum_statistics(order_energies(values)).items():
            metrics[f"{name}_{projection}"] = value
    del coefficients  # the Walsh coefficients take its place: one (B, 2^L, C) copy at a time
    change = full.to(dtype) - logits[:, 0].to(dtype)
    walsh = walsh_transform(logits, dim=1, dtype=dtype)
    for projection, values, moved in (
        ("vector", walsh, change.square().sum(dim=1)),
        ("scalar", scalar_projection(walsh, full), change.gather(1, predicted.view(-1, 1)).squeeze(1).square()),
    ):
        for name, value in spectrum_statistics(order_energies(values)).items():
            metrics[f"walsh_{name}_{projection}"] = value
        ratio = metrics[f"energy_{projection}"][:, 1:].sum(dim=1) / moved
        metrics[f"cancellation_ratio_{projection}"] = torch.where(
            moved > 0, ratio, torch.nan
        )  # undefined when h(full) = h(∅)
    metrics["roundoff_variance_vector"] = roundoff.sum(dim=1)
    metrics["roundoff_variance_scalar"] = roundoff.gather(1, predicted.view(-1, 1)).squeeze(1)
    return metrics


def spectrum_batch_function(setup: EvaluationSetup) -> BatchFunction:
    """One batch's logits → :func:`experiment_2.spectrum.evaluation.spectrum_metrics` in the run's Möbius and network dtypes."""
    dtype, network_dtype = MOBIUS_DTYPES[setup.config.mobius_dtype], DTYPES[setup.config.dtype]

    def compute(logits: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
        return spectrum_metrics(logits, dtype, network_dtype)

    return compute


def evaluate_spectrum(
    setup: EvaluationSetup,
    residual_scale: float = UNSCALED,
    stage: str = SPECTRUM_STAGE,
    description: str = "Exp 2 spectrum",
) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Per-image spectrum arrays (:func:`experiment_2.spectrum.evaluation.spectrum_metrics`) of every image at one λ, resumably."""
    return run_per_image(
        setup, stage, spectrum_batch_function(setup), residual_scale=residual_scale, description=description
    )


def finish(setup: EvaluationSetup, arrays: dict[str, np.ndarray], timing: dict[str, Any]) -> None:
    """Write the Experiment 2 summary, per-image arrays and timing; one line on stdout."""
    summary = summarize(arrays, provenance(setup), setup.config.seed)
    path = write_results(setup, arrays, summary, timing)
    vector = summary["projections"]["vector"]
    print(
        f"wrote {path}: κ^v {vector['kappa']['mean']:.3g}, peak order {vector['mean_spectrum_peak_order']} (binomial "
        f"null κ {summary['binomial_null']['kappa']:.3g})"
    )


EXPERIMENT_2 = ExperimentPass(2, SPECTRUM_STAGE, "Exp 2 spectrum", spectrum_batch_function, finish)
