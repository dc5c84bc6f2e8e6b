"""The one summary line of ``make paper``: the PDF's path and how many warnings its LaTeX log holds.

    python -m paper.build_log paper/build/main.log

Warnings counted: LaTeX's and its packages' ``Warning:`` lines (undefined references, floats too large …) and
overfull or underfull boxes; the log itself (named in the line) has each one.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from experiment_1.errors import PipelineError, run_cli

WARNING = re.compile(r"^(?:(?:LaTeX|Package|Class|pdfTeX)\b.*Warning|(?:Overfull|Underfull) \\[hv]box)", re.M)


def count_warnings(log: str) -> int:
    """The number of warnings (LaTeX, package, class, pdfTeX; over- and underfull boxes) in a LaTeX log."""
    return len(WARNING.findall(log))


def summary_line(log_path: Path) -> str:
    """``<pdf>: N pages; W warnings (see <log>)`` for the PDF beside ``log_path``."""
    pdf = log_path.with_suffix(".pdf")
    if not pdf.is_file() or not log_path.is_file():
        raise PipelineError(
            f"{pdf}: not built; rerun `make paper` (latexmk's output is in {log_path.parent / 'latexmk.out'})"
        )
    log = log_path.read_text(encoding="latin-1")
    pages = re.search(r"Output written on .*? \((\d+) pages?", log.replace("\n", ""))
    count = count_warnings(log)
    return (
        f"{pdf}"
        + (f": {pages.group(1)} pages" if pages else "")
        + f"; {count} LaTeX warning{'s' if count != 1 else ''}"
        + (f" (see {log_path})" if count else "")
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log", type=Path, help="the LaTeX log of the build (paper/build/main.log)")
    args = parser.parse_args(argv)
    print(summary_line(args.log))


if __name__ == "__main__":
    run_cli(main)
