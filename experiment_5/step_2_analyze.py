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

from dataclasses import dataclass
from pathlib import Path

from experiment_1.errors import run_cli
from experiment_1.report import NUM_RESAMPLES
from experiment_1.run import Command, flag, run_config

# the difficulty scores (experiment_5.difficulty computes them), each a --primary-score choice
DIFFICULTY_SCORES = ("cross_entropy", "one_minus_p_true", "one_minus_max_softmax", "entropy", "negative_margin")


@dataclass(frozen=True)
class AnalyzeFlags:
    """The per-image record, where the analysis goes, its primary score and its bootstrap."""

    per_image: Path = flag(
        "per_image.pt of experiment_5.step_1_evaluate",
        path="file",
        fix="run `python -m experiment_5.step_1_evaluate` first",
    )
    output: Path | None = flag(
        "analysis JSON to write (default: analysis.json beside --per-image)", path="output", default=None
    )
    primary_score: str = flag(
        "difficulty score whose quartiles decide the verdicts (default: %(default)s)",
        choices=DIFFICULTY_SCORES,
        default="cross_entropy",
    )
    seed: int = flag("seed of the bootstrap resamples (default: %(default)s)", type=run_config.seed, default=0)
    num_resamples: int = flag(
        "bootstrap resamples, at least 100 for a 95 %% percentile CI (default: %(default)s)",
        low=100,
        default=NUM_RESAMPLES,
    )


COMMAND = Command(__doc__, AnalyzeFlags, "experiment_5.analyze:run")
main = COMMAND.main

if __name__ == "__main__":
    run_cli(main)
