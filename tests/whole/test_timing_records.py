"""Timing records are checked where they are read: a timing.json or a pass record with an impossible number is one line
naming the file, never a number in a REPORT or table and never a traceback after the summary was written."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pytest

from experiment_1.errors import PipelineError
from experiment_1.files import read_timing
from experiment_1.run import distributed
from experiment_1.step_4_plot import main as plot_1
from paper.committed_runs import committed_glob

REPO = Path(__file__).resolve().parents[2]
GOOD = {
    "wall_seconds": 12.5,
    "images_evaluated": 2,
    "passes": 1,
    "processes": [
        {
            "pass": "h-1-a",
            "rank": 0,
            "host": "h",
            "started_utc": "2026-01-01T00:00:00+00:00",
            "wall_seconds": 12.5,
            "images_evaluated": 2,
        }
    ],
}


def write(path: Path, value: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value))
    return path


def test_a_good_record_reads_and_a_missing_one_is_none(tmp_path: Path) -> None:
    assert read_timing(write(tmp_path / "timing.json", GOOD), num_images=2) == GOOD
    assert read_timing(tmp_path / "absent.json") is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"wall_seconds": math.inf}, "wall_seconds is inf, not a finite number of seconds ≥ 0"),
        ({"wall_seconds": -1.0}, "wall_seconds is -1.0, not a finite number"),
        ({"wall_seconds": "12"}, "wall_seconds is '12', not a finite number"),
        ({"images_evaluated": 6}, "says 6 images were evaluated in 1 pass(es) of a run of 2 images"),
        ({"images_evaluated": 0}, "says no image was evaluated"),
        ({"images_evaluated": 2.5}, "images_evaluated is 2.5, not a count ≥ 0"),
        ({"processes": [{**GOOD["processes"][0], "wall_seconds": math.nan}]}, "wall_seconds is nan"),
    ],
)
def test_an_impossible_timing_json_is_one_line(tmp_path: Path, change: dict, message: str) -> None:
    path = tmp_path / "timing.json"
    path.write_text(json.dumps({**GOOD, **change}).replace("Infinity", "Infinity"))
    with pytest.raises(
        PipelineError,
        match="^" + str(path).replace(".", r"\.") + ": " + message.replace("(", r"\(").replace(")", r"\)"),
    ):
        read_timing(path, num_images=2)


def test_a_malformed_pass_record_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "partial" / "stage" / distributed.FOLDER
    write(folder / "a.json", GOOD["processes"][0])
    assert len(distributed.records(tmp_path)) == 1
    write(
        folder / "b.json",
        {key: value for key, value in GOOD["processes"][0].items() if key != "host"} | {"pass": "other"},
    )
    with pytest.raises(PipelineError, match="b.json: lacks its pass id, host, start time or rank"):
        distributed.records(tmp_path)
    write(folder / "b.json", {**GOOD["processes"][0], "pass": "other", "images_evaluated": -3})
    with pytest.raises(PipelineError, match="b.json: images_evaluated is -3"):
        distributed.records(tmp_path)


def test_a_plot_step_refuses_a_bad_timing_json_before_it_writes(tmp_path: Path, expect_one_line) -> None:
    source = REPO / "experiment_1" / "results_efficientnet_lite0_sample"
    folder = tmp_path / "results"
    folder.mkdir()
    shutil.copy(source / "summary.json", folder / "summary.json")
    write(folder / "timing.json", {**GOOD, "wall_seconds": math.inf})
    line = expect_one_line(plot_1, ["--summary", str(folder / "summary.json")])
    assert "timing.json: wall_seconds is inf" in line
    assert not (folder / "REPORT.md").exists()


COMMITTED_TIMINGS = committed_glob(REPO, "experiment_*/results*/**/timing.json")


def commit_problem(record: dict) -> str | None:
    """Why a process record does not name the commit it evaluated with, or None: a 40-hex ``git_commit`` (recorded by
    the process, or inferred with ``git_commit_source`` saying how and naming that commit), or ``not recorded`` with
    ``git_commit_source`` saying why."""
    commit, source = record.get("git_commit"), record.get("git_commit_source")
    if commit == distributed.NOT_RECORDED:
        return None if isinstance(source, str) and source.strip() else "'not recorded' without git_commit_source"
    if not isinstance(commit, str) or not re.fullmatch(r"[0-9a-f]{40}", commit):
        return f"git_commit is {commit!r}"
    if source is not None and not (source.startswith("inferred") and commit[:7] in source):
        return f"git_commit_source does not say how {commit[:7]} was inferred: {source!r}"
    return None


def test_every_committed_process_record_names_its_commit() -> None:
    problems = [
        f"{path.relative_to(REPO)} pass {record.get('pass')}: {problem}"
        for path in COMMITTED_TIMINGS
        for record in json.loads(path.read_text())["processes"]
        if (problem := commit_problem(record))
    ]
    assert len(COMMITTED_TIMINGS) >= 70 and not problems, problems


@pytest.mark.parametrize(
    ("record", "named"),
    [
        ({"git_commit": "a" * 40}, True),
        ({"git_commit": "a" * 40, "git_commit_source": "inferred from aaaaaaa's message"}, True),
        ({"git_commit": "a" * 40, "git_commit_source": "inferred from bbbbbbb's message"}, False),  # names another
        ({"git_commit": "a" * 39}, False),
        ({}, False),
        ({"git_commit": distributed.NOT_RECORDED, "git_commit_source": "the run predates per-process commits"}, True),
        ({"git_commit": distributed.NOT_RECORDED}, False),  # unexplained
    ],
)
def test_the_commit_rule_at_its_edges(record: dict, named: bool) -> None:
    assert (commit_problem(record) is None) is named
