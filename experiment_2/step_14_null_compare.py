"""Experiment 2, step 14 — training against the random-init null, decided between networks.

Question: does training change the spectrum, when the trained network is compared with many random-init networks
rather than with the images of one?

Inputs:  --summary: the trained run's summary.json (experiment_2.step_1_evaluate; per_image.npz beside it);
         --seeds-dir: experiment_2.step_13_null_seeds' folder (seed_*/summary.json and per_image.npz).
Outputs: <seeds-dir>/summary.json (the per-network means, the input rule per seed, the rank tests and the verdicts of
         experiment_2.spectrum.null_networks) and <seeds-dir>/REPORT.md generated from it; a re-decision that changes nothing
         but the commit leaves summary.json as it is (the commit that decided it stays). Evaluates nothing.

    python -m experiment_2.step_14_null_compare --summary experiment_2/results_efficientnet_lite0_sample/summary.json \\
        --seeds-dir experiment_2/results_efficientnet_lite0_null_seeds
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from experiment_1.errors import run_cli
from experiment_1.run import Command, flag


@dataclass(frozen=True)
class NullCompareFlags:
    """The trained run and the seeds' folder."""

    summary: Path = flag(
        "the trained run's summary.json (step_1_evaluate)",
        path="file",
        fix="run `python -m experiment_2.step_1_evaluate` first",
    )
    seeds_dir: Path = flag(
        "experiment_2.step_13_null_seeds' output folder",
        path="folder",
        fix="run `python -m experiment_2.step_13_null_seeds` first",
    )


COMMAND = Command(__doc__, NullCompareFlags, "experiment_2.spectrum.null_compare:run")
main = COMMAND.main

if __name__ == "__main__":
    run_cli(main)
