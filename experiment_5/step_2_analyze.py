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
  shifted to higher / lower orders (k̄, κ, C_{≤3}); the same rule under every score is recorded too.

Inputs:  --per-image (experiment_5.step_1_evaluate's per_image.pt).
Outputs: analysis.json beside it (or --output), with the evaluation's configuration and the seed's numbers.

    python -m experiment_5.step_2_analyze --per-image experiment_5/results/per_image.pt
"""
from __future__ import annotations

import argparse
import pickle
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from experiment_1 import arg_types
from experiment_1.errors import PipelineError, run_cli
from experiment_1.io_utils import atomic_write_json
from experiment_1.published import published_numbers
from experiment_1.stats import NUM_RESAMPLES, bootstrap_mean_ci
from experiment_5.association import ci_excludes_zero, compare_groups, quartile_groups, spearman_table
from experiment_5.complexity import COMPLEXITY_MEASURES
from experiment_5.difficulty import DIFFICULTY_SCORES

COVARIATE = "full_logit_norm"
BREADTH_PREFIXES = ("n_eff", "k_err", "k_mass")
LOW_ORDER_PREFIX = "c_le3"
PARTIAL_CHECK = "Spearman partial correlation controlling for ‖h(full)‖₂ (rank-based, every pair)"
VERDICT_RULE = (
    "hard (top quartile of the primary score) − easy (bottom quartile) difference of the measure's mean: invariant when its 95 % "
    "bootstrap CI covers 0; otherwise broadened / narrowed for N_eff^v, K_τ^err, K_η^mass (more / fewer subsets) and shifted to "
    "higher / lower orders for k̄, κ, C_{≤3} (a larger C_{≤3} is a shift to lower orders)"
)


def load_per_image(path: Path) -> dict[str, Any]:
    """Read step 1's ``per_image.pt``, with a one-line error if it is missing, damaged or of another step."""
    path = Path(path)
    if not path.exists():
        raise PipelineError(f"{path}: --per-image not found; run `python -m experiment_5.step_1_evaluate` first")
    try:
        record = torch.load(path, weights_only=True)
    except (RuntimeError, EOFError, OSError, pickle.UnpicklingError, zipfile.BadZipFile) as error:
        raise PipelineError(f"{path}: cannot be read ({type(error).__name__}); rerun experiment_5.step_1_evaluate to rewrite it") from None
    if not isinstance(record, dict) or record.get("experiment") != 5 or "arrays" not in record:
        raise PipelineError(f"{path}: not a per_image.pt of experiment_5.step_1_evaluate (pass that file to --per-image)")
    return record


def measure_columns(arrays: dict[str, np.ndarray], taus: list[float], etas: list[float]) -> dict[str, np.ndarray]:
    """Every complexity measure as a 1-D array: the headline τ and η as ``k_err`` / ``k_mass``, the others suffixed."""
    columns = {name: np.asarray(arrays[name], dtype=np.float64) for name in COMPLEXITY_MEASURES if name not in ("k_err", "k_mass")}
    columns["k_err"], columns["k_mass"] = (np.asarray(arrays[name][:, 0], dtype=np.float64) for name in ("k_err", "k_mass"))
    for position, tau in enumerate(taus[1:], 1):
        columns[f"k_err_tau_{tau:g}"] = np.asarray(arrays["k_err"][:, position], dtype=np.float64)
    for position, eta in enumerate(etas[1:], 1):
        columns[f"k_mass_eta_{eta:g}"] = np.asarray(arrays["k_mass"][:, position], dtype=np.float64)
    return columns


def verdict(measure: str, difference: dict[str, float]) -> dict[str, Any]:
    """The rule on a hard − easy difference: invariant (CI covers 0), broadened / narrowed, or shifted up / down."""
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


@dataclass
class AnalysedImages:
    """The images the analysis uses — valid, every score, measure and ‖h(full)‖ defined — and their values."""

    scores: dict[str, np.ndarray]
    measures: dict[str, np.ndarray]
    covariate: np.ndarray
    correct: np.ndarray
    num_valid: int

    @property
    def count(self) -> int:
        return len(self.covariate)


def analysed_images(record: dict[str, Any]) -> AnalysedImages:
    """Select the analysed images of a loaded ``per_image.pt`` (at least 8, for four quartiles of two)."""
    arrays = {name: value.numpy() for name, value in record["arrays"].items()}
    valid = arrays["valid"].astype(bool)
    scores = {name: np.asarray(arrays[name], dtype=np.float64) for name in DIFFICULTY_SCORES}
    measures = measure_columns(arrays, record["config"]["taus"], record["config"]["etas"])
    covariate = np.asarray(arrays[COVARIATE], dtype=np.float64)
    defined = valid & np.all(np.isfinite(np.column_stack([*scores.values(), *measures.values(), covariate])), axis=1)
    if defined.sum() < 8:
        raise PipelineError(f"only {int(defined.sum())} images with every score and measure defined; Experiment 5's quartiles need at least 8 (evaluate more images)")
    return AnalysedImages(
        scores={name: value[defined] for name, value in scores.items()},
        measures={name: value[defined] for name, value in measures.items()},
        covariate=covariate[defined],
        correct=arrays["correct"].astype(bool)[defined],
        num_valid=int(valid.sum()),
    )


def analyze(record: dict[str, Any], primary_score: str, seed: int, num_resamples: int) -> dict[str, Any]:
    """The whole analysis.json from a loaded ``per_image.pt``."""
    config = record["config"]
    images = analysed_images(record)
    scores, measures, covariate, correct = images.scores, images.measures, images.covariate, images.correct
    quartiles = {name: quartile_analysis(scores[name], measures, seed, num_resamples) for name in DIFFICULTY_SCORES}
    verdicts = {}
    for measure in measures:
        by_score = {name: verdict(measure, quartiles[name]["measures"][measure]["hard_minus_easy"]) for name in DIFFICULTY_SCORES}
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
