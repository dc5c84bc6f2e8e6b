"""Per-image top-K arrays → the Experiment 3 summary that the REPORT and tables.md cite.

Over the valid images, for every source (the magnitude rankings and the controls of
:mod:`experiment_3.topk`): each curve per K as a mean with a 95 % bootstrap CI (a control's draws
are averaged per image first, so the CI is over images); the smallest K capturing 90 % / 99 % of
the energy and reaching relative error ≤ τ (per image, single-subset resolution, mean with CI); the
smallest K of the grid whose mean Γ_K / top-1 agreement reaches 90 % / 99 % / 90 %. Per ranking and
control: the improvement of magnitude over the control at every K — the ratio of the means (None
where the control's mean is 0) and the paired per-image difference with a CI. K_eff of both
energies; the order histogram of the magnitude top-K (mean counts, mean order with CI, the
binomial share C(L, k)/2^L of a uniform pick); what the smallest K reconstruct (:func:`small_k_facts`:
how often the top-1 subset is the empty set, how often the relative error is ≥ 1, how often a control
picks the ranking's own subsets); the seed's numbers beside ours at the seed's K and at the same
fraction of 2^L; and the verdicts block (:func:`experiment_3.verdicts.verdicts`).
"""

from __future__ import annotations

from math import comb
from typing import Any

import numpy as np

from experiment_1.mobius import RANKINGS
from experiment_1.report import (
    bootstrap_mean_ci,
    bootstrap_mean_ci_rows,
    exact_proportion_ci,
    exact_proportion_ci_rows,
    markdown,
    sign_flip_p_rows,
)
from experiment_1.run import image_counts, valid_images
from experiment_3.topk import CURVE_METRICS, SOURCES, TRUNK_REMOVED
from experiment_3.verdicts import verdicts

QUESTION = "Is the Möbius decomposition sparse at the level of individual subsets?"
AGREEMENT_TARGET = 0.9
IMPROVEMENT_METRICS = ("top1_agreement", "captured_energy")


def controls_of(ranking: str) -> dict[str, str]:
    """The control sources compared with the magnitude ranking ``ranking``, keyed by control name."""
    return {"random": "random", "order_matched": f"order_matched_{ranking}", "low_order_first": "low_order_first"}


def first_k_reaching(ks: list[int], curve: list[float], target: float) -> int | None:
    """The smallest K of the grid whose (mean) curve value is ≥ ``target``; None if none is."""
    return next((k for k, value in zip(ks, curve) if value >= target), None)


def per_image(arrays: dict[str, np.ndarray], name: str, valid: np.ndarray) -> np.ndarray:
    """A ``(N, D, …)`` per-image array averaged over its D draws, valid images only, float64."""
    return np.asarray(arrays[name], dtype=np.float64)[valid].mean(axis=1)


def source_summary(
    arrays: dict[str, np.ndarray], source: str, valid: np.ndarray, config: dict[str, Any], seed: int
) -> dict[str, Any]:
    """Curves with CIs, smallest-K statistics and grid thresholds of one source."""
    ks = config["ks"]
    curves = {
        metric: bootstrap_mean_ci_rows(per_image(arrays, f"{metric}_{source}", valid), seed=seed)
        for metric in CURVE_METRICS
    }
    if arrays[f"top1_agreement_{source}"].shape[1] == 1:  # one draw: a 0/1 outcome per image, so an exact interval
        curves["top1_agreement"] = exact_proportion_ci_rows(per_image(arrays, f"top1_agreement_{source}", valid))
    k_mass, k_error = per_image(arrays, f"k_mass_{source}", valid), per_image(arrays, f"k_error_{source}", valid)
    grid = {
        f"captured_energy_{fraction:g}": first_k_reaching(ks, curves["captured_energy"]["mean"], fraction)
        for fraction in config["mass_fractions"]
    }
    grid[f"top1_agreement_{AGREEMENT_TARGET:g}"] = first_k_reaching(
        ks, curves["top1_agreement"]["mean"], AGREEMENT_TARGET
    )
    return {
        "draws": int(arrays[f"top1_agreement_{source}"].shape[1]),
        "curves": curves,
        "k_mass": {
            f"{fraction:g}": bootstrap_mean_ci(k_mass[:, index], seed=seed)
            for index, fraction in enumerate(config["mass_fractions"])
        },
        "k_error": {
            f"{threshold:g}": bootstrap_mean_ci(k_error[:, index], seed=seed)
            for index, threshold in enumerate(config["error_thresholds"])
        },
        "grid_k_reaching": grid,
    }


def improvement_summary(arrays: dict[str, np.ndarray], ranking: str, valid: np.ndarray, seed: int) -> dict[str, Any]:
    """Magnitude ranking vs each control: ratio of the means and paired difference (with CI) per K; for top-1 agreement
    also the paired sign-flip permutation test's p per K."""
    result: dict[str, Any] = {}
    for control, source in controls_of(ranking).items():
        result[control] = {}
        for metric in IMPROVEMENT_METRICS:
            ours = per_image(arrays, f"{metric}_magnitude_{ranking}", valid)
            theirs = per_image(arrays, f"{metric}_{source}", valid)
            ratio = [float(a / b) if b > 0 else None for a, b in zip(ours.mean(axis=0), theirs.mean(axis=0))]
            result[control][metric] = {"ratio": ratio, "difference": bootstrap_mean_ci_rows(ours - theirs, seed=seed)}
            if metric == "top1_agreement":  # the controls verdict's test
                result[control][metric]["sign_flip_p"] = sign_flip_p_rows(ours - theirs, seed=seed)
    return result


def order_histogram_summary(
    arrays: dict[str, np.ndarray], ranking: str, valid: np.ndarray, config: dict[str, Any], seed: int
) -> dict[str, Any]:
    """Where the magnitude top-K sits in order: mean counts per (K, order), mean order per K with CI."""
    num_blocks, ks = int(config["num_blocks"]), np.asarray(config["ks"], dtype=np.float64)
    counts = np.asarray(arrays[f"order_histogram_{ranking}"], dtype=np.float64)[valid]  # (N, len(ks), L+1)
    mean_order = (counts @ np.arange(num_blocks + 1)) / ks
    return {
        "orders": list(range(num_blocks + 1)),
        "mean_count": counts.mean(axis=0).tolist(),
        "mean_order": bootstrap_mean_ci_rows(mean_order, seed=seed),
        "binomial_share": [comb(num_blocks, order) / 2**num_blocks for order in range(num_blocks + 1)],
        "binomial_mean_order": num_blocks / 2,
    }


def small_k_facts(
    arrays: dict[str, np.ndarray], valid: np.ndarray, config: dict[str, Any], seed: int
) -> dict[str, Any]:
    """Per ranking: the share of images whose top-1 subset is the empty set (the trunk h(∅); CI; ``None`` when K = 1 is
    not on the grid) and, per K, of images whose ĥ_K has relative error ≥ 1; per control, per K, the share of
    (image, draw) pairs whose top-K reconstruction is the ranking's own (equal relative error and Γ_K)."""
    ks = config["ks"]
    facts: dict[str, Any] = {}
    for ranking in RANKINGS:
        ranked = {
            metric: np.asarray(arrays[f"{metric}_magnitude_{ranking}"])[valid]
            for metric in ("relative_error", "captured_energy")
        }
        empty_first = np.asarray(arrays[f"order_histogram_{ranking}"])[valid][:, ks.index(1), 0] if 1 in ks else None
        same = {}
        for control, source in controls_of(ranking).items():
            equal = np.ones(np.asarray(arrays[f"relative_error_{source}"])[valid].shape, dtype=bool)
            for metric, values in ranked.items():
                equal &= np.asarray(arrays[f"{metric}_{source}"])[valid] == values  # (N, D, K) against (N, 1, K)
            same[control] = equal.mean(axis=(0, 1)).tolist()
        facts[ranking] = {
            "top1_is_empty_set": None
            if empty_first is None
            else exact_proportion_ci((empty_first > 0).astype(np.float64)),
            "relative_error_at_least_1": (ranked["relative_error"][:, 0] >= 1).mean(axis=0).tolist(),
            "control_is_the_ranking": same,
        }
    return facts


def value_at(
    summary_sources: dict[str, Any], ks: list[int], source: str, metric: str, k: int | None
) -> dict[str, float] | None:
    """Mean and CI of ``metric`` of ``source`` at ``K = k`` as a stat dict; None if K is not on the grid."""
    if k not in ks:
        return None
    curve, index = summary_sources[source]["curves"][metric], ks.index(k)
    return {key: curve[key][index] for key in ("mean", "ci_low", "ci_high")}


# The seed's Experiment 3 numbers (``markdown.PUBLISHED["experiment_3"]["resnet18"]``): our quantity,
# the curve it is read from, and the K it refers to (the seed's ResNet-18 has L = 8, 256 subsets).
SEED_NUM_MASKS = 2**8
SEED_QUANTITIES = (
    ("captured_energy", "captured_energy_at_64", "captured_energy", 64),
    ("captured_scalar_energy", "captured_energy_at_64", "captured_scalar_energy", 64),
    ("top1_agreement_magnitude", "top1_agreement_magnitude_at_128", "top1_agreement", 128),
    ("top1_agreement_controls_max", "top1_agreement_controls_below", "top1_agreement", 128),
    ("improvement_over_random", "improvement_over_random", "top1_agreement", 128),
)


def beside_seed(
    sources: dict[str, Any], improvement: dict[str, Any], config: dict[str, Any], seed_numbers: dict[str, Any]
) -> dict[str, Any]:
    """Our numbers at the seed's K and at the same fraction of 2^L, per ranking, beside the seed's."""
    ks, num_masks = config["ks"], 2 ** int(config["num_blocks"])
    rows = []
    for quantity, key, metric, seed_k in SEED_QUANTITIES:
        for ranking in RANKINGS:
            at = {}
            for name, k in (("at_seed_k", seed_k), ("at_matching_fraction", seed_k * num_masks // SEED_NUM_MASKS)):
                if quantity == "top1_agreement_controls_max":
                    values = [value_at(sources, ks, source, metric, k) for source in controls_of(ranking).values()]
                    value = max(values, key=lambda stat: stat["mean"]) if None not in values else None
                elif quantity == "improvement_over_random":
                    value = improvement[ranking]["random"][metric]["ratio"][ks.index(k)] if k in ks else None
                else:
                    value = value_at(sources, ks, f"magnitude_{ranking}", metric, k)
                at[name] = {"k": k, "value": value}
            rows.append(
                {
                    "quantity": quantity,
                    "ranking": ranking,
                    "seed": seed_numbers["resnet18"][key],
                    "seed_k": seed_k,
                    "fraction": seed_k / SEED_NUM_MASKS,
                    **at,
                }
            )
    return {"seed_num_masks": SEED_NUM_MASKS, "num_masks": num_masks, "rows": rows}


def summarize(arrays: dict[str, np.ndarray], config: dict[str, Any], seed: int) -> dict[str, Any]:
    """The Experiment 3 summary (see the module docstring)."""
    valid = valid_images(arrays)
    present = [*SOURCES, *([TRUNK_REMOVED] if f"top1_agreement_{TRUNK_REMOVED}" in arrays else [])]
    sources = {source: source_summary(arrays, source, valid, config, seed) for source in present}
    improvement = {ranking: improvement_summary(arrays, ranking, valid, seed) for ranking in RANKINGS}
    seed_numbers = markdown.published_numbers("experiment_3")
    comparison = beside_seed(sources, improvement, config, seed_numbers)
    summary = {
        "experiment": 3,
        "question": QUESTION,
        "config": config,
        **image_counts(valid),
        "ks": config["ks"],
        "num_masks": 2 ** int(config["num_blocks"]),
        "agreement_target": AGREEMENT_TARGET,
        "sources": sources,
        "improvement": improvement,
        "k_eff": {
            projection: bootstrap_mean_ci(np.asarray(arrays[f"k_eff_{projection}"])[valid], seed=seed)
            for projection in RANKINGS
        },
        "order_histograms": {
            ranking: order_histogram_summary(arrays, ranking, valid, config, seed) for ranking in RANKINGS
        },
        "small_k": small_k_facts(arrays, valid, config, seed),
        "beside_seed": comparison,
        "published": seed_numbers,
    }
    summary["verdicts"] = verdicts(summary)
    return summary
