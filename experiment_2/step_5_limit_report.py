"""Experiment 3C, step 5 — which law each order follows as λ → 0: the network's own activations against the smooth swap.

Question: is it the smoothness assumption that breaks the λ^k law, and do piecewise-linear
activations follow the kink law derived in experiment_2/README.md (limit slope min(k, s))?

Inputs:  --native and --smooth: the summary_all.json of two step_3_lambda_sweep runs of the same
         network, images and λ grid — one with its own activations, one with --smooth-activations
         (per_image.npz beside each, for the swap's top-1 agreement at λ = 1).
Outputs: <output-dir>/summary_3c.json (per variant: limit slopes with CIs, successive slopes, per-order
         convergence, the spectrum renormalised over k ≥ 2 per λ, the laws' tests re-scored by the current
         rule of experiment_2.limit; verdicts),
         slope_vs_k and spectrum_above_order_1 (.png/.pdf), REPORT.md.

    python -m experiment_2.step_5_limit_report --native experiment_2/results_3c_resnet18_native/summary_all.json \\
        --smooth experiment_2/results_3c_resnet18_smooth/summary_all.json --output-dir experiment_2/results_3c_resnet18
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from experiment_1.errors import run_cli
from experiment_1.run import Command, flag


@dataclass(frozen=True)
class LimitReportFlags:
    """The two sweeps and where the report goes."""

    native: Path = flag(
        "summary_all.json of step_3_lambda_sweep with the network's own activations",
        path="file",
        fix="run `python -m experiment_2.step_3_lambda_sweep` first",
    )
    smooth: Path = flag(
        "summary_all.json of the same sweep with --smooth-activations",
        path="file",
        fix="run `python -m experiment_2.step_3_lambda_sweep --smooth-activations` first",
    )
    output_dir: Path | None = flag(
        "where summary_3c.json, the figures and REPORT.md go (default: experiment_2/results_3c_<arch>)",
        path="output",
        default=None,
    )


COMMAND = Command(__doc__, LimitReportFlags, "experiment_2.limit.limit_report:run")
main = COMMAND.main

if __name__ == "__main__":
    run_cli(main)
