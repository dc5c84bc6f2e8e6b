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


def _summary(folder: Path, share: float) -> None:
    folder.mkdir(parents=True)
    (folder / "summary.json").write_text(json.dumps({"share": share}))


def test_a_run_taken_out_of_the_manifest_feeds_no_macro(tmp_path: Path) -> None:
    from paper.macros import Macro, macros_tex

    _summary(tmp_path / "experiment_9" / "results_listed", 0.5)
    _summary(tmp_path / "experiment_9" / "results_unlisted", 0.25)  # on disk, out of the manifest
    (tmp_path / MANIFEST).parent.mkdir()
    (tmp_path / MANIFEST).write_text("experiment_9/results_listed\n")
    macros = [
        Macro("Listed", "experiment_9/results_listed/summary.json", ("share",), "percent"),
        Macro("Unlisted", "experiment_9/results_unlisted/summary.json", ("share",), "percent"),
    ]
    lines = [line.split("% {")[0] for line in macros_tex(tmp_path, macros).splitlines()[2:]]
    assert lines == [r"\newcommand{\Listed}{50.0\,\%}", r"\newcommand{\Unlisted}{\resultnotrun}"]


def test_a_listed_run_that_is_missing_is_refused_in_one_line(tmp_path: Path, expect_one_line) -> None:
    from paper import make_tables

    _timing(tmp_path / "experiment_1" / "results_efficientnet_lite0_sample", 10.0)
    (tmp_path / MANIFEST).parent.mkdir()
    (tmp_path / MANIFEST).write_text(
        "experiment_1/results_efficientnet_lite0_sample\nexperiment_1/results_efficientnet_lite1_sample\n"
    )
    with pytest.raises(PipelineError, match="lists experiment_1/results_efficientnet_lite1_sample, which is not there"):
        section_blocks("wall_time", tmp_path)  # never a wall-time total that silently lost a run
    line = expect_one_line(make_tables.main, ["--root", str(tmp_path)])
    assert "results_efficientnet_lite1_sample, which is not there" in line and "remove its line" in line


@pytest.mark.parametrize("index", ["../outside/sample_index.json", "/tmp/sample_index.json"])
def test_a_sample_list_path_out_of_the_repository_is_refused(tmp_path: Path, index: str) -> None:
    from paper.checks import check_whole_list

    root, outside = tmp_path / "repo", tmp_path / "outside"
    outside.mkdir()
    (outside / "sample_index.json").write_text(json.dumps({"num_images": 4}))  # what a 4-image run would pass against
    root.mkdir()
    summary = {"num_images": 4, "config": {"sample_index": index}}
    with pytest.raises(
        PipelineError, match=r"^experiment_1/results_x/summary.json: its config.sample_index .* leaves the repository"
    ):
        check_whole_list(root, "experiment_1/results_x/summary.json", summary)
