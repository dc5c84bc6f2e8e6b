"""Experiment 3C, step 7 — the exact-zero-chain law scored on a network it was not fitted to.

Question: the refined kink law (slope 1 for k ≤ R, 3/2 above; experiment_2/README.md, "After measuring")
was derived from the random-init ResNet-18's own 3C run, so there it is only consistent (post hoc). Does
it hold where its prediction was stated before running — ResNet-18 with its first block held on (R = 1:
slope 3/2 at k = 2; README, "A test of the refined law on data it was not fitted to")?

Inputs:  --sweep: the summary_all.json of one step_3_lambda_sweep run with the network's own activations,
         not the refined law's own data (experiment_2.limit.laws.is_post_hoc; refused otherwise).
Outputs: <output-dir>/summary_3c.json (the native variant's limit block re-scored by experiment_2.limit,
         the prediction as data, verdicts) and REPORT_law_test.md (its own name: the sweep's folder, the default,
         is where experiment_2.step_4_lambda_plot writes REPORT.md; no step replaces another's file).

    python -m experiment_2.step_7_law_test --sweep experiment_2/results_3c_resnet18_first_block_held/summary_all.json
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from experiment_1.errors import PipelineError, run_cli
from experiment_1.files import atomic_write_json, atomic_write_text
from experiment_1.report import load_checked_summary
from experiment_2.lambda_sweep.figures import format_lambdas
from experiment_2.limit.laws import LAWS, after_prediction, is_post_hoc, law_verdict
from experiment_2.limit.report import limit_document, successive_table, variant_limit_table
from experiment_2.limit.summary import LIMIT_KEYS, variant_block

QUESTION = (
    "Does the exact-zero-chain law (slope 1 for k ≤ R, 3/2 above), derived after measuring the random-init ResNet-18, "
    "hold on a network it was not fitted to, with its prediction stated before running?"
)
REPORT_NAME = (
    "REPORT_law_test.md"  # not REPORT.md: that is experiment_2.step_4_lambda_plot's in the same (sweep) folder
)
PREDICTION = {
    "source": "experiment_2/README.md, Experiment 3C, \"A test of the refined law on data it was not fitted to\"",
    "law": "kink_chain",
    "deciding_order": 2,
    "fitted_run_slope_at_deciding_order": 1.10,
}


def summarize(sweep: dict[str, Any]) -> dict[str, Any]:
    """summary_3c.json of the test: the sweep's configuration, its native limit block re-scored, the laws' verdicts."""
    if is_post_hoc(sweep["config"]):
        raise PipelineError(
            "--sweep: this run is the refined law's own data (experiment_2.limit.laws.REFINED_LAW_FITTED_TO); "
            "score it with experiment_2.step_5_limit_report, where the law reads consistent (post hoc)"
        )
    not_after = after_prediction(sweep["config"])
    if not_after:
        raise PipelineError(
            f"--sweep: not an a priori test of the refined law: {not_after}; rerun the sweep on a checkout that holds the prediction"
        )
    if "smooth_activations" in sweep["config"]:
        raise PipelineError(
            "--sweep: this sweep ran with --smooth-activations; the law concerns the network's own activations"
        )
    block = variant_block(sweep, "native")
    if "kink_chain" not in block["laws"]:
        raise PipelineError(
            f"--sweep: R = {block['exact_zero_chain']} here, so the refined law predicts what the first law does; nothing new to test"
        )
    limit = sweep["limit"]
    return {
        "experiment": "3C",
        "question": QUESTION,
        "config": sweep["config"],
        "num_images": sweep["num_images"],
        "num_valid": sweep["num_valid"],
        "num_skipped_corrupt": sweep["num_skipped_corrupt"],
        "lambdas": sweep["lambdas"],
        "method": limit["method"],
        "limit_points": limit["limit_points"],
        "slope_tolerance": limit["slope_tolerance"],
        "floor_margin": limit["floor_margin"],
        "prediction": {
            **PREDICTION,
            "exact_zero_chain": block["exact_zero_chain"],
            "predicted": block["laws"]["kink_chain"]["predicted"],
        },
        "variants": {"native": block},
        "verdicts": [
            law_verdict("native", law, block, law == "kink_chain", limit["slope_tolerance"], limit["floor_margin"])
            for law in LAWS
            if law in block["laws"]
        ],
    }


def report_markdown(summary: dict[str, Any]) -> str:
    """REPORT_law_test.md of the test, generated from its summary_3c.json."""
    block, config = summary["variants"]["native"], summary["config"]
    lambdas = format_lambdas(summary["lambdas"])
    method = (
        f"One λ sweep, λ ∈ {{{lambdas}}}, network arithmetic `{config['dtype']}`, of `{config['arch']}` (`{config['weights']}`, seed {config['seed']}), "
        f"which computes `{config['gated_recursion']}`; R = {block['exact_zero_chain']}. The prediction — slope 1 at k = 1, 3/2 at every k > R — was "
        f"committed before the run ({summary['prediction']['source']}); the fitted ResNet-18 had "
        f"{summary['prediction']['fitted_run_slope_at_deciding_order']:g} "
        f"at k = {summary['prediction']['deciding_order']}. {summary['method']}. Tolerance "
        f"±{summary['slope_tolerance']:g}; an order counts only once converged. "
        "Vector projection."
    )
    results = [
        "### Limit slopes against the laws",
        variant_limit_table(block, config["num_blocks"]),
        "### Slope between successive λs (convergence to the limit)",
        successive_table(block, config["num_blocks"]),
    ]
    return limit_document(
        f"Experiment 3C — the exact-zero-chain law on a network it was not fitted to ({config['arch']})",
        summary,
        method,
        results,
        [],
        "experiment_2.step_7_law_test",
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--sweep",
        type=Path,
        required=True,
        help="summary_all.json of step_3_lambda_sweep (the network's own activations)",
    )
    parser.add_argument(
        "--output-dir",
        type=Path,
        default=None,
        help=f"where summary_3c.json and {REPORT_NAME} go (default: the sweep's folder)",
    )
    args = parser.parse_args(argv)
    sweep = load_checked_summary(
        args.sweep, "3A/3B", "experiment_2.step_3_lambda_sweep", flag="--sweep", keys=("config", "lambdas", *LIMIT_KEYS)
    )
    summary = summarize(sweep)
    folder = args.output_dir or args.sweep.parent
    atomic_write_json(folder / "summary_3c.json", summary)
    atomic_write_text(folder / REPORT_NAME, report_markdown(summary))
    print(
        f"wrote {folder / 'summary_3c.json'} and {folder / REPORT_NAME}: "
        + "; ".join(f"{entry['id']} {entry['decision']}" for entry in summary["verdicts"])
    )


if __name__ == "__main__":
    run_cli(main)
