"""`make paper` is quiet — one line: the PDF's path, its pages and the LaTeX log's warning count (latexmk's transcript
goes to paper/build/latexmk.out) — and the PDF carries its title and author in its metadata."""

from __future__ import annotations

import re
import shutil
import sys
import zlib
from pathlib import Path

import pytest

from conftest import run_make
from paper.build_log import count_warnings

REPO = Path(__file__).resolve().parents[2]
HAS_TEX = bool(shutil.which("latexmk") and shutil.which("pdflatex") and shutil.which("make"))


def paper_recipe() -> list[str]:
    lines = (REPO / "Makefile").read_text().splitlines()
    start = lines.index(next(line for line in lines if line.startswith("paper:")))
    recipe = []
    for line in lines[start + 1 :]:
        if not line.startswith("\t") and not (recipe and recipe[-1].endswith("\\")):
            break
        recipe.append(line)
    return recipe


def test_the_paper_target_echoes_nothing_and_keeps_latexmks_transcript_in_a_file() -> None:
    commands = [
        line.strip()
        for line in paper_recipe()
        if line.startswith("\t@") or line.startswith("\t") and not line.startswith("\t\t")
    ]
    assert commands and all(command.startswith("@") for command in commands), commands
    latexmk = next(line for line in paper_recipe() if "latexmk -pdf" in line)
    assert "-silent" in latexmk and ">build/latexmk.out 2>&1" in latexmk
    assert any("paper.build_log" in line for line in paper_recipe())


def test_warnings_are_counted_from_the_log() -> None:
    log = (
        "LaTeX Warning: Float too large for page by 1317.75645pt on input line 34.\n"
        "Package hyperref Warning: Token not allowed in a PDF string on input line 3.\n"
        "Overfull \\hbox (0.11pt too wide) in alignment at lines 9--9\nUnderfull \\vbox (badness 10000) has occurred\n"
        "a line that mentions a Warning in passing\n"
    )
    assert count_warnings(log) == 4 and count_warnings("") == 0


def test_main_tex_sets_the_pdf_title_and_author() -> None:
    main = (REPO / "paper" / "main.tex").read_text()
    preamble = (REPO / "paper" / "preamble.tex").read_text()  # shared by the paper and its supplement
    assert re.search(r"\\hypersetup\{pdftitle=\{Do residual networks route\?", main)
    assert re.search(
        r"\\hypersetup\{pdftitle=\{Supplement: Do residual networks route\?",
        (REPO / "paper" / "supplement.tex").read_text(),
    )
    assert "pdfauthor={The MOE-ResNet project}" in preamble and r"\input{preamble}" in main


def pdf_info(pdf: bytes) -> bytes:
    """The PDF's bytes with every Flate stream inflated (the Info dictionary may sit in an object stream)."""
    parts = [pdf]
    for match in re.finditer(rb"stream\r?\n(.*?)endstream", pdf, re.S):
        try:
            parts.append(zlib.decompress(match.group(1)))
        except zlib.error:
            pass
    return b"\n".join(parts)


@pytest.mark.skipif(not HAS_TEX, reason="TeX Live (latexmk, pdflatex) or make not installed")
def test_make_paper_prints_one_line_per_document_and_the_pdf_has_title_and_author() -> None:
    venv = Path(sys.executable).parent.parent
    result = run_make("-s", "-o", f"{venv}/bin/.installed", f"VENV={venv}", "paper", timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert len(lines) == 2, lines  # one line per document: the paper, then its supplement
    for line, document in zip(lines, ("main", "supplement")):
        assert re.fullmatch(
            rf"paper/build/{document}\.pdf: \d+ pages; \d+ LaTeX warnings?( \(see paper/build/{document}\.log\))?", line
        ), lines
    info = pdf_info((REPO / "paper" / "build" / "main.pdf").read_bytes())
    assert re.search(rb"/Title\s*\((?:\\376\\377|\xfe\xff)?[^)]*D", info) and re.search(rb"/Author\s*\(", info)
