"""The Markdown renderer of the table model (tables.md, the README's generated blocks)."""

from __future__ import annotations

from collections.abc import Sequence

from experiment_1.report import markdown_table
from paper.table_model import Block, Bullets, NotRun, Paragraph, Table, named_original_study


def render_block(block: Block) -> str:
    """One block as Markdown: a GitHub table, a line of text, a bulleted list, or an italic "not run" line."""
    block = named_original_study(block)
    if isinstance(block, Table):
        return markdown_table(block.header, block.rows)
    if isinstance(block, Paragraph):
        return block.text
    if isinstance(block, Bullets):
        return "\n".join(f"- {item}" for item in block.items)
    if isinstance(block, NotRun):
        return f"_{block.text}_"
    raise TypeError(f"not a table-model block: {block!r}")


def render_markdown(blocks: Sequence[Block]) -> str:
    """A section's blocks as Markdown, separated by blank lines."""
    return "\n\n".join(render_block(block) for block in blocks)
