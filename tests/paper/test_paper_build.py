"""The paper builds as a reader would read it: a PDF with no placeholder, no undefined reference or citation,
and no box wider than the stated limit. Skipped only where latexmk or pdflatex is absent (CI installs TeX Live)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from paper.build_log import BODY_PAGES, layout_problems

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
def test_paper_and_supplement_build_without_undefined_references_or_lost_content(tmp_path: Path) -> None:
    """Both documents, in the order `make paper` builds them (each reads the other's labels through xr), into a
    scratch folder: TEXINPUTS puts it before the checkout, so ``build/<doc>.aux`` is this build's, not a stale one."""
    build = tmp_path / "build"
    environment = {**os.environ, "TEXINPUTS": f"{tmp_path}:"}
    # the last pass is forced: in a fresh build latexmk does not know the supplement reads main.aux through xr
    for document, force in (("supplement", []), ("main", []), ("supplement", ["-g"])):
        result = subprocess.run(
            [
                "latexmk",
                *force,
                "-pdf",
                "-interaction=nonstopmode",
                "-halt-on-error",
                f"-outdir={build}",
                f"{document}.tex",
            ],
            cwd=REPO / "paper",
            capture_output=True,
            text=True,
            timeout=600,
            env=environment,
        )
        log_path = build / f"{document}.log"
        log = log_path.read_text(encoding="latin-1") if log_path.exists() else ""
        assert result.returncode == 0, f"latexmk {document}.tex failed:\n{result.stdout[-3000:]}\n{log[-3000:]}"
    for document in ("main", "supplement"):
        log = (build / f"{document}.log").read_text(encoding="latin-1")
        assert (build / f"{document}.pdf").stat().st_size > 0
        assert build_log_problems(log) == [], document
        assert layout_problems(log, document, BODY_PAGES if document == "main" else None) == []
