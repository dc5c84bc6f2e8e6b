"""Outputs that survive the unexpected: a figure interrupted mid-write never lands half-written at
its final path, and non-ASCII folder names (ß, 日本) reach tables.md and the LaTeX tables instead
of stopping make_tables with a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from experiment_1.report import plotting
from paper import make_tables

REPO = Path(__file__).resolve().parents[2]


def test_an_interrupted_figure_leaves_the_previous_one_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    figure, axes = plotting.new_figure()
    axes.plot([0, 1], [0, 1])
    png = plotting.save_figure(figure, tmp_path / "curve")
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    assert set(before) == {"curve.png", "curve.pdf"}

    def interrupted(self, target, **kwargs):  # half a file, then a signal
        stream = open(target, "wb") if isinstance(target, (str, Path)) else target
        stream.write(b"%PDF-1.4 half")
        stream.flush()
        raise KeyboardInterrupt

    figure, axes = plotting.new_figure()
    monkeypatch.setattr(type(figure), "savefig", interrupted)
    with pytest.raises(KeyboardInterrupt):
        plotting.save_figure(figure, tmp_path / "curve")
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before and png.exists()


def test_non_ascii_results_folders_reach_the_tables(tmp_path: Path) -> None:
    for name in ("results_ß_sample", "results_日本_sample"):
        shutil.copytree(REPO / "experiment_1" / "results_efficientnet_lite0_sample", tmp_path / "experiment_1" / name)
    summary_path = tmp_path / "experiment_1" / "results_日本_sample" / "summary.json"
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    summary["config"]["weights"] = "/data/my 日本 weights/ß.pth"  # a weights path with spaces and non-Latin letters
    summary_path.write_text(json.dumps(summary, ensure_ascii=False), encoding="utf-8")
    make_tables.main(["--root", str(tmp_path), "--all-runs"])
    tables = (tmp_path / "tables.md").read_text(encoding="utf-8")
    assert (
        "`experiment_1/results_ß_sample`" in tables
        and "`experiment_1/results_日本_sample`" in tables
        and "`/data/my 日本 weights/ß.pth`" in tables
    )
    latex = "".join(path.read_text(encoding="utf-8") for path in (tmp_path / "paper" / "generated").glob("table_*.tex"))
    assert "results\\_\\allowbreak{}ß\\_\\allowbreak{}sample" in latex and "[U+65E5][U+672C]" in latex
