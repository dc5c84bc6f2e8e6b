"""Every file proves its run: summary and per-image arrays carry one run id; paper.resummarize refuses another run's
arrays or a truncated npz and upgrades a legacy pair only when the counts agree; the random-init null must match
architecture and sample list. Cases work on a copy of one finished run (tests/fault_harness.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from experiment_1.errors import PipelineError, run_cli
from experiment_1.files import RUN_ID_ARRAY, SCHEMA_VERSION, atomic_save_npz, atomic_write_json, read_json
from experiment_1.step_4_plot import main as plot_1
from experiment_2.spectrum.verdicts import check_random_init_null
from fault_harness import expect_line, snapshot
from paper.resummarize import main as resummarize


def test_summary_and_per_image_arrays_carry_the_run(finished: Path) -> None:
    config = read_json(finished / "results" / "summary.json")["config"]
    with np.load(finished / "results" / "per_image.npz") as stored:
        assert str(stored[RUN_ID_ARRAY]) == config["run_id"] and len(config["run_id"]) == 64
    assert config["schema_version"] == SCHEMA_VERSION and len(config["sample_list_sha256"]) == 64


def test_resummarize_refuses_another_runs_arrays_and_a_truncated_npz(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = run / "results" / "summary.json"
    arrays = dict(np.load(run / "results" / "per_image.npz"))
    atomic_save_npz(run / "results" / "per_image.npz", {**arrays, RUN_ID_ARRAY: np.array("f" * 64)})
    before = snapshot(run / "results")
    line = expect_line(resummarize, ["--summary", str(summary)], capsys)
    assert "per_image.npz: from run ffffffffffff" in line and "summary.json is from run" in line
    data = (run / "results" / "per_image.npz").read_bytes()
    (run / "results" / "per_image.npz").write_bytes(data[: len(data) // 2])
    line = expect_line(resummarize, ["--summary", str(summary)], capsys)
    assert "per_image.npz: damaged or not a per_image.npz" in line
    assert (
        snapshot(run / "results").keys() == before.keys()
        and (run / "results" / "summary.json").read_bytes() == before["summary.json"]
    )


def test_resummarize_upgrades_a_legacy_pair_only_when_the_counts_agree(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary_path = run / "results" / "summary.json"
    summary = read_json(summary_path)
    legacy = {
        **summary,
        "config": {key: value for key, value in summary["config"].items() if key not in ("run_id", "schema_version")},
    }
    atomic_write_json(summary_path, {**legacy, "num_images": 2})
    arrays = {name: value for name, value in np.load(run / "results" / "per_image.npz").items() if name != RUN_ID_ARRAY}
    atomic_save_npz(run / "results" / "per_image.npz", arrays)
    assert "they are not of one run" in expect_line(resummarize, ["--summary", str(summary_path)], capsys)
    atomic_write_json(summary_path, legacy)
    line = expect_line(plot_1, ["--summary", str(summary_path)], capsys)
    assert f"schema version 1, this code reads version {SCHEMA_VERSION}" in line
    run_cli(resummarize, ["--summary", str(summary_path)])
    rebuilt = read_json(summary_path)
    assert (
        rebuilt["config"]["run_id"].startswith("npz-sha256:") and rebuilt["config"]["schema_version"] == SCHEMA_VERSION
    )
    assert rebuilt["metrics"] == summary["metrics"]


def test_resummarize_never_gives_an_id_less_summary_the_id_of_arrays_that_name_a_run(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A summary without its run id beside another run's per-image file (one that names its run) is refused: it never
    adopts that run's id."""
    summary_path = run / "results" / "summary.json"
    summary = read_json(summary_path)
    config = {key: value for key, value in summary["config"].items() if key not in ("run_id", "schema_version")}
    atomic_write_json(summary_path, {**summary, "config": config})
    before = snapshot(run / "results")
    line = expect_line(resummarize, ["--summary", str(summary_path)], capsys)
    assert f"per_image.npz: names run {summary['config']['run_id'][:12]}, but {summary_path} names no run" in line
    assert snapshot(run / "results") == before


def test_the_random_init_null_must_match_architecture_and_sample_list(tmp_path: Path) -> None:
    base = {
        "run_id": "a",
        "weights": "IMAGENET1K_V1",
        "arch": "resnet18",
        "sample_list_sha256": "s",
        "num_images": 10,
        "sample_index": "l.json",
        "input_size": 224,
    }
    summary, path, null_path = {"config": base}, tmp_path / "summary.json", tmp_path / "null.json"
    good = {
        "config": {**base, "run_id": "b", "weights": "random", "num_images": 4}
    }  # the first 4 images of the same list
    check_random_init_null(summary, path, good, null_path)
    cases = [
        (good, path, "is the same run"),
        ({"config": {**good["config"], "weights": "IMAGENET1K_V1"}}, null_path, "not a random-init null"),
        ({"config": {**good["config"], "arch": "resnet50"}}, null_path, "a resnet50 run"),
        ({"config": {**good["config"], "input_size": 64}}, null_path, "at 64 px but .* at 224 px"),
        ({"config": {**good["config"], "sample_list_sha256": "t"}}, null_path, "another sample list"),
        ({"config": {**good["config"], "num_images": 11}}, null_path, "another sample list"),
    ]
    for null, where, message in cases:
        with pytest.raises(PipelineError, match=message):
            check_random_init_null(summary, path, null, where)
    with pytest.raises(PipelineError, match="summary.json: a random-init run .*not the trained network"):
        check_random_init_null({"config": {**base, "weights": "random"}}, path, good, null_path)
