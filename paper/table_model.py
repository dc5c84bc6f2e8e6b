"""The table model behind tables.md and the paper: what a results section says, before it is rendered.

A section is a list of blocks — a :class:`Table` (header and rows of cell strings), a :class:`Paragraph`
(a line of text such as a run's label), :class:`Bullets` (a list of lines) or a :class:`NotRun` (the explicit "no results yet" line). Cells
and paragraphs are written in the small inline language of the REPORTs: plain text with `code` spans,
**bold**, Unicode symbols (κ, λ, ≤, ×, −) and index notation such as κ^v, N_eff^v or Γ_K.
:mod:`paper.render_markdown` and :mod:`paper.render_latex` turn the same blocks into Markdown and LaTeX.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from experiment_1.report import original_study_wording


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
