"""The 3A/3B summary (residual scaling): a pure function of the per-image arrays stacked over λ and the run's configuration.

experiment_2.step_3_lambda_sweep writes it after evaluating every λ; paper.resummarize rebuilds it
from a committed per_image.npz without evaluating a mask.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from experiment_1.mobius import PROJECTIONS, binomial_null
from experiment_1.report import exact_proportion_ci, published_numbers
from experiment_1.run import UNSCALED, image_counts, valid_images
from experiment_2.lambda_sweep.verdicts import kappa_changes, verdicts
from experiment_2.limit.laws import LIMIT_POINTS, limit_summary
from experiment_2.scaling import power_law_summary
from experiment_2.spectrum.evaluation import spectrum_summary
from experiment_2.spectrum.verdicts import FLOOR_MARGIN, roundoff_floor

REFERENCE_LAMBDA = UNSCALED  # the λ every other λ is compared with: the network as it is
PER_IMAGE_KEYS = ("index", "label", "valid")
QUESTION = (
    "Does the interaction spectrum migrate to low orders under residual scaling λ, what does it cost in top-1 agreement, "
    "and does each order follow the λ^k law?"
)
FIT_METHOD = (
    "least-squares slope of log sqrt(mean_images E_k(λ)) against log λ over fit_lambdas; 95 % CI by percentile bootstrap over images "
    "(images resampled with replacement, the same resample at every λ, means recomputed and refitted); scalar projection uses c = argmax h_λ(full) at each λ"
)
LIMIT_METHOD = (
    f"per order: the slope between successive λs, and the limit slope — least-squares over the {LIMIT_POINTS} smallest λs at which the order is resolved "
    "(mean energy ≥ floor_margin × the round-off floor of the network's arithmetic at that λ) — each with the bootstrap-over-images CI of the λ^k fit; "
    "a law holds at an order when the limit slope's CI lies within ± slope_tolerance of its prediction, fails when the "
    "CI lies wholly outside, else cannot tell "
    "(experiment_2.limit)"
)


def stack_over_lambdas(results: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Per-image arrays of every λ stacked on axis 1 (``index``/``label`` once; ``valid`` where valid at every λ)."""
    stacked = {
        name: np.stack([result[name] for result in results], axis=1)
        for name in results[0]
        if name not in PER_IMAGE_KEYS
    }
    stacked["index"] = results[0]["index"]
    stacked["label"] = results[0]["label"]
    stacked["valid"] = np.logical_and.reduce([result["valid"].astype(bool) for result in results])
    return stacked


def at_lambda(arrays: dict[str, np.ndarray], column: int) -> dict[str, np.ndarray]:
    """The per-image arrays of one λ (column ``column`` of axis 1)."""
    return {name: (value if name in PER_IMAGE_KEYS else value[:, column]) for name, value in arrays.items()}


def kappa_monotonicity(per_lambda: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per projection: does mean κ strictly decrease at every step as λ decreases? Lists the steps where it does not."""
    result = {}
    for projection in PROJECTIONS:
        points = [(entry["lambda"], entry["projections"][projection]["kappa"]["mean"]) for entry in per_lambda]
        violations = [
            [larger, smaller]
            for (larger, kappa_larger), (smaller, kappa_smaller) in zip(points, points[1:])
            if not kappa_smaller < kappa_larger
        ]
        result[projection] = {"monotonic": not violations, "violations": violations}
    return result


def summarize(
    arrays: dict[str, np.ndarray],
    lambdas: list[float],
    requested: list[float],
    fit_lambdas: list[float],
    config: dict[str, Any],
    seed: int,
    tolerance: float,
) -> dict[str, Any]:
    """The 3A/3B summary: per-λ spectrum statistics and agreement (exact CIs), κ monotonicity of the means, the paired
    per-image κ changes, the λ^k fit, the 3C small-λ limit block and the verdicts block (:mod:`experiment_2.lambda_sweep.verdicts`)."""
    valid = valid_images(arrays)
    num_blocks = int(config["num_blocks"])
    reference = arrays["full_prediction"][:, lambdas.index(REFERENCE_LAMBDA)]
    per_lambda = []
    for column, value in enumerate(lambdas):
        agreement = (arrays["full_prediction"][:, column] == reference).astype(np.float64)
        per_lambda.append(
            {
                "lambda": value,
                "projections": spectrum_summary(at_lambda(arrays, column), valid, num_blocks, seed),
                "top1_agreement_with_lambda_1": exact_proportion_ci(agreement[valid]),
                "roundoff_floor": {
                    projection: roundoff_floor(
                        arrays[f"roundoff_variance_{projection}"][valid, column], num_blocks
                    ).tolist()
                    for projection in PROJECTIONS
                },
            }
        )
    columns = [lambdas.index(value) for value in fit_lambdas]
    fits = {
        projection: power_law_summary(
            np.array(fit_lambdas),
            arrays[f"energy_{projection}"][valid][:, columns],
            arrays[f"roundoff_variance_{projection}"][valid][:, columns],
            seed,
            tolerance,
        )
        for projection in PROJECTIONS
    }
    limit = {
        projection: limit_summary(
            np.array(lambdas),
            arrays[f"energy_{projection}"][valid],
            arrays[f"roundoff_variance_{projection}"][valid],
            config["post_activation"],
            config.get("exact_zero_chain"),
            seed,
            tolerance,
        )
        for projection in PROJECTIONS
    }
    summary = {
        "experiment": "3A/3B",
        "question": QUESTION,
        "config": config,
        "lambdas": lambdas,
        "lambdas_requested": sorted(requested, reverse=True),
        "reference_lambda": REFERENCE_LAMBDA,
        **image_counts(valid),
        "per_lambda": per_lambda,
        "kappa_monotonic": kappa_monotonicity(per_lambda),
        "power_law": {
            "fit_lambdas": fit_lambdas,
            "method": FIT_METHOD,
            "slope_tolerance": tolerance,
            "floor_margin": FLOOR_MARGIN,
            "projections": fits,
        },
        "limit": {
            "method": LIMIT_METHOD,
            "limit_points": LIMIT_POINTS,
            "slope_tolerance": tolerance,
            "floor_margin": FLOOR_MARGIN,
            "projections": limit,
        },
        "binomial_null": binomial_null(num_blocks),
        "published": published_numbers("experiment_3ab"),
        "kappa_changes": kappa_changes(arrays, valid, lambdas, seed),
    }
    summary["verdicts"] = verdicts(summary)
    return summary


def rebuild(
    summary: dict[str, Any], arrays: dict[str, np.ndarray], config: dict[str, Any], seed: int
) -> dict[str, Any]:
    """The current 3A/3B summary of a sweep's per-λ arrays, on the old summary's λ grid and fit window (the record's
    ``rebuild``: ``python -m paper.resummarize``)."""
    law = summary["power_law"]
    per_lambda = {name: value for name, value in arrays.items() if name != "lambdas"}
    return summarize(
        per_lambda,
        summary["lambdas"],
        summary["lambdas_requested"],
        law["fit_lambdas"],
        config,
        seed,
        law["slope_tolerance"],
    )
