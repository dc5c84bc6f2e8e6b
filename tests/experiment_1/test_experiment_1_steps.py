"""Experiment 1 end to end on generated shards with random weights: evaluate, resume, plot, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import experiment_1.reconstruction.single_pass as reconstruction_pass
import experiment_1.step_3_evaluate as step_3
from conftest import evaluation_flags
from experiment_1.errors import PipelineError
from experiment_1.network.registry import ARCHITECTURES
from experiment_1.step_2_sample import main as sample_main
from experiment_1.step_4_plot import main as plot_main
from paper.resummarize import main as resummarize_main

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def sample_index(tiny_shards: Path, tmp_path: Path) -> Path:
    path = tmp_path / "sample_index.json"
    sample_main(
        [
            "--data-dir",
            str(tiny_shards),
            "--pattern",
            "validation-*.parquet",
            "--mode",
            "uniform",
            "--num-images",
            "5",
            "--output",
            str(path),
        ]
    )
    return path


def test_evaluate_then_plot(tiny_shards: Path, sample_index: Path, tmp_path: Path, small_input: int) -> None:
    output = tmp_path / "results"
    step_3.main(evaluation_flags(tiny_shards, sample_index, output))
    summary = json.loads((output / "summary.json").read_text())
    metrics = summary["metrics"]
    assert summary["num_images"] == summary["num_valid"] == 5 and summary["num_labelled"] == 5
    assert metrics["mobius_rel_error_float32"]["max"] < 1e-5
    assert metrics["max_subset_rel_error_float64"]["max"] < 1e-12
    assert metrics["mobius_top1_agreement_float32"]["mean"] == 1.0
    assert metrics["naive_sum_rel_error"]["mean"] > 5  # the sum of 256 subnetworks is far from h(full)
    assert 0 <= metrics["full_mask_top1_accuracy"]["mean"] <= 1
    assert summary["config"]["weights"] == "random" and summary["config"]["num_blocks"] == 8
    per_image = np.load(output / "per_image.npz")
    assert per_image["naive_sum_rel_error"].shape == (5,)
    np.testing.assert_allclose(metrics["naive_sum_rel_error"]["mean"], per_image["naive_sum_rel_error"].mean())
    plot_main(["--summary", str(output / "summary.json")])
    report = (output / "REPORT.md").read_text()
    assert f"The model computes `{summary['config']['gated_recursion']}`" in report and "ReLU(shortcut_l(x_l)" in report
    assert (output / "reconstruction_error.png").stat().st_size > 1000
    assert f"{metrics['naive_sum_rel_error']['mean']:.3g}" in report
    decisions = {entry["id"]: entry["decision"] for entry in summary["verdicts"]}
    assert decisions["mobius.exact"] == "holds" and decisions["naive.misses"] == "holds"
    assert "a network without any interaction fails the same way" in report
    assert metrics["full_mask_top1_accuracy"]["method"] == "Clopper-Pearson"  # 5 labelled images: an exact interval


def test_interrupted_run_resumes_to_identical_json(
    tiny_shards: Path, sample_index: Path, tmp_path: Path, small_input: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    uninterrupted = tmp_path / "once"
    step_3.main(evaluation_flags(tiny_shards, sample_index, uninterrupted))

    resumed = tmp_path / "resumed"
    calls = {"count": 0}
    original = reconstruction_pass.reconstruction_metrics

    def interrupt_after_first_batch(logits, labels):
        calls["count"] += 1
        if calls["count"] == 2:
            raise KeyboardInterrupt
        return original(logits, labels)

    monkeypatch.setattr(reconstruction_pass, "reconstruction_metrics", interrupt_after_first_batch)
    with pytest.raises(KeyboardInterrupt):
        step_3.main(evaluation_flags(tiny_shards, sample_index, resumed))
    assert sorted(
        p.name for p in (resumed / "partial" / "experiment_1.step_3_evaluate" / "all_masks").glob("batch_*.pt")
    ) == ["batch_000000.pt"]
    assert not (resumed / "summary.json").exists()

    monkeypatch.setattr(reconstruction_pass, "reconstruction_metrics", original)
    evaluated = []
    monkeypatch.setattr(
        reconstruction_pass,
        "reconstruction_metrics",
        lambda logits, labels: evaluated.append(len(labels)) or original(logits, labels),
    )
    step_3.main(evaluation_flags(tiny_shards, sample_index, resumed))
    assert evaluated == [2, 1]  # only the two unfinished batches ran
    assert (resumed / "summary.json").read_bytes() == (uninterrupted / "summary.json").read_bytes()
    timing = json.loads((resumed / "timing.json").read_text())  # both processes, each with its own record
    assert (
        timing["last_call"]["images_evaluated"] == 3 and timing["images_evaluated"] == 5
    )  # the interrupted process's first batch counts
    assert [record["images_evaluated"] for record in timing["processes"]] == [2, 3] and timing["passes"] == 2
    assert timing["wall_seconds"] == pytest.approx(sum(record["wall_seconds"] for record in timing["processes"]))


def test_resume_refuses_partial_results_of_other_settings(
    tiny_shards: Path, sample_index: Path, tmp_path: Path, small_input: int
) -> None:
    output = tmp_path / "results"
    step_3.main(evaluation_flags(tiny_shards, sample_index, output, "--limit", "2"))
    with pytest.raises(PipelineError, match="different run.*limit"):
        step_3.main(evaluation_flags(tiny_shards, sample_index, output))


def test_fold_batchnorm_is_recorded_stays_within_round_off_and_never_mixes(
    tiny_shards: Path, sample_index: Path, tmp_path: Path, small_input: int
) -> None:
    plain, folded = tmp_path / "plain", tmp_path / "folded"
    step_3.main(evaluation_flags(tiny_shards, sample_index, plain, "--limit", "2"))
    step_3.main(evaluation_flags(tiny_shards, sample_index, folded, "--limit", "2", "--fold-batchnorm"))
    plain_summary, folded_summary = (json.loads((folder / "summary.json").read_text()) for folder in (plain, folded))
    assert "fold_batchnorm" not in plain_summary["config"] and folded_summary["config"]["fold_batchnorm"] is True
    # folding rescales the weights: the logits, hence the prediction and the Möbius errors, move by round-off only
    plain_arrays, folded_arrays = np.load(plain / "per_image.npz"), np.load(folded / "per_image.npz")
    np.testing.assert_array_equal(plain_arrays["full_prediction"], folded_arrays["full_prediction"])
    np.testing.assert_allclose(folded_arrays["naive_sum_rel_error"], plain_arrays["naive_sum_rel_error"], rtol=1e-4)
    with pytest.raises(PipelineError, match="different run.*fold_batchnorm"):  # batches of the two never share a store
        step_3.main(evaluation_flags(tiny_shards, sample_index, plain, "--limit", "2", "--fold-batchnorm"))


def test_skip_corrupt_counts_the_skipped_image(tmp_path: Path, small_input: int) -> None:
    from conftest import jpeg_bytes, write_shard

    data_dir = tmp_path / "data"
    write_shard(data_dir / "test-00000-of-00001.parquet", [jpeg_bytes(0), b"broken", jpeg_bytes(2)], [-1, -1, -1])
    index = tmp_path / "index.json"
    sample_main(["--data-dir", str(data_dir), "--num-images", "3", "--output", str(index)])
    output = tmp_path / "results"
    step_3.main(evaluation_flags(data_dir, index, output, "--skip-corrupt"))
    summary = json.loads((output / "summary.json").read_text())
    assert (summary["num_images"], summary["num_valid"], summary["num_skipped_corrupt"]) == (3, 2, 1)
    assert summary["metrics"]["naive_sum_rel_error"]["n"] == 2


def run_step(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, timeout=300)


def test_cli_errors_are_one_line(tiny_shards: Path, sample_index: Path, tmp_path: Path) -> None:
    result = run_step(
        "experiment_1.step_3_evaluate",
        "--arch",
        "resnet19",
        "--sample-index",
        str(sample_index),
        "--data-dir",
        str(tiny_shards),
    )
    assert result.returncode == 2
    registered = ", ".join(ARCHITECTURES.names())  # every registered architecture, however many there are
    assert result.stderr.strip().splitlines() == [
        f"error: unknown arch 'resnet19'; choose one of {registered}, or a factory package.module:function"
    ]
    result = run_step("experiment_1.step_2_sample", "--data-dir", str(tmp_path / "nowhere"))
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "data directory not found; check the path" in result.stderr and "step_1.sh" in result.stderr
    result = run_step("experiment_1.step_3_evaluate", "--help")
    assert result.returncode == 0 and "Question:" in result.stdout and "--mask-chunk" in result.stdout


def test_a_sample_list_of_only_corrupt_images_is_a_clear_error(tmp_path: Path, small_input: int) -> None:
    from conftest import write_shard

    data_dir = tmp_path / "data"
    write_shard(data_dir / "test-00000-of-00001.parquet", [b"broken", b"also broken"], [-1, -1])
    index = tmp_path / "index.json"
    sample_main(["--data-dir", str(data_dir), "--num-images", "2", "--output", str(index)])
    with pytest.raises(PipelineError, match="every image of the sample list was skipped as corrupt"):
        step_3.main(evaluation_flags(data_dir, index, tmp_path / "results", "--skip-corrupt"))


def test_resummarize_rebuilds_the_same_numbers_from_per_image(
    tiny_shards: Path, sample_index: Path, tmp_path: Path, small_input: int
) -> None:
    output = tmp_path / "results"
    step_3.main(evaluation_flags(tiny_shards, sample_index, output))
    before = json.loads((output / "summary.json").read_text())
    resummarize_main(["--summary", str(output / "summary.json")])
    after = json.loads((output / "summary.json").read_text())
    assert after["config"].pop("summary_rebuilt_by").startswith("paper.resummarize at ")
    assert after == before  # same arrays, same code: every number identical
