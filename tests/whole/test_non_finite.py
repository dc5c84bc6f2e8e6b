"""Finite or nothing: a non-finite logit stops the run naming the image, λ and the weights; a non-finite statistic
is never written, read or concluded from, and renderers show "n/a — non-finite". Cases work on a copy of one
finished run (tests/fault_harness.py)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
import torchvision

import experiment_1.step_3_evaluate as step_3
from experiment_1.files import atomic_save_npz, atomic_write_json, read_json
from experiment_1.reconstruction.verdicts import verdicts as reconstruction_verdicts
from experiment_1.report.markdown import NON_FINITE, format_number, format_percent, format_stat
from experiment_1.step_4_plot import main as plot_1
from experiment_2 import step_3_lambda_sweep
from fault_harness import SHARD, expect_line, flags, snapshot
from paper.resummarize import main as resummarize


def test_a_nan_parameter_stops_the_run_naming_image_lambda_and_weights(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = torchvision.models.resnet18().state_dict()
    state["layer4.1.conv2.weight"][0, 0, 0, 0] = float("nan")
    weights = run / "nan.pth"
    torch.save(state, weights)
    argv = [*flags(run, output=run / "nan"), "--weights", str(weights)]
    line = expect_line(step_3.main, argv, capsys)
    assert (
        line.startswith("error: non-finite logits")
        and f"{SHARD} row 0" in line
        and "λ = 1" in line
        and str(weights) in line
    )
    assert not (run / "nan" / "summary.json").exists() and not list((run / "nan").rglob("batch_*.pt"))


def test_a_huge_lambda_stops_the_sweep_naming_it(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*flags(run, output=run / "sweep"), "--lambdas", "1e6", "0.5", "--limit", "2"]
    line = expect_line(step_3_lambda_sweep.main, argv, capsys)
    assert line.startswith("error: non-finite logits") and "λ = 1e+06" in line and "weights random" in line
    assert not list((run / "sweep").glob("summary*.json"))


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # the bootstrap of an inf column
def test_non_finite_statistics_are_never_written_read_or_concluded(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary_path = run / "results" / "summary.json"
    summary = read_json(summary_path)
    summary["metrics"]["naive_sum_rel_error"]["mean"] = float("nan")
    assert {entry["id"]: entry["decision"] for entry in reconstruction_verdicts(summary)}["naive.misses"] == NON_FINITE
    atomic_write_json(summary_path, summary)
    before = snapshot(run / "results")
    line = expect_line(plot_1, ["--summary", str(summary_path)], capsys)
    assert "metrics.naive_sum_rel_error.mean is nan" in line and "no verdict" in line
    assert snapshot(run / "results") == before  # no figure, no REPORT
    summary["metrics"]["naive_sum_rel_error"]["mean"] = 1.0
    atomic_write_json(summary_path, summary)
    arrays = dict(np.load(run / "results" / "per_image.npz"))
    arrays["naive_sum_rel_error"][:] = np.inf
    atomic_save_npz(run / "results" / "per_image.npz", arrays)
    before = snapshot(run / "results")
    line = expect_line(resummarize, ["--summary", str(summary_path)], capsys)
    assert "summary.json (not rewritten): metrics.naive_sum_rel_error" in line
    assert snapshot(run / "results") == before
    assert format_number(float("inf")) == format_percent(float("nan")) == NON_FINITE
    assert format_stat({"mean": math.nan, "ci_low": 0.1, "ci_high": 0.2}).startswith(NON_FINITE)
