"""Experiment 3C, step 7 — the exact-zero-chain law scored on a network it was not fitted to.

Question: the refined kink law (slope 1 for k ≤ R, 3/2 above; experiment_2/README.md, "After measuring")
was derived from the random-init ResNet-18's own 3C run, so there it is only consistent (post hoc). Does
it hold where its prediction was stated before running — ResNet-18 with its first block held on (R = 1:
slope 3/2 at k = 2; README, "A test of the refined law on data it was not fitted to")?

And its replications (a second seed, other images, a λ grid down to 1e-4), each predicted in a prediction file
committed before its run (experiment_2.limit.prediction): the law's slope per order, the deciding order and the rule,
with the convergence rule's own tolerance (experiment_2.limit.laws.LAW_TEST_CONVERGENCE_TOLERANCE).

Inputs:  --sweep: the summary_all.json of one step_3_lambda_sweep run with the network's own activations,
         not the refined law's own data (experiment_2.limit.laws.is_post_hoc; refused otherwise);
         --prediction (optional): its prediction file, refused when it is not in the clean commit the run recorded
         with its present content, or is not about this run. Without it: the first held-block test, whose prediction
         is the README's (committed at experiment_2.limit.laws.PREDICTION_COMMIT), judged by the rule it ran under.
Outputs: <output-dir>/summary_3c.json (the native variant's limit block re-scored by experiment_2.limit,
         the prediction as data, the floor headroom per λ, verdicts: each law, and the law at its deciding order) and
         REPORT_law_test.md (its own name: the sweep's folder, the default, is where experiment_2.step_4_lambda_plot
         writes REPORT.md; no step replaces another's file).

    python -m experiment_2.step_7_law_test --sweep experiment_2/results_3c_resnet18_first_block_held/summary_all.json
    python -m experiment_2.step_7_law_test --sweep experiment_2/results_3c_resnet18_first_block_held_seed1/summary_all.json \\
        --prediction experiment_2/limit/predictions/held_block_seed1.json
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from experiment_1.errors import run_cli
from experiment_1.run import Command, flag

REPORT_NAME = (
    "REPORT_law_test.md"  # not REPORT.md: that is experiment_2.step_4_lambda_plot's in the same (sweep) folder
)


@dataclass(frozen=True)
class LawTestFlags:
    """The sweep, where the test goes, and the prediction committed before the run."""

    sweep: Path = flag(
        "summary_all.json of step_3_lambda_sweep (the network's own activations)",
        path="file",
        fix="run `python -m experiment_2.step_3_lambda_sweep` first",
    )
    output_dir: Path | None = flag(
        f"where summary_3c.json and {REPORT_NAME} go (default: the sweep's folder)", path="output", default=None
    )
    prediction: Path | None = flag(
        "the run's prediction file (experiment_2/limit/predictions/), committed before it ran; "
        "without it: the first held-block test (the README's prediction)",
        path="file",
        fix="pass a prediction file of experiment_2/limit/predictions/",
        default=None,
    )


COMMAND = Command(__doc__, LawTestFlags, "experiment_2.limit.law_test:run")
main = COMMAND.main

if __name__ == "__main__":
    run_cli(main)
