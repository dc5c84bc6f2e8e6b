"""Experiment 5, step 3 — figures and REPORT.md from analysis.json (and per_image.pt for the scatter plots).

Question: do hard images use more, or higher-order, block interactions?

Inputs:  --analysis (experiment_5.step_2_analyze's analysis.json; timing.json beside it if present),
         --per-image (experiment_5.step_1_evaluate's per_image.pt, for the per-image scatter plots).
Outputs: rho_heatmap.png/.pdf (Spearman ρ of every difficulty score with every complexity measure, CIs
         marked), quartile_bars.png/.pdf (each measure's mean per quartile of the primary score),
         strongest_pairs.png/.pdf (scatter plots of the two pairs with the largest |ρ|) and REPORT.md, in
         the analysis's folder. Every number in the REPORT is read from analysis.json; the verdicts are
         the rule recorded there, applied to its numbers.

    python -m experiment_5.step_3_plot --analysis experiment_5/results/analysis.json \\
        --per-image experiment_5/results/per_image.pt
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from experiment_1.errors import run_cli
from experiment_1.run import Command, flag


@dataclass(frozen=True)
class DifficultyPlotFlags:
    """The analysis and the per-image record it analysed."""

    analysis: Path = flag(
        "analysis.json of experiment_5.step_2_analyze",
        path="file",
        fix="run `python -m experiment_5.step_2_analyze` first",
    )
    per_image: Path = flag(
        "per_image.pt of experiment_5.step_1_evaluate (the same run)",
        path="file",
        fix="run `python -m experiment_5.step_1_evaluate` first",
    )


COMMAND = Command(__doc__, DifficultyPlotFlags, "experiment_5.plot:run")
main = COMMAND.main

if __name__ == "__main__":
    run_cli(main)
