"""Experiment 3C, step 9 — the exact-zero-chain law over its a priori replications, one verdict for them all.

Question: does the refined kink law's prediction for the held-block ResNet-18 (slope 3/2 at every k > R = 1; the
deciding order k = 2) hold in every replication predicted before it ran — the λ grid extended to 1e-4, a second
initialisation seed, other images?

Rule (all must hold, fixed before the runs): the combined verdict holds when every replication's verdict holds — an
intersection–union test, each replication at its own 95 % level, which needs no multiplicity correction; it fails when
any replication fails (not corrected: a law stated for every setting is refuted by one; with n replications a false
"fails" is at most n times as likely as in one); it reads cannot tell (not converged) when none fails and every one
that does not hold has not converged; else cannot tell. Given once for the whole law and once for its deciding order.

Inputs:  --tests: the summary_3c.json of experiment_2.step_7_law_test for each replication, each judged against a
         prediction file (refused: a test without one, two of the same seed and images, tests of different laws or
         deciding orders).
Outputs: <output-dir>/summary_replications.json (each replication's run, prediction and decisions; the combined
         verdicts) and REPORT.md.

    python -m experiment_2.step_9_law_replications --tests experiment_2/results_3c_resnet18_first_block_held_*/summary_3c.json \\
        --output-dir experiment_2/results_3c_resnet18_first_block_held_replications
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from experiment_1.errors import run_cli
from experiment_1.run import Command, flag


@dataclass(frozen=True)
class LawReplicationsFlags:
    """Every replication's law test and where the combination goes."""

    tests: list[Path] = flag(
        "summary_3c.json of each replication's law test",
        nargs="+",
        path="file",
        fix="run `python -m experiment_2.step_7_law_test` on that replication first",
    )
    output_dir: Path = flag("where summary_replications.json and REPORT.md go", path="output")


COMMAND = Command(__doc__, LawReplicationsFlags, "experiment_2.limit.law_replications:run")
main = COMMAND.main

if __name__ == "__main__":
    run_cli(main)
