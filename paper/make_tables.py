"""Regenerate ``tables.md`` — every headline number of every experiment — from the summary JSON.

Question: what does each run say, side by side? Every table is declared once in :mod:`paper.tables` (its committed
results files, its rows and columns); this module reads each part's files and builds its blocks, the same blocks for
tables.md and the paper (:mod:`paper.table_model`; :mod:`paper.render_markdown` and :mod:`paper.render_latex` render
them). The original study's claims against the verdicts, and every verdict, are worded by :mod:`paper.claims`. No
number is typed by hand.

Inputs:  the committed runs' summaries (paper/committed_runs.txt; a demo or scratch run is never read).
Outputs: tables.md, the generated blocks of README.md (the headline table and its figure) and
         experiment_1/PERFORMANCE.md (benchmark, family benchmark, allocator, wall time, profile; between their
         ``<!-- generated:…`` markers), and paper/generated/ (table_<section>.tex, macros.tex, claims.tex, verdicts.tex,
         runs.tex, figures.tex and the figures paper.plots draws) for ``make paper``.

    python -m paper.make_tables
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from experiment_1.errors import PipelineError, run_cli
from experiment_1.files import atomic_write_text, read_json
from experiment_1.paths import REPO_ROOT
from paper.checks import check_one_network, checked_json
from paper.claims import claims_markdown, claims_tex, verdicts_tex
from paper.committed_runs import MANIFEST, allow_all_runs, committed_glob
from paper.figures import figures_tex
from paper.headline import figure_reading, headline_table
from paper.macros import EXP1, EXP2, EXP3, EXP3AB, EXP4, EXP5, macros_tex
from paper.plots import render_paper_figures
from paper.render_latex import render_latex
from paper.render_markdown import render_markdown
from paper.runs import runs_tex
from paper.table_model import Block, Bullets, NotRun, Paragraph, Part, Section, Table, cell_text
from paper.tables import DECLARED, PERFORMANCE_TABLES, SECTIONS
from paper.wording import distinguishing_notes, reader_label, run_facts, run_label, verdict_line

PAPER_SOURCES = [EXP1, EXP2, EXP3AB, EXP3, EXP4, EXP5]
"""The paper's network on its sample lists (the random-init null differs by design)."""
WHOLE_LIST_SOURCES = [EXP1, EXP2, EXP3, EXP4, EXP5]
"""Runs on their whole sample list (3A/3B takes its first 40 images by design)."""
ABSENT = "—"


def read_part(root: Path, part: Part) -> list[tuple[Path, Any]]:
    """The committed files of a part (a ``partial`` store's skipped), each read as the part declares; a results file of
    another experiment than the part's is left out."""
    read = part.read or (checked_json if part.experiment is not None else read_json)
    found = []
    for pattern in (part.files,) if isinstance(part.files, str) else part.files:
        for path in committed_glob(root, pattern):
            document = None if "partial" in path.parts else read(path)
            if document is not None and (part.experiment is None or document.get("experiment") == part.experiment):
                found.append((path, document))
    return found


def filled(header: list[str], rows: list[list[str]]) -> Table:
    """The table without its columns that hold nothing ("—" on every row; the first, naming the row, always stays)."""
    keep = [0, *(index for index in range(1, len(header)) if any(row[index] != ABSENT for row in rows))]
    return Table([header[index] for index in keep], [[row[index] for index in keep] for row in rows])


def verdict_list(document: Any, patterns: tuple[str, ...]) -> list[Block]:
    """The file's verdicts whose ids match ``patterns``, a line each (paper.wording.verdict_line)."""
    entries = [entry for entry in document.get("verdicts", []) if any(fnmatchcase(entry["id"], p) for p in patterns)]
    return [Bullets([verdict_line(entry) for entry in entries])] if entries else []


def file_blocks(part: Part, root: Path, path: Path, document: Any, verdicts: bool) -> tuple[list[Block], list[Any]]:
    """One file's blocks — a per-file part's heading and table, then the file's listed verdicts and notes — and the
    rows it adds to a part of one table."""
    name = part.name or run_label
    items = part.rows(document) if part.rows else [document]
    listed = verdict_list(document, part.verdicts) if verdicts and part.verdicts else []
    notes = part.after(document) if part.after else []
    if not part.per_file:
        return ([Paragraph(f"{name(path, root, document)}:"), *listed] if listed else []) + notes, items
    if part.table:
        table = [Table(*part.table(document))]
    else:
        cells = [[cell_text(cell, item) for _, cell in part.columns] for item in items]
        table = [filled([header for header, _ in part.columns], cells)] if part.columns else []
    shown = [*table, *listed, *notes]
    return ([Paragraph((part.heading or name)(path, root, document)), *shown] if shown else []), []


def part_blocks(part: Part, root: Path, verdicts: bool = True) -> list[Block]:
    """A part's blocks: a table per file, or one table of every file's rows (its first column the run, told apart from
    another that reads the same by what differs), with the listed verdicts and notes; ``verdicts=False`` (the paper,
    whose appendix lists every verdict) leaves the verdicts out."""
    files = read_part(root, part)
    header = ([part.label] if part.label else []) + [header for header, _ in part.columns]
    if part.gather is not None:
        gathered = part.gather(root, files)
        return (
            [filled(header, [[cell_text(cell, row) for _, cell in part.columns] for row in gathered])]
            if gathered
            else []
        )
    blocks, labels, facts, rows = [], [], [], []
    for path, document in files:
        try:
            shown, items = file_blocks(part, root, path, document, verdicts)
            for item in items:
                labels.append((part.name or run_label)(path, root, document) + (part.each(item) if part.each else ""))
                facts.append(run_facts(document))
                rows.append([cell_text(cell, item) for _, cell in part.columns])
        except KeyError as error:
            raise PipelineError(
                f"{path}: lacks {error.args[0]!r}, which its table in tables.md reads (written by an older version?); "
                "rerun the step that wrote it, or paper.resummarize for Experiments 1, 2, 3 and 3A/3B"
            ) from None
        blocks += shown
    if rows:
        notes = distinguishing_notes(labels, facts)
        table = filled(header, [[label + note, *row] for label, note, row in zip(labels, notes, rows)])
        blocks = [table, *blocks]
    if files and not blocks:  # the paper's form of a part whose files say only their verdicts
        return [Paragraph("Its results are its verdicts, listed in the appendix.")]
    return ([Paragraph(part.intro)] if part.intro and blocks else []) + blocks


def section_blocks(section: Section | str, root: Path, verdicts: bool = True) -> list[Block]:
    """A section's blocks (its part's, then its second part's), or its "not run" line when no file holds a row."""
    section = DECLARED[section] if isinstance(section, str) else section
    parts = (section.part, section.then) if section.then else (section.part,)
    blocks = [block for part in parts for block in part_blocks(part, root, verdicts)]
    return blocks or [NotRun(section.empty)]


def tables_markdown(root: Path) -> str:
    """The whole of tables.md."""
    lines = [
        "# MOE-ResNet — tables",
        "",
        "Generated by `python -m paper.make_tables` from the summary JSON of every results folder; "
        "do not edit by hand. Means with 95 % bootstrap CIs over images. Each experiment's REPORT.md has the details "
        "and the original study's numbers beside ours.",
        "",
        "## The original study's claims, per network and verdict (paper/claims.py)",
        "",
        render_markdown(claims_markdown(root)),
        "",
    ]
    for section in SECTIONS:
        lines += [f"## {section.title}", "", render_markdown(section_blocks(section, root)), ""]
    return "\n".join(lines)


def reader_labels(blocks: list[Block]) -> list[Block]:
    """Every cell of ``blocks`` in :func:`paper.wording.reader_label`'s form; a paragraph naming a folder alone is left
    out (the paper names networks, not folders)."""
    shown: list[Block] = []
    for block in blocks:
        if isinstance(block, Table):
            shown.append(
                Table([reader_label(c) for c in block.header], [[reader_label(c) for c in r] for r in block.rows])
            )
        elif isinstance(block, Paragraph) and not re.fullmatch(r"`[^`]+`", block.text):
            shown.append(Paragraph(reader_label(block.text)))
        elif not isinstance(block, Paragraph):
            shown.append(block)
    return shown


def paper_inputs(root: Path) -> dict[str, str]:
    """The generated files of the paper (paper/generated/): one table per section (without its verdicts, which the
    appendix lists), the number macros, the claims and verdicts, the runs and the figures, by file name."""
    header = "% Generated by `python -m paper.make_tables` from the summary JSON; do not edit by hand.\n"
    files = {
        f"table_{section.key}.tex": header + render_latex(reader_labels(section_blocks(section, root, verdicts=False)))
        for section in SECTIONS
    }
    files["macros.tex"] = macros_tex(root)
    files["verdicts.tex"] = verdicts_tex(root)
    files["claims.tex"] = claims_tex(root)
    files["runs.tex"] = runs_tex(root)
    files["figures.tex"] = figures_tex(root)
    return files


README_BLOCKS: dict[str, dict[str, Callable[[Path], list[Block]]]] = {
    "README.md": {"headline": headline_table, "figure": figure_reading},
    "experiment_1/PERFORMANCE.md": {
        key.replace("_", "-"): lambda root, key=key: section_blocks(key, root) for key in PERFORMANCE_TABLES
    },
}
"""Markdown page (relative to the root) → its generated blocks."""


def refresh_readme_blocks(readme: Path, root: Path, blocks: dict[str, Callable[[Path], list[Block]]]) -> list[str]:
    """Rewrite each generated block of ``readme`` (``<!-- generated:NAME … -->`` … ``<!-- /generated:NAME -->``)
    from the JSON; returns the names of the blocks found."""
    text = readme.read_text()
    found = []
    for name, table in blocks.items():
        start, end = text.find(f"<!-- generated:{name}"), text.find(f"<!-- /generated:{name} -->")
        if start < 0 or end < start:
            continue
        opening_end = text.index("\n", start) + 1
        text = text[:opening_end] + render_markdown(table(root)) + "\n" + text[end:]
        found.append(name)
    if found:
        atomic_write_text(readme, text)
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=REPO_ROOT, help="repository root to scan (default: this checkout)")
    parser.add_argument("--output", type=Path, default=None, help="file to write (default: <root>/tables.md)")
    parser.add_argument(
        "--all-runs",
        action="store_true",
        help="a root without paper/committed_runs.txt: read every results folder (said in the output)",
    )
    args = parser.parse_args(argv)
    output = args.output or args.root / "tables.md"
    if args.all_runs and not (args.root / MANIFEST).exists():
        allow_all_runs(args.root)
        print(
            f"--all-runs: {args.root / MANIFEST} is absent, so every results folder under {args.root} counts as a committed run"
        )
    check_one_network(args.root, PAPER_SOURCES, WHOLE_LIST_SOURCES)
    tables, paper = tables_markdown(args.root), paper_inputs(args.root)  # every file is checked before any is written
    if render_paper_figures(args.root):
        paper["figures.tex"] = figures_tex(args.root)  # the rendered figures exist now
    atomic_write_text(output, tables)
    refreshed = [
        f"{', '.join(names)} of {readme}"
        for readme, blocks in README_BLOCKS.items()
        if (args.root / readme).exists()
        for names in [refresh_readme_blocks(args.root / readme, args.root, blocks)]
        if names
    ]
    generated = args.root / "paper" / "generated"
    for name, text in paper.items():
        atomic_write_text(generated / name, text)
    print(f"wrote {output}" + "".join(f", the block(s) {entry}" for entry in refreshed) + f" and {generated}/")


if __name__ == "__main__":
    run_cli(main)
