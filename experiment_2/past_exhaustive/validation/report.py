"""What step 11 writes from its summary: the error-by-budget table, its figure and REPORT.md (numbers from the summary only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.ticker import NullFormatter

from experiment_1.report import (
    COLOURS,
    ReportDocument,
    figure,
    format_number,
    format_percent,
    markdown_table,
    new_figure_grid,
    save_figure,
)
from experiment_2.past_exhaustive.sampling.subcubes import INTERVAL as SUBCUBE_INTERVAL
from experiment_2.past_exhaustive.sampling.subcubes import MIN_COEFFICIENTS as SUBCUBE_MIN_COEFFICIENTS
from experiment_2.past_exhaustive.sampling.subcubes import NO_INTERVAL as SUBCUBE_NO_INTERVAL
from experiment_2.past_exhaustive.sampling.walsh import INTERVALS as WALSH_INTERVALS
from experiment_2.past_exhaustive.validation.calibration import CALIBRATED
from experiment_2.past_exhaustive.validation.replications import (
    CONSERVATIVE,
    COVERAGE_BAND,
    ESTIMATE_ONLY,
    NOT_VALIDATED,
    VALIDATED,
)

GENERATOR = "experiment_2.step_11_estimator_validation"
FIGURE = "error_by_budget"
PLOTTED = {  # statistics drawn in the figure, per estimator
    "subcubes": ["ebar_1", "ebar_2", "ebar_3", "ebar_4"],
    "walsh": ["variance", "influence", "kappa_w", "stability_0.5", "w1", "w2", "w3", "low_degree_share"],
}


def error_by_budget(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (network, projection, estimator, statistic, budget): the mean over the network's tables of the relative
    RMSE, the coverage pooled over its tables' replications, and how many of its tables pass the rule."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for entry in cells:
        key = (entry["network"], entry["projection"], entry["estimator"], entry["statistic"], entry["budget"])
        groups.setdefault(key, []).append(entry)
    rows = []
    for (network, projection, estimator, statistic, budget), members in groups.items():
        rows.append(
            {
                "network": network,
                "projection": projection,
                "estimator": estimator,
                "statistic": statistic,
                "budget": budget,
                "tables": len(members),
                "tables_passing": sum(entry["passes"] for entry in members),
                "relative_rmse": float(np.mean([entry["relative_rmse"] for entry in members])),
                # None where the estimator gives no interval at this budget (a sub-cube order with too few coefficients)
                "coverage": None
                if any(entry["coverage"] is None for entry in members)
                else float(np.mean([entry["coverage"] for entry in members])),
                "mean_abs_bias_in_se": float(np.mean([abs(entry["bias_in_se"]) for entry in members])),
            }
        )
    return rows


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


def budget_forwards(summary: dict[str, Any]) -> dict[str, int]:
    return {budget["name"]: budget["forwards"] for budget in summary["design"]["budgets"]}


def error_table(summary: dict[str, Any]) -> str:
    """The error-by-budget table: one row per (network, projection, estimator, statistic), one column per budget
    (relative RMSE, mean over tables; coverage pooled)."""
    rows_by_key: dict[tuple, dict[str, dict[str, Any]]] = {}
    for row in summary["error_by_budget"]:
        key = (row["network"], row["projection"], row["estimator"], row["statistic"])
        rows_by_key.setdefault(key, {})[row["budget"]] = row
    budgets = [budget["name"] for budget in summary["design"]["budgets"]]
    rows = []
    for (network, projection, estimator, statistic), by_budget in rows_by_key.items():
        cells = []
        for name in budgets:
            row = by_budget.get(name)
            if row is None:
                cells.append("—")
                continue
            coverage = "no interval" if row["coverage"] is None else format_percent(row["coverage"])
            cells.append(f"{format_number(row['relative_rmse'])} ({coverage}, {row['tables_passing']}/{row['tables']})")
        rows.append([network, projection, statistic, *cells])
    forwards = budget_forwards(summary)
    return markdown_table(
        ["network", "projection", "statistic", *(f"{name} ({forwards[name]} masks)" for name in budgets)], rows
    )


def write_figure(summary: dict[str, Any], path_without_suffix: Path) -> Path:
    """Relative RMSE against the masks each replication reads, per network (rows) and estimator with a budget
    (columns), vector projection solid and scalar dashed; one point per budget (sub-cubes: every size × draws pair)."""
    networks = [network["network"] for network in summary["networks"]]
    estimators = [
        name for name in PLOTTED if any(budget["estimator"] == name for budget in summary["design"]["budgets"])
    ]
    columns = len(estimators)
    # at least 8 in wide, so that the title fits above a single column
    fig, axes = new_figure_grid(len(networks), columns, width=max(8.0, 5.5 * columns), height=3.6 * len(networks))
    forwards = budget_forwards(summary)
    colours = list(COLOURS.values()) + ["#2ca02c", "#9467bd", "#8c564b", "#e377c2"]
    for row, network in enumerate(networks):
        for column, estimator in enumerate(estimators):
            ax = axes[row * columns + column]
            for number, statistic in enumerate(PLOTTED[estimator]):
                for projection, style in (("vector", "-"), ("scalar", "--")):
                    points = sorted(
                        (forwards[entry["budget"]], entry["relative_rmse"])
                        for entry in summary["error_by_budget"]
                        if entry["network"] == network
                        and entry["projection"] == projection
                        and entry["statistic"] == statistic
                    )
                    if points:
                        x, y = zip(*points)
                        ax.plot(
                            x,
                            y,
                            style,
                            marker="o",
                            markersize=3,
                            color=colours[number % len(colours)],
                            label=statistic if projection == "vector" else None,
                        )
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.xaxis.set_minor_formatter(NullFormatter())  # 2×10³, 3×10³, … would overlap; the decades are labelled
            ax.set_xlabel("masks read per replication")
            ax.set_ylabel("RMSE / |exact|")
            ax.set_title(
                f"{network}: {'random sub-cubes' if estimator == 'subcubes' else 'Walsh random masks'}", fontsize=9
            )
            ax.legend(fontsize=6, ncol=2)
    fig.suptitle("Estimator error against budget (solid: vector projection, dashed: scalar)", fontsize=10, y=1.0)
    return save_figure(fig, path_without_suffix)


def exact_results(summary: dict[str, Any]) -> list[str]:
    exact = summary["exact"]
    committed = exact["committed"]
    rows = [
        [
            name,
            ", ".join(format_number(value) for value in entry["worst_by_order"]),
            format_number(entry["median_relative_difference"]),
            format_number(committed["tolerance"]),
            "yes" if entry["within_tolerance"] else "**no**",
        ]
        for name, entry in committed["projections"].items()
    ]
    first = (
        f"### Exact tables against the committed run ({committed['num_valid']} images)\n\n"
        f"The family pass at the all-off corner against `{committed['committed']}` (E_j, j = "
        f"{', '.join(str(order) for order in committed['orders'])}); predicted class equal to the committed one on every "
        f"image: {'yes' if committed['predicted_class_matches_committed'] else 'no'}. Tolerance: {committed['tolerance_reason']}.\n\n"
        + markdown_table(
            ["projection", "worst relative difference by order", "median relative difference", "tolerance", "within"],
            rows,
        )
    )
    rows = [
        [
            check["network"],
            base,
            check["images"],
            format_number(entry["worst_relative"]),
            entry["bit_identical_images"],
            format_number(check["tolerance"]),
            "yes" if entry["within_tolerance"] else "**no**",
        ]
        for check in exact["family_vs_butterfly"]
        for base, entry in check["bases"].items()
    ]
    second = (
        "### The family pass against the dense butterfly\n\n"
        "Every coefficient with |S| ≤ k, all classes, on each validation table's images: the largest absolute difference "
        "relative to the largest coefficient (tolerance: 2^k logits, each within 8 float32 ulps).\n\n"
        + markdown_table(
            ["network", "corner", "images", "worst relative difference", "bit-identical images", "tolerance", "within"],
            rows,
        )
    )
    return [first, second]


def failing_cell(cell: dict[str, Any]) -> str:
    """One failing budget: its coverage with the CI and where the misses fall, and the bias in SE."""
    if not cell["interval_reported"]:
        return f"{cell['budget']}: no interval, bias {format_number(cell['bias_in_se'])} SE"
    correlation = cell["estimate_half_width_rank_correlation"]
    return (
        f"{cell['budget']}: coverage {format_percent(cell['coverage'])} "
        f"[{format_percent(cell['coverage_ci'][0])}, {format_percent(cell['coverage_ci'][1])}] "
        f"(exact above the interval {format_percent(cell['exact_above_interval'])}, below "
        f"{format_percent(cell['exact_below_interval'])}; estimate–half-width rank correlation {format_number(correlation)}), "
        f"bias {format_number(cell['bias_in_se'])} SE"
    )


def verdict_results(summary: dict[str, Any]) -> list[str]:
    design, counts = summary["design"], summary["counts"]
    grouped: dict[tuple, list[dict[str, Any]]] = {}
    for entry in summary["estimator_verdicts"]:
        grouped.setdefault((entry["network"], entry["projection"], entry["estimator"]), []).append(entry)
    rows = []
    for (network, projection, estimator), entries in grouped.items():
        statistics = dict.fromkeys(entry["statistic"] for entry in entries)
        for statistic in statistics:
            chosen = [entry for entry in entries if entry["statistic"] == statistic]
            passed = sum(entry["verdict"] == VALIDATED for entry in chosen)
            only = sum(entry["verdict"] == ESTIMATE_ONLY for entry in chosen)
            wide = sum(entry["verdict"] == CONSERVATIVE for entry in chosen)
            text = (
                f"{passed}/{len(chosen)}" + (f" ({wide} more {CONSERVATIVE})" if wide else "")
                if not only
                else f"{ESTIMATE_ONLY}: bias below 1 SE in {only}/{len(chosen)}"
            )
            rows.append([network, projection, statistic, text])
    failing = [
        [
            entry["network"],
            entry["image"],
            entry["projection"],
            entry["statistic"],
            entry["verdict"],
            "; ".join(failing_cell(cell) for cell in entry["failing"]),
        ]
        for entry in summary["estimator_verdicts"]
        if entry["verdict"] in (NOT_VALIDATED, CONSERVATIVE)
    ]
    text = (
        f"### Estimators: {validated_sentence(counts)}\n\n"
        f"{design['replications']} seeded replications per (table, statistic, budget); a table is one image of one "
        f"network in one projection. Rule: {design['rule']}. A sub-cube order has an interval only where each draw "
        f"averages at least {SUBCUBE_MIN_COEFFICIENTS} of its coefficients, by design ({SUBCUBE_NO_INTERVAL}; the "
        "count was set after this step had found order 3 of 4-block sub-cubes table-dependent, so it is fitted to "
        "the tables it was set on; experiment_2/README.md names the tables added after it, and the calibration below "
        f"reads every table). With {design['replications']} replications an interval of "
        f"exactly nominal coverage falls outside the band by chance with probability "
        f"{format_number(design['chance_failure_per_cell'])} per cell; {failing_sentence(counts)}.\n\n"
        + markdown_table(["network", "projection", "statistic", "tables validated"], rows)
        + f"\n\nThe intervals: sub-cube ē_j, {SUBCUBE_INTERVAL}; Walsh summaries, {WALSH_INTERVALS}. A statistic "
        "built on pairs of masks is studentised by its U-statistic variance (the linear and the degenerate part, each "
        "cut at 0), and each resample moves the estimate and that variance together, to first order through their "
        "jackknife pseudo-values: a sample that misses the heaviest masks has both low, and the pivot carries it."
    )
    blocks = [text]
    if failing:
        blocks.append(
            f"Not validated or {CONSERVATIVE} (the failing budgets, coverage with its exact binomial 95 % CI, bias in "
            "units of the estimator's SE):\n\n"
            + markdown_table(["network", "image", "projection", "statistic", "verdict", "failing budgets"], failing)
        )
    return blocks


def calibration_sentence(calibration: dict[str, Any]) -> str:
    """``x of y (estimator, statistic, budget) groups calibrated over the tables`` and how the others fall."""
    counts = calibration["counts"]
    others = ", ".join(f"{count} {name}" for name, count in counts.items() if name != CALIBRATED and count)
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


def report_markdown(summary: dict[str, Any], timing: dict[str, Any] | None, table_only: bool = False) -> str:
    """REPORT.md (or, with ``table_only``, the error-by-budget table alone), generated from summary.json."""
    table = (
        "Relative RMSE (RMSE / |exact|, mean over a network's tables) by budget; in brackets the coverage pooled over "
        "its tables and how many tables pass the rule at that budget.\n\n" + error_table(summary)
    )
    if table_only:
        return f"# Estimator error against budget\n\n{table}\n"
    networks = "; ".join(
        f"{network['description']} (L = {network['num_blocks']}, images {', '.join(str(i) for i in network['images'])}, "
        f"{network['masks_per_table']} masks per table)"
        for network in summary["networks"]
    )
    design = summary["design"]
    method = (
        "(1) The family pass (masks within k gates of each corner, Möbius transform on the family) against the dense "
        "butterfly of the exhaustive pass of the same images, and against the committed exhaustive run's energies. "
        f"(2) Exhaustive tables: {networks}. Each network's images are few because every table costs one exhaustive "
        "pass (all 2^L masks) on two shared CPU cores, and each table already holds thousands of replications; the "
        "committed check uses every image of the committed run. "
        f"The vector projection of the tables keeps {design['classes_vector']} seeded classes (`networks[].classes` in summary.json), "
        "so that an L = 16 table is a few MB and a replication does not scale with 1 000 classes; the exact values are "
        "computed on the same classes. Estimators run by subsampling the tables: no forward beyond one exhaustive pass per image."
    )
    results = [
        *exact_results(summary),
        *verdict_results(summary),
        calibration_results(summary),
        "### Error against budget\n\n" + table,
        figure("Estimator error against budget", f"{FIGURE}.png"),
    ]
    return ReportDocument(
        title="Experiment 2 — validation of the estimators past the exhaustive pass",
        summary=summary,
        method=method,
        results=results,
        seed_rows=[],
        seed_source="the original study validates no estimator: it evaluates every mask",
        verdict=[
            f"Exact tables within round-off: {'yes' if summary['exact']['all_within_tolerance'] else 'no'}.",
            f"Estimators: {validated_sentence(summary['counts'])}.",
            f"Calibration over tables: {calibration_sentence(summary['calibration'])}.",
        ],
        generator=GENERATOR,
        timing=timing,
        verdicts=[],
    ).render()
