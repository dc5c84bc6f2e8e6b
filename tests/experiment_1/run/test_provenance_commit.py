"""The commit a run records: clean while only run outputs changed, ``-dirty`` once code or docs did."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from experiment_1.files import git_commit, write_json_keeping_commit


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


def test_rewritten_results_are_not_dirt_but_edited_code_is(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    for name in (
        "experiment_2/results_x/summary.json",
        "experiment_2/spectrum/evaluation.py",
        "experiment_1/sample_index_test.json",
        "Makefile",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("0\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    head = git(tmp_path, "rev-parse", "HEAD")
    assert git_commit(tmp_path) == head
    (tmp_path / "experiment_2/results_x/summary.json").write_text("1\n")  # a rerun rewrote a committed result
    (tmp_path / "experiment_1/sample_index_test.json").write_text("1\n")
    (tmp_path / "experiment_2/results_x/new.png").write_text("1\n")  # untracked output
    assert git_commit(tmp_path) == head
    for edited in ("experiment_2/spectrum/evaluation.py", "Makefile"):
        (tmp_path / edited).write_text("1\n")
        assert git_commit(tmp_path) == head + "-dirty", edited
        git(tmp_path, "checkout", "-q", "--", edited)
    assert git_commit(tmp_path) == head
    assert git_commit(tmp_path / "missing") == "unknown"


def test_a_re_decision_that_changes_nothing_but_the_commit_keeps_the_file(tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    first = {"config": {"git_commit": "aaa", "seeds": 3}, "verdicts": [{"decision": "holds"}]}
    assert write_json_keeping_commit(path, first)
    written = path.read_bytes()
    assert not write_json_keeping_commit(path, {**first, "config": {"git_commit": "bbb-dirty", "seeds": 3}})
    assert path.read_bytes() == written  # same decision from another (or an edited) tree: the deciding commit stays
    changed = {"config": {"git_commit": "bbb", "seeds": 3}, "verdicts": [{"decision": "fails"}]}
    assert write_json_keeping_commit(path, changed)
    assert json.loads(path.read_text()) == changed  # another decision records the commit that made it
    assert write_json_keeping_commit(path, {**changed, "config": {"git_commit": "ccc", "seeds": 4}})
    assert json.loads(path.read_text())["config"] == {"git_commit": "ccc", "seeds": 4}
    path.write_text("{damaged")
    assert write_json_keeping_commit(path, first) and json.loads(path.read_text()) == first
