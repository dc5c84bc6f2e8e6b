"""Every verdict of the paper's runs as the appendix (paper/generated/verdicts.tex): one compact table per run.

Each experiment's analysis writes a ``verdicts`` block (a list, schema in experiment_1/report/verdicts.py).
``\\VerdictAppendix`` expands to one subsection per experiment whose paper run (its record's ``primary``; a
glob gives each run, as in Experiment 3C) carries a block: a longtable at footnote size with the claim, the
effect or statistic with its CI, the test with its (corrected) p, the decision and the number of its rule;
each distinct rule is stated once, below the table. A run without a block is left out — the appendix never
prints a placeholder — and :func:`runs_without_verdicts` names those runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from experiment_1.report import ExperimentRecord, format_number, network_name, pretty_networks
from paper.checks import checked_json
from paper.claims import input_size_note, number_text
from paper.committed_runs import committed_glob
from paper.experiments import RECORDS
from paper.render_latex import latex_text

COLUMNS = (
    "@{}"
    + "".join(
        rf">{{\raggedright\arraybackslash}}p{{{width}\linewidth}}" for width in ("0.33", "0.3", "0.17", "0.11", "0.04")
    )
    + "@{}"
)
HEADER = r"claim & effect or statistic [95\,\% CI] & test & decision & rule \\"


def test_text(entry: dict[str, Any]) -> str:
    """``name, p = …`` with the corrected p and its family when there is one; "—" without a test."""
    test = entry.get("test")
    if not test:
        return "—"
    text = test["name"] + ("" if test.get("p_value") is None else f", p = {format_number(test['p_value'])}")
    if test.get("p_adjusted") is not None:
        text += (
            f"; {test.get('correction') or 'adjusted'} ({test.get('family_size')}): {format_number(test['p_adjusted'])}"
        )
    return text


def run_label(summary: dict[str, Any]) -> str:
    """The run as the reader knows it: network (weights when not pretrained; its input size when not its own), N."""
    config = summary.get("config")
    if not isinstance(config, dict) or "arch" not in config:
        return "the depth ladder (paired images of each step)"
    network = network_name(config["arch"], config.get("weights")) + input_size_note(config)
    return f"{network}, N = {summary.get('num_valid', '—')}"


def verdicts_body(summary: dict[str, Any]) -> str:
    """One run's verdicts as a longtable and its numbered rules; "" when the summary has no verdicts list."""
    verdicts = summary.get("verdicts")
    if not isinstance(verdicts, list) or not verdicts:
        return ""
    rules: list[str] = []
    rows = []
    for entry in verdicts:
        if entry["rule"] not in rules:
            rules.append(entry["rule"])
        cells = [pretty_networks(entry["claim"]), pretty_networks(number_text(entry)), test_text(entry)]
        rows.append(
            " & ".join(latex_text(cell) for cell in cells)
            + rf" & \textbf{{{latex_text(entry['decision'])}}} & {rules.index(entry['rule']) + 1} \\"
        )
    table = "\n".join(
        [
            rf"\begin{{longtable}}{{{COLUMNS}}}",
            rf"\toprule {HEADER} \midrule\endhead",
            r"\bottomrule\endlastfoot",
            *rows,
            r"\end{longtable}",
        ]
    )
    rule_list = "\n".join(rf"\item {latex_text(rule)}" for rule in rules)
    return (
        table
        + "\n"
        + r"\noindent Rules:\nopagebreak\begin{enumerate}\setlength{\itemsep}{0pt}"
        + "\n"
        + rule_list
        + "\n"
        + r"\end{enumerate}"
    )


def record_runs(root: Path, record: ExperimentRecord) -> list[tuple[Path, dict[str, Any]]]:
    return [(path, checked_json(path)) for path in committed_glob(root, record.primary)]


def runs_without_verdicts(root: Path, records: tuple[ExperimentRecord, ...] = RECORDS) -> list[str]:
    """The paper runs (relative paths) whose summary has no verdicts list yet."""
    return [
        path.relative_to(root).as_posix()
        for record in records
        for path, summary in record_runs(root, record)
        if not verdicts_body(summary)
    ]


def primary_body(root: Path, record: ExperimentRecord) -> str:
    """The compact verdict table of the record's paper run, at footnote size (a section whose result is its verdicts)."""
    body = "".join(verdicts_body(summary) for path, summary in record_runs(root, record)[:1])
    return rf"\begin{{footnotesize}}\setlength{{\tabcolsep}}{{3pt}}{body}\end{{footnotesize}}" if body else ""


def pointer_sentence(root: Path, record: ExperimentRecord) -> str:
    """The sentence a results section ends with: where its verdicts are (empty when its run has none yet)."""
    if not any(verdicts_body(summary) for _, summary in record_runs(root, record)):
        return ""
    return rf"Every verdict of this section, with its decision rule, is listed in the supplement, Section~\ref{{S-app:verdicts-{record.macro}}}."


def verdicts_tex(root: Path, records: tuple[ExperimentRecord, ...] = RECORDS) -> str:
    """The whole of paper/generated/verdicts.tex: ``\\VerdictAppendix``."""
    parts = []
    for record in records:
        bodies = [(summary, body) for _, summary in record_runs(root, record) if (body := verdicts_body(summary))]
        if not bodies:
            continue
        parts.append(rf"\subsection{{{latex_text(record.title)}}}\label{{app:verdicts-{record.macro}}}")
        for summary, body in bodies:
            parts += [
                rf"\paragraph{{{latex_text(run_label(summary))}.}}",
                r"\begin{footnotesize}\setlength{\tabcolsep}{3pt}",
                body,
                r"\end{footnotesize}",
            ]
    pointers = [
        rf"\newcommand{{\VerdictPointer{record.macro}}}{{{pointer_sentence(root, record)}}}" for record in records
    ]
    pointers += [rf"\newcommand{{\VerdictBody{record.macro}}}{{{primary_body(root, record)}}}" for record in records]
    lines = [
        "% Generated by `python -m paper.make_tables` from the summaries' verdicts blocks (paper/verdict_text.py); do not edit by hand.",
        *pointers,
        r"\newcommand{\VerdictAppendix}{%",
        *parts,
        "}",
    ]
    return "\n".join(lines) + "\n"
