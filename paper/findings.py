"""The paper's finding sentences checked against the verdicts they rest on.

A sentence of the paper that states a finding is written as

    \\Finding{experiment_2/results_efficientnet_lite0_sample/summary.json#peak.vector}{fails}{The spectrum ...}

naming the results file (relative to the repository), the verdict's id in that file's ``verdicts`` list, and the
decision the sentence was written for. LaTeX prints only the sentence (``\\Finding`` is defined in
``paper/preamble.tex``). :func:`check_findings` re-reads every named verdict: when a rerun changed a decision, or the
verdict or its file is gone, the build stops with one line per sentence naming the source line, the verdict, the
decision written and the decision now stored, so the sentence is rewritten rather than left true of an older run.

    python -m paper.findings            # every \\Finding of paper/main.tex, paper/supplement.tex and paper/sections/
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field
from pathlib import Path

from experiment_1.errors import PipelineError, run_cli
from paper.checks import checked_json
from paper.committed_runs import check_inside
from paper.macros import MACROS, Macro
from paper.wording import entry_of

REPO = Path(__file__).resolve().parents[1]
COMMAND = "\\Finding"


@dataclass(frozen=True)
class Finding:
    """One finding sentence: where it is written, the verdict it names and the decision it was written for."""

    source: str  # "paper/sections/x.tex:12"
    results_file: str
    verdict_id: str
    decision: str
    sentence: str = field(default="", compare=False)


def _braced(text: str, start: int) -> tuple[str, int]:
    """The balanced ``{…}`` group opening at ``text[start]`` (spaces before it skipped) and the index after it."""
    while start < len(text) and text[start].isspace():
        start += 1
    if start >= len(text) or text[start] != "{":
        raise ValueError("expected '{'")
    depth = 0
    for index in range(start, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return text[start + 1 : index], index + 1
    raise ValueError("unbalanced braces")


def findings_in(text: str, name: str) -> list[Finding]:
    """Every ``\\Finding{file#id}{decision}{sentence}`` of a LaTeX source (``%`` comments ignored)."""
    lines = [line.split("%", 1)[0] if not line.lstrip().startswith("\\%") else line for line in text.splitlines()]
    body = "\n".join(lines)
    found, position = [], body.find(COMMAND)
    while position >= 0:
        line = body.count("\n", 0, position) + 1
        after = position + len(COMMAND)
        if after < len(body) and body[after].isalpha():  # another command that starts with \Finding
            position = body.find(COMMAND, after)
            continue
        try:
            reference, after = _braced(body, after)
            decision, after = _braced(body, after)
            sentence, after = _braced(body, after)
        except ValueError as error:
            raise PipelineError(
                f"{name}:{line}: \\Finding needs three braced arguments {{file#verdict}}{{decision}}{{sentence}} ({error})"
            ) from None
        results_file, hash_sign, verdict_id = reference.partition("#")
        if not hash_sign or not results_file.strip() or not verdict_id.strip():
            raise PipelineError(
                f"{name}:{line}: \\Finding's first argument {reference!r} is not <results file>#<verdict id>"
            )
        found.append(
            Finding(f"{name}:{line}", results_file.strip(), verdict_id.strip(), " ".join(decision.split()), sentence)
        )
        position = body.find(COMMAND, after)
    return found


def stored_decision(root: Path, finding: Finding) -> str | None:
    """The decision the results file now stores for the finding's verdict, ``None`` if file or verdict is absent."""
    path = root / finding.results_file
    if not path.is_file():
        return None
    entry = entry_of(checked_json(check_inside(path, root)), finding.verdict_id)
    return None if entry is None else str(entry.get("decision"))


def paper_sources(root: Path) -> list[Path]:
    """The LaTeX files whose sentences are checked: the two documents and every section."""
    paper = root / "paper"
    return [path for path in (paper / "main.tex", paper / "supplement.tex") if path.is_file()] + sorted(
        (paper / "sections").glob("*.tex")
    )


def stale_findings(root: Path, sources: list[Path] | None = None) -> list[str]:
    """One line per finding whose verdict no longer carries the decision its sentence was written for."""
    problems = []
    for path in paper_sources(root) if sources is None else sources:
        name = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
        for finding in findings_in(path.read_text(encoding="utf-8"), name):
            now = stored_decision(root, finding)
            if now is None:
                problems.append(
                    f"{finding.source}: the sentence rests on {finding.results_file}#{finding.verdict_id}, which is "
                    "absent; rerun its step or rewrite the sentence"
                )
            elif now != finding.decision:
                problems.append(
                    f"{finding.source}: the sentence was written for {finding.results_file}#{finding.verdict_id} = "
                    f"'{finding.decision}', but it now reads '{now}'; rewrite the sentence for the new result"
                )
    return problems


MACRO_USE = re.compile(r"\\([A-Za-z]+)")


def run_ids(root: Path, results_file: str) -> set[str]:
    """The runs a results file speaks for: its own run id, and the run a comparison file ranks (``trained_run_id``)."""
    path = root / results_file
    if "*" in results_file or not path.is_file():
        return set()
    document = checked_json(check_inside(path, root))
    config = document.get("config") if isinstance(document, dict) else None
    config = config if isinstance(config, dict) else {}
    return {str(value) for value in (config.get("run_id"), config.get("trained_run_id")) if value}


def foreign_numbers(root: Path, sources: list[Path] | None = None, macros: list[Macro] = MACROS) -> list[str]:
    """One line per generated number in a finding sentence that comes from another run than the verdict the sentence
    states: the macro's file must be the verdict's file, or speak for the same run (:func:`run_ids`), so a sentence
    never quotes one run's number beside another run's decision."""
    by_name = {macro.name: macro for macro in macros}
    problems = []
    for path in paper_sources(root) if sources is None else sources:
        name = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
        for finding in findings_in(path.read_text(encoding="utf-8"), name):
            verdict_runs = run_ids(root, finding.results_file)
            for used in dict.fromkeys(MACRO_USE.findall(finding.sentence)):
                macro = by_name.get(used)
                if macro is None or macro.source == finding.results_file:
                    continue
                if not verdict_runs & run_ids(root, macro.source):
                    problems.append(
                        f"{finding.source}: \\{used} comes from {macro.source}, another run than the verdict the sentence "
                        f"states ({finding.results_file}#{finding.verdict_id}); quote that run's number or split the sentence"
                    )
    return problems


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=REPO, help="the repository root (default: this checkout)")
    args = parser.parse_args(argv)
    problems = stale_findings(args.root) + foreign_numbers(args.root)
    if problems:
        raise PipelineError(
            f"{len(problems)} finding sentence(s) no longer match their verdicts:\n" + "\n".join(problems)
        )


if __name__ == "__main__":
    run_cli(main)
