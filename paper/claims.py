"""The original study's headline claims against this project's verdicts: the claims table and the abstract's findings.

Question: for each of the six headline claims of the original study (its abstract, /work/shared/seeds) and its
two depth claims, what does it report, what do we measure (network, N, CI), and what is the verdict?
A :class:`Claim` names the record whose runs hold its verdicts and the verdict ids (``fnmatch`` patterns) in their
``verdicts`` blocks; every committed run of that record (every network; trained networks only unless the claim is
about any weights) gives one row per matching verdict entry (schema: experiment_1/report/verdicts.py), so networks
that disagree each show their own row and the abstract splits its sentence by decision and network — never
"confirmed" from one network while another contradicts. :func:`unreported` walks every committed summary and names
each decided verdict about a claim that its rows or a headline text lack. A claim whose summaries carry no matching
verdict yet is left out of both (never a placeholder); :func:`undecided` names them for the build log.

Inputs: each record's ``primary`` summary (paper/experiments.py). Outputs: ``\\ClaimsTable`` (a longtable)
and ``\\ClaimsAbstract`` (one sentence per decided claim) in paper/generated/claims.tex.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from experiment_1.network import native_input_size
from experiment_1.report import format_number, format_percent, network_name, pretty_networks
from paper.checks import checked_json
from paper.committed_runs import check_inside, committed_glob
from paper.experiments import record_of
from paper.macros import follow
from paper.render_latex import latex_text
from paper.table_model import Table

PUBLISHED = re.compile(r"\{([a-z0-9_./]+)(?:\|(percent))?\}")  # {published/resnet18/key} or {…|percent}


@dataclass(frozen=True)
class Claim:
    """One headline claim of the original study and where its verdict lives."""

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
    abstract: str = ""
    """The claim as a short noun phrase for the abstract's sentence."""
    reported_from: int | str | None = None
    every_match: bool = False
    """Many rows per run (3C: native and smooth of every network): the abstract names them without numbers."""
    any_weights: bool = False
    """The claim is about any weights (3C's theorem), so random-init runs are rows too; else trained networks only."""
    why: str = ""
    """A regex choosing the notes (joined) that say why (default: the seed comparison, the test, else the first note)."""


CLAIMS: tuple[Claim, ...] = (
    Claim(
        "1",
        "The Möbius sum reconstructs the network exactly; the sum of all subnetworks' outputs does not",
        1,
        ("naive.misses", "mobius.exact"),
        "naive-sum rel. error ≈ {published/resnet18/naive_sum_rel_error} (ResNet-18)",
        abstract="that summing subnetworks does not reconstruct the network",
    ),
    Claim(
        "2",
        "Interaction mass peaks at a middle order, with no low-order bias (Möbius basis)",
        2,
        ("middle_peak.vector",),
        "peak at order {published/resnet18/peak_order} (ResNet-18), {published/resnet34/peak_order} (ResNet-34)",
        abstract="a middle-order peak of interaction mass with no low-order bias (Möbius basis)",
        why=r"^per-image peak order|low-order bias",
    ),
    Claim(
        "2′",
        "The peak is shifted beyond subset counting's (the binomial null's tied peak; Möbius basis)",
        2,
        ("peak.vector",),
        "peak at order {published/resnet18/peak_order} of L = 8 (ResNet-18), {published/resnet34/peak_order} of L = 16 "
        "(ResNet-34); subset counting peaks at L/2",
        abstract="a peak shifted beyond subset counting's (Möbius basis)",
    ),
    Claim(
        "3",
        "Shrinking the residual branches (λ < 1) shifts the spectrum to low orders",
        "3A/3B",
        ("migration.vector",),
        "κ = {published/resnet18/kappa_at_lambda_1} at λ = 1, {published/resnet18/kappa_at_lambda_0.1} at λ = 0.1",
        abstract="a shift to low orders under residual scaling",
    ),
    Claim(
        "3′",
        "Each k-way interaction scales as λ^k as λ → 0 (a theorem for smooth residual stacks)",
        "3C",
        ("exp3c.*.lambda_k",),
        "slope k at order k (the theorem)",
        every_match=True,
        any_weights=True,
        why=r"^(holds|fails|cannot tell) at k",
        abstract="the λ^k law in the small-λ limit",
    ),
    Claim(
        "4",
        "The coefficients are concentrated in magnitude but not hard sparse",
        3,
        ("captured_energy.vector",),
        "Γ_64 ≈ {published/resnet18/captured_energy_at_64|percent} of 256 subsets (ResNet-18)",
        abstract="concentration of the coefficients as high as reported",
    ),
    Claim(
        "5",
        "The dominant interactions vary across inputs and predicted classes around a shared global core",
        4,
        ("seed_claim",),
        "1-NN {published/resnet18/nn_accuracy_scalar_k32|percent}, {published/resnet18/nn_accuracy_over_chance}× chance (scalar)",
        abstract="class-aligned expert sets in the predicted-class projection only",
    ),
    Claim(
        "6",
        "Their overall complexity changes little with sample difficulty",
        5,
        ("seed_claim",),
        "N_eff^v hard − easy ≈ {published/resnet18/n_eff_vector_hard_minus_easy}",
        abstract="difficulty broadening the support without moving the orders",
    ),
    Claim(
        "D1",
        "The interaction peak moves to higher orders with depth",
        "depth",
        ("peak_order.depth.*",),
        "peak {published/resnet18/peak_order} → {published/resnet34/peak_order} (ResNet-18 → 34)",
        reported_from=2,
        abstract="a peak order growing with depth",
        why="binomial null",
    ),
    Claim(
        "D1′",
        "On a common scale the peak moves beyond the binomial null's with depth (peak − L/2, κ^v / L)",
        "depth",
        ("peak_minus_null.depth.*", "kappa_over_l.depth.*"),
        "not reported (the study compares raw peak orders)",
        reported_from=2,
        abstract="a peak beyond the binomial null's growing with depth",
        every_match=True,
    ),
    Claim(
        "D2",
        "Prediction-preserving sparsity weakens with depth",
        "depth",
        ("preserving_fraction.depth.*",),
        "reported, without a number in the abstract",
        reported_from=2,
        abstract="sparsity weakening with depth",
    ),
)

DECISION_PHRASES = {
    "holds": "confirmed",
    "fails": "not confirmed",
    "cannot tell": "not decided by these data",
    "saturated": "untestable here (the measure is saturated)",
    "constant": "untestable here (the measure is constant)",
    "n/a — non-finite": "untestable here (a non-finite input)",
    "unresolved": "unresolved (at the round-off floor)",
    "consistent (post hoc)": "consistent, post hoc (a law fitted to the data that test it)",
}
WHY_CLAUSES = 2  # a note of many clauses is cut to its first two in the table's "why" cell


@dataclass(frozen=True)
class ClaimRow:
    """One decided row of the claims table."""

    claim: Claim
    reported: str
    network: str
    images: str
    number: str
    decision: str
    tested: str
    why: str


def decision_phrase(decision: str) -> str:
    """The abstract's words for a decision; a qualified one (``cannot tell (not converged)``) keeps its qualifier."""
    base, _, qualifier = decision.partition(" (")
    phrase = DECISION_PHRASES.get(decision) or DECISION_PHRASES.get(base, base)
    return phrase + (f" ({qualifier}" if qualifier and decision not in DECISION_PHRASES else "")


def value_text(entry: dict[str, Any], value: float) -> str:
    return format_percent(value) if entry.get("percent") else format_number(value)


def number_text(verdict: dict[str, Any]) -> str:
    """The verdict's effect with its CI, else its statistic, in the inline language."""
    effect, statistic = verdict.get("effect"), verdict.get("statistic")
    if effect:
        return (
            f"{effect['name']}: {value_text(effect, effect['value'])} "
            f"[{value_text(effect, effect['ci_low'])}, {value_text(effect, effect['ci_high'])}]"
        )
    if statistic:
        return f"{statistic['name']}: {value_text(statistic, statistic['value'])}"
    return "—"


def why_text(claim: Claim, verdict: dict[str, Any]) -> str:
    """One clause saying why: the chosen note, else the seed comparison, the test, the first note, or the rule's first clause."""
    notes = [str(note) for note in verdict.get("notes", ())]
    if claim.why:
        chosen = [note for note in notes if re.search(claim.why, note)]
        if chosen:
            return "; ".join(chosen)
    seed, test = verdict.get("seed"), verdict.get("test")
    if seed:
        reported = value_text(verdict.get("effect") or {}, seed["reported"])
        return {"inside": f"our CI contains the reported {reported}"}.get(
            seed["relation"], f"the reported {reported} lies {seed['relation']} our CI"
        )
    if test and test.get("p_value") is not None:
        adjusted = test.get("p_adjusted")
        return f"{test['name']}, p = {format_number(test['p_value'])}" + (
            "" if adjusted is None else f" ({test.get('correction')}: {format_number(adjusted)})"
        )
    if notes:
        clauses = notes[0].split("; ")
        return "; ".join(clauses[:WHY_CLAUSES]) + ("; …" if len(clauses) > WHY_CLAUSES else "")
    return verdict["rule"].split(";")[0]


def reported_text(claim: Claim, summary: dict[str, Any]) -> str:
    """The claim's ``reported`` with each ``{published…}`` path filled from ``summary``."""

    def fill(match: re.Match[str]) -> str:
        value = follow(summary, tuple(match.group(1).split("/")))
        return format_percent(value) if match.group(2) else format_number(value)

    return PUBLISHED.sub(fill, claim.reported)


def input_size_note(config: dict[str, Any]) -> str:
    """`` at 240 px`` for a network evaluated at another input size than it was trained at, else ""."""
    size, native = config.get("input_size"), native_input_size(str(config["arch"]))
    return f" at {size} px" if size is not None and native is not None and size != native else ""


def _run_facts(summary: dict[str, Any], verdict: dict[str, Any]) -> tuple[str, str]:
    """(network, N) of the run that decided ``verdict``; a paired comparison (depth) names its pair. A network evaluated
    at another input size than it was trained at is named with it (``EfficientNet-Lite0 at 240 px``)."""
    config = summary.get("config")
    if isinstance(config, dict) and "arch" in config:
        network = network_name(config["arch"], config.get("weights")) + input_size_note(config)
        return network, str(summary.get("num_valid", "—"))
    effect, statistic = verdict.get("effect") or {}, verdict.get("statistic") or {}
    pair = " vs ".join(network_name(part.strip()) for part in reversed(str(effect.get("name", "—")).split("−")))
    return pair, format_number(statistic["value"]) if "value" in statistic else "—"


def matching(verdicts: list[dict[str, Any]], patterns: tuple[str, ...]) -> list[dict[str, Any]]:
    """Every entry whose id matches one of ``patterns``, in the block's order (none is dropped for another)."""
    return [entry for entry in verdicts if any(fnmatchcase(entry["id"], pattern) for pattern in patterns)]


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
        if summary.get("experiment") != record.experiment or (
            config.get("weights") == "random" and not claim.any_weights
        ):
            continue
        runs.append((path, summary))
    return runs


def variants(ids: list[str]) -> list[str]:
    """What tells matched verdicts apart: the dot-separated parts of their ids that differ (``exp3c.native.lambda_k``,
    ``exp3c.smooth.lambda_k`` → native, smooth); empty for a single id."""
    parts = [verdict_id.split(".") for verdict_id in ids]
    if len(parts) < 2 or len({len(split) for split in parts}) != 1:
        return [""] * len(ids)
    differing = [index for index in range(len(parts[0])) if len({split[index] for split in parts}) > 1]
    return [" ".join(split[index].replace("_", " ") for index in differing) for split in parts]


def claim_rows(root: Path, claims: tuple[Claim, ...] = CLAIMS) -> list[ClaimRow]:
    """Every row, in the claims' order: per claim, each of its runs (:func:`claim_runs`) and each matching verdict."""
    rows = []
    for claim in claims:
        published_source = root / record_of(claim.reported_from).primary if claim.reported_from is not None else None
        for _, summary in claim_runs(root, claim):
            published = (  # the original study's numbers: absent ("—") from a checkout without the run that carries them
                checked_json(check_inside(published_source, root))
                if published_source is not None and published_source.is_file()
                else summary
            )
            matched = matching(summary["verdicts"], claim.verdict_ids)
            for verdict, variant in zip(matched, variants([entry["id"] for entry in matched])):
                network, images = _run_facts(summary, verdict)
                rows.append(
                    ClaimRow(
                        claim,
                        reported_text(claim, published) if "published" in published else "—",
                        network + (f", {variant}" if variant else ""),
                        images,
                        pretty_networks(number_text(verdict)),
                        verdict["decision"],
                        verdict["claim"],
                        pretty_networks(why_text(claim, verdict)),
                    )
                )
    return rows


DECIDED = ("holds", "fails", "consistent (post hoc)")
"""The decisions :func:`unreported` requires every table and headline to carry (a claim is decided by them)."""


def unreported(
    root: Path, rows: list[ClaimRow], headlines: dict[str, str], claims: tuple[Claim, ...] = CLAIMS
) -> list[str]:
    """Each decided verdict about a claim, in any committed summary of its record, that its rows lack (claim label, network,
    decision) or that a headline text lacks (the claim's sentence, :func:`plain_sentences`, saying that decision on that
    network); one line each, naming the summary, the verdict and where it is missing."""
    missing = []
    for claim in claims:
        for path, summary in claim_runs(root, claim):
            matched = matching(summary["verdicts"], claim.verdict_ids)
            for verdict, variant in zip(matched, variants([entry["id"] for entry in matched])):
                if verdict["decision"] not in DECIDED:
                    continue
                network = _run_facts(summary, verdict)[0] + (f", {variant}" if variant else "")
                where = f"{path.relative_to(root).as_posix()}: {verdict['id']} ({verdict['decision']}, {network}), claim {claim.label}"
                if not any(
                    (row.claim.label, row.network, row.decision) == (claim.label, network, verdict["decision"])
                    for row in rows
                ):
                    missing.append(f"{where}: not in the claims table")
                for name, text in headlines.items():
                    if not _said(text, claim, network, verdict["decision"]):
                        missing.append(f"{where}: not in {name}")
    return missing


def _said(text: str, claim: Claim, network: str, decision: str) -> bool:
    """Whether ``text`` holds the claim's sentence with ``decision`` said on ``network``."""
    prefix = f"Claim {claim.label}, {claim.abstract}: "
    start = text.find(prefix)
    if start < 0:
        return False
    end = text.find("Claim ", start + len(prefix))
    sentence = text[start + len(prefix) : end if end >= 0 else len(text)]
    phrase = decision_phrase(decision) + " on "
    return any(part.startswith(phrase) and network in part[len(phrase) :] for part in sentence.split("; "))


def undecided(root: Path, claims: tuple[Claim, ...] = CLAIMS) -> list[str]:
    """The labels of claims without a decided row (their summaries carry no matching verdict yet)."""
    decided = {row.claim.label for row in claim_rows(root, claims)}
    return [claim.label for claim in claims if claim.label not in decided]


def claims_markdown_table(root: Path) -> list[Table]:
    """The claims table for tables.md: one row per network and verdict, as in the paper's (:func:`table_tex`)."""
    previous, lines = None, []
    for row in claim_rows(root):
        first, previous = row.claim.label != previous, row.claim.label
        lines.append(
            [
                row.claim.label if first else "",
                row.claim.statement if first else "",
                row.reported if first else "",
                f"{row.network}, N = {row.images}",
                row.number,
                f"**{row.decision}**",
                row.why,
            ]
        )
    header = [
        "#",
        "the original study's claim",
        "it reports",
        "here: network, N",
        "our number [95 % CI]",
        "verdict",
        "why",
    ]
    return [Table(header, lines)]


def table_tex(rows: list[ClaimRow]) -> str:
    """The claims table as a longtable at footnote size (it may break across a page, never shrinks)."""
    head = (
        r"\begin{footnotesize}\setlength{\tabcolsep}{3pt}"
        "\n"
        r"\begin{longtable}{@{}>{\raggedright\arraybackslash}p{0.03\linewidth}>{\raggedright\arraybackslash}p{0.19\linewidth}>{\raggedright\arraybackslash}p{0.13\linewidth}>{\raggedright\arraybackslash}p{0.13\linewidth}>{\raggedright\arraybackslash}p{0.18\linewidth}>{\raggedright\arraybackslash}p{0.1\linewidth}>{\raggedright\arraybackslash}p{0.14\linewidth}@{}}"
        "\n"
        r"\caption{The original study's headline claims (1--6, its abstract) and depth claims (D1, D2) against this project's verdicts. "
        r"Every row with its number and reason; generated from the verdict blocks of the committed summaries.}\label{tab:claimsfull}\\"
        "\n"
        r"\toprule \# & the original study's claim & it reports & here: network, $N$ & our number [95\,\% CI] & verdict & why \\ \midrule\endfirsthead"
        "\n"
        r"\toprule \# & the original study's claim & it reports & here: network, $N$ & our number [95\,\% CI] & verdict & why \\ \midrule\endhead"
        "\n"
        r"\bottomrule\endlastfoot"
    )
    lines = [head]
    previous = None
    for row in rows:
        first = row.claim.label != previous
        previous = row.claim.label
        cells = [
            latex_text(row.claim.label) if first else "",
            latex_text(row.claim.statement) if first else "",
            latex_text(row.reported) if first else "",
            latex_text(f"{row.network}, N = {row.images}"),
            latex_text(row.number),
            r"\textbf{" + latex_text(row.decision) + "}",
            latex_text(row.why),
        ]
        lines.append(" & ".join(cells) + r" \\")
    lines.append(r"\end{longtable}\end{footnotesize}")
    return "\n".join(lines)


def compact_table_tex(rows: list[ClaimRow]) -> str:
    """The body's claims table: per claim, one row per decision, naming the networks (and their N) it was reached
    on, so networks that disagree get rows of their own; the numbers and the reasons are in :func:`table_tex`'s
    full table (the supplement)."""
    head = (
        r"\begin{footnotesize}\setlength{\tabcolsep}{3pt}"
        "\n"
        r"\begin{longtable}{@{}>{\raggedright\arraybackslash}p{0.04\linewidth}>{\raggedright\arraybackslash}p{0.30\linewidth}>{\raggedright\arraybackslash}p{0.16\linewidth}>{\raggedright\arraybackslash}p{0.14\linewidth}>{\raggedright\arraybackslash}p{0.28\linewidth}@{}}"
        "\n"
        r"\caption{The original study's headline claims (1--6, its abstract) and depth claims (D1, D2) against this "
        r"project's verdicts: per claim, one row per decision and the networks it was reached on. Generated from the "
        r"verdict blocks of the committed summaries; the supplement gives every row's number and reason, and every "
        r"verdict with its rule.}\label{tab:claims}\\"
        "\n"
        r"\toprule \# & the original study's claim & it reports & verdict & on (network, $N$) \\ \midrule\endfirsthead"
        "\n"
        r"\toprule \# & the original study's claim & it reports & verdict & on (network, $N$) \\ \midrule\endhead"
        "\n"
        r"\bottomrule\endlastfoot"
    )
    lines = [head]
    for label in dict.fromkeys(row.claim.label for row in rows):
        group = [row for row in rows if row.claim.label == label]
        by_decision: dict[str, list[str]] = {}
        for row in group:
            where = by_decision.setdefault(row.decision, [])
            name = f"{pretty_networks(row.network.split(',')[0])}, N = {row.images}"
            if name not in where:
                where.append(name)
        for index, (decision, where) in enumerate(by_decision.items()):
            cells = [
                latex_text(label) if index == 0 else "",
                latex_text(group[0].claim.statement) if index == 0 else "",
                latex_text(group[0].reported) if index == 0 else "",
                r"\textbf{" + latex_text(decision) + "}",
                latex_text("; ".join(where)),
            ]
            lines.append(" & ".join(cells) + r" \\")
    lines.append(r"\end{longtable}\end{footnotesize}")
    return "\n".join(lines)


def counted(names: Iterable[str]) -> list[str]:
    """Each name once, in order, with ``(n runs)`` where n > 1 runs read the same (``ResNet-18 (random init) (4 runs)``)."""
    counts = Counter(names)
    return [name if count == 1 else f"{name} ({count} runs)" for name, count in counts.items()]


def plain_sentences(rows: list[ClaimRow]) -> dict[str, str]:
    """Claim label → its sentence (plain text): the claim, then each decision with the networks (and numbers) it holds on."""
    sentences = {}
    for label in dict.fromkeys(row.claim.label for row in rows):
        group = [row for row in rows if row.claim.label == label]
        by_decision: dict[str, list[ClaimRow]] = {}
        for row in group:
            by_decision.setdefault(row.decision, []).append(row)
        parts = "; ".join(
            f"{decision_phrase(decision)} on "
            + ", ".join(
                counted(
                    row.network + ("" if row.number == "—" or row.claim.every_match else f" ({row.number})")
                    for row in members
                )
            )
            for decision, members in by_decision.items()
        )
        sentences[label] = f"Claim {label}, {group[0].claim.abstract}: {parts}."
    return sentences


def claim_sentences(rows: list[ClaimRow]) -> dict[str, str]:
    """Claim label → its sentence (LaTeX), :func:`plain_sentences` escaped."""
    return {label: latex_text(sentence) for label, sentence in plain_sentences(rows).items()}


def abstract_tex(rows: list[ClaimRow]) -> str:
    """One sentence per decided claim, in the claims' order."""
    return " ".join(claim_sentences(rows).values())


LABEL_WORDS = {"1": "One", "2": "Two", "3": "Three", "4": "Four", "5": "Five", "6": "Six", "D": "D", "′": "Prime"}


def label_macro(label: str) -> str:
    """``3′`` → ``ClaimFindingThreePrime``: the letters-only macro name of a claim's sentence."""
    return "ClaimFinding" + "".join(LABEL_WORDS[char] for char in label)


def findings_tex(rows: list[ClaimRow], claims: tuple[Claim, ...] = CLAIMS) -> str:
    """``\\ClaimFinding<label>`` per claim: a results section's paragraph against the original study, from its
    verdict (empty while the claim's summary has no verdict, so a section never prints a placeholder)."""
    sentences = claim_sentences(rows)
    lines = []
    for claim in claims:
        body = (
            ""
            if claim.label not in sentences
            else (rf"\paragraph{{Against the original study (Table~\ref{{tab:claims}}).}} {sentences[claim.label]}")
        )
        lines.append(rf"\newcommand{{\{label_macro(claim.label)}}}{{{body}}}")
    return "\n".join(lines)


def claims_tex(root: Path, claims: tuple[Claim, ...] = CLAIMS) -> str:
    """The whole of paper/generated/claims.tex."""
    rows = claim_rows(root, claims)
    return (
        "% Generated by `python -m paper.make_tables` from the summaries' verdicts blocks (paper/claims.py); do not edit by hand.\n"
        f"\\newcommand{{\\ClaimsTable}}{{{compact_table_tex(rows)}}}\n"
        f"\\newcommand{{\\ClaimsTableFull}}{{{table_tex(rows)}}}\n"
        f"\\newcommand{{\\ClaimsAbstract}}{{{abstract_tex(rows)}}}\n"
        f"{findings_tex(rows)}\n"
    )
