"""The README's headline table: each question, the original study's answer and this project's, from the JSON.

The original study's answers are its published ResNet-18 numbers, which every summary carries in its
``published`` block (:mod:`experiment_1.report.markdown`); this project's answers are the committed
EfficientNet-Lite0 runs on the embedded sample (:data:`HEADLINE_RUNS`), and beside them each of the question's claims
in its one sentence over every network that decided it (:func:`paper.claims.claim_sentence`, a row per claim), so a
claim that holds on one network and fails on another reads both. A run that is absent reads "not run".
:func:`headline_table` is a README block of :mod:`paper.make_tables` (``<!-- generated:headline -->``), and so is
:func:`figure_reading` (``<!-- generated:figure -->``): Experiment 2's committed spectrum and a reading of it in plain
words, every number from its summary and every finding beside the verdict (by id) it rests on (:func:`paper.wording.decided_claim`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from experiment_1.errors import PipelineError
from experiment_1.report import format_number, format_percent, format_stat, network_name
from experiment_5.formatting import difference_cell, measure_label
from paper.checks import checked_json
from paper.claims import claim_rows, plain_sentences
from paper.committed_runs import check_inside
from paper.depth_ladder import null_peak_text
from paper.table_model import Block, Cell, NotRun, Paragraph, Table, cell_text
from paper.tables import seed_fraction
from paper.wording import decided_claim

HEADLINE_RUNS = {
    "1": "experiment_1/results_efficientnet_lite0_sample/summary.json",
    "2": "experiment_2/results_efficientnet_lite0_sample/summary.json",
    "3A/3B": "experiment_2/results_lambda_efficientnet_lite0_sample/summary_all.json",
    "3": "experiment_3/results_efficientnet_lite0_sample/summary.json",
    "4": "experiment_4/results_efficientnet_lite0_sample/overlap.json",
    "5": "experiment_5/results_efficientnet_lite0_sample/analysis.json",
    "depth": "paper/results_depth_efficientnet_lite_sample/depth.json",
}
"""Experiment → the committed run whose answer the README shows."""


def experiment_2_answer(summary: dict[str, Any]) -> str:
    null = summary["binomial_null"]
    ours = "peak at k = {projections[vector][mean_spectrum_peak_order]}, κ = {projections[vector][kappa]:stat}, C≤3 = "
    return cell_text(ours + "{projections[vector][c_le3]:stat%}", summary) + (
        f" (binomial null: peak {null_peak_text(null['num_blocks'])}, κ = {format_number(null['kappa'])})"
    )


def experiment_3ab_answer(summary: dict[str, Any]) -> str:
    rows = summary["per_lambda"]
    near = [row["top1_agreement_with_lambda_1"]["mean"] for row in rows if row["lambda"] >= 0.8]
    kappa = [format_number(row["projections"]["vector"]["kappa"]["mean"]) for row in (rows[0], rows[-1])]
    return (
        f"κ falls {kappa[0]} → {kappa[1]} as λ → {format_number(rows[-1]['lambda'])} (monotonic: "
        f"{'yes' if summary['kappa_monotonic'] else 'no'}); top-1 {format_percent(min(near), 0)}–"
        f"{format_percent(max(near), 0)} for λ ∈ [0.8, 1]"
    )


def experiment_3_answer(summary: dict[str, Any]) -> str:
    parts = (
        ("captured_energy", "Γ at 1/4 of 2^L (K = {k}) = {value[mean]:%}"),
        ("top1_agreement_magnitude", "top-{k} gives {value[mean]:%} top-1"),
        ("top1_agreement_controls_max", "best control {value[mean]:%}"),
    )
    return "; ".join(seed_fraction(quantity, cell)(summary) for quantity, cell in parts)


def experiment_5_answer(summary: dict[str, Any]) -> str:
    quartiles = summary["quartiles"][summary["settings"]["primary_score"]]["measures"]
    return "hard − easy quartile: " + ", ".join(
        f"{measure_label(measure)} {difference_cell(quartiles[measure]['hard_minus_easy'], measure)}"
        for measure in ("n_eff_vector", "k_err", "kbar_scalar")
    )


def depth_answer(summary: dict[str, Any]) -> str:
    """Each rung's peak, with its network, input size and L."""
    rungs = [rung for rung in summary["rungs"] if rung.get("spectrum")]
    peaks = (
        f"{rung['spectrum']['mean_spectrum_peak_order']} ({network_name(rung['arch'])} at {rung['input_size']} px, "
        f"L = {rung['num_blocks']})"
        for rung in rungs
    )
    return "peak at k = " + ", ".join(peaks)


SEED = "published[resnet18]"
QUESTIONS: tuple[tuple[str, str, tuple[str, ...], Cell, Cell], ...] = (
    (
        "1",
        "Does naive subset summation reconstruct the output?",
        ("1",),
        f"naive sum off by ~{{{SEED}[naive_sum_rel_error]:num}}×; Möbius exact to ~{{{SEED}[mobius_rel_error]:num}}",
        "naive sum off by {metrics[naive_sum_rel_error][mean]:num}× (relative error); Möbius exact to "
        "{metrics[mobius_rel_error_float32][mean]:num} in float32",
    ),
    (
        "2",
        "How is Möbius energy spread over interaction orders?",
        ("2", "2′"),
        f"peak at k = {{{SEED}[peak_order]}}, κ ≈ {{{SEED}[kappa_vector]:num}}, C≤3 = {{{SEED}[c_le3]:%0}}",
        experiment_2_answer,
    ),
    (
        "3A/3B",
        "Does κ move to low orders as the residuals shrink (λ)?",
        ("3", "3′"),
        f"κ falls {{{SEED}[kappa_at_lambda_1]:num}} → {{{SEED}[kappa_at_lambda_0.1]:num}} as λ → 0.1; top-1 "
        f"{{{SEED}[agreement_range_lambda_0.8_to_1][0]:%0}}–{{{SEED}[agreement_range_lambda_0.8_to_1][1]:%0}} for λ ∈ [0.8, 1]",
        experiment_3ab_answer,
    ),
    (
        "3",
        "Is the decomposition sparse in individual subsets?",
        ("4",),
        f"Γ_64 ≈ {{{SEED}[captured_energy_at_64]:%0}}; top-128 gives {{{SEED}[top1_agreement_magnitude_at_128]:%0}} "
        f"top-1, every control < {{{SEED}[top1_agreement_controls_below]:%0}}",
        experiment_3_answer,
    ),
    (
        "4",
        "Are the dominant subsets input-dependent and class-aligned?",
        ("5",),
        f"scalar ranking only: 1-NN {{{SEED}[nn_accuracy_scalar_k32]:%}} at K = 32, {{{SEED}[nn_accuracy_over_chance]:num}}× "
        "chance",
        "scalar 1-NN {rankings[scalar][binary][true_label][tests][nn_accuracy][observed]:%} (chance "
        "{rankings[scalar][binary][true_label][chance]:%2}, p = {rankings[scalar][binary][true_label][tests][nn_accuracy][p_value]:num})",
    ),
    (
        "5",
        "Does difficulty change which subsets are used?",
        ("6",),
        f"mostly null; hard images need ~{{{SEED}[n_eff_vector_hard_minus_easy]:num}}–{{{SEED}[k_tau_err_hard_minus_easy]:num}} "
        "more experts",
        experiment_5_answer,
    ),
    (
        "depth",
        "Does the spectrum move with depth?",
        ("D1", "D1′", "D2"),
        "the peak moves to higher orders with depth (ResNet-18 → 34); prediction-preserving sparsity weakens with depth",
        depth_answer,
    ),
)
"""Per question: its experiment (:data:`HEADLINE_RUNS`), its words, the claims (paper/claims.py) whose sentences its
rows carry, the original study's answer and this project's (each a cell of :data:`paper.table_model.CELLS`, filled
from the run's summary)."""


def headline_table(root: Path) -> list[Block]:
    """One row per question — the original study's answer (ResNet-18) and this project's (EfficientNet-Lite0) — with
    its first claim's sentence, and a row per further claim of the question."""
    rows = []
    sentences = plain_sentences(claim_rows(root))
    for experiment, question, claims, original, ours in QUESTIONS:
        path = root / HEADLINE_RUNS[experiment]
        folder = path.parent.relative_to(root).as_posix()
        summary = checked_json(check_inside(path, root)) if path.exists() or path.is_symlink() else None
        original, ours = (cell_text(original, summary), cell_text(ours, summary)) if summary else ("—", "not run")
        said = [sentences[label] for label in claims if label in sentences] or ["—"]
        link = f"[{'REPORT' if experiment != 'depth' else path.name}]({folder}/{'REPORT.md' if experiment != 'depth' else path.name})"
        rows.append([experiment, question, original, f"{ours} ({link})", said[0]])
        rows += [["", "", "", "", sentence] for sentence in said[1:]]
    header = [
        "#",
        "question",
        "the original study (ResNet-18, N = 10 000)",
        "this project (EfficientNet-Lite0, embedded sample)",
        "the original study's claims, decided on every network (tables.md has each network's number)",
    ]
    return [Table(header, rows)]


FIGURE = "experiment_2/results_efficientnet_lite0_sample/spectrum.png"
"""The README's one figure: Experiment 2's order spectrum of the committed run :data:`HEADLINE_RUNS` ``["2"]``."""


def _decided(summary: dict[str, Any], verdict_id: str, note: int | None = None) -> str:
    """:func:`paper.wording.decided_claim`, or one line naming the run that lacks the verdict."""
    try:
        return decided_claim(summary, verdict_id, note)
    except KeyError:
        raise PipelineError(
            f"{HEADLINE_RUNS['2']}: no verdict '{verdict_id}'; rerun experiment_2.step_2_plot"
        ) from None


def _walsh_control(summary: dict[str, Any]) -> str:
    """The Walsh control's sentences (empty for a run evaluated before the control)."""
    if "walsh" not in summary:
        return ""
    walsh = summary["walsh"]["projections"]["vector"]
    cancellation = summary["walsh"]["cancellation_ratio"]["vector"]
    return (
        " The Walsh control reads the same masks in the ±1 basis, whose order shares split the variance of the logits "
        "over random masks, so corrections that cancel one another cannot inflate them: there orders 1–3 hold "
        f"{format_stat(walsh['c_le3'], percent=True)} of the vector's variance and κ_W = {format_stat(walsh['kappa'])}, "
        f"and {_decided(summary, 'walsh.shape.vector', -1)}. The Möbius order energies add up to "
        f"{format_stat(cancellation)} times ‖h(full) − h(∅)‖², the squared change the corrections sum to: they largely "
        "cancel one another, which the Möbius shares count and the Walsh shares do not."
    )


def figure_reading(root: Path) -> list[Block]:
    """The README's figure (:data:`FIGURE`) and what it shows, in plain words, from the run's summary."""
    path = root / HEADLINE_RUNS["2"]
    if not (path.exists() or path.is_symlink()) or not (root / FIGURE).exists():
        return [NotRun("No committed Experiment 2 run yet: no figure.")]
    summary = checked_json(check_inside(path, root))
    config, null = summary["config"], summary["binomial_null"]
    vector, scalar = summary["projections"]["vector"], summary["projections"]["scalar"]
    folder = Path(FIGURE).parent.as_posix()
    return [
        Paragraph(f"![The interaction-order spectrum of {config['arch']} on {summary['num_valid']} images]({FIGURE})"),
        Paragraph(
            f"*Reading the figure* ([`{folder}`]({folder}/REPORT.md)). The network is {config['arch']} with "
            f"{config['weights']} weights and L = {null['num_blocks']} gated blocks, on {summary['num_valid']} images of "
            "the embedded sample. Each bar is the share of its Möbius energy — how much its logits owe to blocks acting "
            "together — in interactions of exactly k blocks (mean over images, 95 % CI). The dashed line is what "
            "counting the subsets of each size alone gives (the binomial null); the grey line is the same network "
            "with random weights. For the whole logit vector (left), the energy peaks at "
            f"k = {vector['mean_spectrum_peak_order']} with mean order κ = {format_stat(vector['kappa'])} against the "
            f"null's {format_number(null['kappa'])}, and orders 1–3 hold {format_stat(vector['c_le3'], percent=True)} "
            f"(null {format_percent(null['c_le3'])}). Here {_decided(summary, 'peak.vector', 0)}, "
            f"and {_decided(summary, 'shape.vector', -1)}. For the predicted class alone (right), κ = "
            f"{format_stat(scalar['kappa'])}: {_decided(summary, 'shape.scalar', -1)}, and "
            f"{_decided(summary, 'projections_differ')}.{_walsh_control(summary)}"
        ),
    ]
