"""Experiment 5's figures and REPORT (experiment_5.step_3_plot), from step 2's analysis and the same run's record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.patches import Rectangle

from experiment_1.errors import PipelineError
from experiment_1.files import atomic_write_text, read_timing
from experiment_1.report import load_checked_summary, new_figure, new_figure_grid, save_figure
from experiment_5.association import ci_excludes_zero
from experiment_5.formats import analysed_images, load_per_image
from experiment_5.formatting import SCORE_LABELS, measure_figure_label
from experiment_5.record import VERDICTS
from experiment_5.report import build_report, measure_verdict
from experiment_5.step_3_plot import DifficultyPlotFlags

QUARTILE_COLOURS = ["#9ecae1", "#6baed6", "#3182bd", "#08519c"]


def plot_rho_heatmap(analysis: dict[str, Any], output: Path) -> Path:
    """ρ of every score (rows) with every headline measure (columns); a box marks a CI that excludes 0."""
    scores, measures = analysis["scores"], analysis["headline_measures"]
    rho = np.array([[analysis["spearman"][score][measure]["rho"] for measure in measures] for score in scores])
    figure_, axes = new_figure(1.25 * len(measures) + 2.5, 0.8 * len(scores) + 2.0)
    image = axes.imshow(rho, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
    for row, score in enumerate(scores):
        for column, measure in enumerate(measures):
            entry = analysis["spearman"][score][measure]
            significant = ci_excludes_zero(entry)
            text = (
                f"{entry['rho']:.2f}\n[{entry['ci_low']:.2f}, {entry['ci_high']:.2f}]"
                if np.isfinite(entry["rho"])
                else "n/a\n(constant)"
            )
            axes.text(
                column,
                row,
                text,
                ha="center",
                va="center",
                fontsize=6.5,
                fontweight="bold" if significant else "normal",
                color="black",
            )
            if significant:
                axes.add_patch(Rectangle((column - 0.48, row - 0.48), 0.96, 0.96, fill=False, lw=1.2, ec="black"))
    axes.set_xticks(
        range(len(measures)), [measure_figure_label(name) for name in measures], rotation=35, ha="right", fontsize=8
    )
    axes.set_yticks(range(len(scores)), [SCORE_LABELS[name] for name in scores], fontsize=8)
    figure_.colorbar(image, ax=axes, label="Spearman ρ")
    axes.set_title(f"Spearman ρ [95 % bootstrap CI], N = {analysis['num_analysed']}; boxed: CI excludes 0", fontsize=9)
    return save_figure(figure_, output)


def plot_quartile_bars(analysis: dict[str, Any], output: Path) -> Path:
    """Each headline measure's mean (95 % CI) in the four quartiles of the primary score."""
    primary = analysis["settings"]["primary_score"]
    measures = analysis["headline_measures"]
    columns = 3
    rows = -(-len(measures) // columns)
    figure_, axes_list = new_figure_grid(rows, columns, 10.0, 2.6 * rows)
    for axes, measure in zip(axes_list, measures):
        stats = analysis["quartiles"][primary]["measures"][measure]["quartile_means"]
        means = np.array([stat["mean"] for stat in stats])
        error = [means - [stat["ci_low"] for stat in stats], [stat["ci_high"] for stat in stats] - means]
        axes.bar(range(1, 5), means, yerr=error, color=QUARTILE_COLOURS, capsize=3)
        axes.set_xticks(range(1, 5), ["Q1 easy", "Q2", "Q3", "Q4 hard"], fontsize=7)
        axes.set_title(f"{measure_figure_label(measure)}: {measure_verdict(analysis, measure)['decision']}", fontsize=8)
        low = min(stat["ci_low"] for stat in stats)
        high = max(stat["ci_high"] for stat in stats)
        margin = 0.15 * (high - low) if high > low else 0.5
        axes.set_ylim(low - margin, high + margin)
    for axes in axes_list[len(measures) :]:
        axes.axis("off")
    figure_.suptitle(
        f"Complexity by quartile of {SCORE_LABELS[primary]} (mean, 95 % CI; {analysis['quartiles'][primary]['sizes'][0]} images per quartile)",
        fontsize=10,
    )
    return save_figure(figure_, output)


def strongest_pairs(analysis: dict[str, Any], count: int = 2) -> list[tuple[str, str]]:
    """The ``count`` (score, headline measure) pairs with the largest |ρ| (ties by table order)."""
    pairs = [
        (score, measure)
        for score in analysis["scores"]
        for measure in analysis["headline_measures"]
        if np.isfinite(analysis["spearman"][score][measure]["rho"])
    ]
    return sorted(pairs, key=lambda pair: -abs(analysis["spearman"][pair[0]][pair[1]]["rho"]))[:count]


def plot_strongest_pairs(analysis: dict[str, Any], record: dict[str, Any], output: Path) -> Path:
    """Per-image scatter plots of the strongest pairs, correct and incorrect images marked."""
    images = analysed_images(record)
    pairs = strongest_pairs(analysis)
    figure_, axes_list = new_figure_grid(1, max(len(pairs), 1), 9.0, 3.8)
    for axes, (score, measure) in zip(axes_list, pairs):
        x, y = images.scores[score], images.measures[measure]
        for mask, colour, label in ((images.correct, "#2a6fb0", "correct"), (~images.correct, "#d62728", "incorrect")):
            axes.scatter(x[mask], y[mask], s=8, alpha=0.6, color=colour, label=f"{label} ({int(mask.sum())})")
        entry = analysis["spearman"][score][measure]
        axes.set_xlabel(SCORE_LABELS[score])
        axes.set_ylabel(measure_figure_label(measure))
        axes.set_title(
            f"ρ = {entry['rho']:.3f} [{entry['ci_low']:.3f}, {entry['ci_high']:.3f}], partial ρ | ‖h(full)‖ = {entry['partial_rho']:.3f}",
            fontsize=8,
        )
        axes.legend(fontsize=7)
    figure_.suptitle(f"The two strongest difficulty–complexity pairs, N = {images.count}", fontsize=10)
    return save_figure(figure_, output)


def run(args: DifficultyPlotFlags) -> None:
    """The three figures and REPORT.md beside the analysis."""
    analysis = load_checked_summary(
        args.analysis, 5, "experiment_5.step_2_analyze", "--analysis", ("spearman",), finite=False, rules=VERDICTS[5]
    )  # NaN: ρ of a constant measure, shown as n/a
    record = load_per_image(args.per_image)
    if record["config"] != analysis["config"]:
        raise PipelineError(
            f"{args.per_image}: comes from another run than {args.analysis}; pass the per_image.pt that step 2 analysed"
        )
    folder = args.analysis.parent
    plot_rho_heatmap(analysis, folder / "rho_heatmap")
    plot_quartile_bars(analysis, folder / "quartile_bars")
    plot_strongest_pairs(analysis, record, folder / "strongest_pairs")
    atomic_write_text(
        folder / "REPORT.md", build_report(analysis, read_timing(folder / "timing.json", analysis.get("num_images")))
    )
    print(f"wrote {folder / 'REPORT.md'} and its figures")
