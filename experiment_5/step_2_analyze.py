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

from experiment_1.errors import run_cli
from experiment_5.analyze import main

__all__ = ["main"]

if __name__ == "__main__":
    run_cli(main)
