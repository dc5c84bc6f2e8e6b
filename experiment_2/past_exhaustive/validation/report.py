"""What step 11 writes from its summary: REPORT.md, one page — the exact tables' check in a sentence, and one table:
the verdict of each (estimator, statistic, budget) over the tables (numbers from the summary only; every cell, with its
coverage, bias and error, stays in summary.json). ``python -m experiment_2.past_exhaustive.validation.report
--output-dir DIR`` renders a committed run's REPORT.md again from its summary.json and timing.json, evaluating nothing.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from experiment_1.errors import run_cli
from experiment_1.files import atomic_write_text, read_json, read_json_if_exists
from experiment_1.report import ReportDocument, format_number, format_percent, markdown_table
from experiment_2.past_exhaustive.sampling.subcubes import INTERVAL as SUBCUBE_INTERVAL
from experiment_2.past_exhaustive.sampling.subcubes import MIN_COEFFICIENTS as SUBCUBE_MIN_COEFFICIENTS
from experiment_2.past_exhaustive.sampling.walsh import INTERVALS as WALSH_INTERVALS
from experiment_2.past_exhaustive.validation.calibration import CALIBRATED
from experiment_2.past_exhaustive.validation.replications import CONSERVATIVE, COVERAGE_BAND

GENERATOR = "experiment_2.step_11_estimator_validation"


def validated_sentence(counts: dict[str, Any]) -> str:
    """``x of y (table, statistic) pairs with an interval validated`` and the estimate-only pairs beside them."""
    conservative = counts["conservative"]
    return (
        f"{counts['validated']} of {counts['with_interval']} (table, statistic) pairs with an interval validated"
        + (f", {conservative} {CONSERVATIVE}" if conservative else "")
        + f"; {counts['estimate_only']} pairs estimate only"
    )


def failing_sentence(counts: dict[str, Any]) -> str:
    """How many cells failed and how, against the count chance alone would explain."""
    low, high = COVERAGE_BAND
    return (
        f"{counts['failing_cells']} of {counts['cells']} cells failed ({counts['cells_with_interval']} cells with an "
        f"interval: {counts['cells_above_band']} covered more than {high:.0%}, {counts['cells_below_band']} less than "
        f"{low:.0%}, {counts['cells_biased_in_band']} in the band but biased), against "
        f"{format_number(counts['expected_failing_by_chance'])} expected by chance if every interval had exactly "
        "nominal coverage"
    )


def calibration_sentence(calibration: dict[str, Any]) -> str:
    """``x of y (estimator, statistic, budget) groups calibrated over the tables`` and how the others fall."""
    counts = calibration["counts"]
    others = ", ".join(f"{counts[name]} {name}" for name in sorted(counts) if name != CALIBRATED and counts[name])
    return (
        f"{counts[CALIBRATED]} of {len(calibration['groups'])} (estimator, statistic, budget) groups calibrated over the "
        "tables" + (f" ({others})" if others else "")
    )


def outside_band_sentence(calibration: dict[str, Any]) -> str:
    """The cells outside the band against the count each group's own pooled coverage explains."""
    outside = calibration["outside_band"]
    return (
        f"Of the {outside['cells']} cells with an interval, {outside['observed']} lie outside the band; if each "
        "group's interval had exactly its pooled coverage (not 95 %), "
        f"{format_number(outside['expected_at_pooled_coverage'])} would be expected (independent cells: "
        f"P(≥ {outside['observed']}) = {format_number(outside['p_at_least_observed'])}; descriptive, the pooled "
        "coverages are read off the same cells)."
    )


def calibration_results(summary: dict[str, Any]) -> str:
    """The calibration over tables: the rule, the sentence and one row per group."""
    calibration = summary["calibration"]
    rows = [
        [
            row["estimator"],
            row["statistic"],
            row["budget"],
            row["tables"],
            f"{format_percent(row['coverage'])} [{format_percent(row['coverage_ci'][0])}, "
            f"{format_percent(row['coverage_ci'][1])}]",
            f"{format_percent(row['lowest_table_coverage'])}–{format_percent(row['highest_table_coverage'])}",
            f"{row['cells_outside_band']} ({format_number(row['expected_outside_band'])})",
            format_number(row["homogeneity_p_holm"]),
            row["verdict"],
        ]
        for row in calibration["groups"]
    ]
    return (
        f"### Calibration over tables: {calibration_sentence(calibration)}\n\n"
        "A cell fails the band by chance now and then, so the cells of one (estimator, statistic, budget) are read "
        "together: the coverage pooled over the tables' replications (exact 95 % CI), and whether the tables share one "
        f"coverage ({calibration['test']}). Rule: {calibration['rule']}. {outside_band_sentence(calibration)}\n\n"
        + markdown_table(
            [
                "estimator",
                "statistic",
                "budget",
                "tables",
                "pooled coverage [95 % CI]",
                "range over tables",
                "cells outside band (expected at the pooled coverage)",
                "homogeneity p (Holm)",
                "verdict",
            ],
            rows,
        )
    )


def exact_sentence(summary: dict[str, Any]) -> str:
    """The family pass against the committed run and the dense butterfly, in one sentence."""
    exact = summary["exact"]
    committed = exact["committed"]
    worst_committed = max(entry["worst_relative_difference"] for entry in committed["projections"].values())
    worst_butterfly = max(
        base["worst_relative"] for check in exact["family_vs_butterfly"] for base in check["bases"].values()
    )
    return (
        f"Exact tables within round-off: {'yes' if exact['all_within_tolerance'] else '**no**'} — the family pass's "
        f"E_1 … E_k against `{committed['committed']}` on {committed['num_valid']} images (worst relative difference "
        f"{format_number(worst_committed)}, tolerance {format_number(committed['tolerance'])}), and every coefficient "
        f"with |S| ≤ k against the dense butterfly on {len(exact['family_vs_butterfly'])} validation networks' images "
        f"at both corners (worst {format_number(worst_butterfly)} of the largest coefficient)."
    )


def report_markdown(summary: dict[str, Any], timing: dict[str, Any] | None) -> str:
    """REPORT.md, generated from summary.json: one table, the verdict per (estimator, statistic, budget)."""
    networks = "; ".join(
        f"{network['description']} (L = {network['num_blocks']}, images {', '.join(str(i) for i in network['images'])})"
        for network in summary["networks"]
    )
    design, calibration = summary["design"], summary["calibration"]
    method = (
        f"Exhaustive tables, one per image and projection: {networks}. The vector projection keeps "
        f"{design['classes_vector']} seeded classes. The estimators run by subsampling the tables (no forward beyond "
        f"one exhaustive pass per image), {design['replications']} seeded replications per (table, statistic, budget); "
        f"the intervals: sub-cube ē_j, {SUBCUBE_INTERVAL} (an order has one where each draw averages at least "
        f"{SUBCUBE_MIN_COEFFICIENTS} of its coefficients); Walsh summaries, {WALSH_INTERVALS}."
    )
    rows = [
        [
            row["estimator"],
            row["statistic"],
            row["budget"],
            row["tables"],
            f"{format_percent(row['coverage'])} [{format_percent(row['coverage_ci'][0])}, "
            f"{format_percent(row['coverage_ci'][1])}]",
            f"{format_percent(row['lowest_table_coverage'])}–{format_percent(row['highest_table_coverage'])}",
            row["verdict"],
        ]
        for row in calibration["groups"]
    ]
    table = (
        f"### Calibration over tables: {calibration_sentence(calibration)}\n\n"
        "Per (estimator, statistic, budget): the coverage pooled over the tables' replications (exact 95 % CI), its "
        f"range over the tables, and the verdict. Rule: {calibration['rule']}.\n\n"
        + markdown_table(
            ["estimator", "statistic", "budget", "tables", "pooled coverage [95 % CI]", "range over tables", "verdict"],
            rows,
        )
    )
    return ReportDocument(
        title="Experiment 2 — validation of the estimators past the exhaustive pass",
        summary=summary,
        method=method,
        results=[
            f"### Short answer\n\n{exact_sentence(summary)} Calibration over tables: {calibration_sentence(calibration)}.",
            table,
        ],
        seed_rows=[],
        seed_source="the original study validates no estimator: it evaluates every mask",
        verdict=[
            f"Estimators, table by table: {validated_sentence(summary['counts'])}; {failing_sentence(summary['counts'])}.",
            f"Calibration over tables: {calibration_sentence(calibration)}. {outside_band_sentence(calibration)}",
            "Every cell — coverage with its exact CI, where the misses fall, bias in SE, relative RMSE — and the "
            "verdict of every (table, statistic) are in summary.json.",
        ],
        generator=GENERATOR,
        timing=timing,
        verdicts=[],
    ).render()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output-dir", type=Path, required=True, help="a step-11 results folder (summary.json)")
    folder = parser.parse_args(argv).output_dir
    summary = read_json(folder / "summary.json", fix="rerun python -m experiment_2.step_11_estimator_validation")
    atomic_write_text(folder / "REPORT.md", report_markdown(summary, read_json_if_exists(folder / "timing.json")))
    print(f"wrote {folder / 'REPORT.md'}")


if __name__ == "__main__":
    run_cli(main)
