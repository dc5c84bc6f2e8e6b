"""Experiment 2, step 2 — spectrum figures and REPORT.md from summary.json.

Question: how is the Möbius energy of the logits distributed across interaction orders?

Inputs:  --summary (experiment_2.step_1_evaluate's summary.json; timing.json beside it if present),
         optionally --compare-summary: the same step run with --weights random (the random-init null;
         the committed one adds --calibrate-batchnorm, see experiment_2/README.md); or --null-seeds: the random-init
         null over networks (experiment_2.step_14_null_compare's summary.json), whose verdicts and table the REPORT
         shows and whose networks' spectrum the figures overlay.
Outputs: spectrum.png/.pdf, kappa_histogram.png/.pdf and REPORT.md in the summary's folder; with a null,
         null_comparison.json beside them (the run-against-null verdicts of
         experiment_2.spectrum.verdicts.null_verdicts, decided from the two summaries' numbers). Every number
         in the REPORT is read from the JSON; the verdicts are the summaries' blocks, rendered.

    python -m experiment_2.step_2_plot --summary experiment_2/results/summary.json \\
        --compare-summary experiment_2/results_random/summary.json

The figures, drawn from summary.json only: the mean spectrum per projection with the binomial and
random-init nulls overlaid, and the per-image κ histograms.

The REPORT's blocks, from summary.json only: the headline and per-order tables, per-image κ quantiles,
the round-off floor per order, the Walsh-basis control (when the run recorded it), the seed's numbers beside ours, and
the method text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from experiment_1.errors import run_cli
from experiment_1.run import Command, flag


@dataclass(frozen=True)
class SpectrumPlotFlags:
    """The run's summary and at most one random-init null (the two null flags exclude each other)."""

    summary: Path = flag(
        "summary.json of step_1_evaluate (default: %(default)s)",
        path="file",
        fix="run `python -m experiment_2.step_1_evaluate` first",
        default=Path("experiment_2/results/summary.json"),
    )
    compare_summary: Path | None = flag(
        "summary.json of step_1_evaluate run with --weights random, the random-init null (optional)",
        path="file",
        fix="run `python -m experiment_2.step_1_evaluate --weights random` first",
        exclusive="null",
        default=None,
    )
    null_seeds: Path | None = flag(
        "summary.json of experiment_2.step_14_null_compare for this run, the random-init null over networks (optional)",
        path="file",
        fix="run `python -m experiment_2.step_14_null_compare` first",
        exclusive="null",
        default=None,
    )


COMMAND = Command(__doc__, SpectrumPlotFlags, "experiment_2.spectrum.plot:run")
main = COMMAND.main

if __name__ == "__main__":
    run_cli(main)
