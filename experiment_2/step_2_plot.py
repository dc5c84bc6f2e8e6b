"""Experiment 2, step 2 — spectrum figures and REPORT.md from summary.json.

Question: how is the Möbius energy of the logits distributed across interaction orders?

Inputs:  --summary (experiment_2.step_1_evaluate's summary.json; timing.json beside it if present),
         optionally --compare-summary: the same step run with --weights random (the random-init null;
         the committed one adds --calibrate-batchnorm, see experiment_2/README.md).
Outputs: spectrum.png/.pdf, kappa_histogram.png/.pdf and REPORT.md in the summary's folder; with a null,
         null_comparison.json beside them (the run-against-null verdicts of
         experiment_2.spectrum.verdicts.null_verdicts, decided from the two summaries' numbers). Every number
         in the REPORT is read from the JSON; the verdicts are the summaries' blocks, rendered.

    python -m experiment_2.step_2_plot --summary experiment_2/results/summary.json \\
        --compare-summary experiment_2/results_random/summary.json
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from experiment_1.errors import PipelineError, run_cli
from experiment_1.files import atomic_write_json, atomic_write_text, read_timing
from experiment_1.report import ReportDocument, load_checked_summary
from experiment_2.spectrum.figures import plot_kappa_histogram, plot_spectrum
from experiment_2.spectrum.report import METHOD, results_blocks, seed_rows
from experiment_2.spectrum.verdicts import check_random_init_null, null_verdicts

SUMMARY_KEYS = (
    "projections.vector",
    "projections.scalar",
    "binomial_null.num_blocks",
    "binomial_null.kappa",
    "binomial_null.spectrum",
    "published",
    "roundoff",
    "verdicts",
)


def null_label(compare: dict[str, Any]) -> str:
    """How the null was made, for the method text."""
    calibration = compare["config"].get("batchnorm_calibration")
    return "the same architecture with random-init weights" + (
        f" and batch-norm statistics re-estimated on the first {calibration['images']} sample images"
        " (experiment_2/README.md, The random-init null)"
        if calibration
        else ""
    )


def report_markdown(
    summary: dict[str, Any],
    compare: dict[str, Any] | None,
    comparison: list[dict[str, Any]],
    timing: dict[str, Any] | None,
    figures: dict[str, str],
) -> str:
    """REPORT.md text, generated from the summary JSON(s)."""
    null = (
        f" and {null_label(compare)}."
        if compare is not None
        else "; run step_1 with `--weights random --calibrate-batchnorm N` and pass `--compare-summary` for the random-init null."
    )
    return ReportDocument(
        title="Experiment 2 — the interaction-order spectrum",
        summary=summary,
        method=METHOD + null,
        results=results_blocks(summary, compare, figures),
        seed_rows=seed_rows(summary),
        verdicts=summary["verdicts"] + comparison,
        generator="experiment_2.step_2_plot",
        timing=timing,
        data_extra=f"; random-init null: {compare['num_valid']} images, weights `{compare['config']['weights']}`, seed {compare['config']['seed']}"
        if compare is not None
        else "",
        seed_headers=["quantity", "the original study (README / paper)", f"ours ({summary['config']['arch']})"],
    ).render()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--summary",
        type=Path,
        default=Path("experiment_2/results/summary.json"),
        help="summary.json of step_1_evaluate (default: %(default)s)",
    )
    parser.add_argument(
        "--compare-summary",
        type=Path,
        default=None,
        help="summary.json of step_1_evaluate run with --weights random, the random-init null (optional)",
    )
    args = parser.parse_args(argv)
    summary = load_checked_summary(args.summary, 2, "experiment_2.step_1_evaluate", "--summary", SUMMARY_KEYS)
    compare = (
        load_checked_summary(args.compare_summary, 2, "experiment_2.step_1_evaluate", "--compare-summary", SUMMARY_KEYS)
        if args.compare_summary
        else None
    )
    comparison: list[dict[str, Any]] = []
    folder = args.summary.parent
    if compare is not None:
        check_random_init_null(summary, args.summary, compare, args.compare_summary)
        if compare["binomial_null"]["num_blocks"] != summary["binomial_null"]["num_blocks"]:
            raise PipelineError(
                f"{args.compare_summary}: has L = {compare['binomial_null']['num_blocks']} blocks but {args.summary} "
                f"has L = {summary['binomial_null']['num_blocks']}; compare the same architecture"
            )
        comparison = null_verdicts(summary, compare)
        atomic_write_json(
            folder / "null_comparison.json",
            {
                "run_id": summary["config"]["run_id"],
                "null_run_id": compare["config"]["run_id"],
                "null_summary": str(args.compare_summary),
                "verdicts": comparison,
            },
        )
    timing = read_timing(folder / "timing.json", summary.get("num_images"))
    spectrum = plot_spectrum(summary, compare, folder / "spectrum")
    kappa = plot_kappa_histogram(summary, compare, folder / "kappa_histogram")
    report = folder / "REPORT.md"
    atomic_write_text(
        report, report_markdown(summary, compare, comparison, timing, {"spectrum": spectrum.name, "kappa": kappa.name})
    )
    print(f"wrote {spectrum}, {kappa} and {report}")


if __name__ == "__main__":
    run_cli(main)
