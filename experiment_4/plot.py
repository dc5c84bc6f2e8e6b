"""Experiment 4's figures and REPORT (experiment_4.step_3_plot), from overlap.json."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

from experiment_1.files import atomic_write_text, read_timing
from experiment_1.report import (
    ReportDocument,
    figure,
    format_percent,
    load_checked_summary,
    new_figure_grid,
    save_figure,
)
from experiment_4.formats import CONTROL, RANKINGS, SIMILARITIES, TARGETS, ranking_targets
from experiment_4.record import VERDICTS
from experiment_4.report import METHOD, NAMES, PER_IMAGE, TARGET_NAMES, result_tables, seed_rows
from experiment_4.step_3_plot import SignaturePlotFlags

SUMMARY_KEYS = (
    "config",
    *(f"rankings.{ranking}.nn_sweep" for ranking in RANKINGS),
    "rankings.vector.global_core",
    "settings.nn_k",
    "settings.num_permutations",
    "settings.p_value_floor",
    "settings.signatures",
    "num_subsets",
    "num_classes",
    "num_predicted_classes",
    "num_class_coordinates",
    "full_mask_top1_accuracy",
    "published.resnet18",
    "verdicts",
)

COLOURS = {"vector": "#2a6fb0", "scalar": "#e07b22", "scalar_true": "#3a9a4a", CONTROL: "#8a3ab9"}


def plot_histograms(summary: dict[str, Any], output: Path) -> Path:
    """Jaccard of same- vs different-class pairs, per per-image ranking (columns) and signature kind (rows)."""
    figure_, axes_list = new_figure_grid(len(SIMILARITIES), len(PER_IMAGE), 11.0, 6.0)
    for index, (kind, ranking) in enumerate((kind, ranking) for kind in SIMILARITIES for ranking in PER_IMAGE):
        axes, block = axes_list[index], summary["rankings"][ranking][kind]
        for name, style in (("same_class", "-"), ("different_class", ":")):
            counts = np.asarray(block["histogram"][name], dtype=float)
            axes.stairs(
                counts / max(counts.sum(), 1.0),
                block["histogram"]["edges"],
                color=COLOURS[ranking],
                ls=style,
                lw=1.5,
                label=name.replace("_", " "),
            )
        axes.set_title(
            f"{NAMES[ranking]}, {kind}; AUC {block['true_label']['tests']['auc']['observed']:.2f}", fontsize=8
        )
        axes.set_xlabel(
            f"{'weighted ' if kind == 'weighted' else ''}Jaccard, top-{summary['settings']['nn_k']}", fontsize=8
        )
        axes.legend(fontsize=6)
    which = "sampled" if "pair_sampling" in summary["settings"] else "all"
    figure_.suptitle(
        f"Signature overlap, {which} same- vs different-class pairs (N = {summary['num_valid']} images)", fontsize=10
    )
    return save_figure(figure_, output)


def plot_nn_sweep(summary: dict[str, Any], output: Path) -> Path:
    """Binary 1-NN accuracy vs K per ranking, with CIs and the permutation null's 97.5 % quantile, per target."""
    figure_, axes_list = new_figure_grid(1, len(TARGETS), 10.0, 3.8, sharey=False)
    for axes, target in zip(axes_list, TARGETS):
        for ranking in (ranking for ranking in RANKINGS if target in ranking_targets(ranking)):
            sweep = summary["rankings"][ranking]["nn_sweep"]
            ks, block = sweep["ks"], sweep[target]
            axes.plot(ks, block["mean"], color=COLOURS[ranking], marker="o", ms=3, label=NAMES[ranking])
            axes.fill_between(ks, block["ci_low"], block["ci_high"], color=COLOURS[ranking], alpha=0.15)
            axes.plot(ks, block["null_q975"], color=COLOURS[ranking], ls=":", lw=1)
        chance = summary["rankings"]["vector"]["binary"][target]["chance"]
        axes.axhline(chance, color="black", ls="--", lw=1, label=f"chance {format_percent(chance, 2)}")
        axes.plot([], [], color="grey", ls=":", lw=1, label="permutation null, 97.5 % quantile")
        axes.set(xlabel=r"signature size $K$ (top-$K$ subsets)", ylabel=f"1-NN accuracy ({TARGET_NAMES[target]})")
        axes.set_xscale("log", base=2)
        axes.legend(fontsize=6)
    figure_.suptitle(
        f"Leave-one-out 1-NN on binary signatures (N = {summary['num_valid']}, {summary['num_classes']} classes)",
        fontsize=10,
    )
    return save_figure(figure_, output)


def plot_core(summary: dict[str, Any], output: Path) -> Path:
    """How often the r-th most frequent subset is in an image's top-K, per per-image ranking."""
    figure_, axes_list = new_figure_grid(1, 1, 6.5, 3.8)
    axes, k = axes_list[0], summary["settings"]["nn_k"]
    for ranking in PER_IMAGE:
        core = summary["rankings"][ranking]["global_core"]
        curve = core["frequency_curve"]
        axes.plot(
            np.arange(1, len(curve) + 1),
            curve,
            color=COLOURS[ranking],
            label=f"{NAMES[ranking]}: core share {format_percent(core['share']['mean'])}",
        )
    axes.axvline(k, color="black", ls="--", lw=1, label=f"$K$ = {k} (the global core)")
    axes.axhline(
        k / summary["num_subsets"],
        color="grey",
        ls=":",
        lw=1,
        label=f"random top-$K$: $K / 2^L$ = {format_percent(k / summary['num_subsets'])}",
    )
    axes.set(
        xscale="log",
        xlabel="subsets, most frequent first (rank)",
        ylabel=f"fraction of images with it in their top-{k}",
    )
    axes.legend(fontsize=7)
    return save_figure(figure_, output)


def run(args: SignaturePlotFlags) -> None:
    """The three figures and REPORT.md beside overlap.json."""
    if args.signatures is not None:
        print(
            f"note: --signatures {args.signatures} is not read: overlap.json holds every number the figures and the REPORT use",
            file=sys.stderr,
        )
    summary = load_checked_summary(args.summary, 4, "experiment_4.step_2_overlap", keys=SUMMARY_KEYS, rules=VERDICTS[4])
    folder = args.summary.parent
    figures = {
        "Jaccard histograms": plot_histograms(summary, folder / "jaccard_histograms"),
        "1-NN accuracy vs K": plot_nn_sweep(summary, folder / "nn_accuracy_vs_k"),
        "global-core frequency": plot_core(summary, folder / "global_core"),
    }
    report = ReportDocument(
        title="Experiment 4 — input-dependent expert sets",
        summary=summary,
        method=METHOD,
        results=result_tables(summary) + [figure(alt, path.name) for alt, path in figures.items()],
        seed_rows=seed_rows(summary),
        generator="experiment_4.step_3_plot",
        timing=read_timing(folder / "timing.json", summary.get("num_images")),
        data_extra=f"; {summary['num_classes']} classes, signatures from `{summary['settings']['signatures']}`",
        source="overlap.json",
    ).render()
    path = folder / "REPORT.md"
    atomic_write_text(path, report)
    print(f"wrote {', '.join(str(value) for value in figures.values())} and {path}")
