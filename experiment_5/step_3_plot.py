"""Experiment 5, step 3 — figures and REPORT.md from analysis.json (and per_image.pt for the scatter plots).

Question: do hard images use more, or higher-order, block interactions?

Inputs:  --analysis (experiment_5.step_2_analyze's analysis.json; timing.json beside it if present),
         --per-image (experiment_5.step_1_evaluate's per_image.pt, for the per-image scatter plots).
Outputs: rho_heatmap.png/.pdf (Spearman ρ of every difficulty score with every complexity measure, CIs
         marked), quartile_bars.png/.pdf (each measure's mean per quartile of the primary score),
         strongest_pairs.png/.pdf (scatter plots of the two pairs with the largest |ρ|) and REPORT.md, in
         the analysis's folder. Every number in the REPORT is read from analysis.json; the verdicts are
         the rule recorded there, applied to its numbers.

    python -m experiment_5.step_3_plot --analysis experiment_5/results/analysis.json \\
        --per-image experiment_5/results/per_image.pt
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.patches import Rectangle

from experiment_1.errors import PipelineError, run_cli
from experiment_1.io_utils import atomic_write_text, load_summary, read_json_if_exists
from experiment_1.plotting import new_figure, new_figure_grid, save_figure
from experiment_1.report import ReportDocument, figure, format_number, format_percent, format_stat, markdown_table
from experiment_5.association import ci_excludes_zero
from experiment_5.formatting import MEASURE_LABELS, SCORE_LABELS, difference_cell, measure_label, rho_cell, stat_cell, verdict_cell
from experiment_5.records import analysed_images, load_per_image

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
            text = f"{entry['rho']:.2f}\n[{entry['ci_low']:.2f}, {entry['ci_high']:.2f}]" if np.isfinite(entry["rho"]) else "n/a\n(constant)"
            axes.text(column, row, text, ha="center", va="center",
                      fontsize=6.5, fontweight="bold" if significant else "normal", color="black")
            if significant:
                axes.add_patch(Rectangle((column - 0.48, row - 0.48), 0.96, 0.96, fill=False, lw=1.2, ec="black"))
    axes.set_xticks(range(len(measures)), [measure_label(name) for name in measures], rotation=35, ha="right", fontsize=8)
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
        verdict = analysis["verdicts"][measure]
        axes.set_title(f"{measure_label(measure)}: {verdict['verdict']}", fontsize=8)
        low = min(stat["ci_low"] for stat in stats)
        high = max(stat["ci_high"] for stat in stats)
        margin = 0.15 * (high - low) if high > low else 0.5
        axes.set_ylim(low - margin, high + margin)
    for axes in axes_list[len(measures):]:
        axes.axis("off")
    figure_.suptitle(f"Complexity by quartile of {SCORE_LABELS[primary]} (mean, 95 % CI; {analysis['quartiles'][primary]['sizes'][0]} images per quartile)", fontsize=10)
    return save_figure(figure_, output)


def strongest_pairs(analysis: dict[str, Any], count: int = 2) -> list[tuple[str, str]]:
    """The ``count`` (score, headline measure) pairs with the largest |ρ| (ties by table order)."""
    pairs = [(score, measure) for score in analysis["scores"] for measure in analysis["headline_measures"]
             if np.isfinite(analysis["spearman"][score][measure]["rho"])]
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
        axes.set_ylabel(measure_label(measure))
        axes.set_title(f"ρ = {entry['rho']:.3f} [{entry['ci_low']:.3f}, {entry['ci_high']:.3f}], partial ρ | ‖h(full)‖ = {entry['partial_rho']:.3f}", fontsize=8)
        axes.legend(fontsize=7)
    figure_.suptitle(f"The two strongest difficulty–complexity pairs, N = {images.count}", fontsize=10)
    return save_figure(figure_, output)


def headline_table(analysis: dict[str, Any], measures: list[str]) -> str:
    """Per measure: mean, ρ and partial ρ with the primary score, quartile means and difference, incorrect − correct, verdict."""
    primary = analysis["settings"]["primary_score"]
    correctness = analysis["correctness"]["measures"]
    rows = []
    for measure in measures:
        entry = analysis["spearman"][primary][measure]
        quartile = analysis["quartiles"][primary]["measures"][measure]
        verdict = analysis["verdicts"][measure]
        rows.append([
            measure_label(measure),
            stat_cell(analysis["measure_means"][measure], measure),
            rho_cell(entry),
            rho_cell(entry, "partial_"),
            stat_cell(quartile["quartile_means"][0], measure),
            stat_cell(quartile["quartile_means"][3], measure),
            difference_cell(quartile["hard_minus_easy"], measure),
            difference_cell(correctness[measure]["incorrect_minus_correct"], measure) if correctness else "—",
            verdict_cell(verdict, len(analysis["scores"])),
        ])
    return markdown_table(
        ["measure", "mean [95 % CI]", f"ρ with {SCORE_LABELS[primary]}", "partial ρ given ‖h(full)‖", "easy quartile", "hard quartile",
         "hard − easy", "incorrect − correct", "verdict"],
        rows,
    )


def rho_table(analysis: dict[str, Any]) -> str:
    """ρ [CI] (p) of every score with every headline measure."""
    rows = [[measure_label(measure)] + [f"{rho_cell(analysis['spearman'][score][measure])}, p = {format_number(analysis['spearman'][score][measure]['p_value'], 2)}"
                                        for score in analysis["scores"]] for measure in analysis["headline_measures"]]
    return markdown_table(["measure"] + [SCORE_LABELS[score] for score in analysis["scores"]], rows)


def partial_check_paragraph(analysis: dict[str, Any]) -> str:
    """Whether the difficulty effect on K_τ^err survives controlling for ‖h(full)‖, per score."""
    tau = analysis["settings"]["taus"][0]
    norm = analysis["spearman_with_norm"]
    lines = [f"**Partial check.** {analysis['settings']['partial_check']}. ρ(‖h(full)‖, K_τ^err) = {rho_cell(norm['k_err'])}."]
    rows = []
    for score in analysis["scores"]:
        entry = analysis["spearman"][score]["k_err"]
        rows.append([SCORE_LABELS[score], rho_cell(norm[score]), rho_cell(entry), rho_cell(entry, "partial_"), partial_outcome(entry)])
    return "\n".join(lines) + "\n\n" + markdown_table(
        ["score", "ρ(score, ‖h(full)‖)", f"ρ(score, K_τ^err), τ = {format_number(tau)}", "partial ρ given ‖h(full)‖", "outcome"], rows)


def partial_outcome(entry: dict[str, Any]) -> str:
    """How the partial ρ relates to ρ: survives (same sign, CI excludes 0), vanishes, or no effect to begin with."""
    if not np.isfinite(entry["rho"]):
        return "no ρ (a variable is constant)"
    if not ci_excludes_zero(entry):
        return "no association to explain"
    if ci_excludes_zero(entry, "partial_ci_low", "partial_ci_high") and np.sign(entry["partial_rho"]) == np.sign(entry["rho"]):
        return "survives the norm"
    return "explained by the norm"


def saturation_sentence(analysis: dict[str, Any]) -> str:
    """How often K_τ^err and K_η^mass need every one of the 2^L subsets, per threshold."""
    size = 2 ** analysis["config"]["num_blocks"]
    parts = [f"{measure_label(name)}: {format_percent(share)}" for name, share in analysis["at_all_subsets"].items()]
    return f"Share of images that need all 2^L = {size} subsets: " + "; ".join(parts) + "."


def correctness_block(analysis: dict[str, Any]) -> str:
    correctness = analysis["correctness"]
    head = f"Correct: {correctness['num_correct']} images, incorrect: {correctness['num_incorrect']} (top-1 accuracy {format_stat(analysis['top1_accuracy'], percent=True)})."
    if not correctness["measures"]:
        return head + " One group has fewer than two images, so the comparison is not made."
    rows = [[measure_label(measure), stat_cell(entry["correct"], measure), stat_cell(entry["incorrect"], measure),
             difference_cell(entry["incorrect_minus_correct"], measure), format_number(entry["mann_whitney_p"], 2)]
            for measure, entry in correctness["measures"].items() if measure in analysis["headline_measures"]]
    return head + "\n\n" + markdown_table(["measure", "correct", "incorrect", "incorrect − correct", "Mann–Whitney p"], rows)


def seed_rows(analysis: dict[str, Any]) -> list[list[str]]:
    """The seed's hard − easy numbers and its invariant measures beside ours."""
    seed = analysis["published"]["resnet18"]
    primary = analysis["settings"]["primary_score"]
    quartiles = analysis["quartiles"][primary]["measures"]
    rows = [
        ["N_eff^v, hard − easy quartile", f"+{format_number(seed['n_eff_vector_hard_minus_easy'])}", difference_cell(quartiles["n_eff_vector"]["hard_minus_easy"], "n_eff_vector")],
        [f"K_τ^err (τ = {format_number(analysis['settings']['taus'][0])}), hard − easy quartile", f"+{format_number(seed['k_tau_err_hard_minus_easy'])}",
         difference_cell(quartiles["k_err"]["hard_minus_easy"], "k_err")],
    ]
    for family in seed["invariant_measures"]:
        ours = ", ".join(f"{measure_label(name)}: {analysis['verdicts'][name]['verdict']}" for name in (f"{family}_vector", f"{family}_scalar"))
        rows.append([f"{MEASURE_LABELS[family + '_vector'].split(' ')[0]} vs difficulty", "invariant", ours])
    return rows


def verdict_lines(analysis: dict[str, Any]) -> list[str]:
    """One bullet per headline measure, then whether the seed's claim holds, then the partial check — all from the JSON."""
    primary = SCORE_LABELS[analysis["settings"]["primary_score"]]
    lines = []
    for measure in analysis["headline_measures"]:
        verdict = analysis["verdicts"][measure]
        difference = analysis["quartiles"][analysis["settings"]["primary_score"]]["measures"][measure]["hard_minus_easy"]
        if verdict["verdict"] == "constant":
            lines.append(f"{measure_label(measure)}: **constant** — {format_number(analysis['measure_means'][measure]['mean'])} on every image, "
                         "so difficulty cannot move it (for K: every image needs the same number of subsets).")
            continue
        relation = "covers 0" if verdict["verdict"] == "invariant" else "excludes 0"
        lines.append(f"{measure_label(measure)}: **{verdict['verdict']}**{' (' + verdict['direction'] + ')' if verdict['direction'] else ''} — "
                     f"hard − easy ({primary} quartiles) {difference_cell(difference, measure)} {relation}; "
                     f"{verdict['agreeing_scores']} of {len(analysis['scores'])} difficulty scores give the same verdict.")
    seed = analysis["published"]["resnet18"]
    order_measures = [f"{family}_{projection}" for family in seed["invariant_measures"] for projection in ("vector", "scalar")]
    orders_invariant = all(analysis["verdicts"][name]["verdict"] == "invariant" for name in order_measures)
    broadened = all(analysis["verdicts"][name]["verdict"] == "broadened" for name in ("n_eff_vector", "k_err"))
    claim = {(True, True): "holds here", (True, False): "holds here only in part: the orders are invariant, but N_eff^v and K_τ^err are not both broadened",
             (False, True): "holds here only in part: N_eff^v and K_τ^err are broadened, but not every order measure is invariant",
             (False, False): "does not hold here: neither are all order measures invariant nor are N_eff^v and K_τ^err both broadened"}[orders_invariant, broadened]
    lines.append(f"The seed's claim — difficulty broadens the support (N_eff^v, K_τ^err up) without moving the orders (k̄, κ, C≤3 invariant) — {claim}.")
    outcomes = [partial_outcome(analysis["spearman"][score]["k_err"]) for score in analysis["scores"]]
    if analysis["verdicts"]["k_err"]["verdict"] == "constant":
        lines.append("Partial check on K_τ^err: not applicable, K_τ^err is the same for every image.")
    else:
        lines.append(f"Partial check on K_τ^err, controlling for ‖h(full)‖: {outcomes.count('survives the norm')} of {len(outcomes)} difficulty scores keep an association "
                     f"after the norm is partialled out, {outcomes.count('explained by the norm')} lose it, {outcomes.count('no association to explain')} had none.")
    return lines


def build_report(analysis: dict[str, Any], timing: dict[str, Any] | None) -> str:
    """REPORT.md from analysis.json (figures already saved beside it)."""
    settings = analysis["settings"]
    pool = analysis["sample_pool"]
    extra_measures = [name for name in analysis["measures"] if name not in analysis["headline_measures"]]
    data_extra = f"; {analysis['num_analysed']} analysed (every score and measure defined)"
    if pool["labelled_images_matching_pattern"] is not None:
        data_extra += (f"; the sample list ({pool['mode']}, {pool['per_class']} per class, `{pool['pattern']}`) holds {pool['list_size']} "
                       f"of the {pool['labelled_images_matching_pattern']} labelled images that pattern matches")
    method = (
        "From the full-mask logits and the true label, five difficulty scores (larger = harder): cross-entropy, 1 − p(true), "
        "1 − max softmax, softmax entropy and −(top-1 − top-2 logit margin); plus correct / incorrect. From the Möbius "
        "coefficients (float64): k̄ = Σ_{k≥0} k·E_k / Σ_{k≥0} E_k (energy-weighted mean order, trunk included); κ = Σ_{k≥1} k·p_k "
        "and C≤3 = Σ_{k=1..3} p_k (Experiment 2's, order 0 excluded) — each for the vector and the scalar projection; "
        "N_eff^v = (Σ e_S)² / Σ e_S² over the 2^L − 1 non-empty subsets (order 0 excluded), e_S = ‖Δ_S h‖²; "
        f"K_τ^err (τ = {format_number(settings['taus'][0])}): the smallest K whose top-K reconstruction, subsets ranked by ‖Δ_S h‖₂ "
        f"(order 0 included), has ‖ĥ_K − h(full)‖ / ‖h(full)‖ ≤ τ; K_η^mass (η = {format_number(settings['etas'][0])}): the smallest K "
        "whose top-K subsets hold a fraction η of Σ_S e_S. Statistics: Spearman ρ with a percentile-bootstrap 95 % CI "
        f"({settings['num_resamples']} resamples of the images, seed {settings['seed']}) and p-value; quartiles of each score (equal counts); "
        f"{settings['partial_check']}. Verdict rule: {settings['verdict_rule']}."
    )
    results = [
        headline_table(analysis, analysis["headline_measures"]),
        saturation_sentence(analysis),
        figure("Spearman ρ of every difficulty score with every complexity measure", "rho_heatmap.png"),
        "Spearman ρ [95 % CI] and p-value of every score with every measure:",
        rho_table(analysis),
        figure("Complexity by quartile of the primary difficulty score", "quartile_bars.png"),
        partial_check_paragraph(analysis),
        "**Correct vs incorrect.** " + correctness_block(analysis),
        "**Other thresholds** (by quartile of the primary score):",
        headline_table(analysis, extra_measures),
        figure("The two strongest difficulty–complexity pairs, per image", "strongest_pairs.png"),
    ]
    return ReportDocument(
        title="Experiment 5 — difficulty vs interaction complexity",
        summary=analysis,
        method=method,
        results=results,
        seed_rows=seed_rows(analysis),
        seed_source=f"{analysis['published']['source']}; the seed does not say which difficulty score defines its quartiles (ours: {SCORE_LABELS[settings['primary_score']]})",
        verdict=verdict_lines(analysis),
        generator="experiment_5.step_3_plot",
        timing=timing,
        data_extra=data_extra,
        source="analysis.json",
    ).render()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--analysis", type=Path, required=True, help="analysis.json of experiment_5.step_2_analyze")
    parser.add_argument("--per-image", type=Path, required=True, help="per_image.pt of experiment_5.step_1_evaluate (the same run)")
    args = parser.parse_args(argv)
    analysis = load_summary(args.analysis, 5, "experiment_5.step_2_analyze", "--analysis", ("spearman",))
    record = load_per_image(args.per_image)
    if record["config"] != analysis["config"]:
        raise PipelineError(f"{args.per_image}: comes from another run than {args.analysis}; pass the per_image.pt that step 2 analysed")
    folder = args.analysis.parent
    plot_rho_heatmap(analysis, folder / "rho_heatmap")
    plot_quartile_bars(analysis, folder / "quartile_bars")
    plot_strongest_pairs(analysis, record, folder / "strongest_pairs")
    atomic_write_text(folder / "REPORT.md", build_report(analysis, read_json_if_exists(folder / "timing.json")))
    print(f"wrote {folder / 'REPORT.md'} and its figures")


if __name__ == "__main__":
    run_cli(main)
