"""The table model behind tables.md and the paper: what a results section says, before it is rendered, and how a
section is declared.

A section is a list of blocks — a :class:`Table` (header and rows of cell strings), a :class:`Paragraph`
(a line of text such as a run's label), :class:`Bullets` (a list of lines) or a :class:`NotRun` (the explicit "no results yet" line). Cells
and paragraphs are written in the small inline language of the REPORTs: plain text with `code` spans,
**bold**, Unicode symbols (κ, λ, ≤, ×, −) and index notation such as κ^v, N_eff^v or Γ_K.
:mod:`paper.render_markdown` and :mod:`paper.render_latex` turn the same blocks into Markdown and LaTeX.

Every section is declared once, as data (:class:`Section`, its :class:`Part` s and their columns, each a header and a
:data:`Cell`; all in :mod:`paper.tables`); :mod:`paper.make_tables` reads each part's files and builds its blocks.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Union

from experiment_1.report import format_number, format_percent, format_stat, original_study_wording


@dataclass(frozen=True)
class Table:
    """A table: ``header`` cells and ``rows`` of cells, each row as long as the header."""

    header: list[str]
    rows: list[list[str]]

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row) != len(self.header):
                raise ValueError(f"a row has {len(row)} cells for {len(self.header)} columns: {row}")


@dataclass(frozen=True)
class Paragraph:
    """A line of text between tables (a run's label, a fit's slopes)."""

    text: str


@dataclass(frozen=True)
class Bullets:
    """A list of short lines (e.g. each verdict's claim and decision)."""

    items: list[str]


@dataclass(frozen=True)
class NotRun:
    """What a section says when no results folder holds its experiment (e.g. "No Experiment 1 results yet.")."""

    text: str


Block = Union[Table, Paragraph, Bullets, NotRun]


def named_original_study(block: Block) -> Block:
    """``block`` with "the seed" (as steps wrote it into the summaries' verdicts and sources) named the original study:
    both renderers call it, so tables.md, the README blocks and the paper use one name."""
    if isinstance(block, Table):
        return Table(
            [original_study_wording(cell) for cell in block.header],
            [[original_study_wording(cell) if isinstance(cell, str) else cell for cell in row] for row in block.rows],
        )
    if isinstance(block, Bullets):
        return Bullets([original_study_wording(item) for item in block.items])
    if isinstance(block, (Paragraph, NotRun)):
        return type(block)(original_study_wording(block.text))
    return block


Cell = Union[str, Callable[[Any], str]]
"""A column's cell: a template of :data:`CELLS` filled from the row (``"{metrics[kappa]:stat}"``), or a function of it."""


class CellFormat(string.Formatter):
    """The cells' template language: ``{key[sub]…:spec}`` with the spec ``num`` (:func:`format_number`), ``stat`` or
    ``stat%`` (the mean [CI]), ``%`` or ``%0`` (a share, with 1 or 0 decimals) — "—" for a value that is ``None`` —, or
    Python's own."""

    def format_field(self, value: Any, spec: str) -> str:
        if value is None and spec in ("num", "stat", "stat%", "%", "%0"):
            return "—"
        if spec == "num":
            return format_number(value)
        if spec in ("stat", "stat%"):
            return format_stat(value, percent=spec == "stat%")
        if spec.startswith("%"):
            return format_percent(value, int(spec[1:] or 1))
        return super().format_field(value, spec)


CELLS = CellFormat()


def cell_text(cell: Cell, row: Any) -> str:
    """A row's cell: its template filled from the row, or its function of the row."""
    return cell(row) if callable(cell) else CELLS.vformat(cell, (), row)


@dataclass(frozen=True)
class Part:
    """One table of a section, declared as data: the files it reads, where its rows are, its columns, and what is said
    around it. A row is one file, or each item ``rows`` gives of a file (a λ, a network variant, a rung)."""

    files: str | tuple[str, ...]
    """The committed results files it reads (globs under the root, in order)."""
    columns: tuple[tuple[str, Cell], ...] = ()
    """Each column's header and cell."""
    experiment: int | str | None = None
    """The experiment of its summaries (read checked, another experiment's skipped); ``None``: a tool's JSON, read plain."""
    read: Callable[[Path], Any] | None = None
    """How a file is read (``None``: checked with its verdicts where :attr:`experiment` is set, else plain JSON)."""
    rows: Callable[[Any], list[Any]] | None = None
    """The rows of one file; ``None``: the file is one row."""
    name: Callable[[Path, Path, Any], str] | None = None
    """The first column, (path, root, file) → the run or file a row is of (paper.wording.run_label when ``None``)."""
    label: str = "run"
    """That column's header; ``""``: no such column (a per-file table, or rows :attr:`gather` names)."""
    each: Callable[[Any], str] | None = None
    """What a row adds to its file's name (3C: ``, native``)."""
    per_file: bool = False
    """A table per file, under a paragraph naming it (:attr:`heading`); else one table of every file's rows."""
    heading: Callable[[Path, Path, Any], str] | None = None
    """The paragraph above a file's table (its :attr:`name` when ``None``)."""
    table: Callable[[Any], tuple[list[str], list[list[str]]]] | None = None
    """A file's table as its experiment declares it for its REPORT too (header, rows), instead of :attr:`columns`."""
    gather: Callable[[Path, list[tuple[Path, Any]]], list[Any]] | None = None
    """The rows, made from all files at once (the wall time of each folder), instead of one file at a time."""
    intro: str = ""
    """A paragraph above the part."""
    verdicts: tuple[str, ...] = ()
    """The ids (fnmatch patterns) of each file's verdicts listed after its table, a line each (tables.md only)."""
    after: Callable[[Any], list[Block]] | None = None
    """More blocks after a file's table (a fit's slopes, a note), or after the part's table (one table of every file)."""


@dataclass(frozen=True)
class Section:
    """A section of tables.md and a generated table of the paper (``paper/generated/table_<key>.tex``)."""

    key: str
    title: str
    part: Part
    empty: str
    """What it says when no committed file holds a row ("No Experiment 1 results yet.")."""
    then: Part | None = None
    """A second table of the same files (Experiment 2's Walsh basis beside its Möbius one)."""
