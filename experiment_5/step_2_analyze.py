"""Experiment 5, step 2 — how difficulty relates to interaction complexity, as statistics in analysis.json.

Question: do hard images use more, or higher-order, block interactions?
Over the valid images whose every score and measure is defined (per_image.pt of step 1):
- Spearman ρ of every difficulty score with every complexity measure: p-value and percentile-bootstrap
  95 % CI (images resampled, ranks recomputed per resample);
- the partial check: Spearman partial ρ of every pair controlling for ‖h(full)‖₂ (with bootstrap CI
  and p-value), so a difficulty effect on K_τ^err that is only the logit norm shows up as a partial ρ
  near 0; plus ρ of every score and measure with ‖h(full)‖₂;
- quartiles by each score (four equal-count groups, easy = lowest quartile, hard = highest): mean of
  every measure per quartile with CIs, hard − easy difference with a bootstrap CI, Mann–Whitney p;
- correct vs incorrect: the same comparison, incorrect − correct;
- a verdict per measure from the hard − easy difference by --primary-score: invariant when its CI
  covers 0; otherwise broadened / narrowed (N_eff^v, K_τ^err, K_η^mass: more / fewer subsets) or
  shifted to higher / lower orders (k̄, κ, C_{≤3}); constant when a measure has one value on every image
  (e.g. K_τ^err = 2^L everywhere); the same rule under every score is recorded too. The share of images
  whose K_τ^err / K_η^mass is 2^L (every subset needed) is recorded per threshold.

Inputs:  --per-image (experiment_5.step_1_evaluate's per_image.pt).
Outputs: analysis.json beside it (or --output), with the evaluation's configuration and the seed's numbers.

    python -m experiment_5.step_2_analyze --per-image experiment_5/results/per_image.pt
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from experiment_1 import arg_types
from experiment_1.errors import PipelineError, run_cli
from experiment_1.io_utils import atomic_write_json
from experiment_1.published import published_numbers
from experiment_1.stats import NUM_RESAMPLES, bootstrap_mean_ci
from experiment_5.association import ci_excludes_zero, compare_groups, quartile_groups, spearman_table
from experiment_5.complexity import COMPLEXITY_MEASURES
from experiment_5.difficulty import DIFFICULTY_SCORES
from experiment_5.records import COVARIATE, analysed_images, load_per_image

BREADTH_PREFIXES = ("n_eff", "k_err", "k_mass")
LOW_ORDER_PREFIX = "c_le3"
PARTIAL_CHECK = "Spearman partial correlation controlling for ‖h(full)‖₂ (rank-based, every pair)"
VERDICT_RULE = (
    "hard (top quartile of the primary score) − easy (bottom quartile) difference of the measure's mean: invariant when its 95 % "
    "bootstrap CI covers 0; otherwise broadened / narrowed for N_eff^v, K_τ^err, K_η^mass (more / fewer subsets) and shifted to "
    "higher / lower orders for k̄, κ, C_{≤3} (a larger C_{≤3} is a shift to lower orders); constant when the measure has one value "
    "on every analysed image"
)


def verdict(measure: str, difference: dict[str, float], constant: bool = False) -> dict[str, Any]:
    """The rule on a hard − easy difference: invariant (CI covers 0), broadened / narrowed, or shifted up / down;
    ``constant`` when the measure takes one value on every analysed image (nothing to compare)."""
    if constant:
        return {"verdict": "constant", "direction": None}
    if not ci_excludes_zero(difference):
        return {"verdict": "invariant", "direction": None}
    positive = difference["mean"] > 0
    if measure.startswith(BREADTH_PREFIXES):
        return {"verdict": "broadened" if positive else "narrowed", "direction": "more subsets" if positive else "fewer subsets"}
    higher = positive != measure.startswith(LOW_ORDER_PREFIX)  # more low-order mass means lower orders
    return {"verdict": "shifted", "direction": "higher orders" if higher else "lower orders"}


def quartile_analysis(score: np.ndarray, measures: dict[str, np.ndarray], seed: int, num_resamples: int) -> dict[str, Any]:
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
            "quartile_means": [bootstrap_mean_ci(values[group], seed=seed, num_resamples=num_resamples) for group in groups],
            "hard_minus_easy": comparison["difference"],
            "mann_whitney_p": comparison["mann_whitney_p"],
            "standardised_difference": comparison["standardised_difference"],
        }
    return result


def correctness_analysis(correct: np.ndarray, measures: dict[str, np.ndarray], seed: int, num_resamples: int) -> dict[str, Any]:
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


def analyze(record: dict[str, Any], primary_score: str, seed: int, num_resamples: int) -> dict[str, Any]:
    """The whole analysis.json from a loaded ``per_image.pt``."""
    config = record["config"]
    images = analysed_images(record)
    scores, measures, covariate, correct = images.scores, images.measures, images.covariate, images.correct
    quartiles = {name: quartile_analysis(scores[name], measures, seed, num_resamples) for name in DIFFICULTY_SCORES}
    verdicts = {}
    for measure in measures:
        constant = bool(np.ptp(measures[measure]) == 0)
        by_score = {name: verdict(measure, quartiles[name]["measures"][measure]["hard_minus_easy"], constant) for name in DIFFICULTY_SCORES}
        primary = by_score[primary_score]
        verdicts[measure] = {**primary, "by_score": by_score, "agreeing_scores": sum(entry == primary for entry in by_score.values())}
    norm_table = spearman_table({COVARIATE: covariate}, {**scores, **measures}, covariate, seed=seed, num_resamples=num_resamples)[COVARIATE]
    return {
        "experiment": 5,
        "question": record["question"],
        "config": config,
        "num_images": record["num_images"],
        "num_valid": record["num_valid"],
        "num_skipped_corrupt": record["num_skipped_corrupt"],
        "num_analysed": images.count,
        "num_undefined": images.num_valid - images.count,
        "sample_pool": record["sample_pool"],
        "settings": {"primary_score": primary_score, "seed": seed, "num_resamples": num_resamples, "partial_check": PARTIAL_CHECK,
                     "taus": config["taus"], "etas": config["etas"], "verdict_rule": VERDICT_RULE},
        "scores": list(DIFFICULTY_SCORES),
        "measures": list(measures),
        "headline_measures": list(COMPLEXITY_MEASURES),
        "top1_accuracy": bootstrap_mean_ci(correct.astype(np.float64), seed=seed, num_resamples=num_resamples),
        "measure_means": {name: bootstrap_mean_ci(value, seed=seed, num_resamples=num_resamples) for name, value in measures.items()},
        "spearman": spearman_table(scores, measures, covariate, seed=seed, num_resamples=num_resamples),
        "spearman_with_norm": {name: {key: entry[key] for key in ("rho", "ci_low", "ci_high", "p_value", "n")} for name, entry in norm_table.items()},
        "quartiles": quartiles,
        "correctness": correctness_analysis(correct, measures, seed, num_resamples),
        "verdicts": verdicts,
        "at_all_subsets": {name: float(np.mean(values >= 2 ** config["num_blocks"])) for name, values in measures.items() if name.startswith(("k_err", "k_mass"))},
        "published": published_numbers("experiment_5"),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-image", type=Path, required=True, help="per_image.pt of experiment_5.step_1_evaluate")
    parser.add_argument("--output", type=Path, default=None, help="analysis JSON to write (default: analysis.json beside --per-image)")
    parser.add_argument("--primary-score", choices=DIFFICULTY_SCORES, default="cross_entropy", help="difficulty score whose quartiles decide the verdicts (default: %(default)s)")
    parser.add_argument("--seed", type=arg_types.seed, default=0, help="seed of the bootstrap resamples (default: %(default)s)")
    parser.add_argument("--num-resamples", type=arg_types.positive_int, default=NUM_RESAMPLES, help="bootstrap resamples (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.num_resamples < 100:
        raise PipelineError(f"--num-resamples {args.num_resamples}: use at least 100 for a 95 % percentile CI")
    analysis = analyze(load_per_image(args.per_image), args.primary_score, args.seed, args.num_resamples)
    output = args.output or args.per_image.parent / "analysis.json"
    atomic_write_json(output, analysis)
    k_err = analysis["verdicts"]["k_err"]
    print(f"wrote {output}: {analysis['num_analysed']} images; K_τ^err {k_err['verdict']} with difficulty ({args.primary_score} quartiles), "
          f"ρ(cross-entropy, K_τ^err) = {analysis['spearman']['cross_entropy']['k_err']['rho']:.3g}")


if __name__ == "__main__":
    run_cli(main)
