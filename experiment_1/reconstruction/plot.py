"""Experiment 1's figure and REPORT (experiment_1.step_4_plot), from step 3's summary."""

from __future__ import annotations

from pathlib import Path

from experiment_1.files import atomic_write_text, read_timing
from experiment_1.record import VERDICTS
from experiment_1.report import load_checked_summary
from experiment_1.report.markdown import (
    ReportDocument,
    figure,
    format_number,
    format_stat,
    markdown_table,
    published_value,
)
from experiment_1.report.plotting import new_figure, run_title, save_figure
from experiment_1.step_4_plot import PlotFlags

READINGS = [
    ("Möbius Σ_S Δ_S h (float32)", "mobius_rel_error_float32", "mobius_top1_agreement_float32"),
    ("Möbius Σ_S Δ_S h (float64)", "mobius_rel_error_float64", "mobius_top1_agreement_float64"),
    ("naive sum Σ_S h(S)", "naive_sum_rel_error", "naive_sum_top1_agreement"),
    ("first-order h(∅) + Σ_l [h({l}) − h(∅)]", "first_order_rel_error", "first_order_top1_agreement"),
    ("trunk alone h(∅)", None, "empty_top1_agreement"),
]
# the figure's labels, in the paper's notation (the REPORT's tables keep READINGS' plain text)
FIGURE_LABELS = {
    "mobius_rel_error_float32": r"Möbius $\Sigma_S\,\Delta_S$ (float32)",
    "mobius_rel_error_float64": r"Möbius $\Sigma_S\,\Delta_S$ (float64)",
    "naive_sum_rel_error": r"naive sum $\Sigma_S\,h_x(S)$",
    "first_order_rel_error": r"first order $h_x(\emptyset) + \Sigma_l\,\Delta_{\{l\}}$",
    "max_subset_rel_error_float32": "worst subset, Möbius (float32)",
}


READ_METRICS = [name for _, error, agreement in READINGS for name in (error, agreement) if name] + [
    "max_subset_rel_error_float32",
    "max_subset_rel_error_float64",
]


def plot_errors(summary: dict, output: Path) -> Path:
    """Bar chart (log scale) of mean relative L2 error with 95 % CIs for each reconstruction."""
    metrics = summary["metrics"]
    names = [error for _, error, _ in READINGS if error] + ["max_subset_rel_error_float32"]
    rows = [(FIGURE_LABELS[name], metrics[name]) for name in names]
    figure, axes = new_figure(7.0, 3.6)
    positive = [value for _, stat in rows for value in (stat["mean"], stat["ci_low"]) if value > 0]
    floor = min(positive) / 100 if positive else 1e-18  # log axis: exact zeros are drawn as a label, not a bar
    means = [max(stat["mean"], floor) for _, stat in rows]
    lower = [mean - max(stat["ci_low"], floor) for mean, (_, stat) in zip(means, rows)]
    upper = [max(stat["ci_high"], floor) - mean for mean, (_, stat) in zip(means, rows)]
    positions = list(range(len(rows)))
    colours = ["#2b7", "#2b7", "#d44", "#e92", "#888"]
    for position, (mean, (_, stat)) in enumerate(zip(means, rows)):
        if stat["mean"] > 0:
            axes.barh(position, mean, xerr=[[lower[position]], [upper[position]]], color=colours[position], capsize=3)
        else:
            axes.text(floor * 2, position, "exactly 0", va="center", fontsize=8)
    axes.set_xlim(floor, 3 * max(mean + high for mean, high in zip(means, upper)))
    axes.set_yticks(list(positions), [label for label, _ in rows], fontsize=8)
    axes.set_xscale("log")
    axes.axvline(1.0, color="k", lw=0.8, ls=":")
    axes.set_xlabel(
        r"relative error $\|\hat h_x - h_x(\mathrm{full})\|_2 \,/\, \|h_x(\mathrm{full})\|_2$ (mean, 95 % CI)"
    )
    axes.set_title(run_title(summary), fontsize=9)
    axes.invert_yaxis()
    return save_figure(figure, output)


METHOD = (
    "Every image is evaluated under all 2^L residual-gate masks; the Möbius coefficients Δ_S h = Σ_{T⊆S} (−1)^{|S|−|T|} h(T) "
    "come from the butterfly transform. Three readings of the set function are compared with the full network h(full) by "
    "relative L2 error over the logits and top-1 agreement."
)


ERROR_MEASURES_NOTE = (
    "_Note on the two Möbius errors: both measure the round-off of the same Möbius coefficients (in the arithmetic named), "
    "added up two ways. The first table adds all 2^L coefficients of an image in one reduction and compares the sum with "
    "h(full); the second rebuilds every h(S), h(full) among them, with the inverse butterfly transform (L additions per "
    "subset). The additions differ in number and order, so their round-off differs, and the worst subset's error can be "
    "below the first table's error of the full set._"
)


def results_blocks(summary: dict, figure_name: str) -> list[str]:
    """The Result section: reconstruction table, every-subset table, accuracy where labelled, the figure."""
    metrics = summary["metrics"]
    rows = [
        [label, format_stat(metrics[error]) if error else "—", format_stat(metrics[agreement], percent=True)]
        for label, error, agreement in READINGS
    ]
    subset_rows = [
        [
            f"Möbius ({name})",
            format_stat(metrics[f"max_subset_rel_error_{name}"]),
            format_number(metrics[f"max_subset_rel_error_{name}"]["max"]),
        ]
        for name in ("float32", "float64")
    ]
    blocks = [
        markdown_table(["reconstruction of h(full)", "relative L2 error, mean [95 % CI]", "top-1 agreement"], rows),
        "Every subset, not just the full one — max_S ‖Σ_{T⊆S} Δ_T h − h(S)‖ / ‖h(S)‖:",
        markdown_table(["arithmetic", "per-image worst subset, mean [95 % CI]", "worst over all images"], subset_rows),
        ERROR_MEASURES_NOTE,
    ]
    if "full_mask_top1_accuracy" in metrics:
        blocks.append(
            f"Full-mask top-1 accuracy on the {summary['num_labelled']} labelled images: {format_stat(metrics['full_mask_top1_accuracy'], percent=True)}."
        )
    return blocks + [figure("relative reconstruction error", figure_name)]


def seed_rows(summary: dict) -> list[list[str]]:
    """The original study's ResNet-18 errors beside ours."""
    metrics = summary["metrics"]
    return [
        [
            f"{label} (the original study: resnet18)",
            format_number(published_value(summary["published"], "resnet18", quantity)),
            format_number(metrics[ours]["mean"]),
        ]
        for label, quantity, ours in (
            ("Möbius relative error", "mobius_rel_error", "mobius_rel_error_float32"),
            ("naive-sum relative error", "naive_sum_rel_error", "naive_sum_rel_error"),
        )
    ]


def report_markdown(summary: dict, timing: dict | None, figure_name: str) -> str:
    """REPORT.md text, generated from the summary (and timing) JSON."""
    return ReportDocument(
        title="Experiment 1 — naive subset summation vs Möbius reconstruction",
        summary=summary,
        method=METHOD,
        results=results_blocks(summary, figure_name),
        seed_rows=seed_rows(summary),
        generator="experiment_1.step_4_plot",
        timing=timing,
    ).render()


def run(args: PlotFlags) -> None:
    """The figure and REPORT.md beside the summary."""
    summary = load_checked_summary(
        args.summary,
        1,
        "experiment_1.step_3_evaluate",
        keys=(
            "config.arch",
            "config.weights",
            "config.num_blocks",
            "metrics",
            "verdicts",
            "published.source",
            *(f"metrics.{name}" for name in READ_METRICS),
        ),
        rules=VERDICTS[1],
    )
    timing = read_timing(args.summary.parent / "timing.json", summary.get("num_images"))
    figure = plot_errors(summary, args.summary.parent / "reconstruction_error")
    report = args.summary.parent / "REPORT.md"
    atomic_write_text(report, report_markdown(summary, timing, figure.name))
    print(f"wrote {figure} and {report}")
