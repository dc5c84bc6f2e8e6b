"""Demo and scratch runs never enter the committed tables or the paper: paper/committed_runs.txt decides."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from experiment_1.errors import PipelineError
from paper.committed_runs import MANIFEST, allow_all_runs, committed_glob, committed_runs, is_committed
from paper.make_tables import section_blocks
from paper.render_markdown import render_markdown

REPO = Path(__file__).resolve().parents[2]


def _timing(folder: Path, seconds: float) -> None:
    folder.mkdir(parents=True)
    (folder / "timing.json").write_text(
        json.dumps({"wall_seconds": seconds, "images_evaluated": 2, "device_name": "cpu", "engine": "tree"})
    )


def test_only_listed_runs_reach_the_tables(tmp_path: Path) -> None:
    _timing(tmp_path / "experiment_1" / "results_efficientnet_lite0_sample", 10.0)
    _timing(tmp_path / "experiment_1" / "results_demo_efficientnet_lite0", 7.0)  # make demo
    _timing(tmp_path / "experiment_2" / "results_mine", 5.0)  # a scratch --output-dir
    with pytest.raises(PipelineError, match="committed_runs.txt: not found; .* or pass --all-runs"):
        section_blocks("wall_time", tmp_path)  # no manifest: refused
    allow_all_runs(tmp_path)  # --all-runs: a generated tree
    unfiltered = render_markdown(section_blocks("wall_time", tmp_path))
    assert "results_demo" in unfiltered and "results_mine" in unfiltered
    (tmp_path / MANIFEST).parent.mkdir()
    (tmp_path / MANIFEST).write_text("# committed\nexperiment_1/results_efficientnet_lite0_sample/  # the real run\n")
    text = render_markdown(section_blocks("wall_time", tmp_path))
    assert "results_efficientnet_lite0_sample" in text
    assert "results_demo" not in text and "results_mine" not in text
    assert "| all runs, each pass once |  |  |  |  | 10 (" in text  # the total counts the listed run only


def test_a_listed_file_admits_that_file_only(tmp_path: Path) -> None:
    bench = tmp_path / "experiment_1" / "results_bench"
    bench.mkdir(parents=True)
    for name in ("bench_cpu_224px.json", "bench_cpu_32px.json"):
        (bench / name).write_text("{}")
    (tmp_path / MANIFEST).parent.mkdir()
    (tmp_path / MANIFEST).write_text("experiment_1/results_bench/bench_cpu_224px.json\n")
    assert [path.name for path in committed_glob(tmp_path, "experiment_1/results_bench/*.json")] == [
        "bench_cpu_224px.json"
    ]


def test_the_manifest_lists_exactly_the_committed_results() -> None:
    """Every tracked results folder (bench and profile: file) is listed, and every listed path is tracked."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    tracked = subprocess.run(
        ["git", "ls-files", "--", "*results*"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    runs = committed_runs(REPO)
    assert runs is not None
    unlisted = sorted({path for path in tracked if not any(path == run or path.startswith(run + "/") for run in runs)})
    assert not unlisted, f"committed results missing from {MANIFEST}: {unlisted}"
    untracked = sorted(run for run in runs if not any(path == run or path.startswith(run + "/") for path in tracked))
    assert not untracked, f"{MANIFEST} lists runs that are not committed: {untracked}"


def test_every_committed_results_file_is_in_the_manifest() -> None:
    """A results folder committed without its manifest line never reaches tables.md or the paper, silently: every
    tracked file under a results folder (``experiment_*/results*/``, ``paper/results*/``) must be covered by a line of
    paper/committed_runs.txt."""
    listed = subprocess.run(
        ["git", "ls-files", "experiment_*/results*/*", "paper/results*/*"], cwd=REPO, capture_output=True, text=True
    )
    if listed.returncode != 0:
        pytest.skip(f"not a git checkout: {listed.stderr.strip()}")
    files = [REPO / line for line in listed.stdout.splitlines()]
    assert len(files) > 100  # the committed runs are there to check
    runs = committed_runs(REPO)
    unlisted = sorted({str(path.relative_to(REPO).parent) for path in files if not is_committed(path, REPO, runs)})
    assert not unlisted, f"add these results folders to {MANIFEST}: {unlisted}"
