"""Experiment 4, step 3 — expert-set figures and REPORT.md from overlap.json.

Question: do the dominant subsets depend on the input and on its class?

Inputs:  --summary (step_2_overlap's overlap.json; timing.json beside it if present).
Outputs: in the summary's folder: jaccard_histograms, nn_accuracy_vs_k and global_core (.png/.pdf)
         and REPORT.md. Every number and verdict in the REPORT is read from the JSON (the verdicts
         from its ``verdicts`` block, decided by experiment_4.verdicts).

    python -m experiment_4.step_3_plot --summary experiment_4/results/overlap.json
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from experiment_1.errors import run_cli
from experiment_1.run import Command, flag


@dataclass(frozen=True)
class SignaturePlotFlags:
    """overlap.json, and the original study's second input (accepted, not read)."""

    summary: Path = flag(
        "overlap.json of step_2_overlap (default: %(default)s)",
        path="file",
        fix="run `python -m experiment_4.step_2_overlap` first",
        default=Path("experiment_4/results/overlap.json"),
    )
    signatures: Path | None = flag(
        "the original study's second input; accepted so its command runs as written, but overlap.json holds all "
        "the figures read",
        type=Path,
        default=None,
    )


COMMAND = Command(__doc__, SignaturePlotFlags, "experiment_4.plot:run")
main = COMMAND.main

if __name__ == "__main__":
    run_cli(main)
