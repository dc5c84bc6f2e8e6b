"""The LaTeX renderer of the table model (paper/generated/*.tex), and the inline-text converter it uses.

:func:`latex_text` turns the inline language of the REPORTs and tables.md (plain text with `code`,
**bold**, Unicode symbols and index notation such as κ^v, N_eff^v, Γ_K, C≤3, 2^L, 3.10e-07) into LaTeX
for pdflatex: symbols become math, scientific notation becomes m × 10^e, a negative number gets a math
minus, `code` becomes \\texttt (breakable after / and _).
A character it does not know raises ValueError naming it, so nothing is silently dropped.
Tables are booktabs tabulars inside ``\\fitwidth{…}`` (defined in paper/preamble.tex: footnote size when wider
than the line, never smaller) whose columns wrap to share the line when their cells are wider; a table of more than
:data:`MAX_COLUMNS` columns is turned when it has few rows (the networks side by side, a row per statistic) and else
split into parts that repeat its label column; "not run" blocks become ``\\notrun{…}``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from experiment_1.report import original_study_wording
from paper.table_model import Block, Bullets, NotRun, Paragraph, Table, named_original_study

GREEK = {
    **{
        letter: "\\" + name
        for letter, name in zip(
            "αβγδεζηθικλμνξπρστυφχψω",
            (
                "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma tau upsilon phi chi psi omega"
            ).split(),
        )
    },
    **{
        letter: "\\" + name
        for letter, name in zip("ΓΔΘΛΞΠΣΦΨΩ", "Gamma Delta Theta Lambda Xi Pi Sigma Phi Psi Omega".split())
    },
}
MACRON = "\u0304"
TEXT_SYMBOLS = {
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "\\": r"\textbackslash{}",
    "<": r"$<$",
    ">": r"$>$",
    "—": "---",
    "–": "--",
    "−": "$-$",
    "×": r"$\times$",
    "÷": r"$\div$",
    "≤": r"$\le$",
    "≥": r"$\ge$",
    "≈": r"$\approx$",
    "±": r"$\pm$",
    "→": r"$\to$",
    "…": r"\ldots{}",
    "‖": r"$\|$",
    "∅": r"$\emptyset$",
    "·": r"$\cdot$",
    "∈": r"$\in$",
    "∉": r"$\notin$",
    "⊆": r"$\subseteq$",
    "⊂": r"$\subset$",
    "∩": r"$\cap$",
    "∪": r"$\cup$",
    "∞": r"$\infty$",
    "√": r"$\surd$",
    "∝": r"$\propto$",
    "≪": r"$\ll$",
    "≫": r"$\gg$",
    "≠": r"$\neq$",
    "≡": r"$\equiv$",
    "∼": r"$\sim$",
    "∑": r"$\sum$",
    "⇒": r"$\Rightarrow$",
    "←": r"$\leftarrow$",
    "↔": r"$\leftrightarrow$",
    "°": r"$^\circ$",
    "′": "$'$",
    "ᵀ": r"$^{\top}$",
    "½": r"$\frac{1}{2}$",
    "ĥ": r"$\hat{h}$",
    "Ē": r"$\bar{E}$",
    "“": "``",
    "”": "''",
    "‘": "`",
    "’": "'",
    "ö": r"\"o",
    "ü": r"\"u",
    "ä": r"\"a",
    "é": r"\'e",
    "è": r"\`e",
    "ç": r"\c{c}",
    "\u202f": r"\,",
    "\u2009": r"\,",
    "\u00a0": "~",
    **{digit: f"$^{{{plain}}}$" for digit, plain in zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")},
    **{digit: f"$_{{{plain}}}$" for digit, plain in zip("₀₁₂₃₄₅₆₇₈₉₍₎", "0123456789()")},
    **{letter: f"${command}$" for letter, command in GREEK.items()},
}
SCIENTIFIC = r"(?P<sci>-?\d+(?:\.\d+)?)e(?P<exp>[+-]\d+)"
NEGATIVE = r"(?<![A-Za-z0-9.\-])(?P<neg>-\d+(?:\.\d+)?)"
C_LE = r"C≤(?P<cle>\d+)"
INDEX = rf"\{{[^{{}}]*\}}|[A-Za-z0-9{''.join(GREEK)}]+"
INDEXED = (
    rf"(?<![A-Za-z0-9_])(?P<base>[A-Za-z]{MACRON}|[A-Za-z{''.join(GREEK)}Ē]|\d+)"
    rf"(?:_(?P<sub>{INDEX}))?(?:\^(?P<sup>{INDEX}))?"
)
TOKEN = re.compile(rf"{SCIENTIFIC}|{NEGATIVE}|{C_LE}|{INDEXED}")
BOLD = re.compile(r"\*\*(.+?)\*\*")
LINE_CHARS = 95  # about the characters of a line of \small type: a table whose cells are wider wraps them
LONG_LINE_CHARS = 105  # about the characters of a line of footnote-size type (a longtable's)
WIDEST_SHARE = (
    40  # in a longtable, a wrapping column's share of the line grows with its cells up to this many characters
)
MAX_COLUMNS = 6  # a wider table is turned (few rows) or split into parts (many), so none is set below its size
CODE = re.compile(r"`([^`]*)`")


MATH_RELATIONS = {"≥": r"\ge", "≤": r"\le", "≠": r"\ne", "−": "-"}  # inside $…$ (an index such as k≥1)


def _math_symbols(text: str) -> str:
    """Greek letters and a macron base as math commands (inside $…$)."""
    if text.endswith(MACRON):
        return rf"\bar{{{_math_symbols(text[:-1])}}}"
    if text == "Ē":
        return r"\bar{E}"
    return "".join(
        f"{GREEK[char]} " if char in GREEK else f"{MATH_RELATIONS[char]} " if char in MATH_RELATIONS else char
        for char in text
    ).strip()


def _math_index(index: str) -> str:
    """A sub/superscript: braces dropped, multi-letter words upright (eff, err, mass), symbols as math."""
    index = index.strip("{}")
    if len(index) > 1 and index.isalpha() and not any(char in GREEK for char in index):
        return rf"\mathrm{{{index}}}"
    return _math_symbols(index)


def _is_name_text(text: str) -> bool:
    """Text that is a path or file name (has a ``/`` or a file suffix, no spaces): its characters come from the user, not from this code."""
    return " " not in text and ("/" in text or "." in text)


def _escape(text: str, name: bool = False) -> str:
    """Plain text, character by character; a space before % becomes a thin space."""
    out = []
    for position, char in enumerate(text):
        if char == " " and text[position + 1 : position + 2] == "%":
            out.append(r"\,")
        elif char in TEXT_SYMBOLS:
            out.append(TEXT_SYMBOLS[char])
        elif char.isascii() or (
            char.isalpha() and 0xC0 <= ord(char) <= 0x17F
        ):  # Latin letters (ß, é …): utf8 inputenc with T1 fonts sets them
            out.append(char)
        elif name or _is_name_text(text):  # a folder or file name (a user's): any character, written as its code point
            out.append(f"[U+{ord(char):04X}]")
        else:
            raise ValueError(
                f"latex_text: no LaTeX form for {char!r} (U+{ord(char):04X}) in {text!r}; add it to paper.render_latex.TEXT_SYMBOLS"
            )
    return "".join(out)


def _plain(text: str) -> str:
    """Text without code spans or bold: index notation and scientific numbers as math, the rest escaped."""
    out, position = [], 0
    for match in TOKEN.finditer(text):
        groups = match.groupdict()
        if groups["sci"] is not None:
            math = rf"{groups['sci']}\times 10^{{{int(groups['exp'])}}}"
        elif groups["neg"] is not None:
            math = groups["neg"]
        elif groups["cle"] is not None:
            math = rf"C_{{\le {groups['cle']}}}"
        elif groups["sub"] is None and groups["sup"] is None:
            if not groups["base"].endswith(MACRON):
                continue
            math = _math_symbols(groups["base"])
        else:
            math = _math_symbols(groups["base"])
            math += f"_{{{_math_index(groups['sub'])}}}" if groups["sub"] is not None else ""
            math += f"^{{{_math_index(groups['sup'])}}}" if groups["sup"] is not None else ""
        out.append(_escape(text[position : match.start()]))
        out.append(f"${math}$")
        position = match.end()
    out.append(_escape(text[position:]))
    return "".join(out)


def _without_code(text: str) -> str:
    """Text that may hold **bold** but no code spans."""
    out, position = [], 0
    for match in BOLD.finditer(text):
        out.append(_plain(text[position : match.start()]))
        out.append(rf"\textbf{{{_plain(match.group(1))}}}")
        position = match.end()
    out.append(_plain(text[position:]))
    return "".join(out)


def latex_text(text: str) -> str:
    """The REPORTs' inline text as LaTeX (see the module docstring), the original study named so (never "the seed")."""
    text = original_study_wording(text)
    out, position = [], 0
    for match in CODE.finditer(text):
        out.append(_without_code(text[position : match.start()]))
        code = _escape(match.group(1), name=True).replace("/", r"/\allowbreak{}").replace(r"\_", r"\_\allowbreak{}")
        out.append(rf"\texttt{{{code}}}")
        position = match.end()
    out.append(_without_code(text[position:]))
    return "".join(out)


def turned(table: Table) -> Table:
    """The table with rows and columns swapped: a row per column, a column per row (its first cell as its header)."""
    header = ["", *(row[0] for row in table.rows)]
    return Table(
        header, [[name, *(row[index] for row in table.rows)] for index, name in enumerate(table.header) if index]
    )


def column_parts(table: Table, limit: int = MAX_COLUMNS) -> list[Table]:
    """A table of more than ``limit`` columns as several of at most ``limit``, each repeating the first (label) column."""
    if len(table.header) <= limit:
        return [table]
    rest = list(range(1, len(table.header)))
    chunks = [rest[start : start + limit - 1] for start in range(0, len(rest), limit - 1)]
    return [
        Table(
            [table.header[0], *(table.header[index] for index in chunk)],
            [[row[0], *(row[index] for index in chunk)] for row in table.rows],
        )
        for chunk in chunks
    ]


LONG_TABLE_ROWS = 20
"""A table with more rows than this is set as a ``longtable`` (footnote size, breaking across pages) instead of a boxed
tabular, which a page cannot split: a float or box taller than the page would run off it and lose rows."""


def render_table(table: Table) -> str:
    """A table of at most :data:`MAX_COLUMNS` columns as it is; a wider one turned when that fits (a few networks side
    by side, a row per statistic), else split into parts (:func:`column_parts`), one after the other."""
    if len(table.header) > MAX_COLUMNS and len(table.rows) < MAX_COLUMNS:
        table = turned(table)
    return "\n\\smallskip\n".join(render_tabular(part) for part in column_parts(table))


SHORT = 18  # a column whose cells are all at most this long is set at its natural width; a longer one wraps


def wraps(table: Table) -> list[bool]:
    """Per column, whether it wraps: none where the cells fit the line, else each of more than :data:`SHORT` characters."""
    widths = [max(len(row[column]) for row in [table.header, *table.rows]) for column in range(len(table.header))]
    if sum(widths) + 3 * len(widths) <= LINE_CHARS:
        return [False] * len(widths)
    return [width > SHORT for width in widths]


def long_columns(table: Table, wrapping: list[bool]) -> str:
    """A longtable's columns: the short ones at their natural width, the wrapping ones sharing what those leave of the
    line (about :data:`LONG_LINE_CHARS` characters of footnote-size type) in proportion to their widest cells, each
    capped at :data:`WIDEST_SHARE` characters and never below its longest word."""
    cells = [[row[column] for row in [table.header, *table.rows]] for column in range(len(table.header))]
    widths = [max(map(len, column)) + 2 for column in cells]
    left = 1 - sum(width for width, wrap in zip(widths, wrapping) if not wrap) / LONG_LINE_CHARS
    words = [2 + max(len(word) for cell in column for word in cell.split() or [""]) for column in cells]
    wanted = {index: max(min(widths[index], WIDEST_SHARE), words[index]) for index, wrap in enumerate(wrapping) if wrap}
    ragged = r">{\raggedright\arraybackslash}"
    return "".join(
        rf"{ragged}p{{\dimexpr {int(1000 * left * wanted[index] / sum(wanted.values())) / 1000:.3f}\linewidth-2\tabcolsep\relax}}"
        if index in wanted
        else "l"
        for index in range(len(wrapping))
    )


def render_tabular(table: Table) -> str:
    """A booktabs tabular, its wrapping columns (:func:`wraps`) sharing what the others leave of the line
    (``tabularx``), inside ``\\fitwidth`` (footnote size only when still wider than the line); more than
    :data:`LONG_TABLE_ROWS` rows: a longtable at footnote size (:func:`long_columns`)."""
    wrapping = wraps(table)
    header = " & ".join(latex_text(cell) for cell in table.header) + r" \\"
    rows = [" & ".join(latex_text(cell) for cell in row) + r" \\" for row in table.rows]
    ragged = r">{\raggedright\arraybackslash}"
    if len(table.rows) > LONG_TABLE_ROWS:  # taller than a page may hold: a longtable, which breaks across pages
        columns = long_columns(table, wrapping)
        return "\n".join(
            [
                r"{\footnotesize\setlength{\tabcolsep}{3pt}",
                rf"\begin{{longtable}}{{{columns}}}",
                r"\toprule",
                header,
                r"\midrule\endhead",
                r"\bottomrule\endlastfoot",
                *rows,
                r"\end{longtable}}",
            ]
        )
    columns = "".join(f"{ragged}X" if wrap else "l" for wrap in wrapping)
    environment = ("tabularx}{\\linewidth", "tabularx") if any(wrapping) else ("tabular", "tabular")
    return "\n".join(
        [
            r"\fitwidth{%",
            rf"\begin{{{environment[0]}}}{{{columns}}}",
            r"\toprule",
            header,
            r"\midrule",
            *rows,
            r"\bottomrule",
            rf"\end{{{environment[1]}}}}}",
        ]
    )


def render_block(block: Block) -> str:
    """One block as LaTeX."""
    block = named_original_study(block)
    if isinstance(block, Table):
        return render_table(block)
    if isinstance(block, Paragraph):
        return r"\tablerun{" + latex_text(block.text) + "}"
    if isinstance(block, Bullets):
        return (
            "\\begin{itemize}\n" + "\n".join(rf"\item {latex_text(item)}" for item in block.items) + "\n\\end{itemize}"
        )
    if isinstance(block, NotRun):
        return r"\notrun{" + latex_text(block.text) + "}"
    raise TypeError(f"not a table-model block: {block!r}")


def render_latex(blocks: Sequence[Block]) -> str:
    """A section's blocks as LaTeX, separated by blank lines (paragraph breaks)."""
    return "\n\n".join(render_block(block) for block in blocks) + "\n"
