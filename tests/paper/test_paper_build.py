"""The paper builds as a reader would read it: a PDF with no placeholder, no undefined reference or citation,
and no box wider than the stated limit. Skipped only where latexmk or pdflatex is absent (CI installs TeX Live)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
OVERFULL_LIMIT_PT = 2.0  # an overfull box wider than this fails (a table or a path running into the margin)
PLACEHOLDERS = re.compile(
    r"no verdicts block|verdictsabsent|\\resultnotrun|\\figurenotrun|\\notrun\{|TODO|XXX|\?\?", re.IGNORECASE
)
UNDEFINED = re.compile(r"(?:Reference|Citation) `[^']+' .*undefined|There were undefined (?:references|citations)")
OVERFULL = re.compile(r"Overfull \\hbox \((\d+(?:\.\d+)?)pt too wide\)")
FONT_SHRINK = re.compile(r"\\(?:scriptsize|tiny)\b|\\resizebox|\\scalebox")


def generated_and_sections() -> list[Path]:
    paper = REPO / "paper"
    return [
        paper / "main.tex",
        *sorted((paper / "sections").glob("*.tex")),
        *sorted((paper / "generated").glob("*.tex")),
    ]


def test_paper_sources_hold_no_placeholder_and_no_shrunk_type() -> None:
    for path in generated_and_sections():
        text = path.read_text(encoding="utf-8")
        body = (
            text if path.parent.name != "paper" else text.split(r"\begin{document}", 1)[-1]
        )  # main.tex defines the hooks
        match = PLACEHOLDERS.search(body)
        assert match is None, (
            f"{path.relative_to(REPO)}: placeholder {match.group(0)!r}; the result it stands for is missing"
        )
        shrink = FONT_SHRINK.search(body)
        assert shrink is None, f"{path.relative_to(REPO)}: {shrink.group(0)} sets type below footnote size"


def test_every_figure_is_shown() -> None:
    from paper.figures import FIGURES

    sources = "".join(path.read_text(encoding="utf-8") for path in (REPO / "paper" / "sections").glob("*.tex"))
    assert [name for name in FIGURES if f"\\{name}[" not in sources and f"\\{name}" + "{" not in sources] == []


def build_log_problems(log: str, limit: float = OVERFULL_LIMIT_PT) -> list[str]:
    """Every undefined reference or citation, and every overfull box wider than ``limit`` points, in a LaTeX log."""
    problems = [match.group(0) for match in UNDEFINED.finditer(log)]
    problems += [match.group(0) for match in OVERFULL.finditer(log) if float(match.group(1)) > limit]
    return problems


def test_log_check_finds_what_it_looks_for() -> None:
    log = (
        "LaTeX Warning: Reference `tab:nine' on page 3 undefined on input line 12.\n"
        "Overfull \\hbox (1.5pt too wide) in paragraph at lines 1--2\nOverfull \\hbox (40.2pt too wide) in alignment at lines 9--9\n"
    )
    assert build_log_problems(log) == ["Reference `tab:nine' on page 3 undefined", "Overfull \\hbox (40.2pt too wide)"]
    assert build_log_problems("Overfull \\hbox (1.9pt too wide)\n") == []


@pytest.mark.skipif(
    not (shutil.which("latexmk") and shutil.which("pdflatex")), reason="TeX Live (latexmk, pdflatex) not installed"
)
def test_paper_builds_without_undefined_references_or_overfull_boxes(tmp_path: Path) -> None:
    build = tmp_path / "build"
    result = subprocess.run(
        ["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error", f"-outdir={build}", "main.tex"],
        cwd=REPO / "paper",
        capture_output=True,
        text=True,
        timeout=600,
    )
    log = (build / "main.log").read_text(encoding="latin-1") if (build / "main.log").exists() else ""
    assert result.returncode == 0, f"latexmk failed:\n{result.stdout[-3000:]}\n{log[-3000:]}"
    assert (build / "main.pdf").stat().st_size > 0
    assert build_log_problems(log) == []
