"""The README's headline table: each question, the original study's answer and this project's, from the JSON.

The original study's answers are its published ResNet-18 numbers, which every summary carries in its
``published`` block (:mod:`experiment_1.report.markdown`); this project's answers are the committed
EfficientNet-Lite0 runs on the embedded sample (:data:`HEADLINE_RUNS`), beside the verdicts of the original study's
claims on every network that decided them (:mod:`paper.claims`), so a claim that holds on one network and fails on
another reads both. A run that is absent reads "not run".
:func:`headline_table` is a README block of :mod:`paper.make_tables` (``<!-- generated:headline -->``), and so is
:func:`figure_reading` (``<!-- generated:figure -->``): Experiment 2's committed spectrum and a reading of it in plain
words, every number from its summary and every finding beside the verdict (by id) it rests on.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from experiment_1.errors import PipelineError
from experiment_1.report import PARTLY_CONTRADICTED, format_number, format_percent, format_stat, network_name
from paper.checks import checked_json
from paper.claims import claim_rows, plain_sentences
from paper.committed_runs import check_inside
from paper.table_model import Block, NotRun, Paragraph, Table

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
QUESTION_CLAIMS = {
    "1": ("1",),
    "2": ("2", "2′"),
    "3A/3B": ("3", "3′"),
    "3": ("4",),
    "4": ("5",),
    "5": ("6",),
    "depth": ("D1", "D1′", "D2"),
}
"""Experiment → the claims (paper/claims.py) whose verdicts, on every network, its row carries."""


def _decision(summary: dict[str, Any], verdict_id: str) -> str:
    entry = next((entry for entry in summary.get("verdicts", []) if entry.get("id") == verdict_id), None)
    return "—" if entry is None else f"**{entry['decision']}**"


def experiment_1_answers(summary: dict[str, Any]) -> tuple[str, str]:
    seed, metrics = summary["published"]["resnet18"], summary["metrics"]
    return (
        f"naive sum off by ~{format_number(seed['naive_sum_rel_error'])}×; Möbius exact to ~{format_number(seed['mobius_rel_error'])}",
        f"naive sum off by {format_number(metrics['naive_sum_rel_error']['mean'])}× (relative error); "
        f"Möbius exact to {format_number(metrics['mobius_rel_error_float32']['mean'])} in float32",
    )


def null_peak_text(summary: dict[str, Any]) -> str:
    """The binomial null's peak order: C(L, k) is largest at L/2, and at both (L ± 1)/2 (tied) for an odd L."""
    blocks = summary.get("config", {}).get("num_blocks")
    if isinstance(blocks, int) and blocks % 2 == 1:
        return f"{(blocks - 1) // 2}/{(blocks + 1) // 2} (tied)"
    return str(summary["binomial_null"]["peak_order"])


def experiment_2_answers(summary: dict[str, Any]) -> tuple[str, str]:
    seed, vector = summary["published"]["resnet18"], summary["projections"]["vector"]
    null = summary["binomial_null"]
    return (
        f"peak at k = {seed['peak_order']}, κ ≈ {format_number(seed['kappa_vector'])}, C≤3 = {format_percent(seed['c_le3'], 0)}",
        f"peak at k = {vector['mean_spectrum_peak_order']}, κ = {format_stat(vector['kappa'])}, C≤3 = {format_stat(vector['c_le3'], percent=True)} "
        f"(binomial null: peak {null_peak_text(summary)}, κ = {format_number(null['kappa'])})",
    )


def experiment_3ab_answers(summary: dict[str, Any]) -> tuple[str, str]:
    seed = summary["published"]["resnet18"]
    rows = summary["per_lambda"]
    first, last = rows[0], rows[-1]
    low, high = seed["agreement_range_lambda_0.8_to_1"]
    near = [row["top1_agreement_with_lambda_1"]["mean"] for row in rows if row["lambda"] >= 0.8]
    return (
        f"κ falls {format_number(seed['kappa_at_lambda_1'])} → {format_number(seed['kappa_at_lambda_0.1'])} as λ → 0.1; "
        f"top-1 {format_percent(low, 0)}–{format_percent(high, 0)} for λ ∈ [0.8, 1]",
        f"κ falls {format_number(first['projections']['vector']['kappa']['mean'])} → {format_number(last['projections']['vector']['kappa']['mean'])} "
        f"as λ → {format_number(last['lambda'])} (monotonic: {'yes' if summary['kappa_monotonic'] else 'no'}); "
        f"top-1 {format_percent(min(near), 0)}–{format_percent(max(near), 0)} for λ ∈ [0.8, 1]",
    )


def experiment_3_answers(summary: dict[str, Any]) -> tuple[str, str]:
    seed = summary["published"]["resnet18"]
    rows = {
        row["quantity"]: row["at_matching_fraction"]
        for row in summary["beside_seed"]["rows"]
        if row["ranking"] == "vector"
    }
    energy, top1, control = (
        rows["captured_energy"],
        rows["top1_agreement_magnitude"],
        rows["top1_agreement_controls_max"],
    )
    return (
        f"Γ_64 ≈ {format_percent(seed['captured_energy_at_64'], 0)}; top-128 gives {format_percent(seed['top1_agreement_magnitude_at_128'], 0)} top-1, "
        f"every control < {format_percent(seed['top1_agreement_controls_below'], 0)}",
        f"Γ at 1/4 of 2^L (K = {energy['k']}) = {format_percent(energy['value']['mean'])}; top-{top1['k']} gives "
        f"{format_percent(top1['value']['mean'])} top-1, "
        f"best control {format_percent(control['value']['mean'])}; sparse: {_decision(summary, 'captured_energy.vector')}",
    )


def experiment_4_answers(summary: dict[str, Any]) -> tuple[str, str]:
    seed = summary["published"]["resnet18"]
    scalar = summary["rankings"]["scalar"]["binary"]["true_label"]
    return (
        f"scalar ranking only: 1-NN {format_percent(seed['nn_accuracy_scalar_k32'])} at K = 32, {format_number(seed['nn_accuracy_over_chance'])}× chance",
        f"scalar 1-NN {format_percent(scalar['tests']['nn_accuracy']['observed'])} (chance {format_percent(scalar['chance'], 2)}, p = "
        f"{format_number(scalar['tests']['nn_accuracy']['p_value'])}); class-aligned: vector {_decision(summary, 'class_alignment.vector')}, "
        f"scalar {_decision(summary, 'class_alignment.scalar')}",
    )


def experiment_5_answers(summary: dict[str, Any]) -> tuple[str, str]:
    seed = summary["published"]["resnet18"]
    return (
        f"mostly null; hard images need ~{format_number(seed['n_eff_vector_hard_minus_easy'])}–{format_number(seed['k_tau_err_hard_minus_easy'])} more experts",
        f"the original study's claim (support broadens, orders unmoved): {_decision(summary, 'seed_claim')}"
        + _contradicted_parts(summary, "seed_claim"),
    )


def depth_answers(summary: dict[str, Any]) -> tuple[str, str]:
    """The depth ladder: the original study's peaks (from the Experiment 2 run's published block) and each rung's."""
    rungs = [rung for rung in summary["rungs"] if rung.get("spectrum")]
    return (
        "the peak moves to higher orders with depth (ResNet-18 → 34); prediction-preserving sparsity weakens with depth",
        "peak at k = "
        + ", ".join(
            f"{rung['spectrum']['mean_spectrum_peak_order']} ({network_name(rung['arch'])} at {rung['input_size']} px, "
            f"L = {rung['num_blocks']})"
            for rung in rungs
        ),
    )


def _contradicted_parts(summary: dict[str, Any], verdict_id: str) -> str:
    """`` — fails on: …`` for a partly contradicted claim (its failing parts, as the verdict stores them), else ``""``."""
    entry = next((entry for entry in summary.get("verdicts", []) if entry.get("id") == verdict_id), None)
    if entry is None or entry["decision"] != PARTLY_CONTRADICTED:
        return ""
    return f" — fails on: {', '.join(entry['parameters'].get('failing_parts', []))}"


QUESTIONS: list[tuple[str, str, Callable[[dict[str, Any]], tuple[str, str]]]] = [
    ("1", "Does naive subset summation reconstruct the output?", experiment_1_answers),
    ("2", "How is Möbius energy spread over interaction orders?", experiment_2_answers),
    ("3A/3B", "Does κ move to low orders as the residuals shrink (λ)?", experiment_3ab_answers),
    ("3", "Is the decomposition sparse in individual subsets?", experiment_3_answers),
    ("4", "Are the dominant subsets input-dependent and class-aligned?", experiment_4_answers),
    ("5", "Does difficulty change which subsets are used?", experiment_5_answers),
    ("depth", "Does the spectrum move with depth?", depth_answers),
]


def headline_table(root: Path) -> list[Block]:
    """One row per question: the original study's answer (ResNet-18), this project's (EfficientNet-Lite0), and the
    verdicts of the question's claims on every network (:data:`QUESTION_CLAIMS`, the claims table's sentences)."""
    rows = []
    sentences = plain_sentences(claim_rows(root))
    for experiment, question, answers in QUESTIONS:
        path = root / HEADLINE_RUNS[experiment]
        folder = path.parent.relative_to(root).as_posix()
        original, ours = (
            answers(checked_json(check_inside(path, root))) if path.exists() or path.is_symlink() else ("—", "not run")
        )
        rows.append(
            [
                experiment,
                question,
                original,
                f"{ours} ([`{folder}`]({folder}/{'REPORT.md' if experiment != 'depth' else path.name}))",
                " ".join(sentences[label] for label in QUESTION_CLAIMS[experiment] if label in sentences) or "—",
            ]
        )
    return [
        Table(
            [
                "#",
                "question",
                "the original study (ResNet-18, N = 10 000)",
                "this project (EfficientNet-Lite0, embedded sample)",
                "the original study's claims, decided on every network (the claims table)",
            ],
            rows,
        )
    ]


FIGURE = "experiment_2/results_efficientnet_lite0_sample/spectrum.png"
"""The README's one figure: Experiment 2's order spectrum of the committed run :data:`HEADLINE_RUNS` ``["2"]``."""


def _verdict(summary: dict[str, Any], verdict_id: str) -> dict[str, Any]:
    entry = next((entry for entry in summary.get("verdicts", []) if entry.get("id") == verdict_id), None)
    if entry is None:
        raise PipelineError(f"{HEADLINE_RUNS['2']}: no verdict '{verdict_id}'; rerun experiment_2.step_2_plot")
    return entry


def claim_text(entry: dict[str, Any]) -> str:
    """A verdict's claim without the projection (and basis) it names first: the figure's sentence names that itself."""
    claim = entry["claim"]
    return claim.split(": ", 1)[1] if claim.startswith(("vector projection", "scalar projection")) else claim


def _tested(summary: dict[str, Any], verdict_id: str, note: int | None = None) -> str:
    """``the claim that … **decision** (verdict `id` — its note)``: a decision only ever beside the claim it decides,
    never beside a plain statement it would seem to contradict."""
    entry = _verdict(summary, verdict_id)
    decision = entry["decision"]
    said = f" — {entry['notes'][note]}" if note is not None and len(entry["notes"]) > abs(note) else ""
    verb = "" if decision in ("holds", "fails") else "reads "
    return f"the claim that {claim_text(entry)} {verb}**{decision}** (verdict `{verdict_id}`{said})"


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
        f"and {_tested(summary, 'walsh.shape.vector', -1)}. The Möbius order energies add up to "
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
            f"(null {format_percent(null['c_le3'])}). Here {_tested(summary, 'peak.vector', 0)}, "
            f"and {_tested(summary, 'shape.vector', -1)}. For the predicted class alone (right), κ = "
            f"{format_stat(scalar['kappa'])}: {_tested(summary, 'shape.scalar', -1)}, and "
            f"{_tested(summary, 'projections_differ')}.{_walsh_control(summary)}"
        ),
    ]
