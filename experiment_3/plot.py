"""Experiment 3's figures and REPORT (experiment_3.step_2_plot), from step 1's summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from experiment_1.files import atomic_write_text, read_timing
from experiment_1.mobius import RANKINGS
from experiment_1.report import load_checked_summary, new_figure_grid, plt, run_title, save_figure
from experiment_3.record import VERDICTS
from experiment_3.report import LABELS, build_report
from experiment_3.step_2_plot import TopKPlotFlags
from experiment_3.summary import controls_of

COLOURS = {"magnitude": "#2a6fb0", "order_matched": "#e07b22", "random": "#888888", "low_order_first": "#2e9e4f"}
METRIC_LABELS = {
    "captured_energy": r"captured energy $\Gamma_K$",
    "captured_scalar_energy": r"$\Gamma_K$ on scalar energy",
    "top1_agreement": r"top-1 agreement with $h_x(\mathrm{full})$",
    "relative_error": r"relative error $\|\hat h_K - h_x(\mathrm{full})\|_2 / \|h_x(\mathrm{full})\|_2$",
}


def sources_of(ranking: str) -> dict[str, str]:
    """Curve name → source of the summary, for one ranking: the magnitude ranking and its controls."""
    return {"magnitude": f"magnitude_{ranking}", **controls_of(ranking)}


def plot_curves(summary: dict[str, Any], output: Path) -> Path:
    """Γ_K (vector and scalar energy), top-1 agreement and relative error vs K (log-2 axis) per ranking, with every control and 95 % CIs."""
    ks = np.asarray(summary["ks"])
    metrics = list(METRIC_LABELS)
    figure, axes_list = new_figure_grid(len(RANKINGS), len(metrics), 16.0, 6.6)
    for row, ranking in enumerate(RANKINGS):
        for column, metric in enumerate(metrics):
            axes = axes_list[row * len(metrics) + column]
            for name, source in sources_of(ranking).items():
                curve = {
                    key: np.asarray(values, dtype=float)
                    for key, values in summary["sources"][source]["curves"][metric].items()
                    if key != "n"
                }
                if metric == "relative_error":  # log axis: an exact reconstruction (error 0, e.g. K = 2^L) is left out
                    curve = {key: np.where(values > 0, values, np.nan) for key, values in curve.items()}
                axes.plot(ks, curve["mean"], color=COLOURS[name], marker="o", ms=3, lw=1.3, label=LABELS[name])
                axes.fill_between(ks, curve["ci_low"], curve["ci_high"], color=COLOURS[name], alpha=0.2, lw=0)
            axes.set_xscale("log", base=2)
            if metric == "relative_error":
                axes.set_yscale("log")
            axes.set_xlabel(r"$K$ (subsets kept)")
            axes.set_title(f"{METRIC_LABELS[metric]}, {ranking} ranking", fontsize=8)
    axes_list[0].legend(fontsize=7)
    figure.suptitle(
        f"Top-K reconstruction, {run_title(summary)}, $2^L$ = {summary['num_masks']} (mean, 95 % CI)",
        fontsize=10,
    )
    return save_figure(figure, output)


def plot_orders(summary: dict[str, Any], output: Path) -> Path:
    """Stacked share of each order in the magnitude top-K, per K (K = 2^L: all subsets, C(L, k)/2^L)."""
    ks, num_masks = summary["ks"], summary["num_masks"]
    figure, axes_list = new_figure_grid(1, len(RANKINGS), 12.0, 4.0, sharey=True)
    colours = plt.get_cmap("viridis")
    for axes, ranking in zip(axes_list, RANKINGS):
        block = summary["order_histograms"][ranking]
        shares = np.asarray(block["mean_count"]) / np.asarray(ks, dtype=float)[:, None]
        labels = [f"{k} (all)" if k == num_masks else str(k) for k in ks]
        if num_masks not in ks:
            shares, labels = np.vstack([shares, block["binomial_share"]]), labels + [r"all ($\binom{L}{k}/2^L$)"]
        bottom = np.zeros(len(labels))
        for order in block["orders"]:
            axes.bar(
                labels,
                shares[:, order],
                bottom=bottom,
                color=colours(order / max(block["orders"])),
                label=f"$k$ = {order}",
            )
            bottom += shares[:, order]
        axes.set_xlabel(r"$K$")
        axes.tick_params(axis="x", labelsize=7, rotation=45)
        axes.set_title(f"orders in the magnitude top-K, {ranking} ranking", fontsize=9)
    axes_list[0].set_ylabel(r"share of the top-$K$ (mean over images)")
    axes_list[-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), title="order")
    return save_figure(figure, output)


def run(args: TopKPlotFlags) -> None:
    """The two figures and REPORT.md beside the summary."""
    summary = load_checked_summary(
        args.summary,
        3,
        "experiment_3.step_1_evaluate",
        keys=(
            "ks",
            "verdicts",
            "sources.random",
            "sources.magnitude_vector",
            "order_histograms.vector",
            "improvement",
            "k_eff.vector",
            "k_eff.scalar",
            "num_masks",
            "beside_seed.rows",
            "config.num_random_seeds",
            "published",
        ),
        rules=VERDICTS[3],
    )
    folder = args.summary.parent
    curves = plot_curves(summary, folder / "topk_curves")
    orders = plot_orders(summary, folder / "topk_orders")
    report = build_report(
        summary,
        {"curves": curves.name, "orders": orders.name},
        read_timing(folder / "timing.json", summary.get("num_images")),
    )
    atomic_write_text(folder / "REPORT.md", report)
    print(f"wrote {curves}, {orders} and {folder / 'REPORT.md'}")
