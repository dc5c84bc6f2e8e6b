"""Experiment 3, step 2 — top-K figures and REPORT.md from summary.json.

Question: is the Möbius decomposition sparse at the level of individual subsets?

Inputs:  --summary (experiment_3.step_1_evaluate's summary.json; timing.json beside it if present).
Outputs: topk_curves.png/.pdf (Γ_K, top-1 agreement and relative error vs K, magnitude rankings and
         controls with 95 % CIs, log-2 K axis), topk_orders.png/.pdf (the order histogram of the
         magnitude top-K) and REPORT.md in the summary's folder. Every number in the REPORT is read
         from the JSON; the verdict (sparser or denser than the seed, by how much, against which
         control) is decided from those numbers.

    python -m experiment_3.step_2_plot --summary experiment_3/results/summary.json
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from experiment_1.errors import run_cli
from experiment_1.io_utils import atomic_write_text, load_summary, read_json_if_exists
from experiment_1.plotting import new_figure_grid, plt, save_figure
from experiment_1.report import ReportDocument, figure, format_number, format_percent, format_stat, markdown_table
from experiment_3.aggregate import controls_of
from experiment_3.topk import RANKINGS, SOURCES

COLOURS = {"magnitude": "#2a6fb0", "order_matched": "#e07b22", "random": "#888888", "low_order_first": "#2e9e4f"}
LABELS = {"magnitude": "magnitude top-K", "order_matched": "order-matched random", "random": "random K subsets", "low_order_first": "low-order-first"}
METRIC_LABELS = {"captured_energy": "captured energy Γ_K", "top1_agreement": "top-1 agreement with h(full)", "relative_error": "relative L2 error ‖ĥ_K − h‖/‖h‖"}


def sources_of(ranking: str) -> dict[str, str]:
    """Curve name → source of the summary, for one ranking: the magnitude ranking and its controls."""
    return {"magnitude": f"magnitude_{ranking}", **controls_of(ranking)}


def stat_at(summary: dict[str, Any], source: str, metric: str, index: int) -> dict[str, float]:
    curve = summary["sources"][source]["curves"][metric]
    return {key: curve[key][index] for key in ("mean", "ci_low", "ci_high")}


def plot_curves(summary: dict[str, Any], output: Path) -> Path:
    """Γ_K, top-1 agreement and relative error vs K (log-2 axis) per ranking, with every control and 95 % CIs."""
    ks = np.asarray(summary["ks"])
    metrics = list(METRIC_LABELS)
    figure, axes_list = new_figure_grid(len(RANKINGS), len(metrics), 12.0, 6.6)
    for row, ranking in enumerate(RANKINGS):
        for column, metric in enumerate(metrics):
            axes = axes_list[row * len(metrics) + column]
            for name, source in sources_of(ranking).items():
                curve = {key: np.asarray(values, dtype=float) for key, values in summary["sources"][source]["curves"][metric].items() if key != "n"}
                if metric == "relative_error":  # log axis: an exact reconstruction (error 0, e.g. K = 2^L) is left out
                    curve = {key: np.where(values > 0, values, np.nan) for key, values in curve.items()}
                axes.plot(ks, curve["mean"], color=COLOURS[name], marker="o", ms=3, lw=1.3, label=LABELS[name])
                axes.fill_between(ks, curve["ci_low"], curve["ci_high"], color=COLOURS[name], alpha=0.2, lw=0)
            axes.set_xscale("log", base=2)
            if metric == "relative_error":
                axes.set_yscale("log")
            axes.set_xlabel("K (subsets kept)")
            axes.set_title(f"{METRIC_LABELS[metric]}, {ranking} ranking", fontsize=8)
    axes_list[0].legend(fontsize=7)
    figure.suptitle(f"Top-K reconstruction, {summary['config']['arch']}, 2^L = {summary['num_masks']}, N = {summary['num_valid']} (mean, 95 % CI)", fontsize=10)
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
            shares, labels = np.vstack([shares, block["binomial_share"]]), labels + ["all (C(L,k)/2^L)"]
        bottom = np.zeros(len(labels))
        for order in block["orders"]:
            axes.bar(labels, shares[:, order], bottom=bottom, color=colours(order / max(block["orders"])), label=f"k = {order}")
            bottom += shares[:, order]
        axes.set_xlabel("K")
        axes.tick_params(axis="x", labelsize=7, rotation=45)
        axes.set_title(f"orders in the magnitude top-K, {ranking} ranking", fontsize=9)
    axes_list[0].set_ylabel("share of the top-K (mean over images)")
    axes_list[-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), title="order")
    return save_figure(figure, output)


def curve_table(summary: dict[str, Any], metric: str, percent: bool) -> str:
    """One metric per K for every source (both rankings and every control)."""
    headers = ["K", "magnitude (vector)", "magnitude (scalar)", "order-matched (vector)", "order-matched (scalar)", "random", "low-order-first"]
    sources = ["magnitude_vector", "magnitude_scalar", "order_matched_vector", "order_matched_scalar", "random", "low_order_first"]
    rows = [[str(k)] + [format_stat(stat_at(summary, source, metric, index), percent=percent) for source in sources] for index, k in enumerate(summary["ks"])]
    return markdown_table(headers, rows)


def ratio_text(ratio: float | None) -> str:
    return "— (control 0)" if ratio is None else f"{format_number(ratio)}×"


def improvement_table(summary: dict[str, Any], ranking: str) -> str:
    """Magnitude over each control per K: ratio of mean top-1 agreement and of mean Γ_K."""
    block = summary["improvement"][ranking]
    controls = list(controls_of(ranking))
    headers = ["K"] + [f"top-1 ×, vs {LABELS[control]}" for control in controls] + [f"Γ_K ×, vs {LABELS[control]}" for control in controls]
    rows = []
    for index, k in enumerate(summary["ks"]):
        rows.append([str(k)] + [ratio_text(block[control][metric]["ratio"][index]) for metric in ("top1_agreement", "captured_energy") for control in controls])
    return markdown_table(headers, rows)


def smallest_k_table(summary: dict[str, Any]) -> str:
    """Per source: per-image smallest K for 90 % / 99 % energy and error ≤ τ; grid K where the means reach the targets."""
    config, target = summary["config"], summary["agreement_target"]
    headers = (["source"] + [f"K for Γ ≥ {format_percent(f, 0)} (per image)" for f in config["mass_fractions"]]
               + [f"K for error ≤ {format_number(t)} (per image)" for t in config["error_thresholds"]]
               + [f"grid K: mean Γ ≥ {format_percent(f, 0)}" for f in config["mass_fractions"]] + [f"grid K: mean top-1 ≥ {format_percent(target, 0)}"])
    rows = []
    for source in SOURCES:
        block = summary["sources"][source]
        grid = list(block["grid_k_reaching"].values())
        rows.append([f"{source} ({block['draws']} draw{'s' if block['draws'] > 1 else ''})"]
                    + [format_stat(stat) for stat in block["k_mass"].values()] + [format_stat(stat) for stat in block["k_error"].values()]
                    + ["never" if k is None else str(k) for k in grid])
    return markdown_table(headers, rows)


def order_table(summary: dict[str, Any]) -> str:
    """Mean order of the magnitude top-K per K and ranking, and the order holding most of it."""
    headers = ["K"] + [f"mean order of top-K ({ranking})" for ranking in RANKINGS] + [f"most common order ({ranking})" for ranking in RANKINGS]
    rows = []
    for index, k in enumerate(summary["ks"]):
        row = [str(k)]
        for ranking in RANKINGS:
            block = summary["order_histograms"][ranking]["mean_order"]
            row.append(format_stat({key: block[key][index] for key in ("mean", "ci_low", "ci_high")}))
        row += [str(int(np.argmax(summary["order_histograms"][ranking]["mean_count"][index]))) for ranking in RANKINGS]
        rows.append(row)
    return markdown_table(headers, rows)


QUANTITY_TEXT = {
    "captured_energy": ("Γ_K, magnitude top-K", True),
    "top1_agreement_magnitude": ("top-1 agreement, magnitude top-K", True),
    "top1_agreement_controls_max": ("top-1 agreement, best control", True),
    "improvement_over_random": ("top-1 agreement, magnitude ÷ random", False),
}


def seed_rows(summary: dict[str, Any]) -> list[list[str]]:
    """The seed's Experiment 3 numbers beside ours at the seed's K and at the same fraction of 2^L."""
    comparison = summary["beside_seed"]
    rows = []
    for row in comparison["rows"]:
        text, percent = QUANTITY_TEXT[row["quantity"]]
        seed = format_percent(row["seed"]) if percent else f"{format_number(row['seed'])}×"
        if row["quantity"] == "top1_agreement_controls_max":
            seed = f"< {seed}"
        places = [("at_seed_k", "the seed's K"), ("at_matching_fraction", f"{format_percent(row['fraction'], 0)} of 2^L")]
        if row["at_seed_k"]["k"] == row["at_matching_fraction"]["k"]:
            places = [("at_seed_k", f"the seed's K, {format_percent(row['fraction'], 0)} of 2^L")]
        for name, label in places:
            entry = row[name]
            value = entry["value"]
            if value is None:
                ours = "— (the random control never agreed)" if entry["k"] in summary["ks"] else "— (K not on the grid)"
            else:
                ours = format_stat(value, percent=percent) if isinstance(value, dict) else f"{format_number(value)}×"
            rows.append([f"{text}, {row['ranking']} ranking, K = {entry['k']} ({label}; seed K = {row['seed_k']} of {comparison['seed_num_masks']})", seed, ours])
    return rows


def comparison_row(summary: dict[str, Any], quantity: str, ranking: str) -> dict[str, Any]:
    return next(row for row in summary["beside_seed"]["rows"] if row["quantity"] == quantity and row["ranking"] == ranking)


def relation(stat: dict[str, float], seed_value: float, higher: str, lower: str) -> str:
    """``higher`` / ``lower`` / ``indistinguishable from`` the seed's value, by our 95 % CI."""
    if stat["ci_low"] > seed_value:
        return higher
    if stat["ci_high"] < seed_value:
        return lower
    return "indistinguishable (its value is inside our 95 % CI) from"


def verdict_lines(summary: dict[str, Any]) -> list[str]:
    """The verdict, every clause decided by comparing numbers from the JSON (vector ranking first, as the seed's Γ_K is vector energy)."""
    lines = []
    num_masks, ks, arch = summary["num_masks"], summary["ks"], summary["config"]["arch"]
    for ranking in RANKINGS:
        energy = comparison_row(summary, "captured_energy", ranking)
        agreement = comparison_row(summary, "top1_agreement_magnitude", ranking)
        controls = comparison_row(summary, "top1_agreement_controls_max", ranking)
        for name in ("at_matching_fraction", "at_seed_k"):
            gamma, top1 = energy[name], agreement[name]
            if gamma["value"] is None or top1["value"] is None:
                continue
            basis = f"at the same fraction of 2^L (K = {gamma['k']} and {top1['k']} of {num_masks})" if name == "at_matching_fraction" else f"at the seed's K (K = {gamma['k']} and {top1['k']} of {num_masks})"
            word = relation(gamma["value"], energy["seed"], "sparser than", "denser than")
            lines.append(f"{ranking.capitalize()} ranking, {basis}: Γ = {format_stat(gamma['value'], percent=True)} where the seed reports {format_percent(energy['seed'])} "
                         f"({(gamma['value']['mean'] - energy['seed']) * 100:+.1f} points) — by energy `{arch}` is {word} what the seed reports for ResNet-18; "
                         f"top-1 agreement {format_stat(top1['value'], percent=True)} against {format_percent(agreement['seed'])} "
                         f"({(top1['value']['mean'] - agreement['seed']) * 100:+.1f} points).")
            if name == "at_matching_fraction":
                break
        entry = controls["at_matching_fraction"]
        k = entry["k"]
        if k in ks:
            index = ks.index(k)
            block = summary["improvement"][ranking]
            parts = []
            for control in ("random", "order_matched", "low_order_first"):
                stat = stat_at(summary, controls_of(ranking)[control], "top1_agreement", index)
                difference = block[control]["top1_agreement"]["difference"]
                parts.append(f"{LABELS[control]} {format_percent(stat['mean'])} (magnitude ÷ control {ratio_text(block[control]['top1_agreement']['ratio'][index])}, "
                             f"difference {format_stat({key: difference[key][index] for key in ('mean', 'ci_low', 'ci_high')}, percent=True)})")
            below = entry["value"]["mean"] < controls["seed"]
            seed_ratio = comparison_row(summary, "improvement_over_random", ranking)["seed"]
            lines.append(f"Controls at K = {k} ({ranking} ranking): " + "; ".join(parts) + ". "
                         f"The best control is {'below' if below else 'not below'} the seed's {format_percent(controls['seed'])} bound; the seed reports ~{format_number(seed_ratio)}× over random / order-matched.")
    vector = summary["sources"]["magnitude_vector"]
    k_eff = summary["k_eff"]["vector"]
    mass = vector["k_mass"]
    lines.append(f"Per image, the vector top-K needs K = {format_stat(mass['0.9'])} subsets for 90 % of the energy and {format_stat(mass['0.99'])} for 99 % "
                 f"(of {num_masks}); the random control needs {format_stat(summary['sources']['random']['k_mass']['0.9'])} for 90 %. "
                 f"K_eff = {format_stat(k_eff)} ({format_percent(k_eff['mean'] / num_masks)} of 2^L; scalar {format_stat(summary['k_eff']['scalar'])}).")
    orders, k = summary["order_histograms"]["vector"], comparison_row(summary, "captured_energy", "vector")["at_matching_fraction"]["k"]
    if k in ks:
        index, centre = ks.index(k), orders["binomial_mean_order"]
        stat = {key: orders["mean_order"][key][index] for key in ("mean", "ci_low", "ci_high")}
        side = "above" if stat["ci_low"] > centre else "below" if stat["ci_high"] < centre else "indistinguishable from"
        lines.append(f"Orders: the vector top-{k} has mean order {format_stat(stat)}, {side} the mean order L/2 = {format_number(centre)} of all subsets "
                     f"(most common order in it: {int(np.argmax(orders['mean_count'][index]))}).")
    return lines


def results_blocks(summary: dict[str, Any], figures: dict[str, str]) -> list[str]:
    """The REPORT's Result section: tables from the JSON and the figures."""
    blocks = [
        "Captured energy Γ_K (share of Σ_S ‖Δ_S h‖² in the K chosen subsets), mean [95 % CI]:",
        curve_table(summary, "captured_energy", percent=True),
        "Top-1 agreement of ĥ_K with h(full):",
        curve_table(summary, "top1_agreement", percent=True),
        "Relative L2 error ‖ĥ_K − h(full)‖ / ‖h(full)‖:",
        curve_table(summary, "relative_error", percent=False),
        figure("top-K curves", figures["curves"]),
    ]
    for ranking in RANKINGS:
        blocks += [f"Improvement of the magnitude top-K over each control, {ranking} ranking (ratio of the means; per-image paired differences with CIs are in the JSON):",
                   improvement_table(summary, ranking)]
    blocks += [
        "Smallest K (per image at single-subset resolution, mean [95 % CI]; and the first K of the grid where the mean curve reaches the target):",
        smallest_k_table(summary),
        f"K_eff (participation ratio (Σ e_S)² / Σ e_S²; 2^L = {summary['num_masks']}): vector {format_stat(summary['k_eff']['vector'])}, scalar {format_stat(summary['k_eff']['scalar'])}.",
        "Where the magnitude top-K sits in order (L/2 = " + format_number(summary["order_histograms"]["vector"]["binomial_mean_order"]) + " is the mean order of all subsets):",
        order_table(summary),
        figure("orders of the top-K", figures["orders"]),
    ]
    return blocks


METHOD = (
    "Every image is evaluated under all 2^L residual-gate masks and its Möbius coefficients Δ_S h are taken (order 0 included). "
    "The 2^L subsets are ranked by magnitude — vector ‖Δ_S h‖₂ or scalar |Δ_S h[c]|, c = argmax h(full) (ties: lower mask index first) — "
    "and ĥ_K = Σ_{S ∈ top-K} Δ_S h is compared with h(full) for every K of the grid: captured energy Γ_K = Σ_{top-K} ‖Δ_S h‖² / Σ_S ‖Δ_S h‖², "
    "relative L2 error and top-1 agreement. Controls take K subsets in another order: random (a uniform permutation), order-matched random "
    "(at each rank the next unused random subset of the same order as the magnitude ranking's, so every top-K has the magnitude top-K's "
    "order histogram) and low-order-first (by increasing order, random within an order); each is drawn `num_random_seeds` times per image, "
    "seeded by (seed, control, draw, image), and the draws are averaged per image. Means over images with 95 % bootstrap CIs. "
    "The seed's numbers are for ResNet-18 (L = 8, 256 subsets); ours are given at the seed's K and at the same fraction of 2^L."
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--summary", type=Path, default=Path("experiment_3/results/summary.json"), help="summary.json of step_1_evaluate (default: %(default)s)")
    args = parser.parse_args(argv)
    summary = load_summary(args.summary, 3, "experiment_3.step_1_evaluate", keys=("config", "sources", "published"))
    folder = args.summary.parent
    curves = plot_curves(summary, folder / "topk_curves")
    orders = plot_orders(summary, folder / "topk_orders")
    report = ReportDocument(
        title="Experiment 3 — top-K sparse reconstruction",
        summary=summary,
        method=METHOD,
        results=results_blocks(summary, {"curves": curves.name, "orders": orders.name}),
        seed_rows=seed_rows(summary),
        seed_source=summary["published"]["source"],
        verdict=verdict_lines(summary),
        generator="experiment_3.step_2_plot",
        timing=read_json_if_exists(folder / "timing.json"),
        data_extra=f"; {summary['config']['num_random_seeds']} draws of each random control per image",
        source="summary.json",
    ).render()
    atomic_write_text(folder / "REPORT.md", report)
    print(f"wrote {curves}, {orders} and {folder / 'REPORT.md'}")


if __name__ == "__main__":
    run_cli(main)
