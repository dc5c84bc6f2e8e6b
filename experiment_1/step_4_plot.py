"""Experiment 1, step 4 — figure and REPORT.md from summary.json.

Question: does adding up subnetwork outputs reconstruct the network, or do we need Möbius?

Inputs:  --summary (experiment_1.step_3_evaluate's summary.json; timing.json beside it if present).
Outputs: reconstruction_error.png/.pdf and REPORT.md in the summary's folder. Every number in the
         REPORT is read from the JSON; the verdicts are the summary's ``verdicts`` block (decided by
         experiment_1.reconstruction.verdicts), rendered, never decided here.

    python -m experiment_1.step_4_plot --summary experiment_1/results/summary.json
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from experiment_1.errors import run_cli
from experiment_1.run import Command, flag


@dataclass(frozen=True)
class PlotFlags:
    """The summary the figure and REPORT are drawn from."""

    summary: Path = flag(
        "summary.json of step_3_evaluate (default: %(default)s)",
        path="file",
        fix="run `python -m experiment_1.step_3_evaluate` first",
        default=Path("experiment_1/results/summary.json"),
    )


COMMAND = Command(__doc__, PlotFlags, "experiment_1.reconstruction.plot:run")
main = COMMAND.main

if __name__ == "__main__":
    run_cli(main)
