"""Experiment 2's figures, drawn from summary.json only: the mean spectrum per projection with the binomial and
random-init nulls overlaid, and the per-image κ histograms."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from experiment_1.mobius import PROJECTIONS
from experiment_1.report import COLOURS, network_name, new_figure, new_figure_grid, save_figure


def element_stat(block: dict[str, list[float]], index: int) -> dict[str, float]:
    """Entry ``index`` of a :func:`experiment_1.report.stats.bootstrap_mean_ci_rows` block as a ``format_stat`` dict."""
    return {key: block[key][index] for key in ("mean", "ci_low", "ci_high")}


def weights_label(summary: dict[str, Any]) -> str:
    """The network as the text names it: ``EfficientNet-Lite0``, ``EfficientNet-Lite0 (random init)``."""
    return network_name(summary["config"]["arch"], summary["config"]["weights"])


def plot_spectrum(summary: dict[str, Any], compare: dict[str, Any] | None, output: Path) -> Path:
    """Mean interaction spectrum p_k (95 % CIs) per projection, binomial null and random-init overlaid."""
    null = summary["binomial_null"]
    orders = np.arange(1, null["num_blocks"] + 1)
    figure, axes_list = new_figure_grid(1, len(PROJECTIONS), 10.0, 3.8, sharey=True)
    for axes, projection in zip(axes_list, PROJECTIONS):
        block = summary["projections"][projection]["mean_spectrum"]
        mean = np.asarray(block["mean"])
        error = [mean - np.asarray(block["ci_low"]), np.asarray(block["ci_high"]) - mean]
        axes.bar(orders, mean, yerr=error, color=COLOURS[projection], capsize=2, label=weights_label(summary))
        if compare is not None:
            other = compare["projections"][projection]["mean_spectrum"]
            other_mean = np.asarray(other["mean"])
            other_error = [other_mean - np.asarray(other["ci_low"]), np.asarray(other["ci_high"]) - other_mean]
            axes.errorbar(
                orders,
                other_mean,
                yerr=other_error,
                color=COLOURS["random"],
                marker="s",
                ms=4,
                lw=1,
                capsize=2,
                label="random-init null",
            )
        axes.plot(
            orders, null["spectrum"], color=COLOURS["binomial"], marker="o", ms=3, lw=1, ls="--", label="binomial null"
        )
        axes.set_xticks(orders)
        axes.set_xlabel(r"interaction order $k$")
        axes.set_title(f"{projection} projection", fontsize=9)
    axes_list[0].set_ylabel(r"$p_k = E_k / \Sigma_{j\geq 1}\,E_j$ (mean, 95 % CI)")
    axes_list[0].legend(fontsize=7)
    figure.suptitle(f"Interaction-order spectrum, N = {summary['num_valid']}", fontsize=10)
    return save_figure(figure, output)


def plot_kappa_histogram(summary: dict[str, Any], compare: dict[str, Any] | None, output: Path) -> Path:
    """Per-image κ histograms (stored in the JSON) per projection, with the binomial null κ."""
    figure, axes = new_figure(7.0, 3.6)
    sources = [
        (summary, projection, COLOURS[projection], f"{projection}, {weights_label(summary)}")
        for projection in PROJECTIONS
    ]
    if compare is not None:
        sources += [
            (compare, projection, COLOURS["random"], f"{projection}, random-init null") for projection in PROJECTIONS
        ]
    for source, projection, colour, label in sources:
        histogram = source["projections"][projection]["kappa_distribution"]["histogram"]
        counts = np.asarray(histogram["counts"], dtype=float)
        density = counts / max(counts.sum(), 1.0)
        style = "-" if projection == "vector" else ":"
        axes.stairs(density, histogram["edges"], color=colour, ls=style, lw=1.4, label=label)
    axes.axvline(
        summary["binomial_null"]["kappa"], color=COLOURS["binomial"], ls="--", lw=1, label=r"binomial null $\kappa$"
    )
    axes.set_xlabel(r"per-image $\kappa = \Sigma_{k\geq 1}\,k\,p_k$")
    axes.set_ylabel("fraction of images")
    axes.legend(fontsize=7)
    axes.set_title(f"Distribution of $\\kappa$ over images, N = {summary['num_valid']}", fontsize=9)
    return save_figure(figure, output)
