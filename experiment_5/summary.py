"""Experiment 5's analysis: how difficulty relates to interaction complexity, as the statistics of analysis.json.

Over the analysed images (:func:`experiment_5.formats.analysed_images`):

- Spearman ρ of every difficulty score with every complexity measure (bootstrap CI, p-value) and the
  partial ρ given ‖h(full)‖₂ (:func:`experiment_5.association.spearman_table`);
- per score, the measures' means per quartile and the hard (Q4) − easy (Q1) difference with a
  bootstrap CI and a Mann–Whitney p (:func:`quartile_analysis`); correct vs incorrect the same way;
- how alike the difficulty scores are (:func:`score_agreement`): their mutual Spearman ρ and the share
  of the primary score's easy / hard quartile that each other score puts there too — the other scores
  are a sensitivity check of the primary one, not independent replications;
- per score, the partial check on K_τ^err (:func:`experiment_5.verdicts.partial_decision`);
- per measure, whether it is saturated or constant (:func:`measure_saturation`: at or near its bound, or at one
  value, on ≥ 90 % of images), and the share of images needing all 2^L subsets per K threshold;
- the verdicts block (:func:`experiment_5.verdicts.verdicts`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats as scipy_stats

from experiment_1.report import NEAR_BOUND_MARGIN, bootstrap_mean_ci, exact_proportion_ci, published_numbers, saturation
from experiment_5.association import compare_groups, quartile_groups, spearman_table
from experiment_5.complexity import COMPLEXITY_MEASURES
from experiment_5.difficulty import DIFFICULTY_SCORES
from experiment_5.formats import COVARIATE, analysed_images
from experiment_5.verdicts import RULES, partial_decision, verdicts

PARTIAL_CHECK = "Spearman partial correlation controlling for ‖h(full)‖₂ (rank-based, every pair)"


def quartile_analysis(
    score: np.ndarray, measures: dict[str, np.ndarray], seed: int, num_resamples: int
) -> dict[str, Any]:
    """Per measure: mean in each quartile of ``score`` (CIs) and hard (Q4) − easy (Q1) comparison."""
    groups = quartile_groups(score)
    result: dict[str, Any] = {
        "sizes": [len(group) for group in groups],
        "score_ranges": [[float(score[group].min()), float(score[group].max())] for group in groups],
        "measures": {},
    }
    for name, values in measures.items():
        comparison = compare_groups(values[groups[0]], values[groups[3]], seed=seed, num_resamples=num_resamples)
        result["measures"][name] = {
            "quartile_means": [
                bootstrap_mean_ci(values[group], seed=seed, num_resamples=num_resamples) for group in groups
            ],
            "hard_minus_easy": comparison["difference"],
            "mann_whitney_p": comparison["mann_whitney_p"],
            "standardised_difference": comparison["standardised_difference"],
            "equivalence": comparison["equivalence"],
        }
    return result


def correctness_analysis(
    correct: np.ndarray, measures: dict[str, np.ndarray], seed: int, num_resamples: int
) -> dict[str, Any]:
    """Per measure: correct vs incorrect means and incorrect − correct (``None`` when a group has fewer than two images)."""
    counts = {"num_correct": int(correct.sum()), "num_incorrect": int((~correct).sum())}
    if min(counts.values()) < 2:
        return {**counts, "measures": None}
    out = {}
    for name, values in measures.items():
        comparison = compare_groups(values[correct], values[~correct], seed=seed, num_resamples=num_resamples)
        out[name] = {
            "correct": comparison["first"],
            "incorrect": comparison["second"],
            "incorrect_minus_correct": comparison["difference"],
            "mann_whitney_p": comparison["mann_whitney_p"],
            "standardised_difference": comparison["standardised_difference"],
        }
    return {**counts, "measures": out}


def score_agreement(scores: dict[str, np.ndarray], primary: str) -> dict[str, Any]:
    """Mutual Spearman ρ of the difficulty scores and, per score, the share of the primary score's easy (Q1) and
    hard (Q4) quartile it puts in the same quartile."""
    names = list(scores)
    rho = np.atleast_2d(scipy_stats.spearmanr(np.column_stack([scores[name] for name in names])).statistic)
    quartiles = {name: quartile_groups(values) for name, values in scores.items()}
    easy, hard = set(quartiles[primary][0].tolist()), set(quartiles[primary][3].tolist())
    return {
        "primary": primary,
        "spearman": {a: {b: float(rho[i, j]) for j, b in enumerate(names)} for i, a in enumerate(names)},
        "shared_easy_quartile": {
            name: len(easy & set(groups[0].tolist())) / len(easy) for name, groups in quartiles.items()
        },
        "shared_hard_quartile": {
            name: len(hard & set(groups[3].tolist())) / len(hard) for name, groups in quartiles.items()
        },
    }


def measure_bounds(measure: str, num_blocks: int) -> tuple[float, ...]:
    """The attainable limits of a measure: K thresholds 1 … 2^L, N_eff^v 1 … 2^L − 1, κ (and κ_W) 1 … L, k̄ 0 … L,
    C≤3 0 … 1."""
    measure = measure.removeprefix("walsh_")
    if measure.startswith(("k_err", "k_mass")):
        return (1.0, float(2**num_blocks))
    if measure.startswith("n_eff"):
        return (1.0, float(2**num_blocks - 1))
    if measure.startswith("kappa"):
        return (1.0, float(num_blocks))
    if measure.startswith("kbar"):
        return (0.0, float(num_blocks))
    return (0.0, 1.0)


def measure_saturation(measures: dict[str, np.ndarray], num_blocks: int) -> dict[str, dict[str, Any] | None]:
    """Per measure: :func:`experiment_1.report.verdicts.saturation` against its bounds, a value within
    :data:`~experiment_1.report.verdicts.NEAR_BOUND_MARGIN` of the measure's range from a bound counting as at it
    (K_τ^err at 494–511 of 512 cannot move either); ``None`` where it moves."""
    return {
        name: saturation(values, measure_bounds(name, num_blocks), margin=NEAR_BOUND_MARGIN)
        for name, values in measures.items()
    }


def analyze(record: dict[str, Any], primary_score: str, seed: int, num_resamples: int) -> dict[str, Any]:
    """The whole analysis.json from a loaded ``per_image.pt``."""
    config = record["config"]
    images = analysed_images(record)
    scores, measures, covariate, correct = images.scores, images.measures, images.covariate, images.correct
    norm_table = spearman_table(
        {COVARIATE: covariate}, {**scores, **measures}, covariate, seed=seed, num_resamples=num_resamples
    )[COVARIATE]
    analysis = {
        "experiment": 5,
        "question": record["question"],
        "config": config,
        "num_images": record["num_images"],
        "num_valid": record["num_valid"],
        "num_skipped_corrupt": record["num_skipped_corrupt"],
        "num_analysed": images.count,
        "num_undefined": images.num_valid - images.count,
        "sample_pool": record["sample_pool"],
        "settings": {
            "primary_score": primary_score,
            "seed": seed,
            "num_resamples": num_resamples,
            "partial_check": PARTIAL_CHECK,
            "taus": config["taus"],
            "etas": config["etas"],
            "verdict_rules": RULES,
        },
        "scores": list(DIFFICULTY_SCORES),
        "measures": list(measures),
        "headline_measures": [name for name in COMPLEXITY_MEASURES if name in measures],
        "top1_accuracy": exact_proportion_ci(correct.astype(np.float64)),
        "measure_means": {
            name: bootstrap_mean_ci(value, seed=seed, num_resamples=num_resamples) for name, value in measures.items()
        },
        "spearman": spearman_table(scores, measures, covariate, seed=seed, num_resamples=num_resamples),
        "spearman_with_norm": {
            name: {key: entry[key] for key in ("rho", "ci_low", "ci_high", "p_value", "n")}
            for name, entry in norm_table.items()
        },
        "score_agreement": score_agreement(scores, primary_score),
        "quartiles": {
            name: quartile_analysis(scores[name], measures, seed, num_resamples) for name in DIFFICULTY_SCORES
        },
        "correctness": correctness_analysis(correct, measures, seed, num_resamples),
        "saturation": measure_saturation(measures, int(config["num_blocks"])),
        "at_all_subsets": {
            name: float(np.mean(values >= 2 ** config["num_blocks"]))
            for name, values in measures.items()
            if name.startswith(("k_err", "k_mass"))
        },
        "published": published_numbers("experiment_5"),
    }
    analysis["partial_check"] = {
        score: partial_decision(analysis["spearman"][score]["k_err"]) for score in DIFFICULTY_SCORES
    }
    analysis["verdicts"] = verdicts(analysis)
    return analysis
