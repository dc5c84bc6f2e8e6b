"""The evaluating commit is recorded by every process that evaluated images (timing.json ``processes``), not taken from
the call that wrote the summary: a run resumed across two commits names both, in order; a timing.json written before
processes recorded their commit reads "not recorded"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import experiment_1.reconstruction.single_pass as reconstruction_pass
import experiment_1.step_3_evaluate as step_3
from conftest import evaluation_flags
from experiment_1.report.markdown import evaluating_commit_sentence
from experiment_1.run import distributed
from experiment_1.step_2_sample import main as sample_main
from experiment_1.step_4_plot import main as plot_main

FIRST, SECOND = "a" * 40, "b" * 40


def test_a_run_resumed_across_two_commits_names_both_in_timing_and_report(
    tiny_shards: Path, tmp_path: Path, small_input: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    sample_index = tmp_path / "sample_index.json"
    sample_main(
        ["--data-dir", str(tiny_shards), "--pattern", "validation-*.parquet", "--mode", "uniform"]
        + ["--num-images", "5", "--output", str(sample_index)]
    )
    output = tmp_path / "resumed"
    original = reconstruction_pass.reconstruction_metrics
    calls = {"count": 0}

    def interrupt_after_first_batch(logits, labels):
        calls["count"] += 1
        if calls["count"] == 2:
            raise KeyboardInterrupt
        return original(logits, labels)

    monkeypatch.setattr(distributed, "git_commit", lambda: FIRST)  # the code at the first process's start
    monkeypatch.setattr(reconstruction_pass, "reconstruction_metrics", interrupt_after_first_batch)
    with pytest.raises(KeyboardInterrupt):
        step_3.main(evaluation_flags(tiny_shards, sample_index, output))
    monkeypatch.setattr(reconstruction_pass, "reconstruction_metrics", original)
    monkeypatch.setattr(distributed, "git_commit", lambda: SECOND)  # a new commit, then the run resumed
    step_3.main(evaluation_flags(tiny_shards, sample_index, output))

    timing = json.loads((output / "timing.json").read_text())
    assert [(record["git_commit"], record["images_evaluated"]) for record in timing["processes"]] == [
        (FIRST, 2),
        (SECOND, 3),
    ]
    assert timing["evaluating_commits"] == [FIRST, SECOND]
    summary = json.loads((output / "summary.json").read_text())
    assert summary["config"]["git_commit"] not in (FIRST, SECOND)  # the summarising call's commit is another thing
    plot_main(["--summary", str(output / "summary.json")])
    report = (output / "REPORT.md").read_text()
    assert f"evaluated the images: `{FIRST}`, `{SECOND}` (2 commits: the run was resumed across them)" in report


def test_the_commits_of_processes_that_evaluated_each_once_and_old_records_not_recorded() -> None:
    record = {"pass": "p", "rank": 0, "host": "h", "started_utc": "t", "wall_seconds": 1.0, "images_evaluated": 2}
    same = [{**record, "git_commit": FIRST}, {**record, "pass": "q", "git_commit": FIRST}]
    assert distributed.evaluating_commits({"processes": same}) == [FIRST]
    idle = {**record, "pass": "r", "git_commit": SECOND, "images_evaluated": 0}  # a summarising call: evaluated nothing
    assert distributed.evaluating_commits({"processes": [*same, idle]}) == [FIRST]
    assert distributed.evaluating_commits({"processes": [record, *same]}) == [distributed.NOT_RECORDED, FIRST]
    assert distributed.evaluating_commits({"processes": [record]}) == [distributed.NOT_RECORDED]
    assert distributed.evaluating_commits({"wall_seconds": 1.0, "images_evaluated": 2}) == [distributed.NOT_RECORDED]
    assert distributed.evaluating_commits(None) == [distributed.NOT_RECORDED]


def test_the_report_sentence_for_old_new_and_missing_timing() -> None:
    config = {"git_commit": "c" * 40}
    old = evaluating_commit_sentence(config, {"wall_seconds": 1.0, "images_evaluated": 2})
    assert "not recorded (this timing.json predates per-process commits)" in old and f"`{'c' * 40}`" in old
    assert "not recorded (no timing.json)" in evaluating_commit_sentence(config, None)
    one = evaluating_commit_sentence(config, {"evaluating_commits": [FIRST]})
    assert f"evaluated the images: `{FIRST}`." in one and "resumed" not in one
