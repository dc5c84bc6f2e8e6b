"""Experiment 2, step 2 — spectrum figures and REPORT.md from summary.json.

Question: how is the Möbius energy of the logits distributed across interaction orders?

Inputs:  --summary (experiment_2.step_1_evaluate's summary.json; timing.json beside it if present),
         optionally --compare-summary: the same step run with --weights random (the random-init null;
         the committed one adds --calibrate-batchnorm, see experiment_2/README.md); or --null-seeds: the random-init
         null over networks (experiment_2.step_10_null_compare's summary.json), whose verdicts and table the REPORT
         shows and whose networks' spectrum the figures overlay.
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
from experiment_1.files import atomic_write_json, atomic_write_text, read_json, read_timing
from experiment_1.report import ReportDocument, check_verdicts, load_checked_summary, markdown_table
from experiment_2.spectrum.figures import plot_kappa_histogram, plot_spectrum
from experiment_2.spectrum.null_report import design_sentence, statistics_rows
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
    if not calibration:
        return "the same architecture with random-init weights"
    where = "after the evaluated ones" if "positions" in calibration else "at the start of the list"
    return (
        f"the same architecture with random-init weights and batch-norm statistics re-estimated on {calibration['images']} "
        f"sample images {where} (experiment_2/README.md, The random-init null over networks)"
    )


def null_networks_blocks(nulls: dict[str, Any], source: Path) -> list[str]:
    """The random-init null over networks in Experiment 2's REPORT: its design and its table (its own REPORT beside it)."""
    headers, rows = statistics_rows(nulls)
    return [
        f"The random-init null over networks ([`{source.parent.as_posix()}`]({Path('..') / source.parent.name}/REPORT.md)): "
        + design_sentence(nulls),
        markdown_table(headers, rows),
    ]


def report_markdown(
    summary: dict[str, Any],
    compare: dict[str, Any] | None,
    comparison: list[dict[str, Any]],
    timing: dict[str, Any] | None,
    figures: dict[str, str],
    nulls: tuple[dict[str, Any], Path] | None = None,
) -> str:
    """REPORT.md text, generated from the summary JSON(s)."""
    null = (
        f" and {null_label(compare)}."
        if compare is not None
        else " and random-init networks of the same architecture over many initialisation seeds, batch-norm statistics "
        "re-estimated on images disjoint from the evaluated ones (experiment_2/README.md, The random-init null over networks)."
        if nulls is not None
        else "; run experiment_2.step_9_null_seeds and step_10_null_compare and pass `--null-seeds` for the random-init null."
    )
    return ReportDocument(
        title="Experiment 2 — the interaction-order spectrum",
        summary=summary,
        method=METHOD + null,
        results=results_blocks(summary, compare, figures) + (null_networks_blocks(*nulls) if nulls is not None else []),
        seed_rows=seed_rows(summary),
        verdicts=summary["verdicts"] + comparison,
        generator="experiment_2.step_2_plot",
        timing=timing,
        data_extra=f"; random-init null: {compare['num_valid']} images, weights `{compare['config']['weights']}`, seed {compare['config']['seed']}"
        if compare is not None
        else f"; random-init null: {nulls[0]['num_null_networks']} networks × {nulls[0]['num_images_per_network']} images"
        if nulls is not None
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
    parser.add_argument(
        "--null-seeds",
        type=Path,
        default=None,
        help="summary.json of experiment_2.step_10_null_compare for this run, the random-init null over networks (optional)",
    )
    args = parser.parse_args(argv)
    if args.compare_summary and args.null_seeds:
        raise PipelineError("--compare-summary and --null-seeds: pass one random-init null, not both")
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
    nulls = None
    if args.null_seeds is not None:
        between = read_json(args.null_seeds, fix="rerun `python -m experiment_2.step_10_null_compare`")
        check_verdicts(between, args.null_seeds, fix="rerun `python -m experiment_2.step_10_null_compare`")
        if between.get("config", {}).get("trained_run_id") != summary["config"]["run_id"]:
            raise PipelineError(
                f"{args.null_seeds}: ranks another run than {args.summary}; rerun experiment_2.step_10_null_compare "
                f"--summary {args.summary}"
            )
        comparison, nulls = between["verdicts"], (between, args.null_seeds)
    overlay = compare if compare is not None else nulls[0]["random_init"] if nulls is not None else None
    timing = read_timing(folder / "timing.json", summary.get("num_images"))
    spectrum = plot_spectrum(summary, overlay, folder / "spectrum")
    kappa = plot_kappa_histogram(summary, overlay, folder / "kappa_histogram")
    report = folder / "REPORT.md"
    atomic_write_text(
        report,
        report_markdown(summary, compare, comparison, timing, {"spectrum": spectrum.name, "kappa": kappa.name}, nulls),
    )
    print(f"wrote {spectrum}, {kappa} and {report}")


if __name__ == "__main__":
    run_cli(main)
