"""The one claim renderer: the original study's claims against this project's verdicts, and every verdict, worded once.

Question: for each of the six headline claims of the original study (its abstract) and its two depth claims, what does
it report, what do we measure (network, N, CI), and what is the verdict? A :class:`Claim` names the record whose runs
hold its verdicts and the verdict ids (``fnmatch`` patterns); every committed run of that record (trained networks
only unless the claim is about any weights) gives one row per matching verdict entry, so networks that disagree each
show their own row, and runs that read the same are told apart by what differs (paper.wording). Each verdict is worded
by :mod:`paper.wording` from its rule's declaration, every row with the basis and projection it reads its orders in
(:func:`paper.wording.basis_label`): a claim about orders has its Walsh rows and the two bases read together beside the
Möbius ones where the runs decide them ("Möbius only: reverses in the Walsh basis" where they disagree), and a run that
decides it in the Möbius basis alone says so. A claim's one sentence (:func:`claim_sentence`) counts its verdicts by
decision — by decision and basis where its rows read more than one — and names the networks of every decision but the
commonest, and the paper's sentence names the verdicts it rests on. :func:`unreported` names each decided verdict a
claims table lacks and each headline that lacks its claim's sentence. A claim whose summaries carry no matching verdict yet is left out (never a placeholder).

Inputs: each record's committed summaries (paper/experiments.py). Outputs: the claims section of tables.md
(:func:`claims_markdown`), the README's claim sentences (paper.headline), and paper/generated/claims.tex
(``\\ClaimsTable``, ``\\ClaimsTableFull``) and verdicts.tex (``\\VerdictAppendix``, each
record's ``\\VerdictPointer…`` and ``\\VerdictBody…``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from experiment_1.report import BASES, ExperimentRecord, format_number, format_percent, pretty_networks
from paper.checks import checked_json
from paper.committed_runs import committed_file, committed_glob
from paper.experiments import RECORDS, record_of
from paper.macros import follow
from paper.render_latex import latex_text
from paper.table_model import Block, Paragraph, Table
from paper.wording import (
    basis_label,
    basis_of,
    decision_phrase,
    distinguishing_notes,
    entry_of,
    hypothesis_text,
    is_basis_reading,
    network_label,
    number_text,
    run_facts,
    why_text,
)

PUBLISHED = re.compile(r"\{([a-z0-9_./]+)(?:\|(percent))?\}")  # {published/resnet18/key} or {…|percent}


@dataclass(frozen=True)
class Claim:
    """One headline claim of the original study and where its verdicts live."""

    label: str
    """Its number in the claims table: 1 … 6 for the abstract's claims, D1/D2 for depth."""
    statement: str
    """The original study's claim, in words (plain text, the inline language of tables.md)."""
    experiment: int | str
    """The record whose committed runs (its ``summaries`` glob) hold the verdicts."""
    verdict_ids: tuple[str, ...]
    """The verdict ids about this claim, as fnmatch patterns: every matching entry of every run is a row."""
    reported: str
    """What the original study reports: text with ``{published/resnet18/key}`` (``|percent``) taken from the run's
    summary (``reported_from``'s when given)."""
    short: str
    """The claim as a short noun phrase, for its sentence."""
    reported_from: int | str | None = None
    any_weights: bool = False
    """The claim is about any weights (3C's theorem), so random-init runs are rows too; else trained networks only."""
    why: str = ""
    """A regex choosing the notes that say why (default: the seed comparison, the test, else the first note)."""
    measured: str = ""
    """For a verdict decided from its parts (no number of its own): the id of the run's verdict whose number stands
    beside what the original study reports (Experiment 4's scalar 1-NN accuracy beside its 24.2 %)."""
    orders: bool = False
    """The claim is about interaction orders, so it is read in both bases: a run without a Walsh verdict about it says
    its rows are Möbius only."""


CLAIMS: tuple[Claim, ...] = (
    Claim(
        "1",
        "The Möbius sum reconstructs the network exactly; the sum of all subnetworks' outputs does not",
        1,
        ("naive.misses", "mobius.exact"),
        "naive-sum rel. error ≈ {published/resnet18/naive_sum_rel_error} (ResNet-18)",
        "that summing subnetworks does not reconstruct the network",
    ),
    Claim(
        "2",
        "Interaction mass peaks at a middle order, with no low-order bias (Möbius basis)",
        2,
        ("middle_peak.vector",),
        "peak at order {published/resnet18/peak_order} (ResNet-18), {published/resnet34/peak_order} (ResNet-34)",
        "a middle-order peak of interaction mass with no low-order bias (Möbius basis)",
        why=r"^per-image peak order|low-order bias",
        orders=True,
    ),
    Claim(
        "2′",
        "The peak is shifted beyond subset counting's (the binomial null's tied peak; Möbius basis)",
        2,
        ("peak.vector", "walsh.peak.vector"),
        "peak at order {published/resnet18/peak_order} of L = 8 (ResNet-18), {published/resnet34/peak_order} of L = 16 "
        "(ResNet-34); subset counting peaks at L/2",
        "a peak shifted beyond subset counting's",
        orders=True,
    ),
    Claim(
        "3",
        "Shrinking the residual branches (λ < 1) shifts the spectrum to low orders",
        "3A/3B",
        ("migration.vector", "walsh.migration.vector", "basis.migration.vector"),
        "κ = {published/resnet18/kappa_at_lambda_1} at λ = 1, {published/resnet18/kappa_at_lambda_0.1} at λ = 0.1",
        "a shift to low orders under residual scaling",
        orders=True,
    ),
    Claim(
        "3′",
        "Each k-way interaction scales as λ^k as λ → 0 (a theorem for smooth residual stacks)",
        "3C",
        ("exp3c.*.lambda_k",),
        "slope k at order k (the theorem)",
        "the λ^k law in the small-λ limit",
        any_weights=True,
        why=r"^(holds|fails|cannot tell) at k",
        orders=True,
    ),
    Claim(
        "4",
        "The coefficients are concentrated in magnitude but not hard sparse",
        3,
        ("captured_energy.vector",),
        "Γ_64 ≈ {published/resnet18/captured_energy_at_64|percent} of 256 subsets (ResNet-18)",
        "concentration of the coefficients as high as reported",
    ),
    Claim(
        "5",
        "The dominant interactions vary across inputs and predicted classes around a shared global core",
        4,
        ("seed_claim",),
        "1-NN {published/resnet18/nn_accuracy_scalar_k32|percent}, {published/resnet18/nn_accuracy_over_chance}× chance (scalar)",
        "class-aligned expert sets in the predicted-class projection only",
        measured="class_alignment.scalar",
    ),
    Claim(
        "6",
        "Their overall complexity changes little with sample difficulty",
        5,
        ("seed_claim", "kappa_vector.hard_minus_easy", "walsh_kappa_vector.hard_minus_easy", "kappa_vector.basis"),
        "N_eff^v hard − easy ≈ {published/resnet18/n_eff_vector_hard_minus_easy}",
        "difficulty broadening the support without moving the orders",
        measured="n_eff_vector.hard_minus_easy",
        orders=True,
    ),
    Claim(
        "D1",
        "The interaction peak moves to higher orders with depth",
        "depth",
        ("peak_order.depth.*",),
        "peak {published/resnet18/peak_order} → {published/resnet34/peak_order} (ResNet-18 → 34)",
        "a peak order growing with depth",
        reported_from=2,
        why="binomial null",
        orders=True,
    ),
    Claim(
        "D1′",
        "On a common scale the peak moves beyond the binomial null's with depth (peak − L/2, κ^v / L)",
        "depth",
        ("peak_minus_null.depth.*", "kappa_over_l.depth.*", "walsh_kappa_over_l.depth.*", "kappa_over_l.basis.*"),
        "not reported (the study compares raw peak orders)",
        "a peak beyond the binomial null's growing with depth",
        reported_from=2,
        orders=True,
    ),
    Claim(
        "D2",
        "Prediction-preserving sparsity weakens with depth",
        "depth",
        ("preserving_fraction.depth.*",),
        "reported, without a number in the abstract",
        "sparsity weakening with depth",
        reported_from=2,
    ),
)


@dataclass(frozen=True)
class ClaimRow:
    """One verdict of a claim on one run."""

    claim: Claim
    reported: str
    network: str
    """The run's network as a reader knows it (paper.wording.network_label)."""
    variant: str
    """What tells the verdict from the run's other verdicts about the claim (native, smooth), else ""."""
    facts: str
    """What tells the run from another that reads the same (`` (seed 1; λ ≥ 1.00e-04)``), else ""."""
    images: str
    entry: dict[str, Any]
    measured: dict[str, Any] | None = None
    """The verdict whose number the row shows when ``entry`` has none (:attr:`Claim.measured`)."""
    basis: str = ""
    """The basis and projection the verdict reads its orders in (paper.wording.basis_label), `` (no Walsh verdict of this
    claim in this run)`` added for a claim about orders on a run that decides it in the Möbius basis alone."""

    @property
    def label(self) -> str:
        return self.network + (f", {self.variant}" if self.variant else "") + self.facts

    @property
    def decision(self) -> str:
        return self.entry["decision"]

    @property
    def phrase(self) -> str:
        return decision_phrase(self.decision, self.entry)

    @property
    def based_phrase(self) -> str:
        """The decision with the basis it was reached in (``not confirmed (Walsh)``); a basis verdict's own words
        (``Möbius only: reverses in the Walsh basis``)."""
        if is_basis_reading(self.entry):
            return basis_of(self.entry)
        return f"{self.phrase} ({basis_of(self.entry)})"

    @property
    def number(self) -> str:
        return pretty_networks(number_text(self.measured or self.entry))

    @property
    def why(self) -> str:
        return pretty_networks(why_text(self.entry, self.claim.why))


def reported_text(claim: Claim, summary: dict[str, Any]) -> str:
    """The claim's ``reported`` with each ``{published…}`` path filled from ``summary``."""

    def fill(match: re.Match[str]) -> str:
        value = follow(summary, tuple(match.group(1).split("/")))
        return format_percent(value) if match.group(2) else format_number(value)

    return PUBLISHED.sub(fill, claim.reported)


def claim_runs(root: Path, claim: Claim) -> list[tuple[Path, dict[str, Any]]]:
    """Every committed run the claim is about: each summary of its record (every network), trained ones only unless the
    claim is about any weights; a summary of another experiment, or without a verdicts list, is skipped."""
    record = record_of(claim.experiment)
    runs = []
    for path in committed_glob(root, record.summaries):
        summary = checked_json(path)
        if "partial" in path.parts or not isinstance(summary, dict) or not isinstance(summary.get("verdicts"), list):
            continue
        config = summary.get("config") if isinstance(summary.get("config"), dict) else {}
        trained_only = config.get("weights") == "random" and not claim.any_weights
        if summary.get("experiment") == record.experiment and not trained_only:
            runs.append((path, summary))
    return runs


def variants(ids: list[str]) -> list[str]:
    """What tells matched verdicts of one run apart: the dot-separated parts of their ids that differ
    (``exp3c.native.lambda_k``, ``exp3c.smooth.lambda_k`` → native, smooth); empty for a single id."""
    parts = [verdict_id.split(".") for verdict_id in ids]
    if len(parts) < 2 or len({len(split) for split in parts}) != 1:
        return [""] * len(ids)
    differing = [index for index in range(len(parts[0])) if len({split[index] for split in parts}) > 1]
    return [" ".join(split[index].replace("_", " ") for index in differing) for split in parts]


def claim_verdicts(summary: dict[str, Any], claim: Claim) -> list[tuple[dict[str, Any], str, str]]:
    """(entry, network, variant) of each verdict of ``summary`` whose id matches one of the claim's, in the block's order
    (none is dropped for another)."""
    matched = [entry for entry in summary["verdicts"] if any(fnmatchcase(entry["id"], p) for p in claim.verdict_ids)]
    return [
        (entry, pretty_networks(network_label(summary, entry)), variant)
        for entry, variant in zip(matched, variants([entry["id"] for entry in matched]))
    ]


def images_of(summary: dict[str, Any], entry: dict[str, Any]) -> str:
    """N of the run; of a paired comparison (the depth ladder, no network of its own), its shared images — for a verdict
    that reads two others (the basis verdict), those of a verdict on the same pair (its id's last part)."""
    config = summary.get("config")
    if isinstance(config, dict) and "arch" in config:
        return str(summary.get("num_valid", "—"))
    pair = str(entry.get("id", "")).rsplit(".", 1)[-1]
    siblings = [other for other in summary["verdicts"] if str(other.get("id", "")).rsplit(".", 1)[-1] == pair]
    return format_number(
        next(
            ((other.get("statistic") or {}).get("value") for other in [entry, *siblings] if other.get("statistic")),
            None,
        )
    )


def claim_rows(root: Path, claims: tuple[Claim, ...] = CLAIMS) -> list[ClaimRow]:
    """Every row, in the claims' order: per claim, each of its runs (:func:`claim_runs`) and each matching verdict; a
    run whose label reads as another's is told apart by what differs (:func:`paper.wording.distinguishing_notes`)."""
    rows = []
    for claim in claims:
        source = (
            committed_file(root, record_of(claim.reported_from).primary) if claim.reported_from is not None else None
        )
        found = []
        for _, summary in claim_runs(root, claim):
            published = (  # the original study's numbers: absent ("—") from a checkout without the run that carries them
                checked_json(source) if source is not None and source.is_file() else summary
            )
            reported = reported_text(claim, published) if "published" in published or "{" not in claim.reported else "—"
            matched = claim_verdicts(summary, claim)
            mobius_only = claim.orders and all(basis_of(entry) == BASES["mobius"] for entry, _, _ in matched)
            for entry, network, variant in matched:
                measured = entry_of(summary, claim.measured) if claim.measured and number_text(entry) == "—" else None
                basis = basis_label(entry) + (" (no Walsh verdict of this claim in this run)" if mobius_only else "")
                row = ClaimRow(
                    claim,
                    reported,
                    network,
                    variant,
                    "",
                    images_of(summary, entry),
                    entry,
                    measured=measured,
                    basis=basis,
                )
                found.append((run_facts(summary), row))
        notes = distinguishing_notes(
            [f"{row.label}, N = {row.images}" for _, row in found], [facts for facts, _ in found]
        )
        rows += [replace(row, facts=note) for (_, row), note in zip(found, notes)]
    return rows


def claim_sentence(rows: list[ClaimRow]) -> str:
    """A claim's one sentence: its commonest decision counted over its rows (``confirmed on 2 of 4 networks``), every
    other decision with the networks it was reached on — each decision with its basis where the rows read more than one
    (``not confirmed (Walsh)``, a basis verdict's ``Möbius only: reverses in the Walsh basis``)."""
    claim = rows[0].claim
    runs = list(dict.fromkeys(row.network + row.facts for row in rows))
    networks = len({row.network for row in rows})
    mixed = len({basis_of(row.entry) for row in rows}) > 1
    phrases = [row.based_phrase if mixed else row.phrase for row in rows]
    (common, count), *others = Counter(phrases).most_common()

    def named(phrase: str) -> str:  # where the phrase carries the basis, the run (the verdict's id part is its basis)
        labels = (row.network + row.facts if mixed else row.label for row, said in zip(rows, phrases) if said == phrase)
        return f"{phrase} on " + ", ".join(dict.fromkeys(labels))

    if not others:
        unit = "networks" if networks == len(runs) else "runs"
        said = f"{common} on {runs[0]}" if len(runs) == 1 else f"{common} on {len(runs)} of {len(runs)} {unit}"
    else:
        unit = "networks" if len(runs) == len(rows) == networks else "verdicts"
        said = f"{common} on {count} of {len(rows)} {unit}" if count > 1 else named(common)
        said += "".join(f"; {named(phrase)}" for phrase, _ in others)
    return f"Claim {claim.label}, {claim.short}: {said}."


def by_claim(rows: list[ClaimRow]) -> dict[str, list[ClaimRow]]:
    """Claim label → its rows, in the claims' order."""
    grouped: dict[str, list[ClaimRow]] = {}
    for row in rows:
        grouped.setdefault(row.claim.label, []).append(row)
    return grouped


def plain_sentences(rows: list[ClaimRow]) -> dict[str, str]:
    """Claim label → its sentence (plain text), for every decided claim."""
    return {label: claim_sentence(group) for label, group in by_claim(rows).items()}


DECIDED = ("holds", "fails", "consistent (post hoc)")
"""The decisions :func:`unreported` requires every claims table to carry (a claim is decided by them)."""


def unreported(
    root: Path, rows: list[ClaimRow], headlines: dict[str, str], claims: tuple[Claim, ...] = CLAIMS
) -> list[str]:
    """Each decided verdict about a claim, in any committed summary of its record, that ``rows`` lack (claim label,
    network, decision), and each headline text that lacks a claim's sentence as the committed verdicts give it; one line
    each, naming the summary and the verdict, or the claim, and where it is missing."""
    missing = []
    for claim in claims:
        for path, summary in claim_runs(root, claim):
            for entry, network, variant in claim_verdicts(summary, claim):
                decided = (claim.label, network, variant, entry["decision"])
                if entry["decision"] in DECIDED and decided not in {
                    (row.claim.label, row.network, row.variant, row.decision) for row in rows
                }:
                    where = network + (f", {variant}" if variant else "")
                    missing.append(
                        f"{path.relative_to(root).as_posix()}: {entry['id']} ({entry['decision']}, {where}), "
                        f"claim {claim.label}: not in the claims table"
                    )
        current = claim_rows(root, (claim,))
        for name, text in headlines.items():
            if current and claim_sentence(current) not in text:
                missing.append(f"claim {claim.label}: {name} lacks its sentence {claim_sentence(current)!r}")
    return missing


def claims_markdown(root: Path) -> list[Block]:
    """The claims section of tables.md: per claim, its statement and what the original study reports, its sentence,
    then one row per network and verdict with the number and the reason."""
    blocks: list[Block] = []
    for label, group in by_claim(claim_rows(root)).items():
        claim = group[0].claim
        said = claim_sentence(group).split(": ", 1)[1]
        blocks += [
            Paragraph(f"**Claim {label}.** {claim.statement}. The original study reports {group[0].reported}."),
            Paragraph(f"Here: {said}"),
            Table(
                ["network, N", "basis, projection", "our number [95 % CI]", "verdict", "why"],
                [
                    [f"{row.label}, N = {row.images}", row.basis, row.number, f"**{row.decision}**", row.why]
                    for row in group
                ],
            ),
        ]
    return blocks


def _longtable(columns: tuple[float, ...], header: str, lines: list[str], caption: str = "") -> str:
    """A longtable (it may break across a page, never shrinks) of ragged-right columns, its header on every page."""
    spec = "".join(rf">{{\raggedright\arraybackslash}}p{{{width}\linewidth}}" for width in columns)
    head = rf"\toprule {header} \\ \midrule"
    return "\n".join(
        [
            rf"\begin{{longtable}}{{@{{}}{spec}@{{}}}}",
            *([caption + r"\\", head + r"\endfirsthead"] if caption else []),
            head + r"\endhead",
            r"\bottomrule\endlastfoot",
            *lines,
            r"\end{longtable}",
        ]
    )


def footnotesize(body: str) -> str:
    return rf"\begin{{footnotesize}}\setlength{{\tabcolsep}}{{3pt}}{body}\end{{footnotesize}}"


CAPTION = (
    r"\caption{The original study's headline claims (1--6, its abstract) and depth claims (D1, D2): what it reports "
    r"beside what we measure and decide, per claim one row per decision with each network's number (mean, 95\,\% CI) "
    r"and $N$ (Lite$n$: EfficientNet-Lite$n$). Generated from the verdict blocks of the committed summaries; the supplement gives every row's reason, "
    r"and every verdict with its rule.}\label{tab:claims}"
)


def measured_text(rows: list[ClaimRow]) -> str:
    """The numbers of one decision's rows, grouped by what they measure: the quantity (and the verdict's variant) named
    once, then each run's ``network (N = …) value [CI]`` (``per-image peak order: EfficientNet-Lite1 (N = 24) 8.08 [8,
    8.21]; …``)."""
    groups: dict[str, list[str]] = {}
    for row in rows:
        quantity, _, value = row.number.rpartition(": ")
        measure = ", ".join(part for part in (quantity, row.variant) if part)
        groups.setdefault(measure, []).append(f"{row.network}{row.facts} (N = {row.images}) {value}".strip())
    text = "; ".join((f"{measure}: " if measure else "") + ", ".join(runs) for measure, runs in groups.items())
    return text.replace("EfficientNet-Lite", "Lite")


def compact_table_tex(rows: list[ClaimRow]) -> str:
    """The body's claims table: per claim, what the original study reports, and one row per decision and basis (with its
    projection) with the number each run measured (:func:`measured_text`); the reasons are in :func:`full_table_tex`."""
    lines = []
    for label, group in by_claim(rows).items():
        decisions: dict[tuple[str, str], list[ClaimRow]] = {}
        for row in group:
            decisions.setdefault((row.decision, row.basis), []).append(row)
        for index, ((decision, basis), decided) in enumerate(decisions.items()):
            first = [latex_text(cell) for cell in (label, group[0].claim.statement, group[0].reported)]
            said = [rf"\textbf{{{latex_text(decision)}}}", latex_text(basis), latex_text(measured_text(decided))]
            lines.append(" & ".join([*(first if index == 0 else ["", "", ""]), *said]) + r" \\")
    header = (
        r"\# & the original study's claim & it reports & verdict & basis, projection & we measure (network, $N$): "
        r"mean [95\,\% CI]"
    )
    return footnotesize(_longtable((0.03, 0.17, 0.11, 0.09, 0.13, 0.4), header, lines, CAPTION))


def full_table_tex(rows: list[ClaimRow]) -> str:
    """The supplement's claims table: every row with its number and reason."""
    lines = []
    for label, group in by_claim(rows).items():
        for index, row in enumerate(group):
            first = [latex_text(cell) for cell in (label, row.claim.statement, row.reported)]
            cells = [latex_text(text) for text in (f"{row.label}, N = {row.images}", row.basis, row.number)]
            cells += [rf"\textbf{{{latex_text(row.decision)}}}", latex_text(row.why)]
            lines.append(" & ".join([*(first if index == 0 else ["", "", ""]), *cells]) + r" \\")
    header = (
        r"\# & the original study's claim & it reports & here: network, $N$ & basis, projection & our number "
        r"[95\,\% CI] & verdict & why"
    )
    caption = (
        r"\caption{The original study's headline claims (1--6, its abstract) and depth claims (D1, D2) against this "
        r"project's verdicts. Every row with its number and reason; generated from the verdict blocks of the committed "
        r"summaries.}\label{tab:claimsfull}"
    )
    return footnotesize(_longtable((0.03, 0.15, 0.11, 0.12, 0.1, 0.16, 0.09, 0.13), header, lines, caption))


def claims_tex(root: Path, claims: tuple[Claim, ...] = CLAIMS) -> str:
    """The whole of paper/generated/claims.tex: both claims tables (``\\ClaimsTable`` in the body,
    ``\\ClaimsTableFull`` in the supplement); each results section's paragraph against the original study is written
    by hand, its finding sentences naming their verdicts (paper.findings)."""
    rows = claim_rows(root, claims)
    return (
        "% Generated by `python -m paper.make_tables` from the summaries' verdicts blocks (paper/claims.py); do not edit by hand.\n"
        f"\\newcommand{{\\ClaimsTable}}{{{compact_table_tex(rows)}}}\n"
        f"\\newcommand{{\\ClaimsTableFull}}{{{full_table_tex(rows)}}}\n"
    )


def verdicts_body(summary: dict[str, Any]) -> str:
    """One run's verdicts as a longtable — claim, effect or statistic, test, decision, the number of its rule — and its
    rules, each stated once; "" when the summary has no verdicts list."""
    verdicts = summary.get("verdicts")
    if not isinstance(verdicts, list) or not verdicts:
        return ""
    rules = list(dict.fromkeys(entry["rule"] for entry in verdicts))
    lines = [
        " & ".join(
            latex_text(pretty_networks(text)) for text in (entry["claim"], number_text(entry), hypothesis_text(entry))
        )
        + rf" & \textbf{{{latex_text(entry['decision'])}}} & {rules.index(entry['rule']) + 1} \\"
        for entry in verdicts
    ]
    header = r"claim & effect or statistic [95\,\% CI] & test & decision & rule"
    table = _longtable((0.33, 0.3, 0.17, 0.11, 0.04), header, lines)
    listed = "\n".join(rf"\item {latex_text(rule)}" for rule in rules)
    return (
        table
        + "\n"
        + r"\noindent Rules:\nopagebreak\begin{enumerate}\setlength{\itemsep}{0pt}"
        + f"\n{listed}\n\\end{{enumerate}}"
    )


def record_runs(root: Path, record: ExperimentRecord) -> list[tuple[Path, dict[str, Any]]]:
    return [(path, checked_json(path)) for path in committed_glob(root, record.primary)]


def verdicts_tex(root: Path, records: tuple[ExperimentRecord, ...] = RECORDS) -> str:
    """The whole of paper/generated/verdicts.tex: ``\\VerdictAppendix`` (a subsection per record whose paper runs carry
    verdicts, a compact table per run), and per record ``\\VerdictPointer…`` (the sentence a results section ends with:
    where its verdicts are) and ``\\VerdictBody…`` (its paper run's table, for a section whose result is its verdicts)."""
    parts, pointers, bodies = [], [], []
    for record in records:
        runs = [(summary, body) for _, summary in record_runs(root, record) if (body := verdicts_body(summary))]
        if runs:
            parts.append(rf"\subsection{{{latex_text(record.title)}}}\label{{app:verdicts-{record.macro}}}")
        for summary, body in runs:
            config = summary.get("config") if isinstance(summary.get("config"), dict) else {}
            heading = (
                f"{network_label(summary)}, N = {summary.get('num_valid', '—')}"
                if "arch" in config
                else "the depth ladder (paired images of each step)"
            )
            parts.append(rf"\paragraph{{{latex_text(heading)}.}}" + f"\n{footnotesize(body)}")
        pointer = (
            rf"Every verdict of this section, with its decision rule, is listed in the supplement, Section~\ref{{S-app:verdicts-{record.macro}}}."
            if runs
            else ""
        )
        pointers.append(rf"\newcommand{{\VerdictPointer{record.macro}}}{{{pointer}}}")
        bodies.append(rf"\newcommand{{\VerdictBody{record.macro}}}{{{footnotesize(runs[0][1]) if runs else ''}}}")
    lines = [
        "% Generated by `python -m paper.make_tables` from the summaries' verdicts blocks (paper/claims.py); do not edit by hand.",
        *pointers,
        *bodies,
        r"\newcommand{\VerdictAppendix}{%",
        *parts,
        "}",
    ]
    return "\n".join(lines) + "\n"
