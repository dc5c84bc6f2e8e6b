"""Experiment 3's REPORT (step 2): its Markdown blocks and the filled skeleton, every number and decision read from summary.json."""

from __future__ import annotations

from typing import Any

import numpy as np

from experiment_1.mobius import RANKINGS
from experiment_1.report import (
    ReportDocument,
    by_id,
    decided,
    figure,
    format_number,
    format_percent,
    format_stat,
    markdown_table,
    rests_on,
)
from experiment_3.summary import controls_of
from experiment_3.topk import SOURCES, TRUNK_REMOVED
from experiment_3.verdicts import CONTROL_LABELS

LABELS = {"magnitude": "magnitude top-K", **CONTROL_LABELS}


def stat_at(summary: dict[str, Any], source: str, metric: str, index: int) -> dict[str, float]:
    curve = summary["sources"][source]["curves"][metric]
    return {key: curve[key][index] for key in ("mean", "ci_low", "ci_high")}


def same_as(summary: dict[str, Any], source: str, index: int) -> str:
    """`` (= vector ranking)`` where a control picks that ranking's own subsets on every image and draw at this K (< 2^L)."""
    if summary["ks"][index] == summary["num_masks"]:
        return ""
    rankings = [
        ranking
        for ranking in RANKINGS
        for control, name in controls_of(ranking).items()
        if name == source and summary["small_k"][ranking]["control_is_the_ranking"][control][index] == 1.0
    ]
    return "".join(f" (= {ranking} ranking)" for ranking in rankings)


def curve_table(summary: dict[str, Any], metric: str, percent: bool) -> str:
    """One metric per K for every source (both rankings and every control); a control marked where it is the ranking itself."""
    ranked = [f"{kind} ({ranking})" for kind in ("magnitude", "order-matched") for ranking in RANKINGS]
    headers = ["K", *ranked, "random", "low-order-first"]  # the columns of SOURCES, in its order
    rows = [
        [str(k)]
        + [
            format_stat(stat_at(summary, source, metric, index), percent=percent) + same_as(summary, source, index)
            for source in SOURCES
        ]
        for index, k in enumerate(summary["ks"])
    ]
    return markdown_table(headers, rows)


def ratio_text(ratio: float | None) -> str:
    return "— (control 0)" if ratio is None else f"{format_number(ratio)}×"


def improvement_table(summary: dict[str, Any], ranking: str) -> str:
    """Magnitude over each control per K: ratio of mean top-1 agreement and of mean Γ_K."""
    block = summary["improvement"][ranking]
    controls = list(controls_of(ranking))
    headers = (
        ["K"]
        + [f"top-1 ×, vs {LABELS[control]}" for control in controls]
        + [f"Γ_K ×, vs {LABELS[control]}" for control in controls]
    )
    rows = []
    for index, k in enumerate(summary["ks"]):
        rows.append(
            [str(k)]
            + [
                ratio_text(block[control][metric]["ratio"][index])
                for metric in ("top1_agreement", "captured_energy")
                for control in controls
            ]
        )
    return markdown_table(headers, rows)


def smallest_k_table(summary: dict[str, Any]) -> str:
    """Per source: per-image smallest K for 90 % / 99 % energy and error ≤ τ; grid K where the means reach the targets."""
    config, target = summary["config"], summary["agreement_target"]
    headers = (
        ["source"]
        + [f"K for Γ ≥ {format_percent(f, 0)} (per image)" for f in config["mass_fractions"]]
        + [f"K for error ≤ {format_number(t)} (per image)" for t in config["error_thresholds"]]
        + [f"grid K: mean Γ ≥ {format_percent(f, 0)}" for f in config["mass_fractions"]]
        + [f"grid K: mean top-1 ≥ {format_percent(target, 0)}"]
    )
    rows = []
    for source in [source for source in (*SOURCES, TRUNK_REMOVED) if source in summary["sources"]]:
        block = summary["sources"][source]
        grid = list(block["grid_k_reaching"].values())
        rows.append(
            [f"{source} ({block['draws']} draw{'s' if block['draws'] > 1 else ''})"]
            + [format_stat(stat) for stat in block["k_mass"].values()]
            + [format_stat(stat) for stat in block["k_error"].values()]
            + ["never" if k is None else str(k) for k in grid]
        )
    return markdown_table(headers, rows)


def order_table(summary: dict[str, Any]) -> str:
    """Mean order of the magnitude top-K per K and ranking, and the order holding most of it."""
    headers = (
        ["K"]
        + [f"mean order of top-K ({ranking})" for ranking in RANKINGS]
        + [f"most common order ({ranking})" for ranking in RANKINGS]
    )
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
    "captured_energy": ("Γ_K on vector energy, magnitude top-K", True),
    "captured_scalar_energy": ("Γ_K on scalar energy, magnitude top-K", True),
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
        places = [
            ("at_seed_k", "the original study's K"),
            ("at_matching_fraction", f"{format_percent(row['fraction'], 0)} of 2^L"),
        ]
        if row["at_seed_k"]["k"] == row["at_matching_fraction"]["k"]:
            places = [("at_seed_k", f"the original study's K, {format_percent(row['fraction'], 0)} of 2^L")]
        for name, label in places:
            entry = row[name]
            value = entry["value"]
            if value is None:
                ours = "— (the random control never agreed)" if entry["k"] in summary["ks"] else "— (K not on the grid)"
            else:
                ours = format_stat(value, percent=percent) if isinstance(value, dict) else f"{format_number(value)}×"
            rows.append(
                [
                    f"{text}, {row['ranking']} ranking, K = {entry['k']} ({label}; seed K = {row['seed_k']} of {comparison['seed_num_masks']})",
                    seed,
                    ours,
                ]
            )
    return rows


def small_k_sentence(summary: dict[str, Any]) -> str:
    """What the smallest K reconstruct, per ranking: the empty set on top, relative errors ≥ 1."""
    parts = []
    for ranking in RANKINGS:
        facts = summary["small_k"][ranking]
        empty = (
            ""
            if facts["top1_is_empty_set"] is None
            else f"the top-1 subset is ∅ on {format_stat(facts['top1_is_empty_set'], percent=True)} of images; "
        )
        shares = ", ".join(
            f"K = {k}: {format_percent(share, 0)}"
            for k, share in zip(summary["ks"], facts["relative_error_at_least_1"])
        )
        parts.append(f"{ranking} ranking — {empty}images with relative error ≥ 1: {shares}")
    return "**Small K.** " + ". ".join(parts) + "."


def short_answer(summary: dict[str, Any]) -> list[str]:
    """The REPORT's short answer, worded from the summary's verdicts on the vector ranking (Möbius basis)."""
    verdicts = by_id(summary["verdicts"])
    return [
        "In the Möbius basis, the claim that the vector ranking's top-K subsets capture as much energy as the original "
        f"study reports {decided(verdicts['captured_energy.vector'])}, and the claim that their top-1 agreement is as "
        f"high as the original study reports {decided(verdicts['top1_agreement_magnitude.vector'])}.",
        "The claim that the magnitude top-K agrees with h(full) more often than every control "
        f"{decided(verdicts['controls.vector'])}, while the claim that, on the mean over images, ĥ_K is no closer to "
        f"h(full) than the zero vector at every K < 2^L {decided(verdicts['relative_error.vector'])}.",
        rests_on(summary, "each image's 2^L Möbius coefficients ranked on the vector projection"),
    ]


def build_report(summary: dict[str, Any], figures: dict[str, str], timing: dict[str, Any] | None) -> str:
    """REPORT.md from summary.json (figures already saved beside it); the Verdict section is the summary's verdicts block."""
    return ReportDocument(
        title="Experiment 3 — top-K sparse reconstruction",
        summary=summary,
        method=METHOD,
        results=results_blocks(summary, figures),
        seed_rows=seed_rows(summary),
        generator="experiment_3.step_2_plot",
        timing=timing,
        data_extra=f"; {summary['config']['num_random_seeds']} draws of each random control per image",
        source="summary.json",
        short_answer=short_answer(summary),
    ).render()


def results_blocks(summary: dict[str, Any], figures: dict[str, str]) -> list[str]:
    """The REPORT's Result section: tables from the JSON and the figures."""
    blocks = [
        "Captured energy Γ_K (share of Σ_S ‖Δ_S h‖² in the K chosen subsets), mean [95 % CI]; "
        "“(= vector ranking)” marks a control that picks the ranking's own subsets on every image and draw:",
        curve_table(summary, "captured_energy", percent=True),
        "Γ_K on scalar energy (share of Σ_S (Δ_S h[c])², c = argmax h(full); the scalar ranking maximises this one):",
        curve_table(summary, "captured_scalar_energy", percent=True),
        "Top-1 agreement of ĥ_K with h(full):",
        curve_table(summary, "top1_agreement", percent=True),
        "Relative L2 error ‖ĥ_K − h(full)‖ / ‖h(full)‖:",
        curve_table(summary, "relative_error", percent=False),
        figure("top-K curves", figures["curves"]),
        small_k_sentence(summary),
    ]
    for ranking in RANKINGS:
        blocks += [
            f"Improvement of the magnitude top-K over each control, {ranking} ranking (ratio of the means; per-image "
            f"paired differences with CIs are in the JSON):",
            improvement_table(summary, ranking),
        ]
    blocks += [
        "Smallest K (per image at single-subset resolution, mean [95 % CI]; and the first K of the grid where the mean curve reaches the target):",
        smallest_k_table(summary),
        f"K_eff (participation ratio (Σ e_S)² / Σ e_S²; 2^L = {summary['num_masks']}): vector "
        f"{format_stat(summary['k_eff']['vector'])}, scalar {format_stat(summary['k_eff']['scalar'])}.",
        "Where the magnitude top-K sits in order (L/2 = "
        + format_number(summary["order_histograms"]["vector"]["binomial_mean_order"])
        + " is the mean order of all subsets):",
        order_table(summary),
        figure("orders of the top-K", figures["orders"]),
    ]
    return blocks


METHOD = (
    "Every image is evaluated under all 2^L residual-gate masks and its Möbius coefficients Δ_S h are taken (order 0 included). "
    "The 2^L subsets are ranked by magnitude — vector ‖Δ_S h‖₂ or scalar |Δ_S h[c]|, c = argmax h(full) (ties: lower mask index first) — "
    "and ĥ_K = Σ_{S ∈ top-K} Δ_S h is compared with h(full) for every K of the grid: captured energy Γ_K = Σ_{top-K} ‖Δ_S h‖² / Σ_S ‖Δ_S h‖², "
    "its share of the scalar energy Σ_{top-K} (Δ_S h[c])² / Σ_S (Δ_S h[c])², relative L2 error and top-1 agreement. "
    "Controls take K subsets in another order: random (a uniform permutation), order-matched random "
    "(at each rank the next unused random subset of the same order as the magnitude ranking's, so every top-K has the magnitude top-K's "
    "order histogram) and low-order-first (by increasing order, random within an order); each is drawn `num_random_seeds` times per image, "
    "seeded by (seed, control, draw, image), and the draws are averaged per image. Means over images with 95 % bootstrap CIs. "
    "The original study's numbers are for ResNet-18 (L = 8, 256 subsets); ours are given at the original study's K and at the same fraction of 2^L. "
    "The decision rules are stated under the verdicts."
)
