"""Experiment 3, step 2 — top-K figures and REPORT.md from summary.json.

Question: is the Möbius decomposition sparse at the level of individual subsets?

Inputs:  --summary (experiment_3.step_1_evaluate's summary.json; timing.json beside it if present).
Outputs: topk_curves.png/.pdf (Γ_K on vector and on scalar energy, top-1 agreement and relative error vs K, magnitude rankings and
         controls with 95 % CIs, log-2 K axis), topk_orders.png/.pdf (the order histogram of the
         magnitude top-K) and REPORT.md in the summary's folder. Every number in the REPORT is read
         and every decision from the JSON (its verdicts block, built by experiment_3.verdicts).

    python -m experiment_3.step_2_plot --summary experiment_3/results/summary.json
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from experiment_1.errors import run_cli
from experiment_1.run import Command, flag


@dataclass(frozen=True)
class TopKPlotFlags:
    """The summary the figures and REPORT are drawn from."""

    summary: Path = flag(
        "summary.json of step_1_evaluate (default: %(default)s)",
        path="file",
        fix="run `python -m experiment_3.step_1_evaluate` first",
        default=Path("experiment_3/results/summary.json"),
    )


COMMAND = Command(__doc__, TopKPlotFlags, "experiment_3.plot:run")
main = COMMAND.main

if __name__ == "__main__":
    run_cli(main)
