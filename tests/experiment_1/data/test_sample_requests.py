"""The original study's sample commands on a smaller data folder: a request the data cannot meet (more images, more
per class, more classes) is said in one line, and their default outputs stay out of git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from experiment_1.files import read_json
from experiment_1.step_2_sample import main as sample_main

REPO = Path(__file__).resolve().parents[3]


def notes(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.strip()]


def test_a_request_the_data_cannot_meet_is_one_line(
    tiny_shards: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "list.json"
    sample_main(["--data-dir", str(tiny_shards), "--mode", "uniform", "--num-images", "10000", "--output", str(output)])
    assert notes(capsys) == [
        "note: asked for 10000 images, the data has 7 matching 'test-*.parquet': the list holds all 7"
    ]
    assert read_json(output)["num_images"] == 7
    sample_main(
        [
            "--data-dir",
            str(tiny_shards),
            "--pattern",
            "validation-*.parquet",
            "--mode",
            "per-class",
            "--per-class",
            "10",
            "--output",
            str(output),
        ]
    )
    assert notes(capsys) == [
        "note: asked for 10 images per class, 3 of the 3 classes have fewer (4–4; 4.00 per class on average): the list holds 12 images, not 30"
    ]
    sample_main(
        [
            "--data-dir",
            str(tiny_shards),
            "--pattern",
            "validation-*.parquet",
            "--mode",
            "per-class",
            "--per-class",
            "2",
            "--num-classes",
            "5",
            "--output",
            str(output),
        ]
    )
    assert notes(capsys) == ["note: asked for 5 classes, 3 qualify"]


def test_a_request_that_is_met_says_nothing_more(
    tiny_shards: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample_main(
        ["--data-dir", str(tiny_shards), "--mode", "uniform", "--num-images", "7", "--output", str(tmp_path / "a.json")]
    )
    sample_main(
        [
            "--data-dir",
            str(tiny_shards),
            "--pattern",
            "validation-*.parquet",
            "--mode",
            "per-class",
            "--per-class",
            "4",
            "--output",
            str(tmp_path / "b.json"),
        ]
    )
    assert notes(capsys) == []


@pytest.mark.parametrize("path", ["experiment_1/sample_index.json", "experiment_1/sample_index_val.json"])
def test_the_original_studys_sample_lists_are_git_ignored(path: str) -> None:
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    result = subprocess.run(["git", "check-ignore", "-q", path], cwd=REPO)
    assert result.returncode == 0, (
        f"{path} (step_2_sample's default output, the original study's commands) is not git-ignored"
    )


def test_committed_sample_lists_are_not_ignored() -> None:
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    result = subprocess.run(
        ["git", "check-ignore", "experiment_1/sample_index_sample_test.json"], cwd=REPO, capture_output=True, text=True
    )
    assert result.returncode == 1
