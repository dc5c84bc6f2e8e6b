"""Experiment 5, step 2 — how difficulty relates to interaction complexity, as statistics in analysis.json.

Question: do hard images use more, or higher-order, block interactions?
Over the valid images whose every score and measure is defined (per_image.pt of step 1), the analysis of
:mod:`experiment_5.summary`: Spearman ρ (and partial ρ given ‖h(full)‖₂) of every difficulty score with
every complexity measure, with bootstrap CIs; hard − easy quartile and incorrect − correct differences;
the scores' mutual agreement; saturated / constant measures; and the verdicts block
(:mod:`experiment_5.verdicts`): each measure judged by the --primary-score quartiles with Holm
across measures, the other scores as a sensitivity check, "cannot tell" with the smallest detectable
effect where our CI contains what the seed reports.

Inputs:  --per-image (experiment_5.step_1_evaluate's per_image.pt).
Outputs: analysis.json beside it (or --output), with the evaluation's configuration and the seed's numbers.

    python -m experiment_5.step_2_analyze --per-image experiment_5/results/per_image.pt
"""

from __future__ import annotations

import argparse
from pathlib import Path

from experiment_1.errors import PipelineError, run_cli
from experiment_1.files import atomic_write_json, check_not_input
from experiment_1.report import NUM_RESAMPLES, by_id
from experiment_1.run import run_config
from experiment_5.difficulty import DIFFICULTY_SCORES
from experiment_5.formats import load_per_image
from experiment_5.summary import analyze


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-image", type=Path, required=True, help="per_image.pt of experiment_5.step_1_evaluate")
    parser.add_argument(
        "--output",
        type=run_config.output_path,
        default=None,
        help="analysis JSON to write (default: analysis.json beside --per-image)",
    )
    parser.add_argument(
        "--primary-score",
        choices=DIFFICULTY_SCORES,
        default="cross_entropy",
        help="difficulty score whose quartiles decide the verdicts (default: %(default)s)",
    )
    parser.add_argument(
        "--seed", type=run_config.seed, default=0, help="seed of the bootstrap resamples (default: %(default)s)"
    )
    parser.add_argument(
        "--num-resamples",
        type=run_config.positive_int,
        default=NUM_RESAMPLES,
        help="bootstrap resamples (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    if args.num_resamples < 100:
        raise PipelineError(f"--num-resamples {args.num_resamples}: use at least 100 for a 95 % percentile CI")
    output = args.output or args.per_image.parent / "analysis.json"
    check_not_input(output, args.per_image)
    analysis = analyze(load_per_image(args.per_image), args.primary_score, args.seed, args.num_resamples)
    atomic_write_json(output, analysis)
    k_err = by_id(analysis["verdicts"])["k_err.hard_minus_easy"]
    print(
        f"wrote {output}: {analysis['num_analysed']} images; K_τ^err vs difficulty ({args.primary_score} quartiles): {k_err['decision']}, "
        f"ρ(cross-entropy, K_τ^err) = {analysis['spearman']['cross_entropy']['k_err']['rho']:.3g}"
    )


if __name__ == "__main__":
    run_cli(main)
