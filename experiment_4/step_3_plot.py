"""Experiment 4, step 3 — expert-set figures and REPORT.md from overlap.json.

Question: do the dominant subsets depend on the input and on its class?

Inputs:  --summary (step_2_overlap's overlap.json; timing.json beside it if present),
         --signatures (step_1_signatures' signatures.pt, for the class heat map).
Outputs: in the summary's folder: jaccard_histograms, nn_accuracy_vs_k, global_core and
         class_heatmap (.png/.pdf) and REPORT.md. Every number in the REPORT is read from the JSON;
         each verdict line is decided from those numbers (rules in experiment_4/README.md).

    python -m experiment_4.step_3_plot --summary experiment_4/results/overlap.json \\
        --signatures experiment_4/results/signatures.pt
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
import torch

from experiment_1.errors import PipelineError, run_cli
from experiment_1.io_utils import atomic_write_text, check_same_run, load_summary, read_json_if_exists
from experiment_1.plotting import new_figure_grid, save_figure
from experiment_1.report import ReportDocument, figure, format_number, format_percent, format_stat, markdown_table
from experiment_4.signatures import SIGNATURE_RANKINGS, gate_set, membership_counts, top_k_signatures
from experiment_4.records import SIMILARITIES, TARGETS, load_signatures

RANKING_NAMES = {"vector": "vector ‖Δ_S h‖₂", "scalar": "scalar, predicted class", "scalar_true": "scalar, true class"}
TARGET_NAMES = {"true_label": "true label", "predicted_class": "predicted class"}
COLOURS = {"vector": "#2a6fb0", "scalar": "#e07b22", "scalar_true": "#3a9a4a"}
NEAR_GLOBAL_SHARE = 0.75
HEATMAP_CLASSES = 6
HEATMAP_SUBSETS_PER_CLASS = 3
ALPHA = 0.05


def plot_histograms(summary: dict[str, Any], output: Path) -> Path:
    """Jaccard of same- vs different-class pairs, per ranking (columns) and signature kind (rows)."""
    figure_, axes_list = new_figure_grid(len(SIMILARITIES), len(SIGNATURE_RANKINGS), 11.0, 6.0)
    for row, kind in enumerate(SIMILARITIES):
        for column, ranking in enumerate(SIGNATURE_RANKINGS):
            axes = axes_list[row * len(SIGNATURE_RANKINGS) + column]
            block = summary["rankings"][ranking][kind]["pairs"]
            histogram = block["histogram"]
            for name, style in (("same_class", "-"), ("different_class", ":")):
                counts = np.asarray(histogram[name], dtype=float)
                axes.stairs(counts / max(counts.sum(), 1.0), histogram["edges"], color=COLOURS[ranking], ls=style, lw=1.5, label=f"{name.replace('_', ' ')} (n = {block[name]['n']})")
            axes.set_title(f"{RANKING_NAMES[ranking]}, {kind}; AUC {block['auc']:.2f}", fontsize=8)
            axes.set_xlabel(f"{'weighted ' if kind == 'weighted' else ''}Jaccard, top-{summary['settings']['nn_k']}", fontsize=8)
            axes.legend(fontsize=6)
    axes_list[0].set_ylabel("fraction of pairs")
    axes_list[len(SIGNATURE_RANKINGS)].set_ylabel("fraction of pairs")
    figure_.suptitle(f"Signature overlap, same vs different class (N = {summary['num_valid']} images)", fontsize=10)
    return save_figure(figure_, output)


def plot_nn_sweep(summary: dict[str, Any], output: Path) -> Path:
    """Binary 1-NN accuracy vs K per ranking, with CIs, the permutation null and chance, per target."""
    figure_, axes_list = new_figure_grid(1, len(TARGETS), 10.0, 3.8, sharey=False)
    for axes, target in zip(axes_list, TARGETS):
        for ranking in SIGNATURE_RANKINGS:
            sweep = summary["rankings"][ranking]["nn_sweep"]
            ks, block = sweep["ks"], sweep[target]
            axes.plot(ks, block["mean"], color=COLOURS[ranking], marker="o", ms=3, label=RANKING_NAMES[ranking])
            axes.fill_between(ks, block["ci_low"], block["ci_high"], color=COLOURS[ranking], alpha=0.15)
            axes.plot(ks, block["null_q975"], color=COLOURS[ranking], ls=":", lw=1)
        chance = summary["rankings"]["vector"]["binary"]["nn"][target]["chance"]
        axes.axhline(chance, color="black", ls="--", lw=1, label=f"chance {format_percent(chance, 2)}")
        axes.plot([], [], color="grey", ls=":", lw=1, label="permutation null, 97.5 % quantile")
        axes.set_xscale("log", base=2)
        axes.set_xlabel("signature size K (top-K subsets)")
        axes.set_ylabel(f"1-NN accuracy ({TARGET_NAMES[target]})")
        axes.set_title(f"predicting the {TARGET_NAMES[target]}", fontsize=9)
    axes_list[0].legend(fontsize=7)
    figure_.suptitle(f"Leave-one-out 1-NN on binary signatures (N = {summary['num_valid']}, {summary['num_classes']} classes)", fontsize=10)
    return save_figure(figure_, output)


def plot_core(summary: dict[str, Any], output: Path) -> Path:
    """How often the r-th most frequent subset is in an image's top-K, per ranking."""
    figure_, axes_list = new_figure_grid(1, 1, 6.5, 3.8)
    axes = axes_list[0]
    for ranking in SIGNATURE_RANKINGS:
        core = summary["rankings"][ranking]["global_core"]
        curve = core["frequency_curve"]
        axes.plot(np.arange(1, len(curve) + 1), curve, color=COLOURS[ranking], label=f"{RANKING_NAMES[ranking]}: core share {format_percent(core['share']['mean'])}")
    k = summary["settings"]["nn_k"]
    axes.axvline(k, color="black", ls="--", lw=1, label=f"K = {k} (the global core)")
    axes.axhline(k / summary["num_subsets"], color="grey", ls=":", lw=1, label=f"random top-K: K / 2^L = {format_percent(k / summary['num_subsets'])}")
    axes.set_xscale("log")
    axes.set_xlabel("subsets, most frequent first (rank)")
    axes.set_ylabel(f"fraction of images with it in their top-{k}")
    axes.legend(fontsize=7)
    axes.set_title("Global core: frequency of each subset in the images' top-K", fontsize=9)
    return save_figure(figure_, output)


def heatmap_classes(labels: torch.Tensor, count: int) -> list[int]:
    """The ``count`` labels with the most images (ties to the lowest label)."""
    values, counts = labels.unique(return_counts=True)
    order = sorted(range(len(values)), key=lambda index: (-int(counts[index]), int(values[index])))
    return [int(values[index]) for index in order[:count]]


def plot_class_heatmap(summary: dict[str, Any], document: dict[str, Any], output: Path) -> Path:
    """For a few classes, how often each class's most frequent top-K subsets appear in its images' top-K."""
    valid = document["valid"]
    labels = document["label"][valid]
    classes = heatmap_classes(labels, HEATMAP_CLASSES)
    k, num_subsets, num_blocks = summary["settings"]["nn_k"], summary["num_subsets"], summary["config"]["num_blocks"]
    rankings = ("vector", "scalar")
    figure_, axes_list = new_figure_grid(1, len(rankings), 12.0, 1.2 + 0.5 * len(classes))
    for axes, ranking in zip(axes_list, rankings):
        indices, _ = top_k_signatures(document[f"ranked_{ranking}"][valid], document[f"magnitude_{ranking}"][valid], k, weighted=False)
        frequency = torch.stack([membership_counts(indices[labels == label], num_subsets).double() / int((labels == label).sum()) for label in classes])
        columns: list[int] = []
        for row in frequency:
            columns += [mask for mask in row.argsort(descending=True, stable=True)[:HEATMAP_SUBSETS_PER_CLASS].tolist() if mask not in columns]
        image = axes.imshow(frequency[:, columns].numpy(), vmin=0, vmax=1, cmap="viridis", aspect="auto")
        axes.set_xticks(range(len(columns)), [gate_set(mask, num_blocks) for mask in columns], rotation=60, ha="right", fontsize=6)
        axes.set_yticks(range(len(classes)), [f"class {label}" for label in classes], fontsize=7)
        axes.set_title(f"{RANKING_NAMES[ranking]}: fraction of the class's images with the subset in their top-{k}", fontsize=8)
    figure_.colorbar(image, ax=axes_list[-1], fraction=0.04)
    return save_figure(figure_, output)


def nn_cell(result: dict[str, Any]) -> list[str]:
    """Accuracy with CI, × chance, and the permutation null beside it."""
    null = result["permutation_null"]
    return [format_stat(result["accuracy"], percent=True), f"{format_number(result['over_chance'])}×",
            f"{format_percent(null['mean'], 2)} [{format_percent(null['q025'], 2)}, {format_percent(null['q975'], 2)}]", format_number(null["p_value"])]


def result_tables(summary: dict[str, Any]) -> list[str]:
    """The REPORT's result tables: pairs, 1-NN, K sweep, global core."""
    k = summary["settings"]["nn_k"]
    pair_rows, nn_rows, core_rows = [], [], []
    for ranking in SIGNATURE_RANKINGS:
        block = summary["rankings"][ranking]
        for kind in SIMILARITIES:
            pairs = block[kind]["pairs"]
            pair_rows.append([RANKING_NAMES[ranking], kind, format_stat(pairs["same_class"]), format_stat(pairs["different_class"]), format_number(pairs["auc"]), format_number(pairs["mann_whitney_p"])])
            for target in TARGETS:
                nn_rows.append([RANKING_NAMES[ranking], kind, TARGET_NAMES[target], *nn_cell(block[kind]["nn"][target])])
        core = block["global_core"]
        covering = core["subsets_covering"]
        core_rows.append([RANKING_NAMES[ranking], format_stat(core["share"], percent=True), format_percent(core["random_share"]), str(covering["0.5"]), str(covering["0.9"]),
                          f"{core['distinct_subsets']} of {summary['num_subsets']}", ", ".join(f"`{name}`" for name in core["core_gate_sets"][:5])])
    sweep_ks = summary["rankings"]["vector"]["nn_sweep"]["ks"]
    sweep_rows = []
    for index, size in enumerate(sweep_ks):
        row = [str(size)]
        for ranking in SIGNATURE_RANKINGS:
            sweep = summary["rankings"][ranking]["nn_sweep"]["true_label"]
            row.append(f"{format_percent(sweep['mean'][index])} (null {format_percent(sweep['null_mean'][index], 2)})")
        sweep_rows.append(row)
    accuracy = summary["full_mask_top1_accuracy"]
    return [
        f"Pairs: {summary['pairs']['same_class']} same-class and {summary['pairs']['different_class']} different-class pairs (true labels), top-{k} signatures. "
        "CIs are over pairs, which share images, so they are narrower than an image-level CI would be.",
        markdown_table(["ranking", "signature", "Jaccard, same class", "Jaccard, different class", "AUC (same > different)", "Mann–Whitney p"], pair_rows),
        f"Leave-one-out 1-NN on the top-{k} signatures ({summary['num_classes']} classes, chance {format_percent(summary['chance'], 2)} for the true label; "
        f"{summary['num_predicted_classes']} predicted classes). The permutation null shuffles the targets over images "
        f"({summary['settings']['num_permutations']} times; mean [2.5 %, 97.5 % quantiles]); p = (1 + #null ≥ ours) / (1 + permutations). "
        f"For scale, the network's own full-mask top-1 on these images is {format_stat(accuracy, percent=True)}.",
        markdown_table(["ranking", "signature", "predicts", "1-NN accuracy", "× chance", "permutation null", "p"], nn_rows),
        "1-NN accuracy (true label, binary signatures) against the signature size K:",
        markdown_table(["K"] + [RANKING_NAMES[ranking] for ranking in SIGNATURE_RANKINGS], sweep_rows),
        f"Global core: the {k} subsets most often in an image's top-{k}; the share of each image's top-{k} inside it (a random top-{k} would share K / 2^L), "
        "how many subsets hold 50 % / 90 % of all top-K memberships, and the core's first subsets as gate sets:",
        markdown_table(["ranking", "share of top-K in the core", "random", "subsets for 50 %", "subsets for 90 %", "distinct subsets", "core (most frequent first)"], core_rows),
    ]


def seed_rows(summary: dict[str, Any]) -> list[list[str]]:
    """The seed's Experiment 4 numbers (ResNet-18, 1000 classes) beside ours."""
    seed = summary["published"]["resnet18"]
    k = summary["settings"]["nn_k"]
    scalar = summary["rankings"]["scalar"]["binary"]["nn"]["true_label"]
    vector_core = summary["rankings"]["vector"]["global_core"]["share"]
    return [
        [f"1-NN accuracy, scalar ranking, {k}-subset signature (seed: 32)", format_percent(seed["nn_accuracy_scalar_k32"]), format_stat(scalar["accuracy"], percent=True)],
        ["chance (1 / classes)", format_percent(seed["chance"]), format_percent(summary["chance"], 2)],
        ["1-NN accuracy / chance", f"{format_number(seed['nn_accuracy_over_chance'])}×", f"{format_number(scalar['over_chance'])}×"],
        ["vector ranking", str(seed["vector_ranking"]), f"{format_percent(vector_core['mean'])} of an image's top-{k} in the global core"],
    ]


def verdict_lines(summary: dict[str, Any]) -> list[str]:
    """The verdict, each clause decided from the JSON's numbers (rules in experiment_4/README.md)."""
    k, rankings = summary["settings"]["nn_k"], summary["rankings"]
    lines = []
    for ranking in SIGNATURE_RANKINGS:
        result = rankings[ranking]["binary"]["nn"]["true_label"]
        pairs = rankings[ranking]["binary"]["pairs"]
        above = result["permutation_null"]["p_value"] < ALPHA
        aligned = pairs["auc"] > 0.5 and pairs["mann_whitney_p"] < ALPHA
        lines.append(
            f"{RANKING_NAMES[ranking]}: 1-NN on the top-{k} signature finds the true label for {format_percent(result['accuracy']['mean'])} of images, "
            f"{format_number(result['over_chance'])}× chance; {'above' if above else 'not above'} the permutation null (p = {format_number(result['permutation_null']['p_value'])}). "
            f"Same-class pairs overlap {'more' if aligned else 'not significantly more'} than different-class pairs (AUC {format_number(pairs['auc'])}), "
            f"so this ranking is {'class-aligned' if above and aligned else 'not shown to be class-aligned'}."
        )
    vector_share = rankings["vector"]["global_core"]["share"]["mean"]
    scalar_share = rankings["scalar"]["global_core"]["share"]["mean"]
    lines.append(
        f"The vector ranking is {'near-global' if vector_share >= NEAR_GLOBAL_SHARE else 'not near-global'}: {format_percent(vector_share)} of an image's top-{k} lies in the "
        f"global core (threshold {format_percent(NEAR_GLOBAL_SHARE, 0)}; random {format_percent(rankings['vector']['global_core']['random_share'])}), "
        f"against {format_percent(scalar_share)} for the scalar ranking."
    )
    scalar, scalar_true = rankings["scalar"]["binary"]["nn"], rankings["scalar_true"]["binary"]["nn"]
    overlap = not (scalar["true_label"]["accuracy"]["ci_high"] < scalar_true["true_label"]["accuracy"]["ci_low"] or scalar_true["true_label"]["accuracy"]["ci_high"] < scalar["true_label"]["accuracy"]["ci_low"])
    lines.append(
        f"Shared coordinate vs class: projected on the predicted class, signatures find the predicted class for {format_percent(scalar['predicted_class']['accuracy']['mean'])} "
        f"and the true label for {format_percent(scalar['true_label']['accuracy']['mean'])}; projected on the true class they find the true label for "
        f"{format_percent(scalar_true['true_label']['accuracy']['mean'])} ({'CIs overlap' if overlap else 'CIs disjoint'} with the predicted-class projection's)."
    )
    seed = summary["published"]["resnet18"]
    lines.append(
        f"Against the seed (ResNet-18, 1000 classes): {format_number(scalar['true_label']['over_chance'])}× chance here vs the seed's "
        f"{format_number(seed['nn_accuracy_over_chance'])}×; with {summary['num_classes']} classes the attainable multiple is at most "
        f"{format_number(1 / summary['chance'])}×."
    )
    return lines


METHOD = (
    "Every image is evaluated under all 2^L gate masks and its 2^L Möbius coefficients Δ_S h (order 0, the empty mask, included) are ranked by "
    "magnitude three ways: vector ‖Δ_S h‖₂, scalar |Δ_S h[c*]| at the full-mask predicted class c*, and scalar |Δ_S h[y]| at the true label y "
    "(ties to the lower mask index). An image's top-K signature is the set of its first K subsets (binary), or the same subsets weighted by "
    "their magnitude over the top-K sum (weighted). Overlap is the (weighted) Jaccard Σ min / Σ max. Leave-one-out 1-NN: each image takes the "
    "label of its most similar other image (ties: the lowest sample position)."
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--summary", type=Path, default=Path("experiment_4/results/overlap.json"), help="overlap.json of step_2_overlap (default: %(default)s)")
    parser.add_argument("--signatures", type=Path, default=Path("experiment_4/results/signatures.pt"), help="signatures.pt of step_1_signatures, for the class heat map (default: %(default)s)")
    args = parser.parse_args(argv)
    summary = load_summary(args.summary, 4, "experiment_4.step_2_overlap", keys=("rankings.vector", "rankings.scalar", "settings.nn_k", "settings.signatures", "settings.num_permutations", "num_subsets", "num_classes", "num_predicted_classes", "chance", "pairs.same_class", "pairs.different_class", "full_mask_top1_accuracy", "published"))
    document = load_signatures(args.signatures)
    check_same_run(args.signatures, document["config"].get("run_id"), args.summary, summary["config"].get("run_id"))
    if int(document["num_subsets"]) != summary["num_subsets"] or int(document["valid"].sum()) != summary["num_valid"]:
        raise PipelineError(f"{args.signatures}: does not match {args.summary} (other images or architecture); pass the signatures step 2 read ({summary['settings']['signatures']})")
    folder = args.summary.parent
    figures = {
        "histograms": plot_histograms(summary, folder / "jaccard_histograms"),
        "sweep": plot_nn_sweep(summary, folder / "nn_accuracy_vs_k"),
        "core": plot_core(summary, folder / "global_core"),
        "heatmap": plot_class_heatmap(summary, document, folder / "class_heatmap"),
    }
    results = result_tables(summary)
    results += [figure("Jaccard histograms", figures["histograms"].name), figure("1-NN accuracy vs K", figures["sweep"].name),
                figure("global-core frequency", figures["core"].name), figure("top subsets by class", figures["heatmap"].name)]
    report = ReportDocument(
        title="Experiment 4 — input-dependent expert sets",
        summary=summary,
        method=METHOD,
        results=results,
        seed_rows=seed_rows(summary),
        seed_source=summary["published"]["source"],
        verdict=verdict_lines(summary),
        generator="experiment_4.step_3_plot",
        timing=read_json_if_exists(folder / "timing.json"),
        data_extra=f"; {summary['num_classes']} classes, signatures from `{summary['settings']['signatures']}`",
        source="overlap.json",
    ).render()
    path = folder / "REPORT.md"
    atomic_write_text(path, report)
    print(f"wrote {', '.join(str(value) for value in figures.values())} and {path}")


if __name__ == "__main__":
    run_cli(main)
