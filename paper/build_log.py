"""The summary lines of ``make paper``, and the layout checks that fail its build.

    python -m paper.build_log paper/build/main.log paper/build/supplement.log

One line per document: the PDF's path, its pages and how many warnings its LaTeX log holds (LaTeX's and its
packages' ``Warning:`` lines, over- and underfull boxes). The build fails, with one line per problem, when a log
reports a float too large for its page (LaTeX then lets it run off the page and lose content), a box overfull by more
than :data:`OVERFULL_LIMIT_PT`, or when the paper's body (``main``) is longer than :data:`BODY_PAGES` pages.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from experiment_1.errors import PipelineError, run_cli

WARNING = re.compile(r"^(?:(?:LaTeX|Package|Class|pdfTeX)\b.*Warning|(?:Overfull|Underfull) \\[hv]box)", re.M)
FLOAT_TOO_LARGE = re.compile(r"Float too large for page by ([\d.]+)pt on input line (\d+)")
OVERFULL = re.compile(r"Overfull \\[hv]box \((\d+(?:\.\d+)?)pt too (?:wide|high)\)[^\n]*")
OVERFULL_LIMIT_PT = 10.0
BODY_PAGES = 21  # the paper's body: at most 20 pages of text, then the references; the supplement has no limit


def count_warnings(log: str) -> int:
    """The number of warnings (LaTeX, package, class, pdfTeX; over- and underfull boxes) in a LaTeX log."""
    return len(WARNING.findall(log))


def page_count(log: str) -> int | None:
    """The pages of the PDF the log reports written, ``None`` if it reports none."""
    pages = re.search(r"Output written on .*? \((\d+) pages?", log.replace("\n", ""))
    return int(pages.group(1)) if pages else None


def layout_problems(log: str, name: str, page_limit: int | None = None) -> list[str]:
    """Every float too large for its page, box overfull by more than the limit, and a page count over ``page_limit``."""
    problems = [
        f"{name}: a float is too large for its page by {match.group(1)} pt (input line {match.group(2)}); split it or "
        "make it a longtable"
        for match in FLOAT_TOO_LARGE.finditer(log)
    ]
    problems += [
        f"{name}: {match.group(0).strip()} (limit {OVERFULL_LIMIT_PT:g} pt)"
        for match in OVERFULL.finditer(log)
        if float(match.group(1)) > OVERFULL_LIMIT_PT
    ]
    pages = page_count(log)
    if page_limit is not None and pages is not None and pages > page_limit:
        problems.append(f"{name}: {pages} pages, more than the body's {page_limit}; move material to the supplement")
    return problems


def summary_line(log_path: Path) -> str:
    """``<pdf>: N pages; W warnings (see <log>)`` for the PDF beside ``log_path``."""
    pdf = log_path.with_suffix(".pdf")
    if not pdf.is_file() or not log_path.is_file():
        raise PipelineError(
            f"{pdf}: not built; rerun `make paper` (latexmk's output is in {log_path.parent / 'latexmk.out'})"
        )
    log = log_path.read_text(encoding="latin-1")
    pages = page_count(log)
    count = count_warnings(log)
    return (
        f"{pdf}"
        + (f": {pages} pages" if pages is not None else "")
        + f"; {count} LaTeX warning{'s' if count != 1 else ''}"
        + (f" (see {log_path})" if count else "")
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("logs", type=Path, nargs="+", help="the LaTeX logs of the build (paper/build/main.log, …)")
    args = parser.parse_args(argv)
    problems = []
    for log_path in args.logs:
        print(summary_line(log_path))
        limit = BODY_PAGES if log_path.stem == "main" else None
        problems += layout_problems(log_path.read_text(encoding="latin-1"), str(log_path), limit)
    if problems:
        raise PipelineError("the paper's layout loses content:\n" + "\n".join(problems))


if __name__ == "__main__":
    run_cli(main)
