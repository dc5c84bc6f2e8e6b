"""Whether a 3C sweep can be an a priori test of the refined law (experiment_2/limit/laws.py, after_prediction): its
recorded commit must be the prediction's commit or descend from it, checked in a planted git repository (a commit
before the prediction, the prediction, one after it, a dirty run, an unknown commit, no commit, no git)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from experiment_2.limit import laws


def git(root: Path, *args: str) -> str:
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args]
    return subprocess.run(command, cwd=root, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture()
def history(tmp_path: Path, monkeypatch) -> dict[str, str]:
    git(tmp_path, "init", "-q")
    commits = {}
    for name in ("before", "prediction", "after"):
        (tmp_path / "file").write_text(name)
        git(tmp_path, "add", "file")
        git(tmp_path, "commit", "-q", "-m", name)
        commits[name] = git(tmp_path, "rev-parse", "HEAD")
    monkeypatch.setattr(laws, "PREDICTION_COMMIT", commits["prediction"])
    return commits


def test_a_run_at_or_after_the_prediction_can_test_it(history: dict[str, str], tmp_path: Path) -> None:
    for commit in (history["prediction"], history["after"], history["after"] + "-dirty", history["after"][:7]):
        assert laws.after_prediction({"git_commit": commit}, tmp_path) is None, commit


def test_a_run_before_the_prediction_cannot(history: dict[str, str], tmp_path: Path) -> None:
    before, prediction = history["before"], history["prediction"]
    assert laws.after_prediction({"git_commit": before}, tmp_path) == (
        f"it ran at commit {before[:12]}, before the prediction was committed ({prediction[:12]})"
    )


def test_an_unknown_or_missing_commit_proves_nothing(history: dict[str, str], tmp_path: Path) -> None:
    prediction = history["prediction"]
    unknown = "0123456789abcdef0123456789abcdef01234567"
    assert laws.after_prediction({"git_commit": unknown}, tmp_path) == (
        f"its commit {unknown[:12]} or the prediction's ({prediction[:12]}) is not in this repository's history "
        "(a shallow clone?)"
    )
    for config, shown in (({}, "None"), ({"git_commit": "unknown"}, "'unknown'"), ({"git_commit": "abc12"}, "'abc12'")):
        assert laws.after_prediction(config, tmp_path) == (
            f"it records no commit (config.git_commit {shown}), so nothing shows it ran after the prediction was "
            f"committed ({prediction[:12]})"
        )


def test_without_git_it_says_so(history: dict[str, str], tmp_path: Path, monkeypatch) -> None:
    def no_git(*args, **kwargs):
        raise FileNotFoundError("git")

    monkeypatch.setattr(laws.subprocess, "run", no_git)
    assert laws.after_prediction({"git_commit": history["after"]}, tmp_path) == (
        "git is not available to compare its commit with the prediction's"
    )


def test_git_says_nothing_on_the_terminal(history: dict[str, str], tmp_path: Path, capfd) -> None:
    laws.after_prediction({"git_commit": "0123456789abcdef0123456789abcdef01234567"}, tmp_path)  # git: "fatal: …"
    laws.after_prediction({"git_commit": history["before"]}, tmp_path)
    assert capfd.readouterr() == ("", "")
