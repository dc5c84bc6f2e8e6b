"""Experiment 3A/3B, step 4 — residual-scaling figures and REPORT.md from summary_all.json.

Question: does the interaction spectrum migrate to low orders under residual scaling λ, what does
it cost in top-1 agreement, and does each order follow the λ^k law?

Inputs:  --summary (experiment_2.step_3_lambda_sweep's summary_all.json; timing.json beside it if present).
Outputs: kappa_vs_lambda, spectra_per_lambda, agreement_vs_lambda and lambda_law (each .png/.pdf) and
         REPORT.md in the summary's folder. Every number in the REPORT is read from the JSON; the
         verdicts are the summary's block (decided by experiment_2.lambda_sweep.verdicts), rendered.

    python -m experiment_2.step_4_lambda_plot --summary experiment_2/results_lambda/summary_all.json
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from experiment_1.errors import run_cli
from experiment_1.run import Command, flag


@dataclass(frozen=True)
class LambdaPlotFlags:
    """The sweep's summary."""

    summary: Path = flag(
        "summary_all.json of step_3_lambda_sweep (default: %(default)s)",
        path="file",
        fix="run `python -m experiment_2.step_3_lambda_sweep` first",
        default=Path("experiment_2/results_lambda/summary_all.json"),
    )


COMMAND = Command(__doc__, LambdaPlotFlags, "experiment_2.lambda_sweep.plot:run")
main = COMMAND.main

if __name__ == "__main__":
    run_cli(main)
