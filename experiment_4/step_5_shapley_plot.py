"""Experiment 4, step 5 — the blocks' Shapley values: figure and REPORT.md from shapley.json.

Question: which residual blocks carry each image's prediction, and how much does that vary over images and classes?

Inputs:  --summary (step_4_shapley's shapley.json; timing.json beside it if present).
Outputs: in the summary's folder: shapley_blocks (.png/.pdf) and REPORT.md. Every number in the REPORT is read from
         the JSON; it is descriptive (the original study states no claim about Shapley values, so no verdict).

    python -m experiment_4.step_5_shapley_plot --summary experiment_4/results_mine_shapley/shapley.json
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from experiment_1.errors import run_cli
from experiment_1.run import Command, flag


@dataclass(frozen=True)
class ShapleyPlotFlags:
    """The Shapley summary the figure and REPORT are drawn from."""

    summary: Path = flag(
        "shapley.json of step_4_shapley (default: %(default)s)",
        path="file",
        fix="run `python -m experiment_4.step_4_shapley` first",
        default=Path("experiment_4/results_shapley/shapley.json"),
    )


COMMAND = Command(__doc__, ShapleyPlotFlags, "experiment_4.shapley_plot:run")
main = COMMAND.main

if __name__ == "__main__":
    run_cli(main)
