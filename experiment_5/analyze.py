"""Experiment 5's analysis (experiment_5.step_2_analyze): difficulty against complexity, quartiles and correlations."""

from __future__ import annotations

from experiment_1.files import atomic_write_json, check_not_input
from experiment_1.report import by_id
from experiment_5.formats import load_per_image
from experiment_5.step_2_analyze import AnalyzeFlags
from experiment_5.summary import analyze


def run(args: AnalyzeFlags) -> None:
    """analysis.json (beside --per-image, or --output)."""
    output = args.output or args.per_image.parent / "analysis.json"
    check_not_input(output, args.per_image)
    analysis = analyze(load_per_image(args.per_image), args.primary_score, args.seed, args.num_resamples)
    atomic_write_json(output, analysis)
    k_err = by_id(analysis["verdicts"])["k_err.hard_minus_easy"]
    print(
        f"wrote {output}: {analysis['num_analysed']} images; K_τ^err vs difficulty ({args.primary_score} quartiles): {k_err['decision']}, "
        f"ρ(cross-entropy, K_τ^err) = {analysis['spearman']['cross_entropy']['k_err']['rho']:.3g}"
    )
