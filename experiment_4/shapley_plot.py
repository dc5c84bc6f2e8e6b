"""Experiment 4's Shapley figure and REPORT (experiment_4.step_5_shapley_plot), from step 4's shapley.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from experiment_1.files import atomic_write_text, read_timing
from experiment_1.report import (
    ReportDocument,
    figure,
    format_number,
    format_percent,
    load_checked_summary,
    markdown_table,
    new_figure_grid,
    run_title,
    save_figure,
)
from experiment_4.record import VERDICTS
from experiment_4.step_5_shapley_plot import ShapleyPlotFlags

SUMMARY_KEYS = ("config.block_names", "blocks", "expert_sets", "gain_scalar", "nn_k", "num_classes", "images_per_class")
METHOD = (
    " Every image is evaluated under all 2^L gate masks; the Möbius coefficients Δ_S h give each block's Shapley value "
    "φ_l = Σ_{S ∋ l} Δ_S / |S| (experiment_1.mobius.shapley_values, exact: no sampling) in the scalar projection "
    "(the full network's predicted class c*) — the blocks' values sum to the logit gain h(full)[c*] − h(∅)[c*] — and, "
    "in the vector projection, the norm ‖φ_l‖₂ of the block's per-class Shapley vector. Experiment 4's expert set of an "
    "image is its top-K subsets by |Δ_S h[c*]|; each block's count in it is set beside |φ_l|."
)


def plot_blocks(summary: dict[str, Any], output: Path) -> Path:
    """(a) φ_l over images per block (box: quartiles, whiskers: 5–95 %, dot: mean); (b) the share of images whose
    largest φ is the block's, and the between-class share of φ_l's variance beside its permuted-label mean."""
    figure_, (values, shares) = new_figure_grid(1, 2, 11.0, 4.2)
    names = [block["name"] for block in summary["blocks"]]
    positions = list(range(1, len(names) + 1))
    boxes = [
        {
            "med": block["shapley_scalar"]["q50"],
            "q1": block["shapley_scalar"]["q25"],
            "q3": block["shapley_scalar"]["q75"],
            "whislo": block["shapley_scalar"]["q05"],
            "whishi": block["shapley_scalar"]["q95"],
            "mean": block["shapley_scalar"]["mean"],
            "fliers": [],
        }
        for block in summary["blocks"]
    ]
    values.bxp(boxes, positions=positions, showmeans=True, showfliers=False)
    values.axhline(0.0, color="grey", lw=0.8)
    values.set_xticks(positions, names, rotation=45, fontsize=7)
    values.set_ylabel("Shapley value φ_l of the predicted-class logit")
    values.set_title("(a) per image: which blocks carry the prediction", fontsize=9)
    width = 0.4
    shares.bar(
        [p - width / 2 for p in positions], [b["share_top"] for b in summary["blocks"]], width, label="largest φ"
    )
    shares.bar(
        [p + width / 2 for p in positions],
        [b["between_class_share"] or 0.0 for b in summary["blocks"]],
        width,
        label="η², between classes",
    )
    shares.axhline(summary["between_class_share_null"], color="grey", ls=":", label="η² with permuted labels (mean)")
    shares.set_xticks(positions, names, rotation=45, fontsize=7)
    shares.set_ylabel("share")
    shares.set_title("(b) share of images, share of variance", fontsize=9)
    shares.legend(fontsize=7)
    figure_.suptitle(f"Shapley values of the blocks — {run_title(summary)}", fontsize=10)
    return save_figure(figure_, output)


def block_table(summary: dict[str, Any]) -> str:
    """One row per block: φ_l's distribution, where it is largest, its class share, the vector norm, the expert set."""
    rows = [
        [
            f"`{block['name']}`",
            f"{format_number(block['shapley_scalar']['mean'])} [{format_number(block['shapley_scalar']['q25'])}, "
            f"{format_number(block['shapley_scalar']['q75'])}]",
            format_number(block["shapley_scalar"]["sd"]),
            format_percent(block["share_top"]),
            format_percent(block["share_negative"]),
            format_number(block["between_class_share"], 2),
            format_number(block["banzhaf_scalar_mean"]),
            format_number(block["vector_norm"]["mean"]),
            format_percent(block["predicted_class_share_median"]),
            format_number(block["expert_set_membership_mean"], 3),
        ]
        for block in summary["blocks"]
    ]
    headers = [
        "block",
        "φ_l: mean [quartiles]",
        "SD over images",
        "largest φ in",
        "φ_l < 0 in",
        "η² over classes",
        "Banzhaf β_l: mean",
        "‖φ_l‖₂ (vector): mean",
        "on the predicted class (median)",
        f"in the top-{summary['nn_k']} subsets (mean count)",
    ]
    return markdown_table(headers, rows)


def results(summary: dict[str, Any]) -> list[str]:
    """The short answer, the table and the sentence on Experiment 4's expert sets — all numbers from the JSON."""
    blocks, experts, gain = summary["blocks"], summary["expert_sets"], summary["gain_scalar"]
    top = max(blocks, key=lambda block: block["share_top"])
    spread = max(blocks, key=lambda block: block["shapley_scalar"]["sd"])
    answer = (
        f"In {summary['num_valid']} images, block `{top['name']}` carries the largest Shapley value of the predicted-class "
        f"logit most often ({format_percent(top['share_top'])} of the images), and the largest single block carries a "
        f"median {format_percent(summary['top_block_share_of_gain_median'])} of the logit gain h(full)[c*] − h(∅)[c*] "
        f"(mean {format_number(gain['mean'])}, positive in {format_percent(summary['share_gain_positive'])}). The values "
        f"vary over images most for `{spread['name']}` (SD {format_number(spread['shapley_scalar']['sd'])}); between the "
        f"{summary['num_classes']} true classes lies a share η² of each block's variance, to be read beside "
        f"{format_number(summary['between_class_share_null'], 2)}, its mean when the labels are permuted. In the vector "
        f"projection the predicted class holds a median "
        f"{format_percent(min(block['predicted_class_share_median'] for block in blocks))}–"
        f"{format_percent(max(block['predicted_class_share_median'] for block in blocks))} of a block's Shapley-vector "
        f"norm (by block). The values are "
        f"exact: they sum to the logit gain within {format_number(summary['efficiency_max_abs_error'])}."
    )
    expert = (
        f"**Beside Experiment 4's expert sets.** An expert set lists an image's top-{summary['nn_k']} subsets by "
        f"|Δ_S h[c*]|, unsigned; its first subset is the trunk ∅ in "
        f"{format_percent(experts['top_subset_is_trunk_share'])} of the images, which the Shapley values leave out. "
        f"They add a signed, additive account per block: across the blocks, an image's |φ_l| and the block's count in "
        f"its expert set have a median Spearman ρ of {format_number(experts['spearman_median'], 2)} (quartiles "
        f"{format_number(experts['spearman_q25'], 2)}, {format_number(experts['spearman_q75'], 2)}; "
        f"{experts['num_images_defined']} images), and the block with the largest |φ_l| is the one most often in the "
        f"expert set in {format_percent(experts['largest_block_most_in_expert_set_share'])} of the images. The expert "
        f"sets rank subsets by magnitude, without sign and without adding up to the prediction, so this per-block "
        f"account is what the Shapley values add to them."
    )
    return [answer, block_table(summary), expert]


def data_extra(summary: dict[str, Any]) -> str:
    """The classes, and why a run of this size: a balanced list gives η² its meaning, and every image costs 2^L masks."""
    per_class = summary["images_per_class"]
    if per_class["min"] == per_class["max"]:
        return (
            f"; {summary['num_classes']} classes × {per_class['min']} images, a class-balanced list so that the "
            f"between-class share of variance compares like with like, kept small because every image costs all "
            f"2^{summary['config']['num_blocks']} masks (wall time below)"
        )
    return f"; {summary['num_classes']} classes, {per_class['min']}–{per_class['max']} images each (not balanced)"


def run(args: ShapleyPlotFlags) -> None:
    """The figure and REPORT.md beside shapley.json."""
    summary = load_checked_summary(args.summary, 4, "experiment_4.step_4_shapley", keys=SUMMARY_KEYS, rules=VERDICTS[4])
    folder = args.summary.parent
    path = plot_blocks(summary, folder / "shapley_blocks")
    report = ReportDocument(
        title="Experiment 4 — which blocks carry each image's prediction (Shapley values)",
        summary=summary,
        method=METHOD,
        results=[*results(summary), figure("Shapley values of the blocks", path.name)],
        seed_rows=[],
        generator="experiment_4.step_5_shapley_plot",
        verdict=["No verdict: the table is descriptive (the original study states no claim about Shapley values)."],
        timing=read_timing(folder / "timing.json", summary.get("num_images")),
        data_extra=data_extra(summary),
        source="shapley.json",
    ).render()
    report_path = folder / "REPORT.md"
    atomic_write_text(report_path, report)
    print(f"wrote {path} and {report_path}")
