"""Experiment 5's REPORT (step 3): its Markdown blocks and the filled skeleton, every number and decision read from analysis.json."""

from __future__ import annotations

from typing import Any

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
from experiment_5.formatting import (
    MEASURE_LABELS,
    SCORE_LABELS,
    decision_cell,
    difference_cell,
    measure_label,
    rho_cell,
    stat_cell,
)


def measure_verdict(analysis: dict[str, Any], measure: str) -> dict[str, Any]:
    """The verdict on one measure from the analysis's verdicts block."""
    return by_id(analysis["verdicts"])[f"{measure}.hard_minus_easy"]


def headline_table(analysis: dict[str, Any], measures: list[str]) -> str:
    """Per measure: mean, ρ and partial ρ with the primary score, quartile means and difference, incorrect − correct, decision."""
    primary = analysis["settings"]["primary_score"]
    correctness = analysis["correctness"]["measures"]
    rows = []
    for measure in measures:
        entry = analysis["spearman"][primary][measure]
        quartile = analysis["quartiles"][primary]["measures"][measure]
        rows.append(
            [
                measure_label(measure),
                stat_cell(analysis["measure_means"][measure], measure),
                rho_cell(entry),
                rho_cell(entry, "partial_"),
                stat_cell(quartile["quartile_means"][0], measure),
                stat_cell(quartile["quartile_means"][3], measure),
                difference_cell(quartile["hard_minus_easy"], measure),
                difference_cell(correctness[measure]["incorrect_minus_correct"], measure) if correctness else "—",
                decision_cell(measure_verdict(analysis, measure)),
            ]
        )
    return markdown_table(
        [
            "measure",
            "mean [95 % CI]",
            f"ρ with {SCORE_LABELS[primary]}",
            "partial ρ given ‖h(full)‖",
            "easy quartile",
            "hard quartile",
            "hard − easy",
            "incorrect − correct",
            "decision",
        ],
        rows,
    )


def rho_table(analysis: dict[str, Any]) -> str:
    """ρ [CI] (p) of every score with every headline measure."""
    rows = [
        [measure_label(measure)]
        + [
            f"{rho_cell(analysis['spearman'][score][measure])}, p = {format_number(analysis['spearman'][score][measure]['p_value'], 2)}"
            for score in analysis["scores"]
        ]
        for measure in analysis["headline_measures"]
    ]
    return markdown_table(["measure"] + [SCORE_LABELS[score] for score in analysis["scores"]], rows)


def score_agreement_table(analysis: dict[str, Any]) -> str:
    """How alike the difficulty scores are: their mutual Spearman ρ and the shares of the primary score's easy / hard quartile they share."""
    agreement = analysis["score_agreement"]
    primary, scores = agreement["primary"], analysis["scores"]
    rows = [
        [SCORE_LABELS[score] + (" (primary)" if score == primary else "")]
        + [format_number(agreement["spearman"][score][other]) for other in scores]
        + [
            format_percent(agreement["shared_easy_quartile"][score]),
            format_percent(agreement["shared_hard_quartile"][score]),
        ]
        for score in scores
    ]
    headers = (
        ["score"]
        + [f"ρ with {SCORE_LABELS[other]}" for other in scores]
        + [f"shares the easy quartile of {SCORE_LABELS[primary]}", "… its hard quartile"]
    )
    return markdown_table(headers, rows)


def partial_check_paragraph(analysis: dict[str, Any]) -> str:
    """Whether the difficulty effect on K_τ^err survives controlling for ‖h(full)‖, per score (decided in the analysis)."""
    tau = analysis["settings"]["taus"][0]
    norm = analysis["spearman_with_norm"]
    head = f"**Partial check.** {analysis['settings']['partial_check']}. ρ(‖h(full)‖, K_τ^err) = {rho_cell(norm['k_err'])}."
    rows = [
        [
            SCORE_LABELS[score],
            rho_cell(norm[score]),
            rho_cell(analysis["spearman"][score]["k_err"]),
            rho_cell(analysis["spearman"][score]["k_err"], "partial_"),
            analysis["partial_check"][score],
        ]
        for score in analysis["scores"]
    ]
    return (
        head
        + "\n\n"
        + markdown_table(
            [
                "score",
                "ρ(score, ‖h(full)‖)",
                f"ρ(score, K_τ^err), τ = {format_number(tau)}",
                "partial ρ given ‖h(full)‖",
                "decision (partial rule)",
            ],
            rows,
        )
    )


def saturation_sentence(analysis: dict[str, Any]) -> str:
    """Which measures are saturated or constant, and how often the K thresholds need every one of the 2^L subsets."""
    size = 2 ** analysis["config"]["num_blocks"]
    stuck = [
        f"{measure_label(name)} ({entry['decision']}: {'within ' + format_number(entry['margin']) + ' of ' if entry['at'] == 'near_bound' else ''}"
        f"{entry['value']:g} on {format_percent(entry['share'])})"
        for name, entry in analysis["saturation"].items()
        if entry is not None
    ]
    shares = "; ".join(
        f"{measure_label(name)}: {format_percent(share)}" for name, share in analysis["at_all_subsets"].items()
    )
    return (
        "Saturated or constant (at or within 5 % of the range from a bound, or at one value, on ≥ 90 % of images; not judged): "
        + (", ".join(stuck) or "none")
        + ". "
        f"Share of images that need all 2^L = {size} subsets: {shares}."
    )


def correctness_block(analysis: dict[str, Any]) -> str:
    """Correct vs incorrect images: counts, accuracy and each headline measure's difference."""
    correctness = analysis["correctness"]
    head = (
        f"Correct: {correctness['num_correct']} images, incorrect: {correctness['num_incorrect']} "
        f"(top-1 accuracy {format_stat(analysis['top1_accuracy'], percent=True)})."
    )
    if not correctness["measures"]:
        return head + " One group has fewer than two images, so the comparison is not made."
    rows = [
        [
            measure_label(measure),
            stat_cell(entry["correct"], measure),
            stat_cell(entry["incorrect"], measure),
            difference_cell(entry["incorrect_minus_correct"], measure),
            format_number(entry["mann_whitney_p"], 2),
        ]
        for measure, entry in correctness["measures"].items()
        if measure in analysis["headline_measures"]
    ]
    return (
        head
        + "\n\n"
        + markdown_table(
            ["measure", "correct", "incorrect", "incorrect − correct", "Mann–Whitney p (uncorrected)"], rows
        )
    )


def seed_rows(analysis: dict[str, Any]) -> list[list[str]]:
    """What the seed reports (hard − easy numbers, invariant measures) beside ours and our decision."""
    seed = analysis["published"]["resnet18"]
    primary = analysis["settings"]["primary_score"]
    quartiles = analysis["quartiles"][primary]["measures"]
    rows = []
    for measure, key in (("n_eff_vector", "n_eff_vector_hard_minus_easy"), ("k_err", "k_tau_err_hard_minus_easy")):
        label = measure_label(measure) + (
            f" (τ = {format_number(analysis['settings']['taus'][0])})" if measure == "k_err" else ""
        )
        rows.append(
            [
                f"{label}, hard − easy quartile",
                f"+{format_number(seed[key])}",
                f"{difference_cell(quartiles[measure]['hard_minus_easy'], measure)}: {measure_verdict(analysis, measure)['decision']}",
            ]
        )
    for family in seed["invariant_measures"]:
        ours = ", ".join(
            f"{measure_label(name)}: {measure_verdict(analysis, name)['decision']}"
            for name in (f"{family}_vector", f"{family}_scalar")
        )
        rows.append([f"{MEASURE_LABELS[family + '_vector'].split(' ')[0]} vs difficulty", "invariant", ours])
    return rows


WALSH_MEASURES = ("walsh_kappa_vector", "walsh_kappa_scalar")


def walsh_text(analysis: dict[str, Any]) -> str:
    """κ_W in the Method: its definition, or — for a run whose per-image record predates the Walsh measures — that it
    was not evaluated, and why."""
    if all(name in analysis["measures"] for name in WALSH_MEASURES):
        return (
            "from the Walsh (±1 Fourier) coefficients, κ_W = Σ_{k≥1} k·W_k / Σ_{k≥1} W_k, the same mean order in the "
            "Walsh basis (W_k: the variance of h over masks at degree k), both projections"
        )
    return (
        "κ_W, the mean order in the Walsh basis, is not evaluated here: this run's per_image.pt predates the Walsh "
        "measures, so its orders are read in the Möbius basis only (the labelled pass, rerun, records them)"
    )


def method_text(analysis: dict[str, Any]) -> str:
    """The REPORT's Method paragraph."""
    settings = analysis["settings"]
    return (
        "From the full-mask logits and the true label, five difficulty scores (larger = harder): cross-entropy, 1 − p(true), "
        "1 − max softmax, softmax entropy and −(top-1 − top-2 logit margin); plus correct / incorrect. "
        f"{SCORE_LABELS[settings['primary_score']]} is the primary score; the others are a sensitivity check (they rank the images "
        "alike, so they are not replications). From the Möbius "
        "coefficients (float64): k̄ = Σ_{k≥0} k·E_k / Σ_{k≥0} E_k (energy-weighted mean order, trunk included); κ = Σ_{k≥1} k·p_k "
        "and C≤3 = Σ_{k=1..3} p_k (Experiment 2's, order 0 excluded) — each for the vector and the scalar projection; "
        f"{walsh_text(analysis)}; "
        "N_eff^v = (Σ e_S)² / Σ e_S² over the 2^L − 1 non-empty subsets (order 0 excluded), e_S = ‖Δ_S h‖²; "
        f"K_τ^err (τ = {format_number(settings['taus'][0])}): the smallest K whose top-K reconstruction, subsets ranked by ‖Δ_S h‖₂ "
        f"(order 0 included), has ‖ĥ_K − h(full)‖ / ‖h(full)‖ ≤ τ; K_η^mass (η = {format_number(settings['etas'][0])}): the smallest K "
        "whose top-K subsets hold a fraction η of Σ_S e_S. Statistics: Spearman ρ with a percentile-bootstrap 95 % CI "
        f"({settings['num_resamples']} resamples of the images, seed {settings['seed']}) and p-value; quartiles of each score (equal counts), "
        "hard − easy with a bootstrap CI and a Mann–Whitney p, Holm-corrected across the measures judged in each basis; "
        f"{settings['partial_check']}. The decision rules are stated under the verdicts."
    )


def short_answer(analysis: dict[str, Any]) -> list[str]:
    """The REPORT's short answer, worded from analysis.json's verdicts."""
    verdicts = by_id(analysis["verdicts"])
    return [
        "The original study reports that difficulty broadens the support of the interactions without moving their "
        f"orders, and the claim that it is so here {decided(verdicts['seed_claim'])}.",
        "In the Möbius basis on the vector projection, the claim that N_eff^v is larger on hard than on easy images "
        f"{decided(verdicts['n_eff_vector.hard_minus_easy'])}, and the claim that difficulty does not move k̄ "
        f"{decided(verdicts['kbar_vector.hard_minus_easy'])}.",
        rests_on(
            analysis,
            f"each under all 2^L residual-gate masks, the hard and easy images being the top and bottom quartiles of "
            f"{SCORE_LABELS[analysis['settings']['primary_score']]}",
        ),
    ]


def build_report(analysis: dict[str, Any], timing: dict[str, Any] | None) -> str:
    """REPORT.md from analysis.json (figures already saved beside it); the Verdict section is the analysis's verdicts block."""
    pool = analysis["sample_pool"]
    extra_measures = [name for name in analysis["measures"] if name not in analysis["headline_measures"]]
    data_extra = f"; {analysis['num_analysed']} analysed (every score and measure defined)"
    if pool["labelled_images_matching_pattern"] is not None:
        data_extra += (
            f"; the sample list ({pool['mode']}, {pool['per_class']} per class, `{pool['pattern']}`) holds {pool['list_size']} "
            f"of the {pool['labelled_images_matching_pattern']} labelled images that pattern matches"
        )
    results = [
        headline_table(analysis, analysis["headline_measures"]),
        saturation_sentence(analysis),
        "**The difficulty scores** are read from the same logits, so they are not independent replications: the four besides the "
        "primary one are a sensitivity check. Their mutual Spearman ρ and how much of the primary score's easy / hard quartile each shares:",
        score_agreement_table(analysis),
        figure("Spearman ρ of every difficulty score with every complexity measure", "rho_heatmap.png"),
        "Spearman ρ [95 % CI] and p-value (uncorrected) of every score with every measure:",
        rho_table(analysis),
        figure("Complexity by quartile of the primary difficulty score", "quartile_bars.png"),
        partial_check_paragraph(analysis),
        "**Correct vs incorrect.** " + correctness_block(analysis),
        "**Other thresholds** (by quartile of the primary score; their verdicts are in analysis.json's verdicts block):",
        headline_table(analysis, extra_measures),
        figure("The two strongest difficulty–complexity pairs, per image", "strongest_pairs.png"),
    ]
    headline = {f"{name}.hard_minus_easy" for name in analysis["headline_measures"]}
    return ReportDocument(
        title="Experiment 5 — difficulty vs interaction complexity",
        summary=analysis,
        method=method_text(analysis),
        results=results,
        seed_rows=seed_rows(analysis),
        seed_source=f"{analysis['published']['source']}; the original study does not say which difficulty score defines "
        f"its quartiles (ours: {SCORE_LABELS[analysis['settings']['primary_score']]})",
        verdict=[],
        verdicts=[
            entry
            for entry in analysis["verdicts"]
            if entry["id"] in headline or not entry["id"].endswith(".hard_minus_easy")
        ],
        generator="experiment_5.step_3_plot",
        timing=timing,
        data_extra=data_extra,
        source="analysis.json",
        short_answer=short_answer(analysis),
    ).render()
